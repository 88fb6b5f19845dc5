/**
 * The search engine's statements on PostgreSQL (../search-engine.ts TextIndex). No transaction is needed for a page's
 * snapshot: writes commit in sequence order (store.ts), so every write up to the pinned sequence is visible to any
 * later statement, and every row a search reads is selected by sequence number (term rows carry their revision's
 * [from_seq, to_seq), list keys their added_seq).
 *
 * Ranks are integer sums, as SQLite's, so both stores give every listing the same rank.
 */
import type pg from 'pg';
import { onOneClient } from '../../db/postgres.ts';
import { listKeyHeld, type ListingRow } from '../listing.ts';
import { PRESENCE } from '../query-terms.ts';
import { URL_KEY_MILLI, isStemKey, stemKey, urlKey } from '../terms.ts';
import { URL_TERM_RANK } from '../url-search.ts';
import { runAsync, searchPage, checkQuery, type RankedRead, type SearchRequest, type TextIndex } from '../search-engine.ts';
import type { CursorState, RankedRow } from '../search.ts';
import type { SearchPage } from '../types.ts';
import { listingColumns } from './quality.ts';
import { SUFFIX_ROWS_PER_MATCH, suffixMatchesSql } from './url-suffixes.ts';
import {
  CURRENT_SEQ_SQL,
  filterConditions,
  listingRow,
  parameters,
  queryGeneric,
  rowsById,
  type Db,
  type RawListingRow,
} from './queries.ts';

type Params = ReturnType<typeof parameters>;

/**
 * The rank of a revision from its term rows `t` grouped by revision, each joined to its key's weight `k.w`
 * (docs/CATALOG.md "Ranking", query-terms.ts): Σ weight × (PRESENCE + milli), integers, as SQLite's rankSql.
 * The weights are sent as `int`, so each product is an `int` (under 2^31 in any catalog:
 * test/catalog/rank-integers.test.ts) and their sum a `bigint`: a sum of `bigint`s is a `numeric`, slower to sum and sort.
 */
const rankSql = (t: string, k: string) => `sum(${k}.w * (${PRESENCE} + ${t}.milli))`;

const ranked = (rows: Array<{ listing_id: string; rank: string; keys?: string }>, keysOf?: (keys: string) => string[]): RankedRow[] =>
  rows.map((r) => ({
    listing_id: Number(r.listing_id),
    rank: Number(r.rank),
    ...(r.keys === undefined ? {} : { keys: keysOf ? keysOf(r.keys) : [r.keys] }),
  }));

/**
 * The keys a revision holds among `n` terms, from its rows' term numbers `i` (1 to n) grouped: one bit each, as text of
 * comma-separated `int` masks of MASK_BITS bits, because aggregating the terms as a string costs much of the aggregate's
 * work, and masks read as text cost the driver no parse of an array and the reader no BigInt. heldKeys reads them.
 */
const keyMasksSql = (n: number, i: string) =>
  `concat_ws(',', ${Array.from(
    { length: Math.ceil(n / MASK_BITS) },
    (_, j) => `bit_or(CASE WHEN (${i} - 1) / ${MASK_BITS} = ${j} THEN 1 << ((${i} - 1) % ${MASK_BITS})::int ELSE 0 END)`,
  ).join(', ')})`;
const MASK_BITS = 30;
/** The terms whose bits keyMasksSql's masks hold. */
const heldKeys = (terms: string[]) => (text: string) => {
  const masks = text.split(',').map(Number);
  return terms.filter((_, i) => ((masks[Math.floor(i / MASK_BITS)]! >>> (i % MASK_BITS)) & 1) === 1);
};

const afterCursor = (after: CursorState | undefined, { p }: Params) =>
  after ? `(rank < ${p(after.r)} OR (rank = ${p(after.r)} AND listing_id > ${p(after.i)}))` : 'TRUE';

const snapshot = (asOf: number, { p }: Params) => `t.from_seq <= ${p(asOf)} AND (t.to_seq IS NULL OR t.to_seq > ${p(asOf)})`;

/**
 * The filters on rows of listing `listing` (an SQL expression), each an `EXISTS` probe by the listing's id, so that
 * a ranked read checks them row by row as it reads, and stops once its page is full: list entries for the key filters
 * (accepted entries and `type`, whose list key is cheaper than the listing's wide row: docs/BENCHMARKS.md "Filter
 * combinations"), and the listing's row only for the filters that compare its columns. Each probe is
 * fenced (`OFFSET 0`, filterConditions' perRow) so that it stays one per row read: joined instead, the planner hashes a
 * key's entries (`type=http`: most listings) or a price range's, far more work than a page's probes. The filters' few
 * candidates (RankedRead candidates) are checked by id first, hashed once: `IS TRUE` keeps the check a hashed subplan
 * on each row, where as a join the generic plan (which guesses ten ids) compares each row with every id after the other
 * filters' probes.
 */
function rowFilter(read: RankedRead, params: Params, listing = 't.listing_id'): { where: string; filtered: boolean } {
  const { p } = params;
  const { candidates } = read;
  const { type, payTo, resource, toolName, url, ...entries } = read.filters;
  const onRow = { payTo, resource, toolName, url };
  const conditions = [
    candidates ? `(${listing} IN (SELECT unnest(${p(candidates)}::bigint[]))) IS TRUE` : 'TRUE',
    type === undefined ? 'TRUE' : listKeyHeld(p, { kind: 'type', value: type }, listing, { asOfSeq: read.asOf, fence: ' OFFSET 0' }),
    filterConditions(entries, p, read.asOf, true, listing),
    Object.values(onRow).some((value) => value !== undefined)
      ? `EXISTS (SELECT 1 FROM listings l WHERE l.id = ${listing} AND ${filterConditions(onRow, p)} OFFSET 0)`
      : 'TRUE',
  ].filter((c) => c !== 'TRUE');
  return { where: conditions.join(' AND ') || 'TRUE', filtered: conditions.length > 0 };
}

/** The rows of `term` (an SQL expression) at the snapshot after `after`, in index order. */
function walkSql(term: string, asOf: number, after: CursorState | undefined, limit: string, params: Params, weight = 1): string {
  const { p } = params;
  let keyset = '';
  if (after) {
    // The walk's rank of a term row is weight × (PRESENCE + milli) (rankSql), so the cursor's rank gives its milli back.
    const milli = p(after.r / weight - PRESENCE);
    keyset = `AND t.milli <= ${milli} AND NOT (t.milli = ${milli} AND t.listing_id <= ${p(after.i)})`;
  }
  return `SELECT t.rev, t.listing_id, t.milli, t.units FROM search_terms t WHERE t.term = ${term} AND ${snapshot(asOf, params)} ${keyset}
    ORDER BY t.milli DESC, t.listing_id ASC LIMIT ${limit}`;
}

/**
 * The store's statements for the engine. With `now` (a page's, which its `listings` are asked as of), each ranked
 * read returns its rows' listings too, read in the same statement: the engine's `listings` that follows answers from
 * them, one round trip fewer per round of a page. `db` is one connection: a generic read's settings are its session's.
 */
export function textIndex(db: Db, now?: Date): TextIndex {
  // The statements of fixed text (the snapshot, the counts) are prepared, each by its own name, so they are parsed once
  // per connection (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). The ranked reads are prepared too
  // (`query` below), each shape by its name (queryGeneric).
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
  /**
   * A ranked read. Its text depends on its shape alone (the values are parameters; the terms arrays), so it runs with its
   * generic plan (queryGeneric), which its shape fixes: each term's rows by index, in nested loops, and each filter a
   * probe per row (rowFilter), whatever the values. Planning with the values would cost more than the read itself
   * (docs/BENCHMARKS.md "Filter combinations"). The `url` reads are sent as text (`withValues`) and planned with their values.
   */
  const query = async (text: string, params: Params, withValues: boolean, keysOf?: (keys: string) => string[]) => {
    const run = <R extends pg.QueryResultRow>(statement: string) =>
      withValues ? db.query<R>(statement, params.values) : queryGeneric<R>(db, 'search', statement, params.values, 'session');
    if (now === undefined) return ranked((await run<{ listing_id: string; rank: string; keys?: string }>(text)).rows, keysOf);
    const withListings = `WITH ranked AS MATERIALIZED (${text})
      SELECT r.*, x.* FROM ranked r LEFT JOIN LATERAL (SELECT ${listingColumns(now, params.p)} WHERE l.id = r.listing_id) x ON TRUE
      ORDER BY r.rank DESC, r.listing_id ASC`;
    type Row = { listing_id: string; rank: string; keys?: string } & (RawListingRow | { [C in keyof RawListingRow]: null });
    const rows = (await run<Row>(withListings)).rows;
    // Each row is its listing's too (the listing's columns beside listing_id, rank and keys, which no reader of a
    // ListingRow looks at): kept as it is, not copied.
    for (const row of rows) listed.set(Number(row.listing_id), row.id === null ? undefined : listingRow(row));
    return ranked(rows, keysOf);
  };
  // The page's snapshot and the catalog's listings, read by one statement whichever the engine asks first (it asks both
  // together on a first page): a statement fewer, and an answer fewer to wake the reader's thread for.
  let opening: Promise<{ seq: string; n: string }> | undefined;
  const opened = () =>
    (opening ??= db
      .query<{ seq: string; n: string }>({
        name: 'svc_search_opening',
        text: `SELECT (${CURRENT_SEQ_SQL}) AS seq, (SELECT coalesce(max(n), 0) FROM listing_counts WHERE kind = 'all') AS n`,
      })
      .then((result) => result.rows[0]!));
  return {
    currentSeq: async () => Number((await opened()).seq),
    countListings: async () => Number((await opened()).n),
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
         FROM (${walkSql(p(term), asOf, after, p(scan ?? want), params, weight)}) t
         WHERE ${filter.where} ORDER BY t.milli DESC, t.listing_id ASC LIMIT ${p(want)}`,
        params,
        false,
      );
      if (scan === undefined || rows.length >= want) return { rows };
      // Fewer than `want` passed: find whether the scan stopped at `scan` rows (then the page is partial) or at the term's end.
      const edgeParams = parameters();
      const last = (
        await db.query<{ n: string; listing_id: string; milli: string }>(
          `SELECT count(*) OVER () AS n, w.listing_id, w.milli FROM (${walkSql(edgeParams.p(term), asOf, after, edgeParams.p(scan), edgeParams, weight)}) w
           ORDER BY w.milli ASC, w.listing_id DESC LIMIT 1`,
          edgeParams.values,
        )
      ).rows[0];
      if (!last || Number(last.n) < scan) return { rows };
      return { rows, edge: { listing_id: Number(last.listing_id), rank: weight * (PRESENCE + Number(last.milli)) } };
    },
    async rankTerms(read) {
      const { terms, weights, asOf, after, want, window, byCandidates } = read;
      const params = parameters();
      const { p } = params;
      // The filters are checked once per revision, on its group (`g`), not on each of its keys' rows: in rank order, until
      // the page is full (the groups sorted, then read one by one), so a filter most listings pass costs a page's probes.
      // Read from the candidates' revisions (`byCandidates`), every group is a candidate's: its id is not checked again.
      const filter = rowFilter(byCandidates ? { ...read, candidates: undefined } : read, params, 'g.listing_id');
      const grouped = (from: string) =>
        `SELECT min(t.listing_id) AS listing_id, ${rankSql('t', 't')} AS rank, ${keyMasksSql(terms.length, 't.i')} AS keys
         FROM (${from}) t GROUP BY t.rev`;
      const order = 'ORDER BY rank DESC, listing_id ASC';
      // The revisions ranked (`from`: rev, listing_id, the term's number i, its weight w and milli), grouped by revision;
      // `filterGroups`: the groups filtered here, where `from` has not applied the filters.
      const rank = (from: string, filterGroups: boolean) =>
        query(
          filterGroups && filter.filtered
            ? `SELECT * FROM (SELECT * FROM (${grouped(from)}) g ${order} OFFSET 0) g
               WHERE ${afterCursor(after, params)} AND ${filter.where} ${order} LIMIT ${p(want)}`
            : `SELECT * FROM (${grouped(from)}) matches WHERE ${afterCursor(after, params)} ${order} LIMIT ${p(want)}`,
          params,
          false,
          heldKeys(terms),
        );
      // The candidates' revisions at the snapshot, each term's row of each read by primary key.
      if (byCandidates)
        return rank(
          `SELECT r.rev, r.listing_id, k.i, k.w, t.milli
           FROM unnest(${p(terms)}::text[], ${p(weights)}::int[]) WITH ORDINALITY AS k(term, w, i)
           CROSS JOIN (SELECT r.rev, r.listing_id FROM search_revisions r WHERE r.listing_id = ANY(${p(read.candidates)}::bigint[])
             AND r.from_seq <= ${p(asOf)} AND (r.to_seq IS NULL OR r.to_seq > ${p(asOf)})) r
           CROSS JOIN LATERAL (SELECT t.milli FROM search_terms t WHERE t.term = k.term AND t.rev = r.rev OFFSET 0) t`,
          true,
        );
      if (window === undefined)
        return rank(
          `SELECT t.rev, t.listing_id, k.i, k.w, t.milli
           FROM unnest(${p(terms)}::text[], ${p(weights)}::int[]) WITH ORDINALITY AS k(term, w, i) CROSS JOIN LATERAL (
             SELECT t.rev, t.listing_id, t.milli FROM search_terms t WHERE t.term = k.term AND ${snapshot(asOf, params)}
           ) t`,
          true,
        );
      // The window: the revisions among each term's first `window` rows (`win`, which carry their score), each once, with
      // the terms whose windows hold them (`held`, term numbers). A revision's row of a term is read by primary key only
      // where the term's window is full (`cut`: it may have left the row out) and does not hold it; an exact word's
      // only for a revision holding its stem (a word's rows are among its stem's: terms.ts). Each read is a LATERAL
      // subquery that OFFSET 0 keeps from being pulled up, where the planner would otherwise read each term's every row
      // and join them by hash. Without filters every revision of the windows is in `c`: their rows are kept unjoined.
      const stemAt = terms.map((term) => (isStemKey(term) || !terms.includes(stemKey(term)) ? null : terms.indexOf(stemKey(term)) + 1));
      const lookup = (rev: string) =>
        `CROSS JOIN LATERAL (SELECT t.milli FROM search_terms t WHERE t.term = k.term AND t.rev = ${rev} OFFSET 0) t`;
      return rank(
        `WITH k AS MATERIALIZED (
           SELECT * FROM unnest(${p(terms)}::text[], ${p(weights)}::int[], ${p(stemAt)}::int[]) WITH ORDINALITY AS k(term, w, stem, i)
         ),
         win AS MATERIALIZED (
           SELECT k.i, k.w, w.rev, w.listing_id, w.milli FROM k CROSS JOIN LATERAL (${walkSql('k.term', asOf, undefined, p(window), params)}) w
         ),
         c AS MATERIALIZED (
           SELECT g.* FROM (SELECT t.rev, min(t.listing_id) AS listing_id, array_agg(t.i) AS held FROM win t GROUP BY t.rev) g
           WHERE ${filter.where}
         ),
         cut AS MATERIALIZED (SELECT coalesce(array_agg(f.i), '{}') AS keys FROM (SELECT i FROM win GROUP BY i HAVING count(*) >= ${p(window)}) f),
         gap AS MATERIALIZED (
           SELECT c.rev, c.listing_id, k.i, k.w, t.milli FROM c CROSS JOIN cut CROSS JOIN k ${lookup('c.rev')}
           WHERE k.stem IS NULL AND k.i = ANY(cut.keys) AND NOT k.i = ANY(c.held)
         ),
         h AS MATERIALIZED (
           SELECT c.rev, c.listing_id, c.held || coalesce(g.held, '{}') AS held FROM c
           LEFT JOIN (SELECT g.rev, array_agg(g.i) AS held FROM gap g GROUP BY g.rev) g ON g.rev = c.rev
         )
         SELECT x.rev, x.listing_id, x.i, x.w, x.milli FROM win x ${filter.filtered ? 'WHERE x.rev IN (SELECT rev FROM c)' : ''}
         UNION ALL SELECT * FROM gap
         UNION ALL
         SELECT h.rev, h.listing_id, k.i, k.w, t.milli FROM h CROSS JOIN cut CROSS JOIN k ${lookup('h.rev')}
         WHERE k.stem IS NOT NULL AND k.i = ANY(cut.keys) AND NOT k.i = ANY(h.held) AND k.stem = ANY(h.held)`,
        false,
      );
    },
    async windowEdges(terms, asOf, window) {
      const params = parameters();
      const { p } = params;
      const edges = await queryGeneric<{ n: string; lowest: string | null }>(
        db,
        'search',
        `SELECT count(w.milli) AS n, min(w.milli) AS lowest
         FROM unnest(${p(terms)}::text[]) WITH ORDINALITY AS k(term, i)
         LEFT JOIN LATERAL (${walkSql('k.term', asOf, undefined, p(window), params)}) w ON TRUE GROUP BY k.i ORDER BY k.i`,
        params.values,
        'session',
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
          `SELECT t.listing_id, ${URL_TERM_RANK} AS rank FROM search_terms t
           WHERE t.term = ${p(keys[0])} AND t.milli = ${URL_KEY_MILLI} AND ${snapshot(asOf, params)} AND ${filter.where}
             ${after ? `AND t.listing_id > ${p(after.i)}` : ''}
           ORDER BY t.listing_id ASC LIMIT ${p(want)}`,
          params,
          true,
        );
      return query(
        `WITH matches AS MATERIALIZED (
           SELECT t.listing_id, count(*) * ${URL_TERM_RANK} AS rank FROM search_terms t
           WHERE t.term = ANY(${p(keys)}::text[]) AND ${snapshot(asOf, params)} AND ${filter.where} GROUP BY t.rev, t.listing_id
         )
         SELECT listing_id, rank FROM matches WHERE ${afterCursor(after, params)} ORDER BY rank DESC, listing_id ASC LIMIT ${p(want)}`,
        params,
        true,
      );
    },
    // What the suffixes' range costs is its entries read, not the matches they name: every match the range names when it
    // holds at most cap × SUFFIX_ROWS_PER_MATCH entries (one more is read to tell), up to that many listings.
    async urlListings(url, cap) {
      const params = parameters();
      const found = await db.query<{ ids: string[] | null }>(
        `SELECT CASE WHEN f.whole THEN f.ids END AS ids FROM (${suffixMatchesSql(url, cap * SUFFIX_ROWS_PER_MATCH + 1, params.p)}) f`,
        params.values,
      );
      return found.rows[0]!.ids?.map(Number);
    },
    // At most cap + 1 entries read in all, whatever the ranges; the ids joined only when they fit (a subquery runs when
    // first needed), as one string: several times cheaper for the driver than an array of thousands.
    async pricedListings(ranges, cap) {
      const found = await db.query<{ ids: string | null; n: string }>({
        name: 'svc_search_priced',
        text: `WITH x AS MATERIALIZED (SELECT listing_id FROM unnest($1::text[], $2::text[]) AS r(key, max)
            CROSS JOIN LATERAL (SELECT listing_id FROM listing_prices WHERE asset = r.key AND price <= r.max LIMIT $3 + 1) y
            LIMIT $3 + 1)
          SELECT n, CASE WHEN n <= $3 THEN (SELECT string_agg(listing_id::text, ',') FROM x) END AS ids
          FROM (SELECT count(*) AS n FROM x) c`,
        values: [ranges.map((r) => r.key), ranges.map((r) => r.max), cap],
      });
      const { ids, n } = found.rows[0]!;
      return Number(n) > cap ? undefined : [...new Set(ids === null ? [] : ids.split(',').map(Number))];
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
