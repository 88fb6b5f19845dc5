/**
 * The `url` filter's list page, one rule for both stores (urlPageIds; docs/CATALOG.md "List"). A substring at most
 * URL_INDEX_CAP listings hold is read whole from the store's URL index (exact page and total). A commoner one is
 * found by walking the other filters' rarest list key in page order until the page and one more match, or
 * URL_WALK_BUDGET listings, with `partialResults` set: counting every match of a common substring would read them all.
 * SQLite's index is an FTS5 trigram table asked for a few rare windows of the substring (sqlite/url-probe.ts);
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
  /** URL_INDEX_CAP: at 0, a `url` filter is checked on each listing's URL. */
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
