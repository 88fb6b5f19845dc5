/**
 * The search engine (docs/CATALOG.md "Search"), written once for both stores: it decides the terms, the path, the
 * cursor and the page, as a generator of the store's TextIndex statements (steps.ts; sqlite/search.ts,
 * postgres/search.ts). The paths (docs/CATALOG.md "The three paths"), each bounded by the search budget:
 * `one_term` (one term's index range; under filters at most the budget per page, else `text_partial`), `aggregate`
 * (several terms within the budget, summed per listing: every row of the terms; or, under filters that name few
 * listings, those listings' rows of any terms), `window` (several terms past it: each term's first rows,
 * exact when windowBound says so, else `text_partial`), and `url` when the text finds nothing (url-search.ts).
 */
import { toDiscoveryResource, type ListingRow } from './listing.ts';
import {
  VISIBILITY_ROUNDS,
  bindingHash,
  choiceFields,
  choiceIndexes,
  decodeCursor,
  emptySearchPage,
  encodeCursor,
  invalidCursor,
  keepVisible,
  pinnedChoice,
  pinnedUrlChoice,
  visibilityBatch,
  windowBound,
  windowExact,
  windowRowsPerTerm,
  type CursorState,
  type RankedRow,
  type WindowEdge,
} from './search.ts';
import {
  LOOKUP_ROWS,
  MAX_SEARCHED_TERMS,
  SEARCH_ROW_BUDGET,
  chooseTerms,
  distinctTerms,
  type CountRequest,
  type TermChoice,
} from './term-budget.ts';
import { IDF_COUNT_CAP, MAX_MEANING_ONLY, candidateKeys, contentWords, stemsOf, weighKeys } from './query-terms.ts';
import { answerRelevance, matchOf, orderByMeaning, stemWeights, urlMatchOf, type SearchMatch, type SearchedKey } from './relevance.ts';
import { queryLimitViolation, urlKey } from './terms.ts';
import { chooseUrlTerms, urlCandidates } from './url-search.ts';
import { URL_INDEX_CAP, withoutUrl, type UrlScale } from './url-filter.ts';
import { PRICED_LISTINGS_CAP, priceRanges } from './price.ts';
import { CatalogQueryError, type Awaitable, type DiscoveryFilters, type DiscoveryResource, type SearchPage } from './types.ts';
import { keptCountsFound, searched, type SearchPath } from './query-paths.ts';
import { holdsNul } from '../filters.ts';
import { runAsync, runSync, stepsOf, type Steps } from './steps.ts';

/** What every ranked read shares: the snapshot, the filters, the position after which to read and how many rows. */
export interface RankedRead {
  asOf: number;
  filters: DiscoveryFilters;
  after: CursorState | undefined;
  want: number;
  /**
   * Every listing that can pass the filters, when few (filterCheck): a store checks a row against them first, before the
   * filters' own probes of the row's listing.
   */
  candidates?: number[] | undefined;
}

/** The statements a store answers for the engine. Every read is at the snapshot `asOf` (a write sequence number). */
export interface TextIndex {
  /** The catalog's write sequence now: the snapshot a first page pins. */
  currentSeq(): Awaitable<number>;
  /** How many listings the catalog holds (its function words are judged by it: term-budget.ts). */
  countListings(): Awaitable<number>;
  /** Each key's index rows (any snapshot), counted up to `cap`. */
  countTerms(terms: string[], cap: number): Awaitable<number[]>;
  /** Each term's index rows at the snapshot `asOf`, counted up to `cap` (its weight: query-terms.ts). */
  countTermsAt(terms: string[], asOf: number, cap: number): Awaitable<number[]>;
  /**
   * `one_term`: the term's rows after `after` in index order that pass the filters, at most `want`; reading at most
   * `scan` rows when given. `edge`: the last row read, when the scan stopped at `scan` before `want` rows passed.
   */
  termWalk(read: RankedRead & { term: string; weight: number; scan?: number }): Awaitable<{ rows: RankedRow[]; edge?: RankedRow }>;
  /**
   * `aggregate`: every row of `terms` weighed (`weights`, one per term) and summed per listing, with the terms each holds;
   * `byCandidates`: only the candidates' rows, each read by its primary key (term, revision); `window`: only the listings
   * among each term's first `window` rows.
   */
  rankTerms(read: RankedRead & { terms: string[]; weights: number[]; window?: number; byCandidates?: boolean }): Awaitable<RankedRow[]>;
  /** Each term's window: how many rows it holds (at most `window`) and the lowest score among them. */
  windowEdges(terms: string[], asOf: number, window: number): Awaitable<WindowEdge[]>;
  /** `url`: the listings whose URL holds the terms at `asOf` (their keys: terms.ts urlKey), URL_TERM_RANK per term. */
  urlRows(read: RankedRead & { terms: string[] }): Awaitable<RankedRow[]>;
  /** The listings of a page's rows, with their quality windows as of `now`. */
  listings(ids: number[], now: Date): Awaitable<Map<number, ListingRow>>;
  /**
   * The listings whose resource URL holds `url` (the `url` filter), when the store's URL index names them all at a cost
   * of about `cap` matches (SQLite: at most `cap` of them; Postgres: those its suffixes' range names when it holds at
   * most `cap` × SUFFIX_ROWS_PER_MATCH entries); else undefined.
   */
  urlListings(url: string, cap: number): Awaitable<number[] | undefined>;
  /** The listings with a row in any of the price index ranges (price.ts priceRanges), when they hold at most `cap` rows; else undefined. */
  pricedListings(ranges: Array<{ key: string; max: string }>, cap: number): Awaitable<number[] | undefined>;
}

type Engine<T> = Steps<TextIndex, T>;
const { run, together } = stepsOf<TextIndex>();
export { runAsync, runSync };

export interface SearchRequest {
  query: string;
  filters: DiscoveryFilters;
  page: { limit: number; cursor?: string };
  now: Date;
  x402Version: number;
  /** Listings last settled before it are left out (docs/CATALOG.md "Lifecycle"). */
  visibleSince?: string | undefined;
  /** Listings failing their liveness checks since before it are left out (docs/CATALOG.md "Liveness"). */
  failingBefore?: string | undefined;
  secret: Buffer;
  /** The store's bounds, where set (tests). */
  scale?: SearchScale | undefined;
  /** The counts this reader's earlier searches read, kept for those at the same sequence. */
  keptCounts?: KeptCounts | undefined;
}

/**
 * The search's bounds, each its constant unless set: tests lower them to reach the paths on a small catalog. The `url`
 * filter's is the list's (url-filter.ts UrlScale).
 */
export interface SearchScale extends Pick<UrlScale, 'urlIndexCap'> {
  /** SEARCH_ROW_BUDGET (term-budget.ts). */
  searchRowBudget?: number | undefined;
  /** PRICED_LISTINGS_CAP (price.ts): at 0, the price bounds are checked on each row's listing. */
  pricedListingsCap?: number | undefined;
}

/** The filters as each ranked read checks them (RankedRead). */
type FilterCheck = Pick<RankedRead, 'filters' | 'candidates'>;
type CandidateRead = (index: TextIndex) => Awaitable<number[] | undefined>;

/**
 * The reads that name the few listings a `url` filter or a price bound lets through (TextIndex urlListings,
 * pricedListings), yielded with a page's first statements; filterCheck combines their answers.
 */
function candidateReads(request: SearchRequest): [CandidateRead, CandidateRead] {
  const { filters } = request;
  const ranges = holdsNul(filters) ? undefined : priceRanges(filters);
  return [
    (index) =>
      filters.url === undefined || holdsNul(filters)
        ? undefined
        : index.urlListings(filters.url, request.scale?.urlIndexCap ?? URL_INDEX_CAP),
    (index) => (ranges === undefined ? undefined : index.pricedListings(ranges, request.scale?.pricedListingsCap ?? PRICED_LISTINGS_CAP)),
  ];
}

/**
 * The filters' check from candidateReads' answers: the listings both name (each read is a superset of those passing
 * its filter); the URL index's are exactly those whose URL holds `url`, so then no row's URL is read. The price bounds
 * are still checked on each candidate, with the entry's other terms and as of the page's snapshot (price.ts
 * acceptedEntryCondition).
 */
function filterCheck(filters: DiscoveryFilters, [byUrl, byPrice]: Array<number[] | undefined>): FilterCheck {
  const priced = byPrice && new Set(byPrice);
  const candidates = byUrl && priced ? byUrl.filter((id) => priced.has(id)) : (byUrl ?? byPrice);
  return { filters: byUrl ? withoutUrl(filters) : filters, ...(candidates ? { candidates } : {}) };
}

/** Refuses what no search can answer (a blank or too long query) before any statement runs. */
export function checkQuery(query: string): void {
  if (query.trim() === '')
    throw new CatalogQueryError('svc_missing_search_query', 'The search query is missing or blank; pass a non-empty `query` parameter.');
  const beyondLimits = queryLimitViolation(query);
  if (beyondLimits !== undefined) throw new CatalogQueryError('svc_invalid_query_parameter', beyondLimits);
}

/**
 * Runs a term choice's counting steps (term-budget.ts) as statements, each answered from `known` where the counts read
 * already tell it (toldRows), else read (and kept in `known`).
 */
function* counted(choice: Generator<CountRequest, TermChoice, number[]>, known: Map<string, RowCount>): Engine<TermChoice> {
  let next = choice.next();
  while (!next.done) {
    const { terms, cap } = next.value;
    const told = terms.map((term) => toldRows(term, cap, known));
    let rows: number[];
    if (told.every((n) => n !== undefined)) rows = told;
    else {
      rows = yield* run((index) => index.countTerms(terms, cap));
      terms.forEach((term, i) => known.set(term, { n: rows[i]!, cap }));
    }
    next = choice.next(rows);
  }
  return next.value;
}

/** A key's rows (any snapshot) as a count up to `cap` gave them: exact below it, at least `cap` at it. */
interface RowCount {
  n: number;
  cap: number;
}

/**
 * Each key's rows counted up to `cap`: from `known` where a count already tells (exact, or stopped at `cap` or more),
 * the others by one statement. The budget's choice has counted the stems; only the keys it did not are read again.
 */
function* rowsUpTo(keys: string[], cap: number, known: ReadonlyMap<string, RowCount>): Engine<number[]> {
  const unknown = untold(keys, cap, known);
  const read = unknown.length === 0 ? [] : yield* run((index) => index.countTerms(unknown, cap));
  return keys.map((key) => toldRows(key, cap, known) ?? read[unknown.indexOf(key)]!);
}

/** A key's rows up to `cap` as `known` tells them, if it does. */
function toldRows(key: string, cap: number, known: ReadonlyMap<string, RowCount>): number | undefined {
  const count = known.get(key);
  return count !== undefined && (count.n < count.cap || count.cap >= cap) ? Math.min(count.n, cap) : undefined;
}

const untold = (keys: string[], cap: number, known: ReadonlyMap<string, RowCount>) =>
  keys.filter((key) => toldRows(key, cap, known) === undefined);

/** A map that forgets everything it holds when it would grow past `max` keys. */
class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }
  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.clear();
    return super.set(key, value);
  }
}

/**
 * The counts the searches of one reader (a store's connection) read at one write sequence, kept for its next searches
 * that open at the same sequence. Every change to the term rows takes the next sequence number (a write, a withdrawal,
 * a pass of the lifecycle, a prune of old revisions: sqlite/revisions.ts nextSeq), so what a count read at a sequence said
 * still holds at it: a key's rows (any snapshot) up to a cap, and its rows at that snapshot up to IDF_COUNT_CAP. Common
 * words' counts are the costly ones (each reads its key's rows up to the cap) and the ones most searches share.
 */
export class KeptCounts {
  #seq = -1;
  /** A key's rows (any snapshot) as counted up to a cap at `seq`. */
  #rows: Map<string, RowCount>;
  /** A key's rows at the snapshot `seq`, up to IDF_COUNT_CAP. */
  #atSeq: Map<string, number>;
  /** Whether the last page opened at the sequence of the page before it (or was the reader's first). */
  #unchanged = true;
  /** `max`: the keys kept of each kind (MAX_KEPT_COUNTS; tests lower it). */
  constructor(private readonly max = MAX_KEPT_COUNTS) {
    [this.#rows, this.#atSeq] = [new BoundedMap(max), new BoundedMap(max)];
  }
  /**
   * The counts kept at the sequence last read: a guess until a page reads the sequence it opens at (`opened`). A page
   * that guesses wrong reads the counts in the rounds after its first, so after a write came between its last two pages
   * a reader guesses nothing: under a stream of writes its pages read their counts in their first round, as when none
   * were kept.
   */
  get guess(): ReadonlyMap<string, RowCount> {
    return this.#unchanged ? this.#rows : NO_COUNTS;
  }
  /** A first page opened at `seq`: the rows counts kept at it, else none (those kept at another are forgotten). */
  opened(seq: number): Map<string, RowCount> {
    const changed = seq !== this.#seq;
    keptCountsFound(changed ? 'forgotten' : 'reused');
    this.#unchanged = !changed || this.#seq === -1;
    if (changed) [this.#seq, this.#rows, this.#atSeq] = [seq, new BoundedMap(this.max), new BoundedMap(this.max)];
    return this.#rows;
  }
  /** The counts at the snapshot `asOf` kept, when it is the sequence they were read at. */
  atSnapshot(asOf: number): Map<string, number> | undefined {
    return asOf === this.#seq ? this.#atSeq : undefined;
  }
}

/** The keys KeptCounts holds counts of, at most, per kind of count: past it, it starts again. */
export const MAX_KEPT_COUNTS = 4096;
const NO_COUNTS: ReadonlyMap<string, RowCount> = new Map();

export function* searchPage(request: SearchRequest): Engine<SearchPage> {
  const { query, filters, page, now, x402Version, secret } = request;
  checkQuery(query);
  const hash = bindingHash(query, filters);
  const after = page.cursor === undefined ? undefined : decodeCursor(secret, page.cursor, hash, now.getTime());
  const budget = request.scale?.searchRowBudget ?? SEARCH_ROW_BUDGET;
  // Function words are searched in neither the text nor the URLs (query-terms.ts).
  const queryTerms = contentWords(distinctTerms(query));
  // The budget chooses among the stems of the query's content words (query-terms.ts).
  const { stems, wordsOf } = stemsOf(queryTerms);
  const [byUrl, byPrice] = candidateReads(request);
  if (after?.u === 1) {
    const pinned = pinnedUrlChoice(queryTerms, after);
    if (holdsNul(filters)) return emptySearchPage(x402Version, pinned);
    const check = filterCheck(filters, yield* together(byUrl, byPrice));
    return yield* urlPage(request, queryTerms, { asOf: after.a, ...check }, pinned, hash, after, budget);
  }
  // The terms ranked over: the first page's (its cursor's), else the budget's choice now.
  /** The rows each stem was counted to by the budget's choice, read again by the path's choice only where they do not tell. */
  let known = new Map<string, RowCount>();
  const kept = request.keptCounts;
  let stemChoice: TermChoice;
  /** A first page's snapshot and the catalog's listings, read with the budget's first count. */
  let opened: { asOf: number; listings: number } | undefined;
  let check: FilterCheck;
  if (after?.k !== undefined) {
    const [withRows, urls, priced] = yield* together((index) => index.countTerms(stems, 1), byUrl, byPrice);
    check = filterCheck(filters, [urls, priced]);
    stemChoice = pinnedChoice(stems, after, (term) => withRows[stems.indexOf(term)]! > 0)!;
  } else {
    // The budget's first count (it depends on the stems alone), the snapshot and the listings: one round trip. A query
    // of at most MAX_SEARCHED_TERMS stems counts each to the budget at once, sparing the round trips its later steps
    // and the path's choice would otherwise take to count its common stems that far.
    const opening = chooseTerms(stems, budget).next();
    const first = opening.done ? undefined : { ...opening.value, cap: stems.length <= MAX_SEARCHED_TERMS ? budget + 1 : opening.value.cap };
    // The counts kept at the sequence the reader last saw are not read again: if the page opens at another, they are
    // forgotten and the budget's steps below read them.
    const firstTerms = first ? untold(first.terms, first.cap, kept?.guess ?? known) : [];
    const [seq, listings, rows, urls, priced] = yield* together(
      (index) => index.currentSeq(),
      (index) => index.countListings(),
      (index) => (first && firstTerms.length > 0 ? index.countTerms(firstTerms, first.cap) : []),
      byUrl,
      byPrice,
    );
    opened = { asOf: seq, listings };
    check = filterCheck(filters, [urls, priced]);
    if (kept) known = kept.opened(seq);
    firstTerms.forEach((term, i) => known.set(term, { n: rows[i]!, cap: first!.cap }));
    const choosing = chooseTerms(stems, budget, stems.length > MAX_SEARCHED_TERMS ? listings : undefined);
    stemChoice = yield* counted(choosing, known);
  }
  const wordOf = (stem: string) => wordsOf.get(stem)![0]!;
  const choice: TermChoice = { ...stemChoice, searched: stemChoice.searched.map(wordOf), dropped: stemChoice.dropped.map(wordOf) };
  if (holdsNul(filters)) return emptySearchPage(x402Version, choice);
  const asOf = after?.a ?? opened?.asOf ?? (yield* run((index) => index.currentSeq()));
  // Words no listing holds are searched by their meaning alone (query-terms.ts): the first page's, else the first
  // few in query order, at most MAX_MEANING_ONLY and as many as the searched stems leave places for.
  const byMeaning =
    after?.k !== undefined
      ? (after.x ?? []).map((i) => stems[i]!)
      : stems
          .filter((stem) => !stemChoice.searched.includes(stem) && !stemChoice.dropped.includes(stem))
          .slice(0, Math.max(0, Math.min(MAX_MEANING_ONLY, MAX_SEARCHED_TERMS - stemChoice.searched.length)));
  // The keys the searched stems are matched by and their weights: the first page's (its cursor's), else weighed now.
  const candidates = candidateKeys([...stemChoice.searched, ...byMeaning], wordsOf, new Set(byMeaning));
  let weights: number[];
  let listings: number;
  if (after?.w !== undefined && after.n !== undefined) {
    if (after.w.length !== candidates.length) throw invalidCursor('is not a cursor issued by this service');
    [weights, listings] = [after.w, after.n];
  } else {
    listings = opened?.listings ?? (yield* run((index) => index.countListings()));
    // The stems' rows up to the budget, which the path's choice below reads when several keys are searched, go with the
    // keys' counts where the budget's choice did not count them that far (a one-word query's, counted to the first cap).
    const stemKeys =
      candidates.length < 2 || after?.p !== undefined
        ? []
        : untold(
            candidates.filter((c) => c.kind === 'stem').map((c) => c.key),
            budget + 1,
            known,
          );
    const atSnapshot = kept?.atSnapshot(asOf);
    const toWeigh = candidates.map((c) => c.key).filter((key) => !atSnapshot?.has(key));
    const [rows, stemRows] =
      toWeigh.length + stemKeys.length === 0
        ? [[], []]
        : yield* together(
            (index) => (toWeigh.length === 0 ? [] : index.countTermsAt(toWeigh, asOf, IDF_COUNT_CAP)),
            (index) => (stemKeys.length === 0 ? [] : index.countTerms(stemKeys, budget + 1)),
          );
    const read = new Map(toWeigh.map((key, i) => [key, rows[i]!]));
    // Each key's rows taken before any is kept: keeping may start the kept counts again (MAX_KEPT_COUNTS).
    const keyRows = candidates.map((c) => read.get(c.key) ?? atSnapshot!.get(c.key)!);
    for (const [key, n] of read) atSnapshot?.set(key, n);
    stemKeys.forEach((key, i) => known.set(key, { n: stemRows[i]!, cap: budget + 1 }));
    weights = weighKeys(candidates, keyRows, listings, budget);
  }
  const keys: SearchedKey[] = candidates.map((c, i) => ({ ...c, weight: weights[i]! })).filter((c) => c.weight > 0);
  const terms = keys.map((c) => c.key);
  if (terms.length === 0) return yield* urlPage(request, queryTerms, { asOf, ...check }, choice, hash, undefined, budget);
  const k = choiceIndexes(stems, stemChoice);
  const x = byMeaning.map((stem) => stems.indexOf(stem));
  const stemIdf = stemWeights(stems, keys, new Set(stemChoice.dropped), listings, IDF_COUNT_CAP);
  const filtered = Object.values(filters).some((v) => v !== undefined);

  // The path: the filters' few listings' rows; else one term; several within the budget; several past it (the window,
  // pinned by the cursor's `p`).
  let path: SearchPath;
  let window: number | undefined;
  // A word's own rows are among its stem's (terms.ts): the budget counts the stems' and the related keys' rows. One term's
  // walk reads its rows only up to its page: they are counted only when the filters named listings.
  const budgeted = keys.filter((key) => key.kind !== 'exact').map((key) => key.key);
  const uncounted = after?.p !== undefined || (terms.length === 1 && check.candidates === undefined);
  const total = (uncounted ? [] : yield* rowsUpTo(budgeted, budget + 1, known)).reduce((sum, n) => sum + n, 0);
  const lookups = check.candidates === undefined ? Infinity : check.candidates.length * terms.length * LOOKUP_ROWS;
  /**
   * The aggregate of the filters' few candidates' rows, read by primary key: when those reads cost less than the keys'
   * rows and fit the budget (each LOOKUP_ROWS rows), as exact as the aggregate and so taken past the budget too.
   */
  const byCandidates = after?.p === undefined && lookups <= Math.min(budget, total);
  if (byCandidates) path = 'aggregate';
  else if (terms.length === 1) path = 'one_term';
  else {
    path = after?.p !== undefined || total > budget ? 'window' : 'aggregate';
    if (path === 'window') window = after?.p ?? windowRowsPerTerm(budget, terms.length, page.limit + 1);
  }
  searched(path);
  /** Whether the page may miss matches the budget left unread: the answer then says so. */
  let partial = after?.p !== undefined;
  /** Where a page stopped reading, when that is past its last ranked row (a one-term walk under filters). */
  let edge: RankedRow | undefined;
  let windowEdges: WindowEdge[] | undefined;
  function* rankRows(from: CursorState | undefined, want: number): Engine<RankedRow[]> {
    const read = { asOf, ...check, after: from, want };
    if (path === 'one_term') {
      const walked = yield* run((index) =>
        index.termWalk({ ...read, term: terms[0]!, weight: keys[0]!.weight, ...(filtered ? { scan: budget } : {}) }),
      );
      if (walked.edge) {
        edge = walked.edge;
        partial = true;
      }
      return walked.rows;
    }
    const weighed = keys.map((c) => c.weight);
    const rank = (index: TextIndex) =>
      index.rankTerms({
        ...read,
        terms,
        weights: weighed,
        ...(window === undefined ? {} : { window }),
        ...(byCandidates ? { byCandidates } : {}),
      });
    if (window === undefined || partial) return yield* run(rank);
    // The window's edges go with its first rank (they depend on the window alone).
    let rows: RankedRow[];
    if (windowEdges) rows = yield* run(rank);
    else [rows, windowEdges] = yield* together(rank, (index) => index.windowEdges(terms, asOf, window));
    if (!windowExact(rows, want, windowBound(windowEdges, window, weighed))) partial = true;
    return rows;
  }
  const position = (at: RankedRow): CursorState => ({
    ...{ v: 1, h: hash, a: asOf, r: at.rank, i: at.listing_id, t: after?.t ?? now.getTime(), k, w: weights, n: listings },
    ...(x.length > 0 ? { x } : {}),
    ...(partial && window !== undefined ? { p: window } : {}),
  });
  const result = yield* rankedPage(
    request,
    after,
    position,
    rankRows,
    (row, listing) => matchOf(row, keys, wordsOf, stemIdf, listings, listing),
    x.length > 0 ? queryTerms : undefined,
  );
  // The text found nothing under the filters: the resource URLs are searched instead.
  if (after === undefined && result.kept.length === 0 && result.exhausted && !partial)
    return yield* urlPage(request, queryTerms, { asOf, ...check }, choice, hash, undefined, budget);
  // A walk that stopped at its budget goes on from the last row it read.
  const stoppedAt = edge && result.kept.length <= page.limit ? edge : undefined;
  const cursor = stoppedAt ? encodeCursor(secret, position(stoppedAt)) : result.cursor;
  return {
    x402Version,
    resources: result.resources,
    partialResults: result.more || partial,
    pagination: { limit: result.resources.length, cursor },
    ...choiceFields(choice),
    ...(partial ? { searchMethod: 'text_partial' as const } : {}),
    relevance: answerRelevance(result.resources),
  };
}

/**
 * The page itself, for any path: the ranked rows after `after`, their listings, hidden listings left out (a page
 * whose rows were mostly hidden ranks further, in growing batches, at most VISIBILITY_ROUNDS times), the cursor.
 * `meaningOf`: the query's content words when some are searched by meaning alone.
 */
function* rankedPage(
  request: SearchRequest,
  after: CursorState | undefined,
  position: (at: RankedRow) => CursorState,
  rankRows: (from: CursorState | undefined, want: number) => Engine<RankedRow[]>,
  match: (row: RankedRow, resource: DiscoveryResource) => SearchMatch,
  meaningOf?: readonly string[],
): Engine<{ resources: SearchPage['resources']; kept: unknown[]; exhausted: boolean; more: boolean; cursor: string | null }> {
  const { page, now } = request;
  const want = page.limit + 1;
  const kept: Array<{ row: RankedRow; listing: ListingRow }> = [];
  let from = after;
  let last: RankedRow | undefined;
  let exhausted = false;
  for (let round = 0; round < VISIBILITY_ROUNDS && kept.length < want && !exhausted; round++) {
    const batch = visibilityBatch(page.limit, round);
    const rows = yield* rankRows(from, batch);
    exhausted = rows.length < batch;
    const byId = yield* run((index) =>
      index.listings(
        rows.map((r) => r.listing_id),
        now,
      ),
    );
    last = keepVisible(rows, byId, request.visibleSince, want, kept, request.failingBefore) ?? last;
    if (last) from = position(last);
  }
  const pageRows = kept.slice(0, page.limit);
  // More follow when the page is full with one to spare, or when the rounds ended before the matches did.
  const more = kept.length > page.limit || (!exhausted && kept.length < want);
  const at = kept.length > page.limit ? pageRows.at(-1)!.row : last;
  const cursor = more && at ? encodeCursor(request.secret, position(at)) : null;
  // When some query words are held by no listing and no result holds an informative word, the page is ordered by
  // meaning (relevance.ts orderByMeaning).
  const matched = pageRows.map((k) => {
    const resource = toDiscoveryResource(k.listing);
    return { resource, match: match(k.row, resource) };
  });
  const ordered = meaningOf && answerRelevance(matched) === 'none' ? orderByMeaning(matched, meaningOf) : matched;
  const resources = ordered.map((k) => ({ ...k.resource, match: k.match }));
  return { resources, kept, exhausted, more, cursor };
}

/**
 * The search by resource URL (url-search.ts): a first page chooses its terms now, a cursor page keeps its own. When no URL
 * holds a query term either, the text's empty answer stands.
 */
function* urlPage(
  request: SearchRequest,
  queryTerms: string[],
  at: Pick<RankedRead, 'asOf' | 'filters' | 'candidates'>,
  text: TermChoice,
  hash: string,
  after: CursorState | undefined,
  budget: number,
): Engine<SearchPage> {
  const { now, x402Version } = request;
  let choice: TermChoice;
  if (after) choice = pinnedUrlChoice(queryTerms, after);
  else {
    const candidates = urlCandidates(queryTerms);
    const counts = yield* run((index) => index.countTerms(candidates.map(urlKey), budget + 1));
    choice = chooseUrlTerms(candidates, counts, budget);
  }
  const terms = choice.searched;
  if (terms.length === 0) return emptySearchPage(x402Version, text);
  searched('url');
  const k = choiceIndexes(queryTerms, choice);
  const position = (row: RankedRow): CursorState => ({
    v: 1,
    h: hash,
    a: at.asOf,
    r: row.rank,
    i: row.listing_id,
    t: after?.t ?? now.getTime(),
    k,
    u: 1,
  });
  const result = yield* rankedPage(
    request,
    after,
    position,
    (from, want) => run((index) => index.urlRows({ ...at, after: from, want, terms })),
    (_row, listing) => urlMatchOf(listing.resource, terms),
  );
  return {
    x402Version,
    resources: result.resources,
    partialResults: result.more,
    pagination: { limit: result.resources.length, cursor: result.cursor },
    ...choiceFields(choice),
    relevance: answerRelevance(result.resources),
  };
}
