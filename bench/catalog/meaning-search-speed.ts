/**
 * What searching words no listing holds by their meaning costs (docs/BENCHMARKS.md "Search for agents"): a catalog of
 * English listings (the benchmark corpus, bench/lib/catalog-corpus.ts, over 20,000 English words of
 * lexicon/word-neighbours.tsv.gz in a seeded order instead of made-up words), and random queries of 1 to 8 other
 * English words, none of which a listing holds while at least 3 of each one's neighbours are among the catalog's words:
 * the most related and neighbour keys a query can bring. p50/p95/max of the store's search per length, in process, one
 * thread (as agent-search-speed.ts).
 *
 *   npx tsx bench/catalog/meaning-search-speed.ts --db FILE [--size 100000] [--requests 40] [--seed N]
 *   npm run bench -- meaning-search-speed --quick     (a new 2,000-listing file, 3 queries per length)
 *
 * FILE is seeded first when it does not exist (100k listings: a few minutes).
 */
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { stemKey } from '../../src/catalog/terms.ts';
import { NEIGHBOURS_FILE, wordNeighbours } from '../../src/catalog/word-neighbours.ts';
import { rng, seedCorpus } from '../lib/catalog-corpus.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    size: { type: 'string' },
    requests: { type: 'string' },
    seed: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
if (values.quick)
  Object.assign(values, { db: join(scratchDir('svc-bench-meaning-speed-'), 'catalog.sqlite'), size: '2000', requests: '3' });
if (!values.db) throw new Error('--db FILE is required');
const seed = Number(values.seed ?? Date.now() % 1_000_000);
const requests = Number(values.requests ?? 40);
const size = Number(values.size ?? 100_000);

// Every word of the file in an order of its own (fixed, so every run seeds the same catalog): the first 20,000 are the catalog's.
const order = rng(82);
const english = gunzipSync(readFileSync(NEIGHBOURS_FILE))
  .toString('latin1')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => [order(), line.slice(0, line.indexOf('\t'))] as const)
  .sort((a, b) => a[0] - b[0])
  .map(([, word]) => word);
const vocabulary = english.slice(0, 20_000);
if (!existsSync(values.db)) {
  console.log(`seeding ${size} English listings into ${values.db}`);
  seedCorpus(
    values.db,
    size,
    (done) => console.log(`${done} listings`),
    (k) => vocabulary[k]!,
  );
}
const catalogStems = new Set(vocabulary.map(stemKey));
const absent = english
  .slice(20_000)
  .filter((w) => !catalogStems.has(stemKey(w)) && wordNeighbours(w).filter((n) => catalogStems.has(stemKey(n.word))).length >= 3);
console.log(`seed ${seed}, ${requests} queries per length, ${absent.length} candidate words no listing holds`);

const rand = rng(seed);
const store = new CatalogStore(values.db);
const now = new Date();
const query = (n: number) => Array.from({ length: n }, () => absent[Math.floor(rand() * absent.length)]!).join(' ');
const timeOf = (q: string) => {
  const t = process.hrtime.bigint();
  store.search(q, {}, { limit: 10 }, now, DISCOVERY_X402_VERSION);
  return Number(process.hrtime.bigint() - t) / 1e6;
};
for (let i = 0; i < 20; i++) timeOf(query(4)); // warm
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
console.log('| words | p50 ms | p95 ms | max ms |');
console.log('| --- | --- | --- | --- |');
for (const n of [1, 2, 3, 4, 6, 8]) {
  const times = Array.from({ length: requests }, () => timeOf(query(n)));
  console.log(`| ${n} | ${pct(times, 0.5).toFixed(2)} | ${pct(times, 0.95).toFixed(2)} | ${Math.max(...times).toFixed(2)} |`);
}
store.close();
