/**
 * The all-terms tier of a several-term search on SQLite (docs/CATALOG.md "Search"): the rarest
 * term's rows, filtered and bounded by the term signatures every row carries (terms.ts
 * termSignature, migration 10), ranked exactly in bound order until the page is sure.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { CursorState, RankedRow } from '../search.ts';
import { SHARE_CODE_QUANTUM, SHARE_CODE_TOP, termSlots } from '../terms.ts';

/** What the tier reads through: the SQLite store (search.ts SearchSource). */
interface TermRows {
  readonly db: DatabaseSync;
  statement(sql: string): StatementSync;
}

/**
 * The rank's score part from a sum of term scores: every path (tier, walk, aggregate) rounds with
 * this one expression, so a listing gets the same rank whichever path ranked it.
 */
export const roundedMilliSql = (scoreSum: string) => `CAST(round(${scoreSum} * 1000) AS INTEGER)`;

/**
 * How many rows a common term has (every revision, any snapshot), counted in full and kept for
 * TERM_COUNT_TTL_MS per store: it only picks which term drives the all-terms tier (any choice
 * ranks the same), and the most common words are in most several-term queries, so one count of
 * 100,000 rows (about 4 ms) serves many searches. At most TERM_COUNT_ENTRIES terms are kept.
 */
const TERM_COUNT_TTL_MS = 10 * 60_000;
const TERM_COUNT_ENTRIES = 4096;
const termCounts = new WeakMap<DatabaseSync, Map<string, { n: number; at: number }>>();
function termRowCount(store: TermRows, term: string): number {
  let counts = termCounts.get(store.db);
  if (!counts) termCounts.set(store.db, (counts = new Map<string, { n: number; at: number }>()));
  const now = Date.now();
  const known = counts.get(term);
  if (known && now - known.at < TERM_COUNT_TTL_MS) return known.n;
  const n = Number(
    (store.statement('SELECT count(*) AS n FROM search_terms INDEXED BY search_terms_top WHERE term = ?').get(term) as { n: number }).n,
  );
  if (counts.size >= TERM_COUNT_ENTRIES) counts.clear();
  counts.set(term, { n, at: now });
  return n;
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
export function allTermsTopK(
  store: TermRows,
  terms: string[],
  asOf: number,
  filter: { joinListings: string; conditions: string; params: Array<string | number> },
  after: CursorState | undefined,
  want: number,
): RankedRow[] | null {
  const tier = terms.length * 1_000_000;
  if (after && after.r < tier) return null;
  // The rarest term drives: a small count first (a query mixing common and rare words is decided
  // there); when every term has more rows, their full counts, kept a while (termRowCount).
  const probe = (term: string) =>
    Number(
      (
        store
          .statement('SELECT count(*) AS n FROM (SELECT 1 FROM search_terms INDEXED BY search_terms_top WHERE term = ? LIMIT 1000)')
          .get(term) as { n: number }
      ).n,
    );
  let counted = terms.map((term) => ({ term, n: probe(term) })).sort((a, b) => a.n - b.n);
  if (counted[0]!.n === 1000) counted = terms.map((term) => ({ term, n: termRowCount(store, term) })).sort((a, b) => a.n - b.n);
  const driver = counted[0]!.term;
  if (counted[0]!.n === 0) return null;
  const others = terms.filter((term) => term !== driver);
  const slots = others.map(termSlots);
  const mask = BigInt.asIntN(
    64,
    [driver, ...others].reduce((m, term) => m | (1n << BigInt(termSlots(term).bit)), 0n),
  );
  // Each other term's largest share: its bound when its buckets hold the top code.
  const largest = others.map((term) =>
    Number((store.statement('SELECT max(milli) AS m FROM search_terms WHERE term = ?').get(term) as { m: number | null }).m ?? 0),
  );
  const code = (s: { bucketA: number; bucketB: number }) =>
    `min((t.sketch_a >> ${4 * s.bucketA}) & 15, (t.sketch_b >> ${4 * s.bucketB}) & 15)`;
  // An upper bound on round(1000 × Σ shares): the stored milli are each rounded, so the sum is
  // within `terms.length` of them.
  const bound = [
    't.milli',
    ...slots.map((s, i) => `min(${SHARE_CODE_QUANTUM} * ${code(s)} + (${code(s)} / ${SHARE_CODE_TOP}) * 1000000, ${largest[i]!})`),
    String(terms.length),
  ].join(' + ');
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
  const exactly = (revs: Array<[number, number, number]>) =>
    (
      store
        .statement(
          `SELECT r.value AS rev,
             (SELECT count(*) * 1000000 + ${roundedMilliSql('sum(o.score)')} FROM search_terms o
              WHERE o.term IN (${inTerms}) AND o.rev = r.value) AS rank
           FROM json_each(?) r`,
        )
        .all(...terms, JSON.stringify(revs.map(([rev]) => rev))) as Array<{ rev: number; rank: number }>
    ).map(({ rev, rank }) => ({ rev: Number(rev), rank: Number(rank) }));
  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  const ranked: RankedRow[] = [];
  const seen = new Set<number>();
  /** Ranks the rows not ranked yet exactly; keeps the tier's rows after the cursor. */
  const rank = (rows: Array<[number, number, number]>) => {
    const fresh = rows.filter(([rev]) => !seen.has(rev));
    for (const [rev] of fresh) seen.add(rev);
    const listingOf = new Map(fresh.map(([rev, listingId]) => [rev, listingId]));
    for (const { rev, rank: r } of exactly(fresh)) {
      const row = { listing_id: listingOf.get(rev)!, rank: r };
      if (r >= tier && pastCursor(row)) ranked.push(row);
    }
    ranked.sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id);
  };
  // The rows in bound order, ranked exactly 32 at a time while the next bound reaches the want-th
  // exact rank (a bound equal to it may still win on its id); a first batch large enough for most
  // pages (a statement reads the whole range of the driver), then batches four times larger.
  const floor = () => (ranked.length >= want ? ranked[want - 1]!.rank - tier : undefined);
  let last: { hi: number; listing_id: number } | undefined;
  for (let batch = Math.max(8 * want, 256); ; batch *= 4) {
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
  return ranked.length >= want ? ranked.slice(0, want) : null;
}
