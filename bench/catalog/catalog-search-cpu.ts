/**
 * The CPU one search costs in process, for one tree (this checkout or a baseline's).
 *
 * The CPU one search costs in process, without HTTP or the catalog's threads (docs/BENCHMARKS.md
 * "Catalog on SQLite at 100k and 1M"): `CatalogStore.search` of the tree at TREE (this checkout,
 * or a baseline's, bench/lib/baseline-build.ts) on FILE, with the TTL and liveness cuts svc passes,
 * after 20 warm-up calls; prints the CPU per call and a hash of the first page (cursor left out)
 * so two trees can be checked to answer the same. Run trees alternately, in separate processes.
 *
 *   npx tsx bench/catalog/catalog-search-cpu.ts TREE FILE QUERY [CALLS]
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { seedCorpus } from '../lib/catalog-corpus.ts';
import { QUICK } from '../lib/quick.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

function quickFile(): string {
  const file = join(scratchDir('svc-bench-search-cpu-'), 'catalog.sqlite');
  seedCorpus(file, 300);
  return file;
}

// --quick: this checkout on a new 300-listing file, 5 calls (bench/lib/quick.ts).
const [tree = '.', file, query, calls = '300'] = QUICK
  ? ['.', quickFile(), 'ru pami', '5']
  : (process.argv.slice(2) as [string?, string?, string?, string?]);
if (!file || !query) throw new Error('usage: npx tsx bench/catalog/catalog-search-cpu.ts TREE FILE QUERY [CALLS]');
const { CatalogStore } = (await import(resolve(tree, 'src/catalog/sqlite/store.ts'))) as typeof import('../../src/catalog/sqlite/store.ts');
const store = new CatalogStore(file);
const now = new Date();
// As svc passes them with LISTING_TTL_DAYS=36500 (bench/catalog/lib/catalog-sides.ts) and a 3-day liveness grace.
const visibleSince = new Date(now.getTime() - 36500 * 86_400_000).toISOString();
const failingBefore = new Date(now.getTime() - 3 * 86_400_000).toISOString();
const search = () => store.search(query, {}, { limit: 20 }, now, 2, visibleSince, failingBefore);
const page = search();
const answer = createHash('sha256')
  .update(JSON.stringify({ ...page, pagination: { ...page.pagination, cursor: null } }))
  .digest('hex')
  .slice(0, 12);
for (let i = 0; i < 20; i++) search();
const n = Number(calls);
const started = process.cpuUsage();
for (let i = 0; i < n; i++) search();
const cpu = process.cpuUsage(started);
console.log(`${tree} "${query}": ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} ms CPU per search, answer ${answer}`);
store.close();
