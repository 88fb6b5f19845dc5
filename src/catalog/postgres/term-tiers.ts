/**
 * The tiers of a several-term search on PostgreSQL when its rarest terms are rare (natural
 * sentences: common words mixed with content words), the port of sqlite/term-tiers.ts
 * termTiersTopK (docs/CATALOG.md "Search" and "Postgres"). A listing's rank is 1e6 per query term
 * it holds plus its shares, so the page is the listings holding the most terms, and every listing
 * holding k of the n terms holds one of the n − k + 1 rarest: those drivers' rows, a few thousand,
 * replace the threshold walk over the common words' share lists (which read tens of thousands of
 * rows and looked up every other term for each).
 */
import { roundedMilliSql } from './migrations.ts';
import { parameters, termRowConditions, type Db } from './queries.ts';
import type { CursorState, RankedRow } from '../search.ts';
import { SHARE_CODE_QUANTUM, SHARE_CODE_TOP, termSlots } from '../terms.ts';
import type { DiscoveryFilters } from '../types.ts';

/**
 * How many rows the drivers may have in all, as on SQLite (sqlite/term-tiers.ts): past it the
 * caller's threshold walk and aggregates decide the page.
 */
export const TIER_DRIVER_ROWS_CAP = 20_000;
/** Candidates ranked exactly per statement, in bound order. */
const RANK_BATCH = 32;

/** The rank of every candidate, its terms counted and its shares summed over the revision's rows. */
async function exactRanks(db: Db, terms: string[], batch: Array<{ rev: number; listing_id: number }>): Promise<RankedRow[]> {
  const result = await db.query<[string, string]>({
    text: `SELECT r.listing_id, x.rank FROM unnest($1::bigint[], $2::bigint[]) AS r(rev, listing_id),
       LATERAL (SELECT count(*) * 1000000 + ${roundedMilliSql('o.units')} AS rank
                FROM search_terms o WHERE o.term = ANY($3::text[]) AND o.rev = r.rev) x`,
    values: [batch.map((c) => c.rev), batch.map((c) => c.listing_id), terms],
    rowMode: 'array',
  });
  return result.rows.map(([listingId, rank]) => ({ listing_id: Number(listingId), rank: Number(rank) }));
}

/**
 * The best `want` matches after the cursor, tier by tier, as sqlite/term-tiers.ts termTiersTopK:
 * the drivers are the rarest terms while their rows total at most `cap` (`counted`: each term's
 * rows, search.ts termRowCounts). One statement reads every driver's rows in the snapshot and
 * through the filters whose signature holds the bits of at least the lowest tier's number of query
 * terms, grouped per revision on the server: the drivers it holds (exactly, from their own rows)
 * and their shares; and, from the revision's signature and sketches that each of its rows carries
 * (catalog migration 22), for each other term whose bit it holds and whose two sketch buckets are
 * not empty, 1e6 and the sketch's bound on its share. Then, from the tier of the cursor
 * down, that tier's candidates are ranked exactly 32 at a time in bound order while the next bound
 * reaches the `want`-th exact rank of that tier or above. Returns undefined when no term fits the
 * cap (the caller's common-word paths), null when the page reaches below the tiers the cap allows
 * (the threshold walk and the aggregates decide it then).
 */
export async function termTiersTier(
  db: Db,
  counted: Array<{ term: string; n: number }>,
  filters: DiscoveryFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
  cap = TIER_DRIVER_ROWS_CAP,
): Promise<RankedRow[] | null | undefined> {
  const n = counted.length;
  const sorted = [...counted].sort((a, b) => a.n - b.n || (a.term < b.term ? -1 : 1));
  let drivers = 0;
  for (let rows = 0; drivers < n && rows + sorted[drivers]!.n <= cap; drivers++) rows += sorted[drivers]!.n;
  if (drivers === 0) return undefined;
  // The cursor's tier and those above it are before the cursor, except the cursor's own tier.
  const firstTier = after ? Math.min(n, Math.floor(after.r / 1_000_000)) : n;
  if (drivers < n - firstTier + 1) return null;
  const lowestTier = n - drivers + 1;
  const terms = sorted.map(({ term }) => term);
  const slots = terms.map(termSlots);
  // Each other term's largest share now: at least its largest in the snapshot (rows are only added
  // or pruned past a cursor's lifetime), so the top code's bound holds.
  const largest = new Map<string, number>();
  if (drivers < n) {
    const result = await db.query<{ term: string; m: number | null }>(
      `SELECT q.term, (SELECT max(s.milli) FROM search_terms s WHERE s.term = q.term) AS m FROM unnest($1::text[]) AS q(term)`,
      [terms.slice(drivers)],
    );
    for (const { term, m } of result.rows) largest.set(term, Number(m ?? 0));
  }
  // The bits and buckets are a term's MD5 bytes (small integers), the largest shares integers: written into the statement.
  const bit = (i: number, sig: string) => `((${sig} >> ${slots[i]!.bit}) & 1)`;
  // A term that does not drive: nothing unless the revision's signature has its bit and both its
  // sketch buckets hold a share (an empty one: the revision surely lacks it); then 1e6 and the
  // smaller bucket's bound on its share (the top code: only the term's largest share bounds it).
  const restBound = (i: number) => {
    const code = `least((g.sketch_a >> ${4 * slots[i]!.bucketA}) & 15, (g.sketch_b >> ${4 * slots[i]!.bucketB}) & 15)`;
    const l = largest.get(terms[i]!)!;
    return `${bit(i, 'g.sig')} * CASE ${code} WHEN 0 THEN 0 WHEN ${SHARE_CODE_TOP} THEN ${1_000_000 + l}
      ELSE 1000000 + least(${SHARE_CODE_QUANTUM} * ${code}, ${l}) END`;
  };
  const rest = terms.map((_, i) => i).filter((i) => i >= drivers);
  const params = parameters();
  const { p } = params;
  const rows = termRowConditions(filters, asOf, params);
  // Per revision: the drivers it holds (exactly: a listing holding a driver has a row among that
  // driver's) and their shares, and the other terms' bound from its signature and sketches, which
  // every one of its rows carries (catalog migration 22), read with them from the covering index.
  const result = await db.query<[string, string, string, string, string]>({
    text: `SELECT g.rev, g.listing_id, g.held, g.milli, ${rest.map(restBound).join(' + ') || '0'}
       FROM (
         SELECT t.rev, min(t.listing_id) AS listing_id, count(*) AS held, sum(t.milli) AS milli,
           min(t.sig) AS sig, min(t.sketch_a) AS sketch_a, min(t.sketch_b) AS sketch_b
         FROM search_terms t ${rows.join}
         WHERE t.term = ANY(${p(terms.slice(0, drivers))}::text[]) AND ${rows.where}
           AND ${terms.map((_, i) => bit(i, 't.sig')).join(' + ')} >= ${p(lowestTier)}
         GROUP BY t.rev
       ) g`,
    values: params.values,
    rowMode: 'array',
  });
  // Upper bounds on the number of terms held and on the rank (the stored milli are each rounded: + n).
  const bounded = result.rows
    .map(([rev, listingId, held, milli, restOf]) => {
      const [h, r] = [Number(held), Number(restOf)];
      return {
        rev: Number(rev),
        listing_id: Number(listingId),
        terms: h + Math.floor(r / 1_000_000),
        hi: h * 1_000_000 + Number(milli) + r + n,
      };
    })
    .sort((x, y) => y.hi - x.hi || x.listing_id - y.listing_id);

  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  /** Every listing ranked exactly so far that follows the cursor, best first. */
  const ranked: RankedRow[] = [];
  const seen = new Set<number>();
  const rank = async (batch: typeof bounded) => {
    for (const { rev } of batch) seen.add(rev);
    for (const row of await exactRanks(db, terms, batch)) if (pastCursor(row)) ranked.push(row);
    ranked.sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id);
  };
  for (let k = firstTier; k >= lowestTier; k--) {
    const tier = k * 1_000_000;
    /** The want-th exact rank, once it is in this tier or above (no other listing can then beat it). */
    const floor = () => (ranked.length >= want && ranked[want - 1]!.rank >= tier ? ranked[want - 1]!.rank : undefined);
    const candidates = bounded.filter((r) => r.terms >= k && !seen.has(r.rev));
    // Too few listings to fill the page from this tier up: the next tier's candidates hold them all again.
    if (k > 1 && candidates.length + ranked.filter((r) => r.rank >= tier).length < want) continue;
    for (let next = 0; next < candidates.length; next += RANK_BATCH) {
      const reach = floor();
      if (reach !== undefined && candidates[next]!.hi < reach) break;
      await rank(candidates.slice(next, next + RANK_BATCH));
    }
    if (floor() !== undefined) return ranked.slice(0, want);
    // Every query term drove: every match after the cursor is ranked.
    if (k === 1) return ranked.slice(0, want);
  }
  return null;
}
