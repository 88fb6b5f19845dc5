/**
 * GET /discovery/search on SQLite: the rank and cursor of catalog/search.ts, computed from the
 * write-time term rows (migrations.ts). A one-term query walks the term's (score desc, id asc)
 * index and stops after the page; a several-term query runs the all-terms tier, then the
 * threshold walk (thresholdWalk), then the aggregates when the walk would read too far.
 */
import { inReadTransaction } from '../../db/sqlite.ts';
import { toDiscoveryResource, type ListingRow } from '../listing.ts';
import {
  FILTER_DRIVER_LISTINGS,
  setDrives,
  THRESHOLD_WALK_CAP,
  WALK_CHUNKS,
  VISIBILITY_ROUNDS,
  bindingHash,
  choiceFields,
  choiceIndexes,
  decodeCursor,
  encodeCursor,
  keepVisible,
  emptySearchPage,
  pinnedChoice,
  pinnedUrlChoice,
  visibilityBatch,
  type CursorState,
  type RankedRow,
} from '../search.ts';
import { queryLimitViolation, termSlots } from '../terms.ts';
import { MAX_SEARCHED_TERMS, SEARCH_ROW_BUDGET, chooseTerms, distinctTerms, runChoice, type TermChoice } from '../term-budget.ts';
import { listingCount, rarestTermWithin, termRowsCapped, termTiersTopK } from './term-tiers.ts';
import { CatalogQueryError, type DiscoveryFilters, type SearchPage } from '../types.ts';
import { commonBits, exactRankSql, roundedMilliSql, type SearchSource, type TermRowFilter } from './queries.ts';
import { pairTopK } from './pair-tops.ts';
import { searchFilter } from './filter-set.ts';
import { urlSearchPage } from './url-search.ts';
import { setDrivenRows, windowRows } from './filter-driver.ts';
import { searched } from '../query-paths.ts';

/** What a search reads through (queries.ts, where url-search.ts reads it too). */
export type { SearchSource } from './queries.ts';

/**
 * A several-term query as a bounded top-k (a threshold walk, after Fagin's threshold algorithm).
 * The rank is a sum over the query's terms of (1e6 + the term's milli score) for each term the
 * listing contains, so it grows with every term's score. Each term's rows are read in its index
 * order (milli desc), a chunk per term in turn. Every revision seen for the first time gets an
 * estimate from its terms' stored milli scores (its own from the row, each other term's by one key
 * lookup): the sum of rounded shares is within `terms.length` of the rounded sum, so the estimate
 * bounds the exact rank from below and above. The page's floor is the want-th highest lower bound;
 * a revision whose upper bound is below it (or, on a cursor page, whose lower bound is above the
 * cursor) cannot be on the page and is dropped. A listing not yet seen holds each unfinished term
 * at most at that term's current row, and no finished term, so once the floor is above the sum of
 * those bounds (plus rounding), no other listing can enter the page. Only then are the remaining
 * candidates (a few more than the page) ranked exactly, in one statement, by the same expression
 * the aggregates use. (Ranking them as they were found took one statement per chunk, about a third
 * of the walk's time at 100k listings; ranking every row in full cost about three times more.)
 * Same rows and order as the aggregates (allTermsTier, then every term's rows summed per listing);
 * the differential test is the oracle. Returns undefined when the walk passes its cap: the caller
 * then aggregates.
 */
function thresholdWalk(
  store: SearchSource,
  terms: string[],
  asOf: number,
  filter: TermRowFilter,
  after: CursorState | undefined,
  want: number,
): RankedRow[] | undefined {
  const inTerms = terms.map(() => '?').join(', ');
  // A chunk of one term's rows, each with its revision's estimate: the sum over the query's terms it
  // contains of 1e6 + that term's milli score (the other terms' by key). Returned as arrays: at 100k
  // listings a two-term page reads about 1,300 rows, and building an object per row cost about
  // as much as reading it. The key lookup of another term runs only when the row's signature and
  // sketch say the revision may hold it (terms.ts termSignature: a clear bit or an empty bucket
  // means it surely does not, and the lookup would find nothing): for "ru pami" at 100k that skips
  // about two thirds of the lookups, which were most of the walk's time (docs/BENCHMARKS.md
  // "Catalog on SQLite at 100k and 1M").
  const mayHold =
    'CASE WHEN (t.sig >> ?) & 1 AND min((t.sketch_a >> ?) & 15, (t.sketch_b >> ?) & 15) ' +
    'THEN coalesce((SELECT 1000000 + o.milli FROM search_terms o WHERE o.term = ? AND o.rev = t.rev), 0) ELSE 0 END';
  /** The parameters of `mayHold` for each of `others`, in order. */
  const mayHoldParams = (others: string[]) =>
    others.flatMap((term) => {
      const slots = termSlots(term);
      return [slots.bit, 4 * slots.bucketA, 4 * slots.bucketB, term];
    });
  const rowsOf = (others: number, range: 'top' | 'plateau' | 'below') => {
    const statement = store.statement(
      `SELECT t.rev, t.listing_id, t.milli,
         1000000 + t.milli${` + ${mayHold}`.repeat(others)}
       FROM search_terms t ${filter.joinListings}
       WHERE t.term = ? AND t.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?) AND ${filter.conditions}
         ${{ top: '', plateau: 'AND t.milli = ? AND t.listing_id > ?', below: 'AND t.milli < ?' }[range]}
       ORDER BY t.milli DESC, t.listing_id ASC LIMIT ?`,
    );
    statement.setReturnArrays(true);
    return statement;
  };
  const walks = terms.map((term) => ({
    term,
    /** The other terms' parameters of each row's estimate (mayHold). */
    estimateParams: mayHoldParams(terms.filter((other) => other !== term)),
    last: undefined as { milli: number; listing_id: number } | undefined,
    done: false,
    step: 0,
    read: 0,
    /** How much the term's score fell per row over its last chunk. */
    slope: 0,
  }));
  /**
   * The walk to advance next: the one whose score falls fastest per row, since the bound is the sum
   * of the terms' current scores. A common term often sits on a long plateau of equal scores;
   * reading it would rank thousands of listings without lowering the bound. Ties: the walk that
   * has read least.
   */
  const nextWalk = () => walks.filter((w) => !w.done).sort((a, b) => b.slope - a.slope || a.read - b.read)[0];
  const seen = new Set<number>();
  /** Revisions that may be on the page: their estimate's bounds on the exact rank (lo ≤ rank ≤ hi). */
  let candidates: Array<{ rev: number; listing_id: number; lo: number; hi: number }> = [];
  const pastCursor = (r: RankedRow) => !after || r.rank < after.r || (r.rank === after.r && r.listing_id > after.i);
  let cap = THRESHOLD_WALK_CAP;
  /** No listing ranked below it can be on the page (-1 until `want` candidates are sure). */
  let floor = -1;
  for (let read = 0, first = true; ; first = false) {
    // The first step reads every term (each needs a current score); later steps advance one.
    for (const walk of first ? walks : [nextWalk()!]) {
      const chunk = WALK_CHUNKS[Math.min(walk.step++, WALK_CHUNKS.length - 1)]!;
      const others = terms.length - 1;
      const base = [...walk.estimateParams, walk.term, asOf, asOf, ...filter.params];
      // [rev, listing_id, milli, estimate]
      type Row = [number, number, number, number];
      let rows: Row[];
      if (!walk.last) rows = rowsOf(others, 'top').all(...base, chunk) as unknown as Row[];
      else {
        // After the last row: the rest of its score plateau, then the lower scores. (One keyset
        // condition would scan the plateau from its first row on every chunk.)
        rows = rowsOf(others, 'plateau').all(...base, walk.last.milli, walk.last.listing_id, chunk) as unknown as Row[];
        if (rows.length < chunk)
          rows.push(...(rowsOf(others, 'below').all(...base, walk.last.milli, chunk - rows.length) as unknown as Row[]));
      }
      read += rows.length;
      walk.read += rows.length;
      if (rows.length < chunk) walk.done = true;
      const last = rows.at(-1);
      if (last) {
        const from = walk.last?.milli ?? Number(rows[0]![2]);
        walk.slope = (from - Number(last[2])) / rows.length;
        walk.last = { milli: Number(last[2]), listing_id: Number(last[1]) };
      }
      for (const [rev, listingId, , estimate] of rows) {
        if (seen.has(rev)) continue;
        seen.add(rev);
        const candidate = { rev, listing_id: listingId, lo: estimate - terms.length, hi: estimate + terms.length };
        // Below the page, or (on a cursor page) before the cursor, whatever the rounding.
        if (candidate.hi < floor || (after && candidate.lo > after.r)) continue;
        candidates.push(candidate);
      }
    }
    if (read > cap) {
      if (cap !== THRESHOLD_WALK_CAP) return undefined;
      const postings = terms.reduce(
        (sum, term) =>
          sum + Number((store.statement('SELECT count(*) AS n FROM search_terms WHERE term = ?').get(term) as { n: number }).n),
        0,
      );
      cap = Math.max(THRESHOLD_WALK_CAP + 1, Math.floor(postings / 3));
    }
    // The page's floor: the want-th highest lower bound among the candidates surely after the cursor.
    const sure = (after ? candidates.filter((c) => c.hi < after.r) : candidates).map((c) => c.lo).sort((x, y) => y - x);
    floor = sure.length >= want ? sure[want - 1]! : -1;
    candidates = candidates.filter((c) => c.hi >= floor);
    // Each stored milli is round(score × 1000): an unseen listing's rank is at most this bound.
    const open = walks.filter((w) => !w.done);
    const bound = open.reduce((sum, w) => sum + 1_000_000 + w.last!.milli, 0) + terms.length;
    if (open.length === 0 || floor > bound) break;
  }
  // The exact ranks, summed by SQLite over the query's terms exactly as the aggregates sum them.
  const listingOf = new Map(candidates.map((c) => [c.rev, c.listing_id]));
  return (
    store
      .statement(`SELECT r.value AS rev, ${exactRankSql(inTerms, 'r.value')} AS rank FROM json_each(?) r`)
      .all(...terms, JSON.stringify([...listingOf.keys()])) as Array<{ rev: number; rank: number }>
  )
    .map(({ rev, rank }) => ({ listing_id: listingOf.get(Number(rev))!, rank: Number(rank) }))
    .filter(pastCursor)
    .sort((x, y) => y.rank - x.rank || x.listing_id - y.listing_id)
    .slice(0, want);
}

export function searchCatalog(
  store: SearchSource,
  query: string,
  filters: DiscoveryFilters,
  page: { limit: number; cursor?: string },
  now: Date,
  x402Version: number,
  visibleSince?: string,
  failingBefore?: string,
): SearchPage {
  if (query.trim() === '')
    throw new CatalogQueryError('svc_missing_search_query', 'The search query is missing or blank; pass a non-empty `query` parameter.');
  const beyondLimits = queryLimitViolation(query);
  if (beyondLimits !== undefined) throw new CatalogQueryError('svc_invalid_query_parameter', beyondLimits);
  store.assertUsable(false);
  const secret = store.cursorSecret();
  const hash = bindingHash(query, filters);
  const after = page.cursor === undefined ? undefined : decodeCursor(secret, page.cursor, hash, now.getTime());
  const queryTerms = distinctTerms(query);

  return inReadTransaction(store.db, () => {
    /** The search by resource URL (url-search.ts): when the text finds nothing, and every page of its walk. */
    const byUrl = (asOf: number, text: TermChoice) =>
      urlSearchPage(store, {
        queryTerms,
        filters,
        page,
        after,
        asOf,
        hash,
        now,
        x402Version,
        visibleSince,
        failingBefore,
        textAnswer: emptySearchPage(x402Version, text),
      });
    if (after?.u === 1) return byUrl(after.a, pinnedUrlChoice(queryTerms, after));
    // The terms ranked over: the first page's (its cursor's), else the budget's choice (term-budget.ts).
    const choice =
      pinnedChoice(queryTerms, after, (term) => termRowsCapped(store, term, 1) > 0) ??
      runChoice(
        chooseTerms(
          queryTerms,
          commonBits(store.statement.bind(store)),
          store.searchRowBudget,
          queryTerms.length > MAX_SEARCHED_TERMS ? listingCount(store) : undefined,
        ),
        ({ terms, cap }) => terms.map((term) => termRowsCapped(store, term, cap)),
      );
    const terms = choice.searched;
    const answered = choiceFields(choice);
    if (terms.length === 0) return byUrl(after?.a ?? store.currentSeq(), choice);
    const k = choiceIndexes(queryTerms, choice);
    const asOf = after?.a ?? store.currentSeq();
    // The filters on the term rows (filter-set.ts): exact keys on a first page, a small key's set, else the listing's conditions.
    const filter = searchFilter(store.db, filters, asOf, asOf === store.currentSeq());
    const { joinListings, conditions, params } = filter;
    // The term rows carry their revision's validity, so no posting is joined to its revision.
    const snapshot = 't.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?)';
    // Filtered (docs/CATALOG.md "Search with filters"): from the filters' smallest set when it is small; else, when the
    // text is not narrow either (two or more terms, the rarest past the budget), from the window (filter-driver.ts).
    const budget = store.searchRowBudget ?? SEARCH_ROW_BUDGET;
    const rarestRows = () => termRowsCapped(store, terms[0]!, budget + 1);
    const driver =
      filter.driver &&
      filter.driver.listings <= (store.filterDriverListings ?? FILTER_DRIVER_LISTINGS) &&
      setDrives(filter.driver.listings, terms.length, rarestRows(), budget, page.limit + 1, listingCount(store))
        ? filter.driver
        : undefined;
    const windowed = after?.p === 1 || (conditions !== 'TRUE' && !driver && terms.length > 1 && rarestRows() > budget);
    /** Whether a page read from the window could not be sure of it: the answer then says so, and the cursor keeps to the window. */
    let partial = after?.p === 1;
    /** The next `want` matches after `after`, ranked (set, window, one-term walk, threshold walk, tier or aggregates). */
    const rankRows = (after: CursorState | undefined, want: number): RankedRow[] => {
      if (driver) return searched('set_driven', setDrivenRows(store, terms, asOf, filter, driver, after, want));
      if (windowed) {
        // Two chosen common words: their pair's kept first pages first, when the page is not already partial.
        const kept = partial ? undefined : searched('pair_tops', pairTopK(store.statement.bind(store), terms, asOf, filter, after, want));
        if (kept) return kept;
        const window = searched('window', windowRows(store, terms, asOf, filter, budget, after, want));
        if (!window.exact) partial = true;
        return window.rows;
      }
      let rows: RankedRow[] = [];
      // The page reaches below the listings that contain every term: aggregate all the terms' rows.
      let aggregate = false;
      if (terms.length === 1) {
        searched('one_term');
        // rank = 1e6 + milli for every match, so (milli desc, id asc) is the index order: the walk stops after the page.
        const keyset = after ? 'AND t.milli <= ? AND NOT (t.milli = ? AND t.listing_id <= ?)' : '';
        const milli = after ? after.r - 1_000_000 : 0;
        rows = store
          .statement(
            `SELECT t.listing_id AS listing_id, 1000000 + t.milli AS rank
             FROM search_terms t ${joinListings}
             WHERE t.term = ? AND ${snapshot} AND ${conditions} ${keyset}
             ORDER BY t.milli DESC, t.listing_id ASC LIMIT ?`,
          )
          .all(terms[0]!, asOf, asOf, ...params, ...(after ? [milli, milli, after.i] : []), want) as typeof rows;
      } else {
        const tier = () => termTiersTopK(store, terms, asOf, filter, after, want, store.tierDriverRows);
        const walk = () => searched('walk', thresholdWalk(store, terms, asOf, filter, after, want));
        // Two terms: two common words from their pair's kept first pages (pair-tops.ts) when those
        // fill the page; a term rare enough to drive the tier (rarestTermWithin), the tier; else the
        // walk. The tier of two common words is most of both lists, while the walk ends within a
        // few thousand rows (docs/BENCHMARKS.md "Search by number of terms").
        // More terms: the tier first; when it cannot fill the page, the listings missing a term
        // decide it. Either way the aggregates only when the walk passed its cap and the tier did not fill.
        const ranked =
          terms.length === 2
            ? (searched('pair_tops', pairTopK(store.statement.bind(store), terms, asOf, filter, after, want)) ??
              (rarestTermWithin(store, terms, store.tierDriverRows) ? (tier() ?? walk()) : (walk() ?? tier())))
            : (tier() ?? walk());
        rows = ranked ?? [];
        aggregate = ranked === undefined || ranked === null;
      }
      if (aggregate) {
        searched('aggregate');
        const keyset = after ? 'WHERE rank < ? OR (rank = ? AND listing_id > ?)' : '';
        rows = store
          .statement(
            `WITH matches AS MATERIALIZED (
               SELECT t.listing_id AS listing_id, count(*) * 1000000 + ${roundedMilliSql('sum(t.score)')} AS rank
               FROM search_terms t ${joinListings}
               WHERE t.term IN (${terms.map(() => '?').join(', ')}) AND ${snapshot} AND ${conditions}
               GROUP BY t.rev
             )
             SELECT listing_id, rank FROM matches ${keyset}
             ORDER BY rank DESC, listing_id ASC LIMIT ?`,
          )
          .all(...terms, asOf, asOf, ...params, ...(after ? [after.r, after.r, after.i] : []), want) as typeof rows;
      }
      return rows;
    };
    const want = page.limit + 1;
    const kept: Array<{ row: RankedRow; listing: ListingRow }> = [];
    let from = after;
    let last: RankedRow | undefined;
    let exhausted = false;
    for (let round = 0; round < VISIBILITY_ROUNDS && kept.length < want && !exhausted; round++) {
      const batch = visibilityBatch(page.limit, round);
      const rows = rankRows(from, batch);
      exhausted = rows.length < batch;
      const byId = store.rowsById(
        rows.map((r) => Number(r.listing_id)),
        now,
      );
      last = keepVisible(rows, byId, visibleSince, want, kept, failingBefore) ?? last;
      if (last) from = { v: 1, h: hash, a: asOf, r: Number(last.rank), i: Number(last.listing_id), t: after?.t ?? now.getTime(), k };
      if (partial) from = from && { ...from, p: 1 };
    }
    // The text found nothing under the filters: the resource URLs are searched instead.
    if (after === undefined && kept.length === 0 && exhausted && !partial) return byUrl(asOf, choice);
    const pageRows = kept.slice(0, page.limit);
    const resources = pageRows.map((k) => toDiscoveryResource(k.listing));
    // More follow when the page is full with one to spare, or when the rounds ended before the matches did.
    const more = kept.length > page.limit || (!exhausted && kept.length < want);
    const at = kept.length > page.limit ? pageRows.at(-1)!.row : last;
    const cursor =
      more && at
        ? encodeCursor(secret, {
            v: 1,
            h: hash,
            a: asOf,
            r: Number(at.rank),
            i: Number(at.listing_id),
            t: after?.t ?? now.getTime(),
            k,
            ...(partial ? { p: 1 as const } : {}),
          })
        : null;
    // Stopped at the work budget: matches outside the window may be missing, so partialResults is true whatever follows.
    if (partial)
      return {
        x402Version,
        resources,
        partialResults: true,
        pagination: { limit: resources.length, cursor },
        ...answered,
        searchMethod: 'text_partial',
      };
    return { x402Version, resources, partialResults: more, pagination: { limit: resources.length, cursor }, ...answered };
  });
}
