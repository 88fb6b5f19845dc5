/**
 * A query word's nearest words by meaning in GloVe word vectors (docs/CATALOG.md "What a word matches"): the
 * words that appear in the same contexts ("smog": haze, pollution, ozone; "airplane": plane,
 * flight), which reach past a thesaurus's synonyms to what a word is about. The neighbours were
 * computed offline from the vectors an npm package ships (scripts/build-word-neighbours.ts) into
 * lexicon/word-neighbours.tsv.gz; nothing is downloaded. A search ranks a listing holding only a
 * neighbour below one holding a related word (query-terms.ts).
 *
 * The file is read on the first query that needs it (once per thread), kept as one string, and a
 * word's line found by a binary search over its sorted lines.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { projectFile } from '../files.ts';
import { findLine, lineStarts } from './sorted-lines.ts';

export const NEIGHBOURS_FILE = projectFile('lexicon/word-neighbours.tsv.gz');

/**
 * The neighbours one query word brings, and how similar a neighbour must be (cosine × 100): chosen
 * on the tuning set (docs/BENCHMARKS.md "Search for agents"); the file holds no more than these.
 */
export const MAX_NEIGHBOURS = 6;
export const MIN_SIMILARITY = 50;

interface Neighbour {
  word: string;
  /** Cosine similarity × 100. */
  similarity: number;
}

let table: { text: string; starts: Int32Array } | undefined;

function load(): { text: string; starts: Int32Array } {
  if (table) return table;
  const text = gunzipSync(readFileSync(NEIGHBOURS_FILE)).toString('latin1');
  table = { text, starts: lineStarts(text) };
  return table;
}

/** The word's neighbours, most similar first, at most MAX_NEIGHBOURS of at least MIN_SIMILARITY. */
export function wordNeighbours(word: string): Neighbour[] {
  const { text, starts } = load();
  const line = findLine(text, starts, word);
  if (line < 0) return [];
  const start = starts[line]!;
  const end = text.indexOf('\n', start);
  return text
    .slice(text.indexOf('\t', start) + 1, end < 0 ? undefined : end)
    .split(' ')
    .map((pair) => {
      const colon = pair.lastIndexOf(':');
      return { word: pair.slice(0, colon), similarity: Number(pair.slice(colon + 1)) };
    })
    .filter((n) => n.similarity >= MIN_SIMILARITY)
    .slice(0, MAX_NEIGHBOURS);
}
