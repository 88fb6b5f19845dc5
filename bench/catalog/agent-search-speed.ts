/**
 * Search latency in process by query length on a seeded catalog file (docs/BENCHMARKS.md "Search for agents"): random
 * queries (seed printed) mixing the corpus's Zipf vocabulary (common and content words), English stop words and
 * English content words (which WordNet relates), 1 to 20 words; p50/p95 of the store's search per length. In process,
 * one thread: the engine's statements and the rank, without HTTP (search-bands measures over HTTP against a baseline).
 *
 *   npx tsx bench/catalog/agent-search-speed.ts --db FILE [--requests 40] [--seed N]
 *   npm run bench -- agent-search-speed --quick     (a new 300-listing file, 3 queries per length)
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { agentSentenceWord, rng, seedCorpus } from '../lib/catalog-corpus.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: { db: { type: 'string' }, requests: { type: 'string' }, seed: { type: 'string' }, quick: { type: 'boolean', default: false } },
});
if (values.quick) {
  values.db = join(scratchDir('svc-bench-agent-speed-'), 'catalog.sqlite');
  seedCorpus(values.db, 300);
  values.requests = '3';
}
if (!values.db) throw new Error('--db FILE is required');
const seed = Number(values.seed ?? Date.now() % 1_000_000);
const requests = Number(values.requests ?? 40);
console.log(`seed ${seed}, ${requests} queries per length`);
const rand = rng(seed);
const word = () => agentSentenceWord(rand);
const store = new CatalogStore(values.db);
const now = new Date();
const timeOf = (query: string) => {
  const t = process.hrtime.bigint();
  store.search(query, {}, { limit: 10 }, now, DISCOVERY_X402_VERSION);
  return Number(process.hrtime.bigint() - t) / 1e6;
};
for (let i = 0; i < 20; i++) timeOf(Array.from({ length: 4 }, word).join(' ')); // warm
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
console.log('| words | p50 ms | p95 ms | max ms |');
console.log('| --- | --- | --- | --- |');
for (const n of [1, 2, 3, 4, 6, 8, 12, 20]) {
  const times = Array.from({ length: requests }, () => timeOf(Array.from({ length: n }, word).join(' ')));
  console.log(`| ${n} | ${pct(times, 0.5).toFixed(2)} | ${pct(times, 0.95).toFixed(2)} | ${Math.max(...times).toFixed(2)} |`);
}
store.close();
