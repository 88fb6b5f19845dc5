/**
 * The common-term masks of both stores (docs/CATALOG.md "Search"; SQLite catalog migration 16,
 * sqlite/common-terms.ts; Postgres catalog migration 21, postgres/common-terms.ts): the catalog's
 * COMMON_TERMS terms with most rows get a bit each, and every search revision carries exactly which
 * of them it holds and the sum of their rounded shares. A query of 8 or more of them reads the
 * revisions whose mask holds all its bits, exactly its all-terms tier, instead of the rarest
 * term's rows. What does not depend on the store: the sizes, a revision's mask, the masks a query
 * reads and a revision's bound.
 */
import { FIELD_WEIGHTS } from './terms.ts';

/**
 * How many terms get a bit: the catalog's most common terms when they were chosen. A query of n of
 * them reads 2^(COMMON_TERMS − n) masks (256 for 8 terms), so the masks serve only queries of more
 * than REVISION_SCAN_TERMS (terms.ts) terms, all of them common. With 16, the 8 most common
 * words of the 100k corpus rank 69 candidates of the 340 revisions holding all 8, with 12 they rank
 * 44 and serve fewer queries (docs/BENCHMARKS.md "Search by number of terms").
 */
export const COMMON_TERMS = 16;

/**
 * How many revisions a catalog holds when the write that finds no common terms chooses them (a
 * catalog migrated empty, as every new one is): enough for the terms with most rows to be those of
 * the catalog it grows into, few enough for the choice (one pass over those terms' rows and an
 * index) to cost one write a fraction of a second (docs/CATALOG.md "Search").
 */
export const COMMON_TERMS_CHOSEN_AT = 10_000;

/**
 * The least rounded share a held term can have: one occurrence in the lightest field, weight × 1/2.
 * A revision holding a common term beyond the query's has that much less for the query's terms.
 */
const LEAST_SHARE_MILLI = Math.round(1000 * Math.min(...Object.values(FIELD_WEIGHTS)) * 0.5);

/** A new revision's common-term mask and the sum of those terms' rounded shares, from its scores and the chosen bits. */
export function commonMaskOf(bits: ReadonlyMap<string, number>, scores: ReadonlyMap<string, number>): { mask: number; milli: number } {
  let mask = 0;
  let milli = 0;
  for (const [term, bit] of bits) {
    const score = scores.get(term);
    if (score === undefined) continue;
    mask |= 1 << bit;
    milli += Math.round(score * 1000);
  }
  return { mask, milli };
}

/** The masks a query reads, and how to bound a revision read by them. */
export interface CommonTermsQuery {
  /** Every mask holding the query's bits: the query's bits with each subset of the other chosen bits. */
  masks: number[];
  /**
   * An upper bound on a revision's share part for the query (before the + n of the rounding): the
   * smaller of its query terms' sketch bound and its common terms' share sum less the least share
   * of each common term it holds beyond the query's.
   */
  bound: (sketch: number, mask: number, milli: number) => number;
}

/**
 * The masks of a query whose every term is chosen (`bits`, the chosen terms' bits), or undefined
 * when a term is not chosen or fewer than `fewest` are, so the masks are few: at most
 * 2^(COMMON_TERMS − fewest), 256 for SQLite's 8 (postgres/common-terms-scan.ts reads 7's 512).
 */
export function commonTermsQuery(bits: ReadonlyMap<string, number>, terms: string[], fewest = 8): CommonTermsQuery | undefined {
  if (!terms.every((term) => bits.has(term))) return undefined;
  const query = terms.reduce((m, term) => m | (1 << bits.get(term)!), 0);
  const rest = [...bits.values()].filter((bit) => !(query & (1 << bit)));
  if (rest.length > COMMON_TERMS - fewest) return undefined;
  const masks: number[] = [];
  for (let subset = 0; subset < 1 << rest.length; subset++)
    masks.push(rest.reduce((m, bit, i) => (subset & (1 << i) ? m | (1 << bit) : m), query));
  const extra = (mask: number) => rest.reduce((k, bit) => k + ((mask >> bit) & 1), 0);
  return { masks, bound: (sketch, mask, milli) => Math.min(sketch, milli - LEAST_SHARE_MILLI * extra(mask)) };
}
