/**
 * A query word's nearest words by meaning in GloVe word vectors (docs/CATALOG.md "Ranking"): the
 * words that appear in the same contexts ("smog": haze, pollution, ozone; "airplane": plane,
 * flight), which reach past a thesaurus's synonyms to what a word is about. The neighbours were
 * computed offline from the vectors an npm package ships (scripts/build-word-neighbours.ts) into
 * lexicon/word-neighbours.tsv.gz; nothing is downloaded. A search ranks a listing holding only a
 * neighbour below one holding a related word (query-terms.ts).
 *
 * The file is read on the first query that needs it (a few tens of milliseconds, once per
 * thread), kept as one string, and a word's line found by a binary search over its sorted lines.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { projectFile } from '../files.ts';

export const NEIGHBOURS_FILE = projectFile('lexicon/word-neighbours.tsv.gz');

/**
 * The neighbours one query word brings, and how similar a neighbour must be (cosine × 100): chosen
 * on the tuning set (docs/BENCHMARKS.md "Search for agents"); the file holds no more than these.
 */
export const MAX_NEIGHBOURS = 6;
export const MIN_SIMILARITY = 50;

export interface Neighbour {
  word: string;
  /** Cosine similarity × 100. */
  similarity: number;
}

let table: { text: string; starts: Int32Array } | undefined;

function load(): { text: string; starts: Int32Array } {
  if (table) return table;
  const text = gunzipSync(readFileSync(NEIGHBOURS_FILE)).toString('latin1');
  const starts: number[] = [0];
  for (let at = text.indexOf('\n'); at >= 0 && at + 1 < text.length; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  table = { text, starts: Int32Array.from(starts) };
  return table;
}

/** The word's neighbours, most similar first, at most MAX_NEIGHBOURS of at least MIN_SIMILARITY. */
export function wordNeighbours(word: string): Neighbour[] {
  const { text, starts } = load();
  let [lo, hi] = [0, starts.length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = starts[mid]!;
    const tab = text.indexOf('\t', start);
    const key = text.slice(start, tab);
    if (key === word) {
      const end = text.indexOf('\n', tab);
      return text
        .slice(tab + 1, end < 0 ? undefined : end)
        .split(' ')
        .map((pair) => {
          const colon = pair.lastIndexOf(':');
          return { word: pair.slice(0, colon), similarity: Number(pair.slice(colon + 1)) };
        })
        .filter((n) => n.similarity >= MIN_SIMILARITY)
        .slice(0, MAX_NEIGHBOURS);
    }
    if (key < word) lo = mid + 1;
    else hi = mid - 1;
  }
  return [];
}
