/**
 * The tiers of a several-term search on PostgreSQL when its rarest terms are rare (natural
 * sentences: common words mixed with content words), the port of sqlite/term-tiers.ts
 * termTiersTopK (docs/CATALOG.md "Search" and "Postgres"). A listing's rank is 1e6 per query term
 * it holds plus its shares, so the page is the listings holding the most terms, and every listing
 * holding k of the n terms holds one of the n − k + 1 rarest: those drivers' rows, a few thousand,
 * replace the threshold walk over the common words' share lists (which read tens of thousands of
 * rows and looked up every other term for each).
 */
import { createHash } from 'node:crypto';
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
/**
 * Candidates a first page's read sends, in bound order (at least 4 × the page): a page reaching past
 * them reads them all. A first page is usually decided by the first 64 or so; sending and decoding
 * 512 cost the natural sentences' first pages about a tenth more at 100k (docs/BENCHMARKS.md).
 */
const FIRST_CANDIDATES = 128;
/** The same after a cursor (at least 16 × the page): its read passes the candidates above the cursor first. */
const FIRST_CANDIDATES_AFTER_CURSOR = 512;

/** A revision's exact rank (`rev` its column, `terms` the query's terms): its terms counted and its shares summed over its rows. */
export const exactRankSql = (rev: string, terms: string) =>
  `SELECT count(*) * 1000000 + ${roundedMilliSql('o.units')} AS rank FROM search_terms o WHERE o.term = ANY(${terms}::text[]) AND o.rev = ${rev}`;

/**
 * The rank of every candidate. Its text is the same for every query, so it is a named statement,
 * parsed and planned once per connection (its plan does not depend on the values: an index lookup
 * per revision).
 */
async function exactRanks(db: Db, terms: string[], batch: Array<{ rev: number; listing_id: number }>): Promise<RankedRow[]> {
  const result = await db.query<[string, string]>({
    name: 'term_tiers_exact_ranks',
    text: `SELECT r.listing_id, x.rank FROM unnest($1::bigint[], $2::bigint[]) AS r(rev, listing_id),
       LATERAL (${exactRankSql('r.rev', '$3')}) x`,
    values: [batch.map((c) => c.rev), batch.map((c) => c.listing_id), terms],
    rowMode: 'array',
  });
  return result.rows.map(([listingId, rank]) => ({ listing_id: Number(listingId), rank: Number(rank) }));
}

/**
 * How many of a query's terms the signature `sig` may hold by its bits (`bits`: each term's), a bit
 * counted once for each term it stands for (two terms may share one): for each m, the bits of at
 * least m terms, counted by bit_count (a shift and a mask per term cost about 0.9 ms of 8 terms'
 * 7,000 driver rows at 100k).
 */
export function signatureTermsSql(bits: number[], sig: string, p: (value: unknown) => string): string {
  const times = new Map<number, number>();
  for (const bit of bits) times.set(bit, (times.get(bit) ?? 0) + 1);
  const masks: bigint[] = [];
  for (const [bit, k] of times) for (let m = 0; m < k; m++) masks[m] = (masks[m] ?? 0n) | (1n << BigInt(bit));
  return masks.map((mask) => `bit_count((${sig} & ${p(BigInt.asIntN(64, mask).toString())}::bigint)::bit(64))`).join(' + ');
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
 * (the threshold walk and the aggregates decide it then). `firstRows`: how many candidates the
 * first read sends (FIRST_CANDIDATES or FIRST_CANDIDATES_AFTER_CURSOR, unless set: a test lowers it).
 */
export async function termTiersTier(
  db: Db,
  counted: Array<{ term: string; n: number }>,
  filters: DiscoveryFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
  cap = TIER_DRIVER_ROWS_CAP,
  firstRows?: number,
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
  // The statement's text depends only on the number of terms, of drivers and of shared bits, and on
  // the filters' shape: the terms, their bits and buckets are parameters, so unfiltered, it is a
  // named statement, planned once per connection for every sentence of its shape (the planning was
  // about 0.9 ms of a 6-8-word page's statement). Filtered, the filters' values may change the plan:
  // planned each time.
  const params = parameters();
  const { p } = params;
  // Each other term's largest share now (m.l<i>, read once by the statement itself, one round trip
  // fewer; OFFSET 0 keeps the planner from copying the subquery into every use): at least its
  // largest in the snapshot (rows are only added or pruned past a cursor's lifetime), so the top
  // code's bound holds.
  const rest = terms.map((_, i) => i).filter((i) => i >= drivers);
  const largest = rest.length
    ? `, (SELECT ${rest.map((i) => `(SELECT coalesce(max(s.milli), 0) FROM search_terms s WHERE s.term = ${p(terms[i])}) AS l${i}`).join(', ')} OFFSET 0) m`
    : '';
  // A term that does not drive: nothing unless the revision's signature has its bit and both its
  // sketch buckets hold a share (an empty one: the revision surely lacks it); then 1e6 and the
  // smaller bucket's bound on its share (the top code: only the term's largest share bounds it).
  const restBound = (i: number) => {
    const code = `least((g.sketch_a >> ${p(4 * slots[i]!.bucketA)}) & 15, (g.sketch_b >> ${p(4 * slots[i]!.bucketB)}) & 15)`;
    return `((g.sig >> ${p(slots[i]!.bit)}) & 1) * CASE ${code} WHEN 0 THEN 0 WHEN ${SHARE_CODE_TOP} THEN 1000000 + m.l${i}
      ELSE 1000000 + least(${SHARE_CODE_QUANTUM} * ${code}, m.l${i}) END`;
  };
  const rows = termRowConditions(filters, asOf, params);
  // Per revision: the drivers it holds (exactly: a listing holding a driver has a row among that
  // driver's) and their shares, and the other terms' bound from its signature and sketches, which
  // every one of its rows carries (catalog migration 22), read with them from the covering index;
  // then upper bounds on the number of terms it holds and on its rank (the stored milli are each
  // rounded: + n). A bound is at least 1e6 per term held and less than one more (every share is
  // under 1e6 / n), so bound order is tier order: the page is read from the first rows in it, and
  // only those are sent, with how many candidates hold each number of terms (sending and decoding
  // every candidate, 4,901 for a 6-word sentence at 100k, cost 2-7 ms more a page: docs/BENCHMARKS.md).
  // The other terms' bound is computed once per revision (OFFSET 0: pulled up into the select, the
  // planner wrote it into both `terms` and `hi`, twice the cost, a third of the statement's time).
  const bitsHeld = signatureTermsSql(
    slots.map(({ bit }) => bit),
    't.sig',
    p,
  );
  const candidatesSql = `SELECT c.rev, c.listing_id, c.held + c.rest / 1000000 AS terms, c.held * 1000000 + c.milli + c.rest + ${n} AS hi
       FROM (
         SELECT g.rev, g.listing_id, g.held, g.milli, ${rest.map(restBound).join(' + ') || '0'} AS rest
         FROM (
           SELECT t.rev, min(t.listing_id) AS listing_id, count(*) AS held, sum(t.milli) AS milli,
             min(t.sig) AS sig, min(t.sketch_a) AS sketch_a, min(t.sketch_b) AS sketch_b
           FROM search_terms t ${rows.join}
           WHERE t.term = ANY(${p(terms.slice(0, drivers))}::text[]) AND ${rows.where}
             AND ${bitsHeld} >= ${p(lowestTier)}
           GROUP BY t.rev
         ) g${largest}
         OFFSET 0
       ) c`;
  // The first read also ranks its first RANK_BATCH candidates exactly (the batch the tiers below
  // rank first: bound order is tier order), one round trip fewer; a read of every candidate ranks none.
  const limitAt = params.values.length;
  const limit = p(null);
  const rankedAt = params.values.length;
  const rankFirst = p(0);
  const text = `WITH b AS MATERIALIZED (${candidatesSql}),
       f AS (SELECT f.*, row_number() OVER () AS ord FROM (SELECT rev, listing_id, terms, hi FROM b ORDER BY hi DESC, listing_id ASC LIMIT ${limit}) f)
     (SELECT rev, listing_id, terms, hi, CASE WHEN ord <= ${rankFirst} THEN (${exactRankSql('f.rev', p(terms))}) END FROM f ORDER BY ord)
     UNION ALL
     (SELECT NULL, NULL, terms, count(*), NULL FROM b GROUP BY terms)`;
  const name = rows.join === '' ? `term_tiers_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}` : undefined;
  type Candidate = { rev: number; listing_id: number; terms: number; hi: number; rank?: number };
  /**
   * The first `first` candidates in bound order (every one when undefined), complete when none is
   * left out, the first `rankFirst` of them ranked; and how many hold each number of terms.
   */
  const read = async (first: number | undefined, rankFirst: number) => {
    const values = [...params.values];
    values[limitAt] = first ?? null;
    values[rankedAt] = rankFirst;
    const result = await db.query<[string | null, string | null, string, string, string | null]>({ name, text, values, rowMode: 'array' });
    const read: Candidate[] = [];
    const holding = new Map<number, number>();
    for (const [rev, listingId, terms, hi, rank] of result.rows) {
      if (rev === null) holding.set(Number(terms), Number(hi));
      else
        read.push({
          rev: Number(rev),
          listing_id: Number(listingId),
          terms: Number(terms),
          hi: Number(hi),
          ...(rank === null ? {} : { rank: Number(rank) }),
        });
    }
    const total = [...holding.values()].reduce((sum, count) => sum + count, 0);
    return { bounded: read, holding, complete: read.length === total };
  };
  let { bounded, holding, complete } = await read(
    firstRows ?? (after ? Math.max(FIRST_CANDIDATES_AFTER_CURSOR, 16 * want) : Math.max(FIRST_CANDIDATES, 4 * want)),
    RANK_BATCH,
  );

  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  /** Every listing ranked exactly so far that follows the cursor, best first. */
  const ranked: RankedRow[] = [];
  /** The candidates ranked, with the number of terms they may hold. */
  const seen = new Map<number, number>();
  const keep = (rows: RankedRow[]) => {
    for (const row of rows) if (pastCursor(row)) ranked.push(row);
    ranked.sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id);
  };
  const rank = async (batch: Candidate[]) => {
    for (const { rev, terms: held } of batch) seen.set(rev, held);
    keep(await exactRanks(db, terms, batch));
  };
  const firstRanked = bounded.filter((r) => r.rank !== undefined);
  for (const { rev, terms: held } of firstRanked) seen.set(rev, held);
  keep(firstRanked.map(({ listing_id, rank }) => ({ listing_id, rank: rank! })));
  for (let k = firstTier; k >= lowestTier; k--) {
    const tier = k * 1_000_000;
    /** The want-th exact rank, once it is in this tier or above (no other listing can then beat it). */
    const floor = () => (ranked.length >= want && ranked[want - 1]!.rank >= tier ? ranked[want - 1]!.rank : undefined);
    let candidates = bounded.filter((r) => r.terms >= k && !seen.has(r.rev));
    // Too few listings to fill the page from this tier up: the next tier's candidates hold them all
    // again. (Counted by the server, those not read yet too.)
    const unranked =
      [...holding].reduce((sum, [held, count]) => sum + (held >= k ? count : 0), 0) - [...seen.values()].filter((held) => held >= k).length;
    if (k > 1 && unranked + ranked.filter((r) => r.rank >= tier).length < want) continue;
    for (let next = 0; ; next += RANK_BATCH) {
      const reach = floor();
      if (next >= candidates.length) {
        // Every candidate read is ranked; those not read are bounded by the last one read.
        const last = bounded.at(-1)?.hi ?? -Infinity;
        if (complete || (reach !== undefined && last < reach)) break;
        ({ bounded, holding, complete } = await read(undefined, 0));
        candidates = bounded.filter((r) => r.terms >= k && !seen.has(r.rev));
        next = -RANK_BATCH;
        continue;
      }
      if (reach !== undefined && candidates[next]!.hi < reach) break;
      await rank(candidates.slice(next, next + RANK_BATCH));
    }
    if (floor() !== undefined) return ranked.slice(0, want);
    // Every query term drove: every match after the cursor is ranked.
    if (k === 1) return ranked.slice(0, want);
  }
  return null;
}
