/**
 * The all-terms tier of a few common words read from the search revisions by their share bound,
 * on PostgreSQL (docs/CATALOG.md "Search" and "Postgres"): the port of sqlite/revision-scan.ts,
 * with the revisions' bounds of catalog migrations 17 and 19 (revision-bounds.ts). Every term row
 * of the tier's driver is otherwise a candidate (20,000–60,000 rows for the 3–7 most common words
 * at 100k), where the revisions whose bound reaches the page are a few hundred to a few thousand.
 */
import { roundedMilliSql } from './migrations.ts';
import { parameters, termRowConditions, type Db } from './queries.ts';
import type { CursorState, RankedRow } from '../search.ts';
import { shareSumBound, sketchShareBoundSql, termSlots } from '../terms.ts';
import type { DiscoveryFilters } from '../types.ts';

/** The scan goes on at least this far whatever the driver's rows: below it either way is cheap. */
const REVISION_SCAN_MIN_ROWS = 1000;
/** Candidates ranked exactly per statement, in bound order. */
const RANK_BATCH = 32;

/**
 * The best `want` listings after the cursor holding every term (3 to terms.ts REVISION_SCAN_TERMS
 * common words), read from the revisions in order of the sum of their n largest shares for a query
 * of n terms (`top_shares` up to 4, `top_shares_5` … `top_shares_7`: terms.ts shareSumBound, as
 * sqlite/revision-scan.ts revisionScan):
 * the revisions are read in chunks (16 × the page, then twice more each), those whose signature
 * lacks a query term's bit dropped, each bounded by the smaller of its sketch bound over every
 * query term and that sum. Candidates are ranked exactly 32 at a time in bound order
 * while their bound reaches both what an unread revision can reach and the want-th exact rank;
 * once that rank is above every unread revision's bound, the page is sure. Returns null when the
 * tier holds fewer than `want` listings after the cursor, undefined past a quarter of the driver's
 * rows (or 1,000; the bound then reaches most revisions: the caller reads the tier otherwise).
 */
export async function revisionScanTier(
  db: Db,
  counted: Array<{ term: string; n: number }>,
  filters: DiscoveryFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
): Promise<RankedRow[] | null | undefined> {
  const terms = counted.map(({ term }) => term);
  const n = terms.length;
  const tier = n * 1_000_000;
  if (after && after.r < tier) return null;
  const driverRows = Math.min(...counted.map((c) => c.n));
  if (driverRows === 0) return null;
  const mask = BigInt.asIntN(
    64,
    terms.reduce((m, term) => m | (1n << BigInt(termSlots(term).bit)), 0n),
  ).toString();
  // Each term's largest share now: at least its largest in the snapshot (rows are only added or
  // pruned past a cursor's lifetime), so the top code's bound holds.
  const largest = await db.query<{ term: string; m: number | null }>(
    `SELECT q.term, (SELECT max(s.milli) FROM search_terms s WHERE s.term = q.term) AS m FROM unnest($1::text[]) AS q(term)`,
    [terms],
  );
  const sketchBound = largest.rows.map(({ term, m }) => sketchShareBoundSql(termSlots(term), Number(m ?? 0), 'least')).join(' + ');
  // The sum of the revision's n largest shares (n ≤ 4: its 4 largest); a longer query is refused.
  const sum = shareSumBound(n).column;
  const unreadBound = (top: number) => top + n;

  /**
   * The next `limit` revisions in index order after `last`: the candidates among them (in the
   * snapshot, through the filters, their signature holding every query term's bit) with their
   * bounds, how many were read and the last one read (where the next chunk starts). The index is
   * read first and judged after (a materialized CTE): with the filter in the scan the planner,
   * which cannot estimate the signature test, sorted a sequential scan of every revision instead
   * (30-60 ms a chunk at 100k, EXPLAIN ANALYZE). Only the candidates come back, and the last row
   * read as one more row without a listing: returning every row read took 33 ms of a 7-word
   * scan's 5,376-row chunk, most of it sending and decoding rows that fail the signature.
   */
  const chunkOf = async (last: { top: number; rev: number } | undefined, limit: number) => {
    const params = parameters();
    const { p } = params;
    const keyset = last ? `WHERE r.${sum} <= ${p(last.top)} AND NOT (r.${sum} = ${p(last.top)} AND r.rev <= ${p(last.rev)})` : '';
    const index = `SELECT r.rev, r.listing_id, r.from_seq, r.to_seq, r.${sum} AS top, r.sig, r.sketch_a, r.sketch_b
       FROM search_revisions r ${keyset} ORDER BY r.${sum} DESC, r.rev ASC LIMIT ${p(limit)}`;
    const rows = termRowConditions(filters, asOf, params);
    const signature = p(mask);
    const result = await db.query<[string, string | null, string | null, string, string]>({
      text: `WITH t AS MATERIALIZED (${index}),
         last_read AS (SELECT t.rev, t.top, count(*) OVER () AS n FROM t ORDER BY t.top ASC, t.rev DESC LIMIT 1)
       SELECT t.rev, t.listing_id, least(${sketchBound}, t.top) + ${n} AS hi, t.top, 0 AS n
       FROM t ${rows.join === '' ? '' : 'LEFT JOIN listings l ON l.id = t.listing_id'}
       WHERE ${rows.where} AND (t.sig & ${signature}::bigint) = ${signature}::bigint
       UNION ALL
       SELECT last_read.rev, NULL, NULL, last_read.top, last_read.n FROM last_read`,
      values: params.values,
      rowMode: 'array',
    });
    const candidates: Array<[number, number, number]> = [];
    let read = 0;
    let tail: { top: number; rev: number } | undefined;
    for (const [rev, listingId, hi, top, count] of result.rows) {
      if (listingId === null) {
        tail = { top: Number(top), rev: Number(rev) };
        read = Number(count);
      } else candidates.push([Number(rev), Number(listingId), Number(hi)]);
    }
    return { candidates, read, tail };
  };

  const ranked: RankedRow[] = [];
  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  /** Ranks candidates exactly; keeps those holding every term after the cursor, best first. */
  const rank = async (rows: Array<[number, number, number]>) => {
    for (const { listing_id, held, rank: r } of await exactRanks(db, terms, rows))
      if (held === n && pastCursor({ listing_id, rank: r })) ranked.push({ listing_id, rank: r });
    ranked.sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id);
  };
  /** The want-th exact rank's share part, once the tier holds want rows after the cursor. */
  const floor = () => (ranked.length >= want ? ranked[want - 1]!.rank - tier : undefined);
  const reaches = (hi: number) => {
    const reach = floor();
    return reach === undefined || hi >= reach;
  };

  let pending: Array<[number, number, number]> = [];
  let last: { top: number; rev: number } | undefined;
  for (let chunk = Math.max(16 * want, 64), read = 0; ; chunk *= 2) {
    const { candidates, read: rowsRead, tail } = await chunkOf(last, chunk);
    pending.push(...candidates);
    read += candidates.length;
    const done = rowsRead < chunk;
    if (tail) last = tail;
    // What a revision not read yet can reach (none once the index is read to its end).
    const unread = done || !last ? -Infinity : unreadBound(last.top);
    pending.sort((x, y) => y[2] - x[2] || x[1] - y[1]);
    let next = 0;
    for (; next < pending.length && pending[next]![2] >= unread && reaches(pending[next]![2]); next += RANK_BATCH)
      await rank(pending.slice(next, next + RANK_BATCH));
    pending = pending.slice(next).filter(([, , hi]) => reaches(hi));
    // Every candidate left is bounded below what an unread revision can reach, so once the
    // want-th rank is above that (or nothing is unread), none of them can be on the page either.
    const reach = floor();
    if (done || (reach !== undefined && reach > unread)) return ranked.length >= want ? ranked.slice(0, want) : null;
    if (read > Math.max(driverRows / 4, REVISION_SCAN_MIN_ROWS)) return undefined;
  }
}

/**
 * Each candidate revision's listing, how many of `terms` it holds and its exact rank, by the
 * aggregates' expression (one statement, a key range of the term rows per revision): the revision
 * scan's and the common-term masks' (common-terms.ts) ranking. Its text is the same for every
 * query, so it is a named statement, planned once per connection (a plan that does not depend on
 * the values: an index range per revision); a page of the 6 most common words runs it 6 to 8 times.
 */
export async function exactRanks(
  db: Db,
  terms: string[],
  rows: Array<[rev: number, listingId: number, ...bound: number[]]>,
): Promise<Array<RankedRow & { held: number }>> {
  const result = await db.query<[string, string, string]>({
    name: 'revision_scan_exact_ranks',
    text: `SELECT r.listing_id, x.n, x.rank FROM unnest($1::bigint[], $2::bigint[]) AS r(rev, listing_id),
       LATERAL (SELECT count(*) AS n, count(*) * 1000000 + ${roundedMilliSql('o.units')} AS rank
                FROM search_terms o WHERE o.term = ANY($3::text[]) AND o.rev = r.rev) x`,
    values: [rows.map(([rev]) => rev), rows.map(([, listingId]) => listingId), terms],
    rowMode: 'array',
  });
  return result.rows.map(([listingId, held, rank]) => ({ listing_id: Number(listingId), held: Number(held), rank: Number(rank) }));
}
