/**
 * What a query asks for, as the rank weighs it (docs/CATALOG.md "What a word matches", "Ranking"):
 * its words less its function words (stop words and REQUEST_WORDS; a query of function words only
 * searches its request words, one of stop words only nothing), each word's stem (`~stem`, terms.ts:
 * the unit the budget chooses among), and the keys a stem is matched by, each with an integer weight
 * per unit of BM25 idf (weighKeys): the word itself, any form of it, its related words
 * (related-words.ts) and, for a word no listing holds, its word-vector neighbours (word-neighbours.ts).
 *
 *   rank(listing) = Σ_key weight(key) × (PRESENCE + milli(key, listing))
 *
 * The weights are integers, so both stores sum them exactly; a cursor carries them (search.ts `w`),
 * so ranks do not move between the pages of a walk.
 */
import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import { relatedWords } from './related-words.ts';
import { stemKey } from './terms.ts';
import { wordNeighbours } from './word-neighbours.ts';

/**
 * Words an agent frames a request with that say nothing of the service it wants (a catalog of
 * paid APIs: every listing is an "api", a "service" someone may "find" and "use"). Searched only
 * when a query holds nothing else.
 */
export const REQUEST_WORDS: ReadonlySet<string> = new Set(
  (
    'api apis service services endpoint endpoints tool tools find finding search looking look need needs want wants ' +
    'please thanks thank hello hi hey help use using call calling able kindly something anything return returns get ' +
    'give show tell provide provides let know just really good best also would could via without'
  ).split(' '),
);
const STOP_WORDS: ReadonlySet<string> = new Set(ENGLISH_STOP_WORDS);

/** Key weights per kind, per unit of idf (× 1000 so weights are integers). */
export const EXACT = 500;
export const STEM = 1000;
const RELATED = 300;
/**
 * The most words no listing holds that a search looks up by meaning: each costs a few WordNet reads and
 * up to 12 more keys to count (docs/BENCHMARKS.md "Search for agents").
 */
export const MAX_MEANING_ONLY = 4;
/** A word-vector neighbour's weight per unit of idf at similarity 1, × its cosine similarity: below a related word's. */
const NEIGHBOUR = 300;
/** What holding a key counts, against its field score × 1000 (at most about 10,000: terms.ts). */
export const PRESENCE = 10_000;
/** A key's rows are counted up to this many for its idf: past it every key weighs as it would there. */
export const IDF_COUNT_CAP = 1024;

export type KeyKind = 'exact' | 'stem' | 'related' | 'neighbour';

/** A key the search matches with its weight; `of`: the searched stem it serves; `similarity`: a neighbour's (× 100). */
export interface WeightedKey {
  key: string;
  kind: KeyKind;
  of: string;
  weight: number;
  similarity?: number;
}

export const isFunctionWord = (word: string): boolean => STOP_WORDS.has(word) || REQUEST_WORDS.has(word);

/** The words a query searches: its content words, else (a query of function words only) its request words. */
export function contentWords(words: readonly string[]): string[] {
  const content = words.filter((w) => !isFunctionWord(w));
  return content.length > 0 ? content : words.filter((w) => !STOP_WORDS.has(w));
}

/** The distinct stems of the searched words, in query order (the budget's units), and the words of each. */
export function stemsOf(words: readonly string[]): { stems: string[]; wordsOf: Map<string, string[]> } {
  const wordsOf = new Map<string, string[]>();
  for (const word of words) {
    const key = stemKey(word);
    wordsOf.set(key, [...(wordsOf.get(key) ?? []), word]);
  }
  return { stems: [...wordsOf.keys()], wordsOf };
}

/**
 * Every key the searched stems are matched by, before weighing: exact words, stems, related stems, and for
 * the stems no listing holds (`byMeaning`, searched by their meaning alone) their word-vector neighbours.
 */
export function candidateKeys(
  stems: readonly string[],
  wordsOf: ReadonlyMap<string, string[]>,
  byMeaning: ReadonlySet<string> = new Set(),
): Array<Omit<WeightedKey, 'weight'>> {
  const out: Array<Omit<WeightedKey, 'weight'>> = [];
  const seen = new Set<string>();
  const add = (key: string, kind: KeyKind, of: string, similarity?: number) => {
    if (seen.has(key)) return;
    seen.add(key);
    out.push(similarity === undefined ? { key, kind, of } : { key, kind, of, similarity });
  };
  for (const stem of stems) {
    add(stem, 'stem', stem);
    for (const word of wordsOf.get(stem) ?? []) add(word, 'exact', stem);
  }
  // Related stems after every word's own keys: a related word never displaces a searched word's key.
  for (const stem of stems)
    for (const word of wordsOf.get(stem) ?? [])
      for (const related of relatedWords(word)) if (!isFunctionWord(related)) add(stemKey(related), 'related', stem);
  // Word-vector neighbours last, only for words no listing holds (a word found as written needs no guess at
  // what it is about, and its neighbours' rows would take the budget): a thesaurus's word is surer than a
  // word met in the same contexts.
  for (const stem of stems.filter((s) => byMeaning.has(s)))
    for (const word of wordsOf.get(stem) ?? [])
      for (const n of wordNeighbours(word)) if (!isFunctionWord(n.word)) add(stemKey(n.word), 'neighbour', stem, n.similarity);
  return out;
}

/** BM25's idf of a key held by `n` of `listings` listings. */
export const idf = (n: number, listings: number): number => Math.log(1 + (Math.max(listings, n) - n + 0.5) / (n + 0.5));

/**
 * The keys' weights from their rows at the snapshot (`rows`, each up to IDF_COUNT_CAP) and the
 * catalog's listings; a key without rows weighs 0 (it is not searched). `budget`: related keys are
 * kept while every kept key's rows total at most it (the words' own keys always).
 */
export function weighKeys(
  keys: ReadonlyArray<Omit<WeightedKey, 'weight'>>,
  rows: readonly number[],
  listings: number,
  budget: number,
): number[] {
  const stemIdf = new Map<string, number>();
  keys.forEach((k, i) => {
    if (k.kind === 'stem') stemIdf.set(k.key, idf(rows[i]!, listings));
  });
  let total = 0;
  return keys.map((k, i) => {
    const n = rows[i]!;
    if (n === 0) return 0;
    const own = stemIdf.get(k.of)!;
    if (k.kind === 'related' || k.kind === 'neighbour') {
      if (total + n > budget) return 0;
      total += n;
      const perIdf = k.kind === 'related' ? RELATED : (NEIGHBOUR * k.similarity!) / 100;
      return Math.max(1, Math.round(perIdf * Math.min(own, idf(n, listings))));
    }
    total += n;
    return Math.max(1, Math.round((k.kind === 'exact' ? EXACT : STEM) * own));
  });
}
