/**
 * The all-terms tier of a few common words read from the search revisions by their share bound
 * (docs/CATALOG.md "Search", SQLite catalog migration 12), for term-tiers.ts allTermsTopK.
 */
import type { StatementSync } from 'node:sqlite';
import type { RankedRow } from '../search.ts';
import { shareSumBound, sketchShareBoundSql, termSlots } from '../terms.ts';

/** The revision scan goes on at least this far whatever the driver's rows: below it either way is cheap. */
const REVISION_SCAN_MIN_ROWS = 1000;

/** What allTermsTopK hands the scan: its query, filter and signature mask, and its exact ranking (what it ranked stays ranked). */
export interface RevisionScan {
  store: { statement(sql: string): StatementSync };
  /** The query's terms, the driver (the rarest) first. */
  terms: string[];
  /** The largest share of each term but the driver, in `terms` order. */
  largest: number[];
  asOf: number;
  filter: { joinListings: string; conditions: string; params: Array<string | number> };
  mask: bigint;
  want: number;
  /** The revisions ranked exactly already. */
  seen: Set<number>;
  /** The tier's rows ranked so far after the cursor, best first (rank keeps it). */
  ranked: RankedRow[];
  /** Ranks [rev, listing_id, bound] rows exactly (those not seen), keeping the tier's rows after the cursor. */
  rank: (rows: Array<[number, number, number]>) => void;
  /** The want-th exact rank's share part, once the tier holds want rows after the cursor. */
  floor: () => number | undefined;
  /** The driver's rows (any snapshot). */
  driverRows: number;
}

/** A term's largest rounded share (milli) in the index: its sketch bound when its buckets hold the top code. */
export function largestShare(store: { statement(sql: string): StatementSync }, term: string): number {
  return Number((store.statement('SELECT max(milli) AS m FROM search_terms WHERE term = ?').get(term) as { m: number | null }).m ?? 0);
}

/**
 * The tier from the revisions in order of their bound on any query's share sum (migration 12:
 * `top_shares`, TOP_SHARES of their largest shares summed), each filtered by its signature and
 * bounded by its sketches as the driver's rows are (every query term's bucket bound, no row of
 * its own), read in chunks. The candidates are ranked exactly 32 at a time in bound order while
 * their bound reaches both what an unread revision can reach and the want-th exact rank; once
 * that rank is above every unread revision's bound, the page is sure. For the 3 to 5 most common
 * words at 100k this reads 243 to 5,081 revisions where the driver has 41,000 to 59,000 rows
 * (docs/BENCHMARKS.md "Search by number of terms"). Returns undefined past a quarter of the
 * driver's rows (or 1,000; the bound then reaches most revisions); what it ranked stays ranked
 * for the driver's scan.
 */
export function revisionScan(scan: RevisionScan): RankedRow[] | null | undefined {
  const { store, terms, largest, asOf, filter, mask, want, seen, ranked, rank, floor, driverRows } = scan;
  const n = terms.length;
  const [driver] = terms as [string, ...string[]];
  const sketchBound = [largestShare(store, driver), ...largest]
    .map((l, i) => sketchShareBoundSql(termSlots(terms[i]!), l, 'min'))
    .join(' + ');
  const bound = shareSumBound(n);
  const column = `t.${bound.column}`;
  const unreadBound = (top: number) => top + n;
  const chunkOf = (last: { top: number; rev: number } | undefined, limit: number) => {
    const statement = store.statement(
      `SELECT t.rev, t.listing_id, min(${sketchBound}, ${column}) + ${n} AS hi, ${column}
       FROM search_revisions t INDEXED BY ${bound.index} ${filter.joinListings}
       WHERE t.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?) AND ${filter.conditions} AND (t.sig & ?) = ?
         ${last ? `AND ${column} <= ? AND NOT (${column} = ? AND t.rev <= ?)` : ''}
       ORDER BY ${column} DESC, t.rev ASC LIMIT ?`,
    );
    statement.setReturnArrays(true);
    return statement.all(
      asOf,
      asOf,
      ...filter.params,
      mask,
      mask,
      ...(last ? [last.top, last.top, last.rev] : []),
      limit,
    ) as unknown as Array<[number, number, number, number]>;
  };
  const reaches = (hi: number) => {
    const reach = floor();
    return reach === undefined || hi >= reach;
  };
  let pending: Array<[number, number, number]> = [];
  let last: { top: number; rev: number } | undefined;
  for (let chunk = Math.max(8 * want, 32), read = 0; ; chunk *= 2) {
    const rows = chunkOf(last, chunk);
    read += rows.length;
    for (const [rev, listingId, hi] of rows) if (!seen.has(rev)) pending.push([rev, listingId, hi]);
    const done = rows.length < chunk;
    const tail = rows.at(-1);
    if (tail) last = { top: Number(tail[3]), rev: Number(tail[0]) };
    // What a revision not read yet can reach (none once the index is read to its end).
    const unread = done || !last ? -Infinity : unreadBound(last.top);
    pending.sort((x, y) => y[2] - x[2] || x[1] - y[1]);
    let next = 0;
    for (; next < pending.length && pending[next]![2] >= unread && reaches(pending[next]![2]); next += 32)
      rank(pending.slice(next, next + 32));
    pending = pending.slice(next).filter(([, , hi]) => reaches(hi));
    // Every candidate left is bounded below what an unread revision can reach, so once the
    // want-th rank is above that (or nothing is unread), none of them can be on the page either.
    const reach = floor();
    if (done || (reach !== undefined && reach > unread)) return ranked.length >= want ? ranked.slice(0, want) : null;
    if (read > Math.max(driverRows / 4, REVISION_SCAN_MIN_ROWS)) return undefined;
  }
}
