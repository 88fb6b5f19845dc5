/**
 * Pure reference oracles for the differential tests. referenceSearch is the rank as it is now
 * (docs/CATALOG.md "Ranking"), computed from the listings' text alone, without the index, and
 * referenceMeaningPages its pages for a query matched by meaning alone;
 * referenceRank the lexical rank before it (1e6 × distinct query terms held + round(1000 ×
 * Σ_field weight × Σ_term tf/(tf+1)), plus the quality level / 1024 per term held), kept for the
 * tests of quality. The quality level is 5 × ⌊2 × log2(1 + distinct payers)⌋ + 2 × min(2,
 * ⌊log2(1 + repeat payments)⌋), at most 64; results are ordered by rank desc, then listing id asc.
 */
import { stemmer } from 'stemmer';
import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import { REQUEST_WORDS } from '../../src/catalog/query-terms.ts';
import { relatedWords } from '../../src/catalog/related-words.ts';
import { wordNeighbours } from '../../src/catalog/word-neighbours.ts';
import { meaningScore, queryVectors } from '../../src/catalog/word-vectors.ts';

const WEIGHTS = { serviceName: 4.0, tags: 3.0, description: 2.0, params: 1.0 } as const;
const STOP: ReadonlySet<string> = new Set(ENGLISH_STOP_WORDS);
// eslint-disable-next-line no-control-regex -- the whole ASCII range, NUL included
const ASCII_ONLY = /^[\x00-\x7f]*$/;

function tokenize(text: string): string[] {
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

export function referenceQueryTerms(query: string): string[] {
  return [...new Set(tokenize(query).map((t) => t.slice(0, 64)))].slice(0, 16);
}

function termFrequencies(terms: ReadonlySet<string>, text: string): Map<string, number> {
  const tf = new Map<string, number>();
  for (const token of tokenize(text)) if (terms.has(token)) tf.set(token, (tf.get(token) ?? 0) + 1);
  return tf;
}

/** The quality level of a listing with `calls` payments from `payers` distinct payers in the window. */
export function referenceLevel(calls = 0, payers = 0): number {
  const repeats = Math.max(0, calls - payers);
  return Math.min(64, 5 * Math.floor(2 * Math.log2(1 + payers)) + 2 * Math.min(2, Math.floor(Math.log2(1 + repeats))));
}

export function referenceRank(terms: ReadonlySet<string>, fields: Array<[string, number]>, level = 0): number {
  const matched = new Set<string>();
  let weighted = 0;
  for (const [text, weight] of fields) {
    if (text === '') continue;
    for (const [term, n] of termFrequencies(terms, text)) {
      matched.add(term);
      weighted += (weight * n) / (n + 1);
    }
  }
  weighted += (matched.size * level) / 1024;
  return matched.size * 1_000_000 + Math.round(weighted * 1000);
}

export interface ReferenceListing {
  id: number;
  serviceName: string;
  tags: string;
  description: string;
  params: string;
  /** The listing's quality window: payments and distinct payers. */
  calls?: number;
  payers?: number;
  /** The listing's resource URL, searched when the text finds nothing. */
  url?: string;
}

/** A list page's item as the reference ranking reads it (openapi.yaml DiscoveryListResponse). */
interface ListedItem {
  resource: string;
  quality: { l30DaysTotalCalls: number; l30DaysUniquePayers: number };
  serviceName?: string | undefined;
  tags?: string[] | undefined;
  description?: string | undefined;
}

/**
 * The listings as the catalog keeps them now, read page by page (100 at a time): the oracle reads
 * the text as the catalog kept it (sanitized tags, the latest text after a refresh) with each
 * listing's quality window. `params` gives a listing's parameter text, which a list item does not carry.
 */
export async function listedCorpus(
  list: (offset: number) => Promise<{ items: ListedItem[] }>,
  idOf: (item: ListedItem) => number,
  params: (id: number) => string = () => '',
): Promise<ReferenceListing[]> {
  const out: ReferenceListing[] = [];
  for (let offset = 0; ; offset += 100) {
    const { items } = await list(offset);
    for (const item of items)
      out.push({
        calls: item.quality.l30DaysTotalCalls,
        payers: item.quality.l30DaysUniquePayers,
        id: idOf(item),
        serviceName: item.serviceName ?? '',
        tags: (item.tags ?? []).join(' '),
        description: item.description ?? '',
        params: params(idOf(item)),
        url: item.resource,
      });
    if (items.length < 100) return out;
  }
}

/**
 * The rank as it is now (docs/CATALOG.md "Ranking"), computed from the listings' text alone: the
 * query's content words (not English stop words nor request words), their stems, the keys each is
 * matched by (the word, its stem, its related words' stems and, for a word no listing holds, its
 * word-vector neighbours' stems: the related words are WordNet's data and the neighbours GloVe's,
 * taken from src/catalog/related-words.ts and word-neighbours.ts as given; of the words no listing
 * holds, the first 4 at most, as many as leave 8 searched in all), each key weighed by BM25's idf over the
 * listings holding it, and
 *   rank = Σ_key weight × (10,000 + round(1000 × (score + level/1024)))
 * where a word's score is Σ_field weight × tf/(tf+1) and a stem's the highest of its words'. The
 * weights are the whole `catalog`'s; `listings` (those passing a search's filters) are ranked.
 */
export function referenceSearch(listings: ReferenceListing[], query: string, catalog: ReferenceListing[] = listings): number[] {
  const words = referenceQueryTerms(query);
  const isStop = (w: string) => STOP.has(w) || REQUEST_WORDS.has(w);
  const content = words.filter((w) => !isStop(w)).length > 0 ? words.filter((w) => !isStop(w)) : words.filter((w) => !STOP.has(w));
  const docs = catalog.map((l) => {
    const scores = new Map<string, number>();
    for (const [text, weight] of [
      [l.serviceName, WEIGHTS.serviceName],
      [l.tags, WEIGHTS.tags],
      [l.description, WEIGHTS.description],
      [l.params, WEIGHTS.params],
    ] as Array<[string, number]>) {
      const tf = new Map<string, number>();
      for (const token of tokenize(text)) if (token.length <= 64) tf.set(token, (tf.get(token) ?? 0) + 1);
      for (const [term, n] of tf) scores.set(term, (scores.get(term) ?? 0) + (weight * n) / (n + 1));
    }
    for (const [term, score] of [...scores]) {
      const key = `~${stemmer(term)}`;
      if (key.length <= 65) scores.set(key, Math.max(scores.get(key) ?? 0, score));
    }
    const level = referenceLevel(l.calls, l.payers);
    return { id: l.id, milli: new Map([...scores].map(([k, v]) => [k, Math.round((v + level / 1024) * 1000)])) };
  });
  const df = (key: string) => docs.filter((d) => d.milli.has(key)).length;
  const N = catalog.length;
  const ranks = new Set(listings.map((l) => l.id));
  const idf = (n: number) => Math.log(1 + (Math.max(N, n) - n + 0.5) / (n + 0.5));
  const stemsInOrder = [...new Set(content.map((w) => `~${stemmer(w)}`))];
  // The budget: every stem with rows when at most 8 (the differential corpora stay within the row budget).
  const stems = stemsInOrder.filter((s) => df(s) > 0);
  if (stems.length > 8) throw new Error('the reference ranks at most 8 searched stems');
  // Words no listing holds are searched by their meaning alone: the first ones, at most 4 and as many as leave 8 in all.
  const expanded = [...stems, ...stemsInOrder.filter((s) => df(s) === 0).slice(0, Math.min(4, 8 - stems.length))];
  type Kind = 'exact' | 'stem' | 'related' | 'neighbour';
  const keys: Array<{ key: string; kind: Kind; of: string; similarity: number }> = [];
  const add = (key: string, kind: Kind, of: string, similarity = 0) => {
    if (!keys.some((k) => k.key === key)) keys.push({ key, kind, of, similarity });
  };
  for (const s of stems) {
    add(s, 'stem', s);
    for (const w of content) if (`~${stemmer(w)}` === s) add(w, 'exact', s);
  }
  for (const s of expanded)
    for (const w of content)
      if (`~${stemmer(w)}` === s) for (const r of relatedWords(w)) if (!isStop(r)) add(`~${stemmer(r)}`, 'related', s);
  for (const s of expanded.filter((x) => df(x) === 0))
    for (const w of content)
      if (`~${stemmer(w)}` === s)
        for (const n of wordNeighbours(w)) if (!isStop(n.word)) add(`~${stemmer(n.word)}`, 'neighbour', s, n.similarity);
  let total = 0;
  const weighed = keys.map((k) => {
    const n = Math.min(df(k.key), 1024);
    if (n === 0) return { ...k, w: 0 };
    const own = idf(Math.min(df(k.of), 1024));
    if (k.kind === 'related' || k.kind === 'neighbour') {
      if (total + n > 4000) return { ...k, w: 0 };
      total += n;
      const perIdf = k.kind === 'related' ? 300 : (300 * k.similarity) / 100;
      return { ...k, w: Math.max(1, Math.round(perIdf * Math.min(own, idf(n)))) };
    }
    total += n;
    return { ...k, w: Math.max(1, Math.round((k.kind === 'exact' ? 500 : 1000) * own)) };
  });
  const ranked: Array<{ id: number; rank: number }> = [];
  for (const d of docs) {
    if (!ranks.has(d.id)) continue;
    let rank = 0;
    let held = false;
    for (const k of weighed)
      if (k.w > 0 && d.milli.has(k.key)) {
        held = true;
        rank += k.w * (10_000 + d.milli.get(k.key)!);
      }
    if (held) ranked.push({ id: d.id, rank });
  }
  ranked.sort((a, b) => b.rank - a.rank || a.id - b.id);
  return ranked.length > 0 ? ranked.map((r) => r.id) : referenceUrlSearch(listings, content.join(' '));
}

/**
 * The pages of `limit` of a query no word of which any listing of the `catalog` holds (its matches are by meaning
 * alone, docs/CATALOG.md "A page by meaning"): `expected` (referenceSearch's order) cut into pages, each ordered by
 * how close its listings' text is to the query's content words in word vectors (taken from
 * src/catalog/word-vectors.ts as given), the rank's order among equals.
 */
export function referenceMeaningPages(expected: number[], catalog: ReferenceListing[], query: string, limit: number): number[][] {
  const words = referenceQueryTerms(query).filter((w) => !STOP.has(w) && !REQUEST_WORDS.has(w));
  const held = new Set(catalog.flatMap((l) => tokenize(`${l.serviceName} ${l.tags} ${l.description} ${l.params}`).map((t) => stemmer(t))));
  if (words.some((w) => held.has(stemmer(w)))) throw new Error('the reference orders by meaning only queries no listing holds a word of');
  const vectors = queryVectors(words);
  const byId = new Map(catalog.map((l) => [l.id, l]));
  const pages: number[][] = [];
  for (let at = 0; at < expected.length; at += limit) {
    const page = expected.slice(at, at + limit);
    const score = (id: number) => {
      const l = byId.get(id)!;
      return meaningScore(vectors, tokenize(`${l.serviceName} ${l.tags} ${l.description}`));
    };
    const scored = page.map((id, i) => ({ id, i, s: page.length > 1 ? score(id) : 0 }));
    pages.push(scored.sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.id));
  }
  return pages;
}

/**
 * When no listing's text holds a query term: the listings whose resource URL (after `scheme://`,
 * split on anything but ASCII letters and digits, lowercased) holds any of the query's first 8
 * distinct terms, by how many (desc), then id (asc).
 */
export function referenceUrlSearch(listings: ReferenceListing[], query: string): number[] {
  const terms = [...new Set(tokenize(query).map((t) => t.slice(0, 64)))].slice(0, 8);
  const ranked: Array<{ id: number; m: number }> = [];
  for (const l of listings) {
    if (l.url === undefined) continue;
    const held = new Set(
      l.url
        .slice(l.url.indexOf('://') + 3)
        .toLowerCase()
        .split(/[^a-z0-9]+/),
    );
    const m = terms.filter((t) => held.has(t)).length;
    if (m > 0) ranked.push({ id: l.id, m });
  }
  ranked.sort((a, b) => b.m - a.m || a.id - b.id);
  return ranked.map((r) => r.id);
}

/** The listing ids (`idOf` of each result) of a cursor walk in pages of `limit`, from the first page to the last, `maxPages` pages or `enough` ids. */
export async function walkIds(
  idOf: (item: unknown) => number,
  search: (page: {
    limit: number;
    cursor?: string;
  }) =>
    | { resources: unknown[]; pagination: { cursor: string | null } }
    | Promise<{ resources: unknown[]; pagination: { cursor: string | null } }>,
  limit: number,
  maxPages: number,
  enough = Infinity,
): Promise<number[]> {
  const seen: number[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages && seen.length < enough; page++) {
    const result = await search({ limit, ...(cursor ? { cursor } : {}) });
    seen.push(...result.resources.map(idOf));
    cursor = result.pagination.cursor ?? undefined;
    if (!cursor) break;
  }
  return seen;
}

/** A cursor walk's pages to the last (at most `maxPages`): each page's ids and whether it says `text_partial`. */
export async function walkPages(
  idOf: (item: unknown) => number,
  search: (page: {
    limit: number;
    cursor?: string;
  }) =>
    | { resources: unknown[]; pagination: { cursor: string | null }; searchMethod: string; partialResults: boolean }
    | Promise<{ resources: unknown[]; pagination: { cursor: string | null }; searchMethod: string; partialResults: boolean }>,
  limit: number,
  maxPages: number,
): Promise<Array<{ ids: number[]; partial: boolean; partialResults: boolean }>> {
  const pages: Array<{ ids: number[]; partial: boolean; partialResults: boolean }> = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const result = await search({ limit, ...(cursor ? { cursor } : {}) });
    pages.push({ ids: result.resources.map(idOf), partial: result.searchMethod === 'text_partial', partialResults: result.partialResults });
    cursor = result.pagination.cursor ?? undefined;
    if (!cursor) break;
  }
  return pages;
}

/**
 * What is wrong with a walk whose pages may say `text_partial` (a filtered search's window, docs/CATALOG.md "Search
 * with filters") against the reference order `expected`, or undefined: the pages before the first partial one are
 * its exact prefix; every page from it on says partial, with `partialResults` true; all the ids are a subsequence of
 * `expected` (each once, in rank order); a walk to its end with no partial page is `expected` itself.
 */
export function windowWalkError(
  pages: Array<{ ids: number[]; partial: boolean; partialResults: boolean }>,
  expected: number[],
): string | undefined {
  const seen = pages.flatMap((page) => page.ids);
  const firstPartial = pages.findIndex((page) => page.partial);
  const exact = (firstPartial < 0 ? pages : pages.slice(0, firstPartial)).flatMap((page) => page.ids);
  if (JSON.stringify(exact) !== JSON.stringify(expected.slice(0, exact.length)))
    return `exact pages ${exact.join()} are not the reference's prefix`;
  if (firstPartial < 0)
    return pages.at(-1)?.partialResults === false && seen.length !== expected.length ? 'the walk ended early' : undefined;
  if (!pages.slice(firstPartial).every((page) => page.partial && page.partialResults)) return 'a page after a partial one is not partial';
  let at = 0;
  for (const id of seen) {
    while (at < expected.length && expected[at] !== id) at++;
    if (at === expected.length) return `${seen.join()} is not a subsequence of the reference ${expected.join()}`;
    at++;
  }
  return undefined;
}
