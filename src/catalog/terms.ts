/**
 * Search terms and their write-time scores. A listing revision's text is tokenized once, when it
 * is written, into one row per distinct term holding that term's field-weighted score
 *   score(term) = Σ_field weight × tf/(tf+1)      (weights: serviceName 4, tags 3, description 2, params 1)
 * and one row per distinct stem (Porter's English stemmer), keyed `~stem`, holding the highest
 * score among the terms of that stem (so "forecasts" and "forecasting" both hold `~forecast`).
 * A query reads only the rows of its own terms and stems (query-terms.ts weighs them; the rank is
 * docs/CATALOG.md "Ranking").
 */
import { stemmer } from 'stemmer';

const FIELD_WEIGHTS = { serviceName: 4.0, tags: 3.0, description: 2.0, params: 1.0 } as const;
export const MAX_TERM_LENGTH = 64;

/**
 * The one limit of a search query (openapi.yaml `query` of GET /discovery/search, docs/CATALOG.md
 * "Query"): its length, in Unicode code points, as JSON Schema's maxLength counts. Any
 * number of words is accepted; what a search costs is bounded by the terms it ranks over
 * (term-budget.ts), not by refusing a sentence.
 */
export const MAX_QUERY_LENGTH = 2048;

const codePoints = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/**
 * Why a (non-blank) query exceeds the limit, or undefined when it is within it: the one check
 * every entry point (GET /discovery/search, the catalog itself, the MCP search_resources tool) runs,
 * so each refuses with the same reason.
 */
export function queryLimitViolation(query: string): string | undefined {
  if (query.length <= MAX_QUERY_LENGTH) return undefined;
  const length = codePoints(query);
  if (length > MAX_QUERY_LENGTH) return `The query is ${length} characters long; at most ${MAX_QUERY_LENGTH} are accepted.`;
  return undefined;
}

export interface SearchText {
  serviceName: string;
  tags: string;
  description: string;
  params: string;
}

// eslint-disable-next-line no-control-regex -- the whole ASCII range, NUL included
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Lowercase, diacritics removed, split on anything that is not a letter or a digit. Decompose,
 * drop combining marks, recompose: so "é" becomes "e" while Hangul syllables (which decompose into
 * letters, not marks) come back whole.
 */
export function tokenize(text: string): string[] {
  // Fast path, same result: ASCII has no marks to strip and its letters and digits are [a-z0-9].
  if (ASCII_ONLY.test(text))
    return text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((t) => t !== '');
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t !== '');
}

/**
 * Every distinct term of the text with its score, in the order fields are weighed. A token longer
 * than MAX_TERM_LENGTH is not indexed: a query term is cut to that length and matches whole tokens
 * only, so no query could find it.
 */
export function termScores(text: SearchText): Map<string, number> {
  const fields: Array<[string, number]> = [
    [text.serviceName, FIELD_WEIGHTS.serviceName],
    [text.tags, FIELD_WEIGHTS.tags],
    [text.description, FIELD_WEIGHTS.description],
    [text.params, FIELD_WEIGHTS.params],
  ];
  const scores = new Map<string, number>();
  for (const [value, weight] of fields) {
    if (value === '') continue;
    const tf = new Map<string, number>();
    for (const token of tokenize(value)) if (token.length <= MAX_TERM_LENGTH) tf.set(token, (tf.get(token) ?? 0) + 1);
    for (const [term, n] of tf) scores.set(term, (scores.get(term) ?? 0) + (weight * n) / (n + 1));
  }
  return withStemRows(scores);
}

/**
 * The keys of the postings (`search_terms`) that are not words of the text, each marked by a first
 * character no token holds, so no word of a listing or a query spells one:
 *   `~stem`: a stem's rows (a text search reads them: query-terms.ts);
 *   `/term`: a URL term's rows, the host labels and path segments of the listing's resource URL
 *   (url-search.ts), written with each revision at URL_KEY_SCORE. Only the URL search reads them:
 *   the text search asks for words and stems alone, so they count in none of its budgets, weights
 *   or matches.
 */
export function stemKey(token: string): string {
  let key = stemKeys.get(token);
  if (key === undefined) {
    // Cleared when full: a catalog's vocabulary mostly fits, and a flood of new words costs a refill, never memory.
    if (stemKeys.size >= STEM_CACHE_SIZE) stemKeys.clear();
    stemKeys.set(token, (key = `~${stemmer(token)}`));
  }
  return key;
}
/**
 * Each thread's stem keys of the tokens it met last: a search describes each result's match (relevance.ts) by the
 * stems of its fields' words, the same words page after page, and the stemmer allocates for every word it stems.
 */
const STEM_CACHE_SIZE = 16_384;
const stemKeys = new Map<string, string>();
export const isStemKey = (term: string): boolean => term.startsWith('~');
export const urlKey = (term: string): string => `/${term}`;
const isUrlKey = (term: string): boolean => term.startsWith('/');
/** A URL key's score, the same on every row (the URL search ranks by the terms a URL holds), and its milli. */
export const URL_KEY_SCORE = 1;
export const URL_KEY_MILLI = URL_KEY_SCORE * 1000;

/**
 * The rows of a revision's terms with their stems' rows added: each stem holds the highest score
 * among its terms. A map that already holds quality (quality.ts) keeps it: the highest of scores
 * each raised by the same level is the highest score raised by it.
 */
export function withStemRows(scores: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map(scores);
  for (const [term, score] of scores) {
    if (isStemKey(term) || isUrlKey(term)) continue;
    const key = stemKey(term);
    if (key.length - 1 > MAX_TERM_LENGTH) continue;
    out.set(key, Math.max(out.get(key) ?? 0, score));
  }
  return out;
}
