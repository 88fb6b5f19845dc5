/**
 * GET /discovery/search on PostgreSQL: the statements the search engine runs (../search-engine.ts
 * TextIndex), each on its own from the pool. No transaction is needed for a page's snapshot: writes
 * commit in sequence order (store.ts), so every write up to the pinned sequence is visible to any
 * later statement, and every row a search reads is selected by sequence number (term rows carry
 * their revision's [from_seq, to_seq), accepts and extensions their added_seq).
 *
 * A term's score is stored as exact units (migrations.ts SCORE_UNITS), so the rank below sums them
 * exactly and rounds once, as SQLite's rank does: both stores give every listing the same rank.
 */
import { PRESENCE } from '../query-terms.ts';
import { URL_KEY_MILLI, urlKey } from '../terms.ts';
import { URL_TERM_RANK } from '../url-search.ts';
import { runAsync, searchPage, checkQuery, type RankedRead, type SearchRequest, type TextIndex } from '../search-engine.ts';
import type { CursorState, RankedRow } from '../search.ts';
import type { SearchPage } from '../types.ts';
import { CURRENT_SEQ_SQL, filterConditions, parameters, rowsById, type Db } from './queries.ts';

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

/** The store's statements for the engine. */
export function textIndex(db: Db): TextIndex {
  const query = async (text: string, params: Params) =>
    ranked((await db.query<{ listing_id: string; rank: string }>(text, params.values)).rows);
  return {
    currentSeq: async () => Number((await db.query<{ seq: string }>(CURRENT_SEQ_SQL)).rows[0]!.seq),
    countListings: async () =>
      Number((await db.query<{ n: string }>("SELECT coalesce(max(n), 0) AS n FROM listing_counts WHERE kind = 'all'")).rows[0]!.n),
    countTerms: async (terms, cap) =>
      (
        await db.query<{ n: string }>(
          `SELECT (SELECT count(*) FROM (SELECT 1 FROM search_terms t WHERE t.term = c.term LIMIT $2) y) AS n
           FROM unnest($1::text[]) WITH ORDINALITY AS c(term, i) ORDER BY c.i`,
          [terms, cap],
        )
      ).rows.map((r) => Number(r.n)),
    countTermsAt: async (terms, asOf, cap) =>
      (
        await db.query<{ n: string }>(
          `SELECT (SELECT count(*) FROM (SELECT 1 FROM search_terms t WHERE t.term = c.term
             AND t.from_seq <= $2 AND (t.to_seq IS NULL OR t.to_seq > $2) LIMIT $3) y) AS n
           FROM unnest($1::text[]) WITH ORDINALITY AS c(term, i) ORDER BY c.i`,
          [terms, asOf, cap],
        )
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
    listings: (ids, now) => rowsById(db, ids, now),
  };
}

/** A search page on PostgreSQL (the engine on this store's statements). */
export function searchPostgres(db: Db, secret: Buffer, request: Omit<SearchRequest, 'secret'>): Promise<SearchPage> {
  checkQuery(request.query);
  return runAsync(textIndex(db), searchPage({ ...request, secret }));
}
