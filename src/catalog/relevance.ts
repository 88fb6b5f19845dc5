/**
 * How well a search result answers its query (openapi.yaml SearchMatch, docs/CATALOG.md "Ranking"):
 * each result says which query words it holds, how (the word itself, another form of it, a related
 * word) and in which fields, and a score: the share of the query's informative weight it holds.
 * The answer's `relevance` is its best result's, `none` when nothing relevant matched, so an agent
 * can tell "no such service" from "a weak match".
 */
import type { DiscoveryResource } from './types.ts';
import type { KeyKind, WeightedKey } from './query-terms.ts';
import { STEM, idf } from './query-terms.ts';
import { FUNCTION_WORD_SHARE } from './term-budget.ts';
import { stemKey, tokenize } from './terms.ts';
import { meaningScore, queryVectors } from './word-vectors.ts';
import type { RankedRow } from './search.ts';
import type { components } from '../generated/openapi.ts';

export type SearchedKey = WeightedKey;
export type SearchMatch = components['schemas']['SearchMatch'];
type Relevance = SearchMatch['relevance'];

/** A result holding at least this share of the query's informative weight is a strong match. */
const STRONG_SHARE = 0.35;
/** Below this share a result holds too little of the query to answer it: `none`, an incidental match. */
const WEAK_SHARE = 0.15;
/** How much a match of each kind counts of its word's weight. */
const KIND_SHARE: Record<KeyKind, number> = { exact: 1, stem: 0.9, related: 0.4, neighbour: 0.4 };
const KIND_ORDER: KeyKind[] = ['exact', 'stem', 'related', 'neighbour'];

type Field = SearchMatch['terms'][number]['fields'][number];

/** The text of the fields a listing's answer carries (its parameter text it does not). */
type FieldsOf = Pick<DiscoveryResource, 'serviceName' | 'tags' | 'description'>;
function fieldTexts(listing: FieldsOf): Array<[Field, string]> {
  return [
    ['serviceName', listing.serviceName ?? ''],
    ['tags', (listing.tags ?? []).join(' ')],
    ['description', listing.description ?? ''],
  ];
}

/** The listing's words per field and their stem keys (a match found in no field of its answer is in its parameter text). */
function fieldTokens(listing: FieldsOf): Array<[Field, string[], string[]]> {
  return fieldTexts(listing).map(([field, text]) => {
    const tokens = tokenize(text);
    return [field, tokens, tokens.map(stemKey)];
  });
}

/**
 * The match of a text result: per query word it holds, the best kind of key and the fields. `keys`:
 * the searched keys; `stemIdf`: each content stem of the query with its idf (searched, left out by
 * the budget, or found nowhere), the score's denominator; `listings`: the catalog's size, which
 * tells a catalog function word (held by more than FUNCTION_WORD_SHARE of them).
 */
export function matchOf(
  row: RankedRow,
  keys: readonly SearchedKey[],
  wordsOf: ReadonlyMap<string, string[]>,
  stemIdf: ReadonlyMap<string, number>,
  listings: number,
  listing: FieldsOf,
): SearchMatch {
  const held = new Set(row.keys ?? []);
  let fields: ReturnType<typeof fieldTokens> | undefined;
  const informative = idf(Math.floor(listings * FUNCTION_WORD_SHARE), listings);
  const terms: SearchMatch['terms'] = [];
  let weight = 0;
  let total = 0;
  let holdsInformative = false;
  for (const wordIdf of stemIdf.values()) total += wordIdf;
  for (const stem of new Set(keys.map((k) => k.of))) {
    const ofStem = keys.filter((k) => k.of === stem && held.has(k.key));
    if (ofStem.length === 0) continue;
    const kind = KIND_ORDER.find((kd) => ofStem.some((k) => k.kind === kd))!;
    const wordIdf = stemIdf.get(stem) ?? 0;
    weight += KIND_SHARE[kind] * wordIdf;
    if ((kind === 'exact' || kind === 'stem') && (wordIdf >= informative || listings < 4)) holdsInformative = true;
    fields ??= fieldTokens(listing);
    const inFields = fields
      .filter(([, tokens, stems]) => ofStem.some((k) => tokens.includes(k.key) || stems.includes(k.key)))
      .map(([field]) => field);
    // A word-vector neighbour is a related word to the reader (openapi.yaml SearchMatch).
    const match = kind === 'neighbour' ? 'related' : kind;
    terms.push({ term: wordsOf.get(stem)![0]!, match, fields: inFields.length > 0 ? inFields : ['params'] });
  }
  const score = total > 0 ? Math.round((1000 * weight) / total) / 1000 : 0;
  const relevance: Relevance = !holdsInformative || score < WEAK_SHARE ? 'none' : score >= STRONG_SHARE ? 'strong' : 'weak';
  return { relevance, score, terms };
}

/** The idf of each content stem of a query: from its stem key's weight when searched, else from its rows (0: found nowhere). */
export function stemWeights(
  stems: readonly string[],
  keys: readonly SearchedKey[],
  dropped: ReadonlySet<string>,
  listings: number,
  capped: number,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const stem of stems) {
    const key = keys.find((k) => k.key === stem && k.kind === 'stem');
    out.set(stem, key ? key.weight / STEM : idf(dropped.has(stem) ? capped : 0, listings));
  }
  return out;
}

/** The match of a result found by its resource URL: the searched terms its URL holds. */
export function urlMatchOf(resource: string, terms: readonly string[]): SearchMatch {
  const lower = resource.toLowerCase();
  const held = terms.filter((t) => lower.includes(t));
  return { relevance: 'weak', score: 0, terms: held.map((term) => ({ term, match: 'exact' as const, fields: ['resource' as const] })) };
}

/** An answer's relevance: its best result's; `none` without results. */
export function answerRelevance(resources: ReadonlyArray<{ match?: SearchMatch | undefined }>): Relevance {
  const levels = resources.map((r) => r.match?.relevance ?? 'none');
  return levels.includes('strong') ? 'strong' : levels.includes('weak') ? 'weak' : 'none';
}

/**
 * A page's results in order of meaning: by how close each listing's name, tags and description are to the query's
 * content words `words` in word vectors (word-vectors.ts), most first, the rank's order among equals. The engine
 * orders so a page none of whose results holds an informative word of a query some of whose words no listing holds:
 * there the rank weighs related words and neighbours only, and meaning tells better which listing answers. Only the
 * page's order changes, never which listings a page holds, so a walk visits each match once whatever its page size.
 */
export function orderByMeaning<T extends { resource: FieldsOf }>(items: readonly T[], words: readonly string[]): T[] {
  const query = items.length < 2 ? [] : queryVectors(words);
  if (query.length === 0) return [...items];
  const listingWords = (listing: FieldsOf) =>
    tokenize(
      fieldTexts(listing)
        .map(([, text]) => text)
        .join(' '),
    );
  return items
    .map((item, at) => ({ item, at, score: meaningScore(query, listingWords(item.resource)) }))
    .sort((a, b) => b.score - a.score || a.at - b.at)
    .map((s) => s.item);
}
