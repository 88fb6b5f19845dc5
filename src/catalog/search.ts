/**
 * GET /discovery/search's cursor, window and visibility rules, shared by the engine (search-engine.ts).
 *
 * Ranking (docs/CATALOG.md "Ranking"): rank = Σ_key weight × (PRESENCE + milli), summed from the write-time term rows.
 * The weights follow the catalog's statistics, so a cursor carries its first page's (`w`, `n`): the ranks of a walk
 * cannot move between its pages.
 *
 * Cursor (docs/CATALOG.md "Response and cursor"): the first page pins the catalog's write sequence; later pages search
 * the catalog as of it (term rows and list keys valid then), so the match set and every rank are frozen and the keyset
 * (rank desc, id asc) visits each match exactly once. The HMAC key is per catalog, stored in its database.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { FILTER_NAMES } from '../filters.ts';
import { CatalogQueryError, type DiscoveryFilters, type SearchPage } from './types.ts';
import { hiddenByFailures, type LivenessColumns } from './liveness.ts';
import type { TermChoice } from './term-budget.ts';
import { PRESENCE } from './query-terms.ts';

/** Superseded search revisions are kept this long; cursors older than this are refused. */
export const SNAPSHOT_RETENTION_MS = 60 * 60 * 1000;

/** The form of every cursor svc issues (openapi.yaml, the `cursor` parameter, says the same). */
export const MAX_CURSOR_LENGTH = 1024;
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface CursorState {
  v: 1;
  /** hash of query + filters */
  h: string;
  /** pinned write sequence */
  a: number;
  /** rank and id of the last result served */
  r: number;
  i: number;
  /** issued at, ms since epoch */
  t: number;
  /** The searched terms (term-budget.ts), as indexes into the query's distinct terms: every page ranks over the first page's. */
  k?: number[];
  /** The words no listing held on the first page, searched by their meaning only (query-terms.ts), as indexes into its stems. */
  x?: number[];
  /** 1 when the walk ranks by the resource URLs (url-search.ts): the text found nothing on its first page. */
  u?: 1;
  /** The window's rows per term when the walk ranks a window only (windowBound): a page that may miss matches. */
  p?: number;
  /** The searched keys' weights (query-terms.ts weighKeys), one per candidate key, and the catalog's listings they were weighed against. */
  w?: number[];
  n?: number;
}

export function bindingHash(query: string, filters: DiscoveryFilters): string {
  // Every search filter binds the cursor (src/filters.ts): a filter added there cannot be missed here.
  const key = JSON.stringify([query, ...FILTER_NAMES.map((name) => filters[name] ?? null)]);
  return createHash('sha256').update(key).digest('base64url').slice(0, 22);
}

const sign = (secret: Buffer, payload: string) => createHmac('sha256', secret).update(`svc-search-cursor.${payload}`).digest();

export function encodeCursor(secret: Buffer, state: CursorState): string {
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${payload}.${sign(secret, payload).toString('base64url')}`;
}

export const invalidCursor = (why: string) =>
  new CatalogQueryError('svc_invalid_search_cursor', `The cursor ${why}; restart the search without a cursor.`);

/** Refuses a cursor that cannot have been issued, whatever the catalog holds (`svc_invalid_search_cursor`). */
export function checkCursorForm(cursor: string): void {
  if (cursor.length > MAX_CURSOR_LENGTH || !CURSOR_PATTERN.test(cursor)) throw invalidCursor('is not a cursor issued by this service');
}

export function decodeCursor(secret: Buffer, cursor: string, expectedHash: string, now: number): CursorState {
  checkCursorForm(cursor);
  const [payload, mac] = cursor.split('.') as [string, string];
  const expected = sign(secret, payload);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor('is not a cursor issued by this service');
  let state: CursorState;
  try {
    state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorState;
  } catch {
    throw invalidCursor('is not a cursor issued by this service');
  }
  if (state.v !== 1 || ![state.a, state.r, state.i, state.t].every(Number.isSafeInteger))
    throw invalidCursor('is not a cursor issued by this service');
  if (state.k !== undefined && !(Array.isArray(state.k) && state.k.every((i) => Number.isSafeInteger(i) && i >= 0)))
    throw invalidCursor('is not a cursor issued by this service');
  if (
    state.x !== undefined &&
    !(Array.isArray(state.x) && state.x.every((i) => Number.isSafeInteger(i) && i >= 0) && state.k !== undefined)
  )
    throw invalidCursor('is not a cursor issued by this service');
  if (state.u !== undefined && (state.u !== 1 || state.k === undefined || state.k.length === 0))
    throw invalidCursor('is not a cursor issued by this service');
  if (state.p !== undefined && (!Number.isSafeInteger(state.p) || state.p < 1 || state.u !== undefined || state.k === undefined))
    throw invalidCursor('is not a cursor issued by this service');
  if (state.w !== undefined && !(Array.isArray(state.w) && state.w.every((w) => Number.isSafeInteger(w) && w >= 0 && w <= 1e6)))
    throw invalidCursor('is not a cursor issued by this service');
  if (state.n !== undefined && !(Number.isSafeInteger(state.n) && state.n >= 0))
    throw invalidCursor('is not a cursor issued by this service');
  if (state.h !== expectedHash) throw invalidCursor('was issued for a different query or filter combination');
  if (now - state.t > SNAPSHOT_RETENTION_MS) throw invalidCursor('has expired (cursors are valid for one hour)');
  return state;
}

/**
 * The terms a page ranks over: the first page's, pinned by its cursor (`k`), else the budget's
 * choice now (term-budget.ts). On a cursor page, a term not searched is dropped when it has rows
 * now (`hasRows`). Undefined when the cursor's indexes do not fit the query (not issued for it).
 */
export function pinnedChoice(terms: string[], after: CursorState | undefined, hasRows: (term: string) => boolean): TermChoice | undefined {
  if (after?.k === undefined) return undefined;
  if (after.u === 1) return pinnedUrlChoice(terms, after);
  const byMeaning = after.x ?? [];
  if ([...after.k, ...byMeaning].some((i) => i >= terms.length) || after.k.length + byMeaning.length === 0)
    throw invalidCursor('is not a cursor issued by this service');
  const searched = after.k.map((i) => terms[i]!);
  const kept = new Set(searched);
  const dropped = terms.filter((term) => !kept.has(term) && hasRows(term));
  return { searched, dropped, method: dropped.length === 0 ? 'text' : 'text_budgeted' };
}

/** A URL walk's terms (url-search.ts), pinned by its cursor's `k`. */
export function pinnedUrlChoice(terms: string[], after: CursorState): TermChoice {
  if (after.k!.some((i) => i >= terms.length)) throw invalidCursor('is not a cursor issued by this service');
  return { searched: after.k!.map((i) => terms[i]!), dropped: [], method: 'url' };
}

/** The cursor's `k` for a choice: its searched terms' indexes among the query's distinct terms. */
export const choiceIndexes = (terms: string[], choice: TermChoice): number[] => choice.searched.map((term) => terms.indexOf(term));

export const emptySearchPage = (x402Version: number, choice: TermChoice): SearchPage => ({
  x402Version,
  resources: [],
  partialResults: false,
  pagination: { limit: 0, cursor: null },
  ...choiceFields(choice),
  relevance: 'none',
});

/** The fields every search answer carries about its terms (openapi.yaml DiscoverySearchResponse). */
export const choiceFields = (choice: TermChoice) => ({
  searchMethod: choice.method,
  searchedTerms: choice.searched,
  droppedTerms: choice.dropped,
});

/** A ranked listing; `keys`: the searched keys its text holds (text paths). */
export type RankedRow = { listing_id: number; rank: number; keys?: string[] };

/**
 * The `window` path (several terms whose rows pass the budget; docs/CATALOG.md "The three paths") ranks the listings
 * among each term's first windowRowsPerTerm index rows at the snapshot that pass the filters. When no listing outside
 * the window can rank on the page (windowBound) the page is exact; otherwise the answer says `text_partial` and its
 * cursor (`p`) keeps every later page on the same window. A WindowEdge is one term's window: how many rows it read and
 * the lowest score among them.
 */
export interface WindowEdge {
  rows: number;
  lowest: number;
}

/**
 * The most a listing outside the window can rank: each term whose window stopped at `budget` rows may still hold it,
 * at most at its lowest score (rows are read in score order), weighed as the rank
 * weighs it (`weights`, one per term: weight × (PRESENCE + share), integers, so exact). -1 when every term's window
 * holds all its rows: nothing is outside.
 */
export function windowBound(edges: WindowEdge[], budget: number, weights: number[]): number {
  let bound = -1;
  edges.forEach((edge, i) => {
    if (edge.rows >= budget) bound = Math.max(bound, 0) + weights[i]! * (PRESENCE + edge.lowest);
  });
  return bound;
}

/**
 * How many of each term's first rows the window of a page of `want` holds: WINDOW_ROWS_PER_RESULT rows per result asked
 * for (at least WINDOW_MIN_ROWS), within the search budget's rows shared among the searched terms. A deeper page reads
 * a deeper window; a cursor walk keeps its first page's.
 */
export const windowRowsPerTerm = (budget: number, terms: number, want: number): number =>
  Math.max(1, Math.min(Math.floor(budget / terms), Math.max(WINDOW_MIN_ROWS, WINDOW_ROWS_PER_RESULT * want)));
const WINDOW_ROWS_PER_RESULT = 8;
const WINDOW_MIN_ROWS = 128;

/** Whether a window's ranked rows (at most `want`, best first) are the exact page: full, and its last above the bound. */
export const windowExact = (rows: RankedRow[], want: number, bound: number): boolean =>
  bound < 0 || (rows.length >= want && rows[want - 1]!.rank > bound);

/**
 * Hidden listings (by age or by failures) are left out of a page after it is ranked (docs/CATALOG.md
 * "Lifecycle"): the rank index holds no settlement time, and hidden listings are few in a live catalog
 * (the lifecycle pass takes them out of the index). A page whose ranked rows were mostly hidden ranks further,
 * in growing batches, at most VISIBILITY_ROUNDS times; then it ends short, with a cursor after
 * the last row looked at (`partialResults` still says whether more may follow).
 */
export const VISIBILITY_ROUNDS = 6;
/** Rows ranked in round `round` (0 first) of a page of `limit`. */
export const visibilityBatch = (limit: number, round: number): number => Math.min(1000, (limit + 1) * 2 ** round);

/**
 * Appends the visible rows of one ranked batch (in rank order) to `kept` until it holds `want`;
 * returns the last row looked at. A row whose listing is not found is left out.
 */
export function keepVisible<L extends { last_updated: string } & LivenessColumns>(
  rows: RankedRow[],
  byId: Map<number, L>,
  visibleSince: string | undefined,
  want: number,
  kept: Array<{ row: RankedRow; listing: L }>,
  failingBefore?: string,
): RankedRow | undefined {
  let last: RankedRow | undefined;
  for (const row of rows) {
    if (kept.length >= want) break;
    last = row;
    const listing = byId.get(Number(row.listing_id));
    if (!listing || (visibleSince !== undefined && listing.last_updated < visibleSince)) continue;
    // Failing its liveness checks past the grace period (docs/CATALOG.md "Liveness"): hidden as a stale listing is.
    if (hiddenByFailures(listing, failingBefore)) continue;
    kept.push({ row, listing });
  }
  return last;
}
