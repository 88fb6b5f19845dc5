/**
 * GET /discovery/search on PostgreSQL: the statements the search engine runs (../search-engine.ts
 * TextIndex), on one connection of the pool (searchPostgres). No transaction is needed for a page's snapshot: writes
 * commit in sequence order (store.ts), so every write up to the pinned sequence is visible to any
 * later statement, and every row a search reads is selected by sequence number (term rows carry
 * their revision's [from_seq, to_seq), accepted entries and list keys their added_seq).
 *
 * A term's score is stored as exact units (migrations.ts SCORE_UNITS), so the rank below sums them
 * exactly and rounds once, as SQLite's rank does: both stores give every listing the same rank.
 */
import type pg from 'pg';
import { onOneClient } from '../../db/postgres.ts';
import type { ListingRow } from '../listing.ts';
import { PRESENCE } from '../query-terms.ts';
import { URL_KEY_MILLI, urlKey } from '../terms.ts';
import { URL_TERM_RANK } from '../url-search.ts';
import { runAsync, searchPage, checkQuery, type RankedRead, type SearchRequest, type TextIndex } from '../search-engine.ts';
import type { CursorState, RankedRow } from '../search.ts';
import type { SearchPage } from '../types.ts';
import { listingColumns } from './quality.ts';
import { CURRENT_SEQ_SQL, filterConditions, parameters, rowsById, type Db, type RawListingRow } from './queries.ts';

type Params = ReturnType<typeof parameters>;

/**
 * The rank of a revision from its term rows `t` grouped by revision, each joined to its key's weight `k.w`
 * (docs/CATALOG.md "Ranking", query-terms.ts): Σ weight × (PRESENCE + milli), integers, as SQLite's rankSql.
 */
const rankSql = (t: string, k: string) => `sum(${k}.w * (${PRESENCE} + ${t}.milli))`;

const ranked = (rows: Array<{ listing_id: string; rank: string; keys?: string }>): RankedRow[] =>
  rows.map((r) => ({
    listing_id: Number(r.listing_id),
    rank: Number(r.rank),
    ...(r.keys === undefined ? {} : { keys: r.keys.split(' ') }),
  }));

/** After a cursor, on ranked rows (rank, listing_id). */
const keysetAfter = (after: CursorState | undefined, { p }: Params) =>
  after ? `WHERE rank < ${p(after.r)} OR (rank = ${p(after.r)} AND listing_id > ${p(after.i)})` : '';

/** The snapshot's term rows `t`. */
const snapshot = (asOf: number, { p }: Params) => `t.from_seq <= ${p(asOf)} AND (t.to_seq IS NULL OR t.to_seq > ${p(asOf)})`;

/** The filters on rows `t`: the listing joined when a filter needs it. */
function rowFilter(read: RankedRead, params: Params): { join: string; where: string } {
  const conditions = filterConditions(read.filters, params.p, read.asOf);
  return conditions === 'TRUE' ? { join: '', where: 'TRUE' } : { join: 'JOIN listings l ON l.id = t.listing_id', where: conditions };
}

/** One term's rows at the snapshot after `after`, in index order, at most `limit`. */
function walkSql(term: string, asOf: number, after: CursorState | undefined, limit: number, params: Params, weight = 1): string {
  const { p } = params;
  let keyset = '';
  if (after) {
    // The walk's rank of a term row is weight × (PRESENCE + milli) (rankSql), so the cursor's rank gives its milli back.
    const milli = p(after.r / weight - PRESENCE);
    keyset = `AND t.milli <= ${milli} AND NOT (t.milli = ${milli} AND t.listing_id <= ${p(after.i)})`;
  }
  return `SELECT t.rev, t.listing_id, t.milli, t.units FROM search_terms t WHERE t.term = ${p(term)} AND ${snapshot(asOf, params)} ${keyset}
    ORDER BY t.milli DESC, t.listing_id ASC LIMIT ${p(limit)}`;
}

/**
 * The store's statements for the engine. With `now` (a page's, which its `listings` are asked as of), each ranked
 * read returns its rows' listings too, read in the same statement: the engine's `listings` that follows answers from
 * them, one round trip fewer per round of a page.
 */
export function textIndex(db: Db, now?: Date): TextIndex {
  // The statements of fixed text (the snapshot, the counts) are prepared, each by its own name: parsed once per
  // connection and planned as Postgres plans a prepared statement, where sent as text a count cost about half as much
  // again on the 100k bench database (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). The ranked reads'
  // text varies with the query: they are sent as text, planned with their values.
  const countTerms = async (terms: string[], cap: number) =>
    (
      await db.query<{ n: string }>({
        name: 'svc_search_count',
        text: `SELECT (SELECT count(*) FROM (SELECT 1 FROM search_terms x WHERE x.term = c.term LIMIT $2) y) AS n
         FROM unnest($1::text[]) WITH ORDINALITY AS c(term, i) ORDER BY c.i`,
        values: [terms, cap],
      })
    ).rows.map((r) => Number(r.n));
  /** The listings the ranked reads returned with their rows (undefined: a row whose listing is gone), by id. */
  const listed = new Map<number, ListingRow | undefined>();
  const query = async (text: string, params: Params) => {
    if (now === undefined) return ranked((await db.query<{ listing_id: string; rank: string }>(text, params.values)).rows);
    // The ranked rows in their order, each with its listing's row where it has one (rowsById's columns).
    const withListings = `WITH ranked AS MATERIALIZED (${text})
      SELECT r.*, x.* FROM ranked r LEFT JOIN LATERAL (SELECT ${listingColumns(now, params.p)} WHERE l.id = r.listing_id) x ON TRUE
      ORDER BY r.rank DESC, r.listing_id ASC`;
    type Row = { listing_id: string; rank: string; keys?: string } & (RawListingRow | { [K in keyof RawListingRow]: null });
    const rows = (await db.query<Row>(withListings, params.values)).rows;
    for (const { listing_id, rank: _rank, keys: _keys, ...listing } of rows)
      listed.set(Number(listing_id), listing.id === null ? undefined : { ...listing, id: Number(listing.id) });
    return ranked(rows);
  };
  return {
    currentSeq: async () => Number((await db.query<{ seq: string }>({ name: 'svc_search_seq', text: CURRENT_SEQ_SQL })).rows[0]!.seq),
    countListings: async () =>
      Number(
        (
          await db.query<{ n: string }>({
            name: 'svc_search_listings',
            text: "SELECT coalesce(max(n), 0) AS n FROM listing_counts WHERE kind = 'all'",
          })
        ).rows[0]!.n,
      ),
    countTerms,
    countTermsAt: async (terms, asOf, cap) =>
      (
        await db.query<{ n: string }>({
          name: 'svc_search_count_terms_at',
          text: `SELECT (SELECT count(*) FROM (SELECT 1 FROM search_terms t WHERE t.term = c.term
             AND t.from_seq <= $2 AND (t.to_seq IS NULL OR t.to_seq > $2) LIMIT $3) y) AS n
           FROM unnest($1::text[]) WITH ORDINALITY AS c(term, i) ORDER BY c.i`,
          values: [terms, asOf, cap],
        })
      ).rows.map((r) => Number(r.n)),
    async termWalk(read) {
      const { term, weight, asOf, after, want, scan } = read;
      const params = parameters();
      const { p } = params;
      const filter = rowFilter(read, params);
      const rows = await query(
        `SELECT t.listing_id, ${p(weight)}::bigint * (${PRESENCE} + t.milli) AS rank, ${p(term)}::text AS keys
         FROM (${walkSql(term, asOf, after, scan ?? want, params, weight)}) t ${filter.join}
         WHERE ${filter.where} ORDER BY t.milli DESC, t.listing_id ASC LIMIT ${p(want)}`,
        params,
      );
      if (scan === undefined || rows.length >= want) return { rows };
      // Fewer than `want` passed: the scan either read the term to its end or stopped at `scan` rows.
      const edgeParams = parameters();
      const last = (
        await db.query<{ n: string; listing_id: string; milli: string }>(
          `SELECT count(*) OVER () AS n, w.listing_id, w.milli FROM (${walkSql(term, asOf, after, scan, edgeParams, weight)}) w
           ORDER BY w.milli ASC, w.listing_id DESC LIMIT 1`,
          edgeParams.values,
        )
      ).rows[0];
      if (!last || Number(last.n) < scan) return { rows };
      return { rows, edge: { listing_id: Number(last.listing_id), rank: weight * (PRESENCE + Number(last.milli)) } };
    },
    async rankTerms(read) {
      const { terms, weights, asOf, after, want, window } = read;
      const params = parameters();
      const { p } = params;
      const weighed = `unnest(${p(terms)}::text[], ${p(weights)}::bigint[]) AS k(term, w)`;
      const filter = rowFilter(read, params);
      // Every row of the terms, or (the window) the revisions among each term's first `window` rows, each once, ranked over
      // every term by a primary-key read per revision and term: a LATERAL subquery that OFFSET 0 keeps from being pulled
      // up, where the planner would otherwise read each term's every row and join them by hash.
      const from =
        window === undefined
          ? `search_terms t JOIN ${weighed} ON k.term = t.term ${filter.join}
             WHERE t.term = ANY(${p(terms)}::text[]) AND ${snapshot(asOf, params)} AND ${filter.where}`
          : `(${terms.map((term) => `SELECT w.rev FROM (${walkSql(term, asOf, undefined, window, params)}) w`).join(' UNION ')}) c
             CROSS JOIN LATERAL (
               SELECT t.rev, t.listing_id, t.term, t.milli, k.w FROM ${weighed} JOIN search_terms t ON t.term = k.term AND t.rev = c.rev OFFSET 0
             ) t ${filter.join} WHERE ${filter.where}`;
      return query(
        `WITH matches AS MATERIALIZED (
           SELECT t.listing_id, ${rankSql('t', window === undefined ? 'k' : 't')} AS rank, string_agg(t.term, ' ') AS keys
           FROM ${from} GROUP BY t.rev, t.listing_id
         )
         SELECT listing_id, rank, keys FROM matches ${keysetAfter(after, params)} ORDER BY rank DESC, listing_id ASC LIMIT ${p(want)}`,
        params,
      );
    },
    async windowEdges(terms, asOf, window) {
      const params = parameters();
      const edges = await db.query<{ n: string; lowest: string | null }>(
        terms
          .map((term) => `(SELECT count(*) AS n, min(w.milli) AS lowest FROM (${walkSql(term, asOf, undefined, window, params)}) w)`)
          .join(' UNION ALL '),
        params.values,
      );
      return edges.rows.map((r) => ({ rows: Number(r.n), lowest: Number(r.lowest ?? 0) }));
    },
    async urlRows(read) {
      const { terms, asOf, after, want } = read;
      const params = parameters();
      const { p } = params;
      const filter = rowFilter(read, params);
      const keys = terms.map(urlKey);
      // One term: every match ranks the same and its rows the same milli, so its key range in id order is the page's order.
      if (keys.length === 1)
        return query(
          `SELECT t.listing_id, ${URL_TERM_RANK} AS rank FROM search_terms t ${filter.join}
           WHERE t.term = ${p(keys[0])} AND t.milli = ${URL_KEY_MILLI} AND ${snapshot(asOf, params)} AND ${filter.where}
             ${after ? `AND t.listing_id > ${p(after.i)}` : ''}
           ORDER BY t.listing_id ASC LIMIT ${p(want)}`,
          params,
        );
      return query(
        `WITH matches AS MATERIALIZED (
           SELECT t.listing_id, count(*) * ${URL_TERM_RANK} AS rank FROM search_terms t ${filter.join}
           WHERE t.term = ANY(${p(keys)}::text[]) AND ${snapshot(asOf, params)} AND ${filter.where} GROUP BY t.rev, t.listing_id
         )
         SELECT listing_id, rank FROM matches ${keysetAfter(after, params)} ORDER BY rank DESC, listing_id ASC LIMIT ${p(want)}`,
        params,
      );
    },
    async listings(ids, asOf) {
      if (asOf.getTime() !== now?.getTime() || !ids.every((id) => listed.has(id))) return rowsById(db, ids, asOf);
      return new Map(ids.flatMap((id) => (listed.get(id) ? [[id, listed.get(id)!] as const] : [])));
    },
  };
}

/**
 * A search page on PostgreSQL (the engine on this store's statements), on one connection of the pipelined `pool`:
 * the statements the engine yields together go out in one write (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite").
 */
export function searchPostgres(pool: pg.Pool, secret: Buffer, request: Omit<SearchRequest, 'secret'>): Promise<SearchPage> {
  checkQuery(request.query);
  return onOneClient(pool, (db) => runAsync(textIndex(db, request.now), searchPage({ ...request, secret })));
}
