/**
 * The `url` filter's list page, one rule for both stores (urlPageIds; docs/CATALOG.md "List"). A substring at most
 * URL_INDEX_CAP listings hold is read whole from the store's URL index (exact page and total). A commoner one is
 * found by walking the other filters' rarest list key in page order until the page and one more match, or
 * URL_WALK_BUDGET listings, with `partialResults` set: counting every match of a common substring would read them all.
 * SQLite's index is an FTS5 trigram table asked for a few rare windows of the substring (UrlSample, sqlite/url-probe.ts);
 * Postgres' a B-tree of every URL's suffixes (postgres/url-suffixes.ts).
 */
import type { Awaitable, DiscoveryFilters } from './types.ts';
import { listed } from './query-paths.ts';

/** The most matches a store's URL index is asked for before the walk in page order answers instead. */
export const URL_INDEX_CAP = 500;
/** The listings, in page order, a walk checks against the `url` filter at most. */
export const URL_WALK_BUDGET = 4_000;

/** `url` lowered as both stores lower an ASCII resource URL (every stored one is ASCII: ingest serializes it). */
export const asciiLower = (url: string) => url.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** SQL text of `expr` lowered as asciiLower lowers it: Postgres' translate, which no locale changes (an index may use it). */
export const asciiLowerSql = (expr: string) => `translate(${expr}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;

/** The stores' options for these bounds (the differential tests lower them to walk a small catalog). */
export type UrlScale = {
  urlIndexCap?: number;
  urlWalkBudget?: number;
  /** The suffixes' index entries Postgres reads first per listing it looks for (postgres/url-suffixes.ts suffixPageSql). */
  urlSuffixRowsPerMatch?: number;
  /** The entries a Postgres walk checks on their listings' URLs first (postgres/url-suffixes.ts suffixPageSql). */
  urlWalkRowsSpelled?: number;
};

export function withoutUrl(filters: DiscoveryFilters): DiscoveryFilters {
  const others = { ...filters };
  delete others.url;
  return others;
}

/** How many matches a walk looks for: the page and one more, so `total` beyond the page says another page exists. */
const walkWant = (page: { limit: number; offset: number }) => page.offset + page.limit + 1;

/** Awaits only a promise: SQLite's statements answer synchronously. */
const then = <T, U>(value: Awaitable<T>, next: (value: T) => Awaitable<U>): Awaitable<U> =>
  value instanceof Promise ? value.then(next) : next(value);

/** A `url` page's bounds: the most matches read from the index, and a walk's budget of listings and the matches it wants. */
export type UrlPageBounds = { cap: number; budget: number; want: number };

/** A `url` page's answer: how many matches the other filters keep (`total`), and the page's ids among them, in page order. */
export type UrlPageMatches = { total: number; ids: number[] };

export const pageOf = (ids: number[], page: { limit: number; offset: number }): UrlPageMatches => ({
  total: ids.length,
  ids: ids.slice(page.offset, page.offset + page.limit),
});

/**
 * What a store supplies for a `url` page: its statements, each over the page's `url`, other filters and visibility. A
 * store may read along with the matches what exact or walk then answers (Postgres reads a page in one statement:
 * postgres/url-suffixes.ts), so each answers the page, not every match.
 */
export interface UrlPageStatements {
  /** How many listings hold `url`: every one when at most `bounds.cap` do, else more than the cap. */
  matches(bounds: UrlPageBounds): Awaitable<number>;
  /** Of every match (at most the cap), those the other filters keep and the page shows, in page order. */
  exact(): Awaitable<UrlPageMatches>;
  /**
   * The matches among the first `budget` entries, in page order, of the other filters' rarest list key that the page
   * shows, at most `want` (`total`: how many it found); `beyond`: whether the key has entries past the budget (a store
   * may leave it false when `want` matched: the answer is partial then either way).
   */
  walk(bounds: UrlPageBounds): Awaitable<UrlPageMatches & { beyond: boolean }>;
}

/**
 * A `url` page's ids in page order, its total and whether they are partial: every match the index names when at most
 * the cap hold `url`, else those a walk finds (the page and one more at most).
 */
export function urlPageIds(
  statements: UrlPageStatements,
  page: { limit: number; offset: number },
  { urlIndexCap = URL_INDEX_CAP, urlWalkBudget = URL_WALK_BUDGET }: UrlScale,
): Awaitable<UrlPageMatches & { partialResults: boolean }> {
  const bounds = { cap: urlIndexCap, budget: urlWalkBudget, want: walkWant(page) };
  return then(statements.matches(bounds), (matched) => {
    if (matched <= bounds.cap) {
      listed('url_index');
      return then(statements.exact(), (exact) => ({ ...exact, partialResults: false }));
    }
    listed('url_walk');
    return then(statements.walk(bounds), ({ total, ids, beyond }) => ({
      total,
      ids,
      partialResults: total === bounds.want || beyond,
    }));
  });
}

/** How many URLs a sample holds, and how long it is kept before it is drawn again. */
export const URL_SAMPLE_SIZE = 256;
const SAMPLE_MAX_AGE_MS = 60_000;

/** `text`'s 3-character windows (by code point), distinct: each is one trigram of SQLite's URL index. */
export function urlWindows(text: string): string[] {
  const chars = Array.from(text);
  const windows = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) windows.add(chars.slice(i, i + 3).join(''));
  return [...windows];
}

/**
 * A random sample of the catalog's resource URLs, lowered (sqlite/url-probe.ts keeps one per connection), drawn
 * again when a minute old. How many of them hold each window is counted once per draw, because a long `url` has about
 * as many windows as characters and counting each against the sample on every request is too slow.
 */
export class UrlSample {
  urls: string[] = [];
  private held = new Map<string, number>();
  private drawnAt = -Infinity;

  /** Whether the store should draw it again (its own read of URL_SAMPLE_SIZE random listings) before using it. */
  stale(nowMs: number): boolean {
    return nowMs - this.drawnAt >= SAMPLE_MAX_AGE_MS;
  }

  replace(urls: string[], nowMs: number): void {
    this.urls = urls;
    this.held = new Map();
    for (const url of urls) for (const window of urlWindows(url)) this.held.set(window, (this.held.get(window) ?? 0) + 1);
    this.drawnAt = nowMs;
  }

  /** The share of the sampled URLs holding `text` (lowered). */
  share(text: string): number {
    return this.urls.length === 0 ? 0 : this.holdingAll([text]) / this.urls.length;
  }

  holding(window: string): number {
    return this.held.get(window) ?? 0;
  }

  holdingAll(windows: readonly string[]): number {
    return this.urls.filter((url) => windows.every((window) => url.includes(window))).length;
  }
}

/**
 * At most `n` of `windows` (a lowered substring's), those the fewest URLs of
 * `sample` hold, in the substring's order: each is one trigram of the index, and every match holds all of them. A
 * window more than a quarter of the sample holds is left out while a rarer one is asked (it would name most
 * listings: reading its entries costs more than checking the rows it keeps out). Windows that do not overlap (three
 * apart in urlWindows' order: their places in the substring, unless a window repeats) are chosen before those that
 * do: two that share two characters (`bep`, `epa`) are held by nearly the same URLs, so the second keeps few out, and
 * a sample too small to tell them apart (most of a rare substring's windows are held by none of it on a large catalog)
 * would otherwise choose neighbours.
 */
export function rarestWindows(windows: string[], sample: UrlSample, n: number): string[] {
  const held = windows.map((window, at) => ({ window, at, n: sample.holding(window) })).sort((x, y) => x.n - y.n || x.at - y.at);
  const selective = held.filter((x, i) => i === 0 || x.n <= sample.urls.length / 4);
  // At most `n` apart are taken (the answer holds no more): a long `url` has thousands of windows, too many to check
  // each against every other.
  const apart: typeof selective = [];
  for (const x of selective) {
    if (apart.length === n) break;
    if (apart.every((y) => Math.abs(x.at - y.at) >= 3)) apart.push(x);
  }
  return [...apart, ...selective.filter((x) => !apart.includes(x))]
    .slice(0, n)
    .sort((x, y) => x.at - y.at)
    .map((x) => x.window);
}
