/**
 * The catalog's share of settle latency: `writeListing` (the settle hook's write transaction) timed
 * on a seeded catalog file, refreshing existing listings of the corpus with a payer each. Run by
 * bench/catalog-quality.ts against this checkout and against the baseline commit's tree (copied
 * there), so both sides time their own store code.
 *
 *   npx tsx bench/catalog-write-latency.ts <dbPath> <count> <listings>
 */
import { CatalogStore } from '../src/catalog/sqlite/store.ts';
import { corpusListings } from './catalog-corpus.ts';

const [dbPath, countArg, listingsArg] = process.argv.slice(2);
const count = Number(countArg);
const listings = Number(listingsArg);
const store = new CatalogStore(dbPath!);
const drafts = [...corpusListings(Math.min(listings, 5_000))];
const times: number[] = [];
const at = Date.parse('2026-06-01T00:00:00Z');
for (let i = 0; i < count; i++) {
  const { draft } = drafts[(i * 7919) % drafts.length]!;
  const started = performance.now();
  // The third argument (the payment's payer and id) is ignored by a store older than the quality signals.
  (store.writeListing as (...args: unknown[]) => unknown)(draft, new Date(at + i * 1000), { payer: `payer-${i % 50}`, id: `tx-${i}` });
  times.push(performance.now() - started);
}
store.close();
times.sort((a, b) => a - b);
const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!;
console.log(JSON.stringify({ p50: pct(50), p95: pct(95) }));
