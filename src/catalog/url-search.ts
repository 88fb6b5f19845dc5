/**
 * Search by the resource URL (docs/CATALOG.md "When the text finds nothing"), both stores' rule:
 * when the text search's first page is empty and nothing follows it, the query's terms are looked
 * up among the host labels and path segments of the listings' URLs (`api.weather.example.com/v1/forecast`
 * holds api, weather, example, com, v1 and forecast), postings of each search revision under keys
 * no word spells (terms.ts urlKey), so read at the page's snapshot as the text is.
 *
 *   rank = 1e6 × (distinct searched terms the URL holds); ties by listing id ascending.
 *
 * The terms are kept as the text budget keeps its terms (fewest listings first, within
 * SEARCH_ROW_BUDGET); a cursor keeps them (`k`) and says it walks the URLs (`u`).
 */
import { MAX_TERM_LENGTH, URL_KEY_SCORE, urlKey } from './terms.ts';
import { MAX_SEARCHED_TERMS, type TermChoice } from './term-budget.ts';

/**
 * The URL terms of a canonical resource URL: its host labels and path segments (everything after
 * `scheme://`), lowercased and split on anything that is not an ASCII letter or digit, each at most
 * MAX_TERM_LENGTH characters, distinct. A canonical URL is ASCII (the host in its `xn--` form, the
 * path percent-encoded).
 */
export function urlTerms(resource: string): string[] {
  const start = resource.indexOf('://');
  const rest = start < 0 ? resource : resource.slice(start + 3);
  const tokens = rest
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== '' && t.length <= MAX_TERM_LENGTH);
  return [...new Set(tokens)];
}

/** A revision's term scores with its listing's URL keys added (terms.ts urlKey), as every revision is written. */
export const withUrlKeys = (scores: ReadonlyMap<string, number>, resource: string): Map<string, number> =>
  new Map([...scores, ...urlTerms(resource).map((term): [string, number] => [urlKey(term), URL_KEY_SCORE])]);

/** A listing's rank per searched term its URL holds. */
export const URL_TERM_RANK = 1_000_000;

/** The query terms a URL search weighs: the first MAX_SEARCHED_TERMS distinct ones. */
export const urlCandidates = (queryTerms: string[]): string[] => queryTerms.slice(0, MAX_SEARCHED_TERMS);

/**
 * The URL search's terms from the candidates' row counts (each up to `budget` + 1): those with rows,
 * fewest first (ties in query order), the first always, the next while the kept rows total at most
 * `budget`.
 */
export function chooseUrlTerms(candidates: string[], counts: number[], budget: number): TermChoice {
  const found = candidates.map((term, i) => ({ term, n: counts[i] ?? 0, i })).filter((c) => c.n > 0);
  found.sort((x, y) => x.n - y.n || x.i - y.i);
  const searched: string[] = [];
  let rows = 0;
  for (const { term, n } of found) {
    if (searched.length > 0 && rows + n > budget) break;
    searched.push(term);
    rows += n;
  }
  return { searched, dropped: [], method: 'url' };
}
