/**
 * The all-terms tier of MASK_SCAN_TERMS or more common words on PostgreSQL, read from the
 * revisions whose common-term mask holds them all (catalog migration 21, common-terms.ts;
 * docs/CATALOG.md "Search" and "Postgres"), as sqlite/common-terms.ts commonTermsTopK: a few
 * hundred index entries instead of the rarest term's rows (a third of the listings for the 8 most
 * common words) or, for 7, the revisions by their 7-share sum.
 */
import { commonTermsQuery } from '../common-terms.ts';
import type { CursorState, RankedRow } from '../search.ts';
import { sketchShareBoundSql, termSlots } from '../terms.ts';
import type { DiscoveryFilters } from '../types.ts';
import { parameters, termRowConditions, type Db } from './queries.ts';
import { exactRanks } from './revision-scan.ts';

/** A mask no chosen terms give: a revision written before migration 21 (its default), read by every mask scan. */
const UNKNOWN_MASK = -1;

/**
 * The fewest terms whose tier the masks read on Postgres: one fewer than SQLite's 8 (a query of n
 * terms reads 2^(16 − n) masks). At 100k the 7 most common words' 512 masks hold 1,089 revisions,
 * read in one statement of about 7 ms, where the revision scan by the 7-share sum reads 10,416 (the
 * tier in 15 against 40 ms p50 in process); the 6 most common words' 1,024 hold 3,340 (20 ms for
 * the statement), no faster than their scan (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite").
 */
export const MASK_SCAN_TERMS = 7;

/** Candidates ranked exactly per statement, in bound order (as the revision scan's). */
const RANK_BATCH = 32;

/**
 * The best `want` listings after the cursor holding every term, from the revisions whose mask
 * holds the query's bits (as sqlite/common-terms.ts commonTermsTopK): one statement reads those
 * revisions in the snapshot, through the filters, from the index by mask (the 256 masks of 8 terms,
 * 512 of 7, as `= ANY`), each with its query terms' sketch bound; each is bounded as ../common-terms.ts
 * says and ranked exactly 32 at a time in bound order while the bound reaches the want-th exact
 * rank. Every revision of the tier is read, so the page is sure. Returns null when the tier holds
 * fewer than `want` listings after the cursor, undefined when a term is not chosen (or too few are).
 */
export async function commonTermsTier(
  db: Db,
  terms: string[],
  filters: DiscoveryFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
): Promise<RankedRow[] | null | undefined> {
  const n = terms.length;
  const tier = n * 1_000_000;
  if (after && after.r < tier) return null;
  // The chosen terms and each query term's largest share now (at least its largest in the
  // snapshot, so the top code's bound holds), in one statement.
  const known = await db.query<{ term: string; bit: number | null; m: number | null }>(
    `SELECT c.term, c.term_bit AS bit, NULL::int AS m FROM search_common_terms c
     UNION ALL SELECT q.term, NULL, (SELECT max(s.milli) FROM search_terms s WHERE s.term = q.term) FROM unnest($1::text[]) AS q(term)`,
    [terms],
  );
  const bits = new Map<string, number>();
  const largest = new Map<string, number>();
  for (const { term, bit, m } of known.rows) {
    if (bit !== null) bits.set(term, Number(bit));
    else largest.set(term, Number(m ?? 0));
  }
  const query = commonTermsQuery(bits, terms, MASK_SCAN_TERMS);
  if (!query) return undefined;
  const params = parameters();
  const { p } = params;
  const rows = termRowConditions(filters, asOf, params);
  const sketchBound = terms.map((term) => sketchShareBoundSql(termSlots(term), largest.get(term)!, 'least')).join(' + ');
  const result = await db.query<[string, string, string, number, string]>({
    text: `SELECT t.rev, t.listing_id, ${sketchBound} AS sketch, t.common_mask, t.common_milli
       FROM search_revisions t ${rows.join}
       WHERE t.common_mask = ANY(${p([...query.masks, UNKNOWN_MASK])}::int[]) AND ${rows.where}`,
    values: params.values,
    rowMode: 'array',
  });
  const candidates = result.rows
    .map(([rev, listingId, sketch, mask, milli]): [number, number, number] => [
      Number(rev),
      Number(listingId),
      query.bound(Number(sketch), Number(mask), Number(milli)) + n,
    ])
    .sort((x, y) => y[2] - x[2] || x[1] - y[1]);
  const ranked: RankedRow[] = [];
  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  for (let next = 0; next < candidates.length; next += RANK_BATCH) {
    const reach = ranked.length >= want ? ranked[want - 1]!.rank - tier : undefined;
    if (reach !== undefined && candidates[next]![2] < reach) break;
    // The count is checked though the mask says it: an unknown mask's revision may lack a term.
    for (const { listing_id, held, rank } of await exactRanks(db, terms, candidates.slice(next, next + RANK_BATCH)))
      if (held === n && pastCursor({ listing_id, rank })) ranked.push({ listing_id, rank });
    ranked.sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id);
  }
  return ranked.length >= want ? ranked.slice(0, want) : null;
}
