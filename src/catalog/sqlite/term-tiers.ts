/**
 * The tiers of a several-term search on SQLite read by term signatures (docs/CATALOG.md "Search"):
 * a listing's rank is 1e6 per query term it holds plus its shares, so the page is the listings
 * holding the most terms. The rarest terms' rows are filtered and bounded by the signatures every
 * row carries (terms.ts termSignature, migration 10) and ranked exactly in bound order until the
 * page is sure: termTiersTopK when the rarest terms are rare (queries mixing common and content
 * words), allTermsTopK for the listings holding every term when each term is common.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { TermCounts, type CursorState, type RankedRow } from '../search.ts';
import { REVISION_SCAN_TERMS, SHARE_CODE_QUANTUM, SHARE_CODE_TOP, sketchShareBoundSql, termSlots } from '../terms.ts';
import { largestShare, revisionScan } from './revision-scan.ts';
import { commonTermsTopK } from './common-terms.ts';
import { commonBits, exactRankSql, type TermRowFilter } from './queries.ts';
import { searched } from '../query-paths.ts';

/** What the tier reads through: the SQLite store (search.ts SearchSource). */
interface TermRows {
  readonly db: DatabaseSync;
  statement(sql: string): StatementSync;
}

/** Counts kept a while per database (TermCounts), by key: a term's full count, or its count up to a cap (termRowsUpTo). */
const keptCounts = new WeakMap<DatabaseSync, TermCounts>();
function keptCount(store: TermRows, key: string, count: () => number): number {
  let counts = keptCounts.get(store.db);
  if (!counts) keptCounts.set(store.db, (counts = new TermCounts()));
  const known = counts.get(key);
  if (known !== undefined) return known;
  const n = count();
  counts.set(key, n);
  return n;
}

/** How many rows a common term has (every revision, any snapshot), counted in full and kept a while. */
function termRowCount(store: TermRows, term: string): number {
  return keptCount(store, term, () =>
    Number(
      (store.statement('SELECT count(*) AS n FROM search_terms INDEXED BY search_terms_top WHERE term = ?').get(term) as { n: number }).n,
    ),
  );
}

/**
 * The terms of an all-terms tier, rarest first, and the rarest's rows (every term has more than
 * PROBE_ROWS rows here: termTiersTopK takes the others). When every term is one of the catalog's
 * chosen common terms, their bits are their order by rows at the choice (common-terms.ts: bit 0
 * the most rows), so only the rarest is counted: counting each of three common words in full cost
 * a query about 0.25 s at 1M once per reader and count lifetime, and read every term's index range
 * from disk after a start. The order may have drifted since the choice; any term holds the same
 * tier, so a driver with a few more rows than the rarest costs time, never a different page.
 * Otherwise every term's full count, kept a while (termRowCount).
 */
function rarestFirst(store: TermRows, terms: string[]): { byRows: string[]; driverRows: number } {
  const bits = commonBits((sql) => store.statement(sql));
  if (terms.every((term) => bits.has(term))) {
    const byRows = [...terms].sort((a, b) => bits.get(b)! - bits.get(a)!);
    return { byRows, driverRows: termRowCount(store, byRows[0]!) };
  }
  const counted = terms.map((term) => ({ term, n: termRowCount(store, term) })).sort((a, b) => a.n - b.n);
  return { byRows: counted.map(({ term }) => term), driverRows: counted[0]!.n };
}

/**
 * The first tier of a several-term query: listings that contain every term rank above all
 * others (1e6 per matched term), so when that tier holds `want` listings after the cursor, its
 * best `want` are the page. It is read from the rarest term's rows only (term signatures,
 * terms.ts termSignature): a row whose signature lacks another term's bit is not in the tier; a
 * row that may be gets an upper bound on its rank, its own share plus, for each other term, the
 * smaller of its two sketch buckets' bounds (or the term's largest share, for the top code), all
 * computed by SQLite from the row itself, no key lookup. Rows are then ranked exactly in bound
 * order, a batch at a time, until the want-th exact rank is above every bound left. Returns null
 * when the tier cannot fill the page (the rarest term's rows held fewer matches after the cursor):
 * the lower tiers decide it then.
 */
function allTermsTopK(
  store: TermRows,
  terms: string[],
  asOf: number,
  filter: TermRowFilter,
  after: CursorState | undefined,
  want: number,
): RankedRow[] | null {
  const tier = terms.length * 1_000_000;
  if (after && after.r < tier) return null;
  const { byRows, driverRows } = rarestFirst(store, terms);
  const driver = byRows[0]!;
  if (driverRows === 0) return null;
  const others = terms.filter((term) => term !== driver);
  const slots = others.map(termSlots);
  const mask = BigInt.asIntN(
    64,
    [driver, ...others].reduce((m, term) => m | (1n << BigInt(termSlots(term).bit)), 0n),
  );
  // Each other term's largest share: its bound when its buckets hold the top code.
  const largest = others.map((term) => largestShare(store, term));
  // An upper bound on round(1000 × Σ shares): the stored milli are each rounded, so the sum is
  // within `terms.length` of them.
  const bound = ['t.milli', ...slots.map((s, i) => sketchShareBoundSql(s, largest[i]!, 'min')), String(terms.length)].join(' + ');
  const rowsFrom = `FROM search_terms t ${filter.joinListings}
       WHERE t.term = ? AND t.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?) AND ${filter.conditions} AND (t.sig & ?) = ?`;
  const rowParams = [driver, asOf, asOf, ...filter.params, mask, mask];
  /**
   * The next `limit` rows that may be in the tier, by bound (desc) and listing (asc), after
   * `last`, of bound at least `floor` (and so of share at least `floor` less every other term's
   * largest share: a shorter index range).
   */
  const othersLargest = largest.reduce((sum, m) => sum + m, 0) + terms.length;
  const candidates = (last: { hi: number; listing_id: number } | undefined, floor: number | undefined, limit: number) => {
    const statement = store.statement(
      `SELECT t.rev, t.listing_id, ${bound} AS hi ${rowsFrom}
         ${floor === undefined ? '' : `AND t.milli >= ? AND ${bound} >= ?`}
         ${last ? `AND (${bound} < ? OR (${bound} = ? AND t.listing_id > ?))` : ''}
       ORDER BY hi DESC, t.listing_id ASC LIMIT ?`,
    );
    statement.setReturnArrays(true);
    return statement.all(
      ...rowParams,
      ...(floor === undefined ? [] : [floor - othersLargest, floor]),
      ...(last ? [last.hi, last.hi, last.listing_id] : []),
      limit,
    ) as unknown as Array<[number, number, number]>;
  };
  const inTerms = terms.map(() => '?').join(', ');
  // Only a revision holding every term is in the tier, so the other terms are looked up first,
  // rarest first, and the first one missing ends a row's lookups: most rows the signature lets
  // through lack a term (its 64 bits are shared by the revision's dozens of terms), and they cost
  // one or two key lookups instead of one per query term.
  const rarestOthers = byRows.slice(1);
  const holdsEvery = rarestOthers.map(() => 'EXISTS (SELECT 1 FROM search_terms h WHERE h.term = ? AND h.rev = r.value)').join(' AND ');
  // (Not for revisions known to hold every term: the common-term masks, commonTermsTopK.)
  const exactly = (revs: Array<[number, number, number]>, holding: boolean) =>
    (
      store
        .statement(
          `SELECT r.value AS rev, ${exactRankSql(inTerms, 'r.value')} AS rank
           FROM json_each(?) r ${holdsEvery && !holding ? `WHERE ${holdsEvery}` : ''}`,
        )
        .all(...terms, JSON.stringify(revs.map(([rev]) => rev)), ...(holding ? [] : rarestOthers)) as Array<{ rev: number; rank: number }>
    ).map(({ rev, rank }) => ({ rev: Number(rev), rank: Number(rank) }));
  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  const ranked: RankedRow[] = [];
  const seen = new Set<number>();
  /** Ranks the rows not ranked yet exactly; keeps the tier's rows after the cursor. */
  const rank = (rows: Array<[number, number, number]>, holding = false) => {
    const fresh = rows.filter(([rev]) => !seen.has(rev));
    for (const [rev] of fresh) seen.add(rev);
    const listingOf = new Map(fresh.map(([rev, listingId]) => [rev, listingId]));
    for (const { rev, rank: r } of exactly(fresh, holding)) {
      const row = { listing_id: listingOf.get(rev)!, rank: r };
      if (r >= tier && pastCursor(row)) ranked.push(row);
    }
    ranked.sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id);
  };
  /** The want-th exact rank's share part, once the tier holds want rows after the cursor. */
  const floor = () => (ranked.length >= want ? ranked[want - 1]!.rank - tier : undefined);
  // More terms than the revision scan serves, every one common: the revisions whose common-term
  // mask holds them all (migration 16), a few hundred index entries where the driver has a third
  // of the listings.
  if (terms.length > REVISION_SCAN_TERMS) {
    const page = commonTermsTopK({
      store,
      terms: [driver, ...others],
      largest: [largestShare(store, driver), ...largest],
      asOf,
      filter,
      want,
      ranked,
      rankHolding: (rows) => rank(rows, true),
      floor,
    });
    if (page !== undefined) return searched('mask_scan', page);
  } else {
    const page = revisionScan({
      store,
      terms: [driver, ...others],
      largest,
      asOf,
      filter,
      mask,
      want,
      seen,
      ranked,
      rank,
      floor,
      driverRows,
    });
    if (page !== undefined) return searched('revision_scan', page);
  }

  // The rows in bound order, ranked exactly 32 at a time while the next bound reaches the want-th
  // exact rank (a bound equal to it may still win on its id); a first batch large enough for most
  // pages (a statement reads the whole range of the driver), then batches four times larger.
  let last: { hi: number; listing_id: number } | undefined;
  for (let batch = Math.max(32 * want, 1024); ; batch *= 4) {
    const rows = candidates(last, floor(), batch);
    let next = 0;
    for (; next < rows.length; next += 32) {
      const reach = floor();
      if (reach !== undefined && Number(rows[next]![2]) < reach) break;
      rank(rows.slice(next, next + 32));
    }
    if (next < rows.length || rows.length < batch) break;
    last = { hi: Number(rows.at(-1)![2]), listing_id: Number(rows.at(-1)![1]) };
  }
  return searched('all_terms_tier', ranked.length >= want ? ranked.slice(0, want) : null);
}

/**
 * How many rows the drivers of termTiersTopK may have in all. Past it the caller's threshold walk
 * and aggregates decide the page: every driver row passes a signature test, and each listing that
 * may reach the page is ranked by a key lookup per term (docs/BENCHMARKS.md "Search by number of terms").
 */
export const TIER_DRIVER_ROWS_CAP = 20_000;
/** A first count of each term's rows stops here. */
const PROBE_ROWS = 1000;

/** The rows of a term, counted up to `limit` (its few first index entries for a common term). */
function rowsUpTo(store: TermRows, term: string, limit: number): number {
  return Number(
    (
      store
        .statement('SELECT count(*) AS n FROM (SELECT 1 FROM search_terms INDEXED BY search_terms_top WHERE term = ? LIMIT ?)')
        .get(term, limit) as { n: number }
    ).n,
  );
}

/**
 * How many listings the search index holds (the search budget's function-word share, term-budget.ts;
 * hidden ones are out of it, ../lifecycle.ts), kept a while.
 */
export function listingCount(store: TermRows): number {
  const sql = 'SELECT count(*) AS n FROM listings WHERE search_stash IS NULL';
  return keptCount(store, '\u0002listings', () => Number((store.statement(sql).get() as { n: number }).n));
}

/**
 * A term's rows up to `cap` (the search budget's counts, term-budget.ts): past PROBE_ROWS kept a
 * while, as the tiers' counts are.
 */
export function termRowsCapped(store: TermRows, term: string, cap: number): number {
  return cap <= PROBE_ROWS ? rowsUpTo(store, term, cap) : keptCount(store, `${cap}\u0001${term}`, () => rowsUpTo(store, term, cap));
}

/**
 * A term's rows up to `cap + 1`: counted up to PROBE_ROWS, and past that up to the cap and one
 * more, kept a while. Past the cap a term cannot drive, and how many more rows it has does not
 * change the tiers; counting the most common word in full cost a query about 0.3 s at 1M (once per
 * reader and TERM_COUNT_TTL_MS), where counting to the cap costs about 1 ms. Only the all-terms
 * tier needs full counts: its driver's, or every term's when they are not all chosen common terms
 * (rarestFirst).
 */
function termRowsUpTo(store: TermRows, term: string, cap: number): number {
  const rows = rowsUpTo(store, term, PROBE_ROWS);
  // Keyed apart from the full counts (a term never holds the separator).
  return rows < PROBE_ROWS ? rows : keptCount(store, `${cap}\u0000${term}`, () => rowsUpTo(store, term, cap + 1));
}

/**
 * Whether the rarest of `terms` has at most `cap` rows, so that it can drive the tiers. Two terms
 * then take the tier first (search.ts): at 1M listings a content word of 1,000–3,000 rows beside
 * the most common word gives a page from its own rows in 2–6 ms, where the threshold walk read
 * 2,400 rows of each term (10–27 ms in process, docs/BENCHMARKS.md "Search by number of terms").
 */
export function rarestTermWithin(store: TermRows, terms: string[], cap = TIER_DRIVER_ROWS_CAP): boolean {
  return terms.some((term) => termRowsUpTo(store, term, cap) <= cap);
}

/**
 * The page of a several-term query when its rarest terms are rare, tier by tier. A listing holding
 * at least k of the n query terms holds at least one of the n − k + 1 rarest (the drivers of tier
 * k), so the listings of tiers k and above are among those drivers' rows whose signature holds the
 * bits of at least k query terms (a signature may hold a bit it has no term for, never the
 * reverse). One statement reads the rows of every driver the cap allows, each with an upper bound
 * on its rank computed from the row alone: 1e6 and its own share, and for each other query term
 * whose bit it holds and whose two sketch buckets are not empty (an empty one: the revision surely
 * lacks it), 1e6 and the sketch's bound on the share. Then, from the tier just below the cursor's
 * down, the rows of that tier's drivers are ranked exactly 32 at a time in bound order while the
 * next bound reaches the (`want`)-th exact rank of that tier or above; once that rank exists, no
 * other listing can beat it (it is either among the rows left, bounded below it, or in a lower tier,
 * at least 1e6 below). A tier whose drivers hold too few rows to fill the page is passed over
 * without ranking (the next tier's rows include them). Returns null when the page reaches below
 * the tiers the cap allows: the threshold walk and aggregates decide it then. When even the rarest
 * term has more rows than the cap, the all-terms tier alone (allTermsTopK).
 */
export function termTiersTopK(
  store: TermRows,
  terms: string[],
  asOf: number,
  filter: TermRowFilter,
  after: CursorState | undefined,
  want: number,
  cap = TIER_DRIVER_ROWS_CAP,
): RankedRow[] | null {
  const n = terms.length;
  // The drivers are the rarest terms: counted up to the cap and one more (termRowsUpTo: those past
  // it cannot drive). Any n − k + 1 terms would serve as tier k's drivers; the rarest read least.
  const counted = terms
    .map((term) => ({ term, rows: termRowsUpTo(store, term, cap) }))
    .sort((a, b) => a.rows - b.rows || (a.term < b.term ? -1 : 1));
  let drivers = 0;
  for (let rows = 0; drivers < n && rows + counted[drivers]!.rows <= cap; drivers++) rows += counted[drivers]!.rows;
  // Every term is common: the listings holding them all, from the rarest one's rows.
  if (drivers === 0) return allTermsTopK(store, terms, asOf, filter, after, want);
  // The cursor's tier and those above it are before the cursor, except the cursor's own tier.
  const firstTier = after ? Math.min(n, Math.floor(after.r / 1_000_000)) : n;
  const firstDrivers = n - firstTier + 1;
  if (drivers < firstDrivers) return null;
  const lowestTier = n - drivers + 1;
  const slots = counted.map(({ term }) => termSlots(term));
  const largest = counted.map(({ term }) => largestShare(store, term));
  // Per query term i: its bit (b), buckets (a, c: shift amounts) and largest share (l), as named
  // parameters, so the statement's text depends only on the number of terms and drivers.
  const named: Record<string, number | string> = { $asOf: asOf };
  counted.forEach(({ term }, i) => {
    Object.assign(named, {
      [`$t${i}`]: term,
      [`$b${i}`]: slots[i]!.bit,
      [`$a${i}`]: 4 * slots[i]!.bucketA,
      [`$c${i}`]: 4 * slots[i]!.bucketB,
      [`$l${i}`]: largest[i]!,
    });
  });
  const bit = (i: number) => `((t.sig >> $b${i}) & 1)`;
  const code = (i: number) => `min((t.sketch_a >> $a${i}) & 15, (t.sketch_b >> $c${i}) & 15)`;
  // A term that does not drive, on a row: nothing unless the row's bit for it is set and both its
  // buckets hold a share (an empty one: the revision surely lacks it); then 1e6 and the smaller
  // bucket's bound on its share (the top code: only the term's largest share bounds it).
  const restBound = (i: number) =>
    `${bit(i)} * CASE ${code(i)} WHEN 0 THEN 0 WHEN ${SHARE_CODE_TOP} THEN 1000000 + $l${i}
       ELSE 1000000 + min(${SHARE_CODE_QUANTUM} * ${code(i)}, $l${i}) END`;
  const rest = counted.map((_, i) => i).filter((i) => i >= drivers);
  const statement = store.statement(
    `SELECT t.rev, t.listing_id, t.milli, ${rest.map(restBound).join(' + ') || '0'}
     FROM search_terms t ${filter.joinListings}
     WHERE t.term IN (${counted
       .slice(0, drivers)
       .map((_, j) => `$t${j}`)
       .join(', ')})
       AND t.from_seq <= $asOf AND (t.to_seq IS NULL OR t.to_seq > $asOf) AND ${filter.conditions}
       AND ${counted.map((_, i) => bit(i)).join(' + ')} >= $lowest`,
  );
  statement.setReturnArrays(true);
  // The parameters of the terms that drive are not in the bound (their rows say whether a listing holds them).
  statement.setAllowUnknownNamedParameters(true);
  named.$lowest = lowestTier;
  // Per revision: the drivers it holds (exactly: a listing holding a driver has a row among that
  // driver's, since the signature is the same on every row of a revision), their shares, and the
  // bound of the other terms (the same on each of its rows).
  const revisions = new Map<number, { rev: number; listing_id: number; held: number; milli: number; rest: number }>();
  for (const [rev, listingId, milli, restOf] of statement.all(named, ...filter.params) as unknown as Array<
    [number, number, number, number]
  >) {
    const known = revisions.get(rev);
    if (known) {
      known.held++;
      known.milli += milli;
    } else revisions.set(rev, { rev, listing_id: listingId, held: 1, milli, rest: restOf });
  }
  // Upper bounds on the number of terms held and on the rank (the stored milli are each rounded: + n).
  const bounded = [...revisions.values()]
    .map((r) => ({ ...r, terms: r.held + Math.floor(r.rest / 1_000_000), hi: r.held * 1_000_000 + r.milli + r.rest + n }))
    .sort((x, y) => y.hi - x.hi || x.listing_id - y.listing_id);

  const inTerms = terms.map(() => '?').join(', ');
  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  /** Every listing ranked exactly so far that follows the cursor, best first. */
  const ranked: RankedRow[] = [];
  const seen = new Set<number>();
  const rank = (batch: typeof bounded) => {
    const listingOf = new Map(batch.map((r) => [r.rev, r.listing_id]));
    const exact = store
      .statement(`SELECT r.value AS rev, ${exactRankSql(inTerms, 'r.value')} AS rank FROM json_each(?) r`)
      .all(...terms, JSON.stringify([...listingOf.keys()])) as Array<{ rev: number; rank: number }>;
    for (const { rev, rank: r } of exact) {
      seen.add(Number(rev));
      const row = { listing_id: listingOf.get(Number(rev))!, rank: Number(r) };
      if (pastCursor(row)) ranked.push(row);
    }
    ranked.sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id);
  };
  for (let k = firstTier; k >= lowestTier; k--) {
    const tier = k * 1_000_000;
    /** The want-th exact rank, once it is in this tier or above (no other listing can then beat it). */
    const floor = () => (ranked.length >= want && ranked[want - 1]!.rank >= tier ? ranked[want - 1]!.rank : undefined);
    const candidates = bounded.filter((r) => r.terms >= k && !seen.has(r.rev));
    // Too few listings to fill the page from this tier up: the next tier's candidates hold them all again.
    if (k > 1 && candidates.length + ranked.filter((r) => r.rank >= tier).length < want) continue;
    for (let next = 0; next < candidates.length; next += 32) {
      const reach = floor();
      if (reach !== undefined && candidates[next]!.hi < reach) break;
      rank(candidates.slice(next, next + 32));
    }
    if (floor() !== undefined) return searched('term_tiers', ranked.slice(0, want));
    // Every query term drove: every match after the cursor is ranked.
    if (k === 1) return searched('term_tiers', ranked.slice(0, want));
  }
  return null;
}
