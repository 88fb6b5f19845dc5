/**
 * The catalog's share of settle latency: `writeListing` (the settle hook's write transaction) timed
 * on a seeded catalog file, refreshing existing listings of the corpus with a payer each. Run by
 * bench/catalog/catalog-quality.ts (and the other before/after catalog benches) in this checkout and in the
 * baseline commit's tree (that tree as working directory), so both sides time their own store code.
 *
 * Three patterns: `first`, every write a listing's first paying payer (its quality level changes,
 * so its search revision is rewritten: the worst case); `steady`, 100 listings paid again and
 * again, each by its own regular payer (the level settles after a few payments: the common case);
 * `new`, every write a new listing's (the corpus's listings after the file's `listings`).
 *
 *   (cd TREE && npx tsx CHECKOUT/bench/catalog/lib/catalog-write-latency.ts <dbPath> <count> <listings> [first|steady|new])
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

// The store and the corpus of the tree this runs in (the working directory), so each side times its own code.
const { CatalogStore } = (await import(resolve('src/catalog/sqlite/store.ts'))) as typeof import('../../../src/catalog/sqlite/store.ts');
const { corpusListings } = (await import(
  resolve(existsSync('bench/lib/catalog-corpus.ts') ? 'bench/lib/catalog-corpus.ts' : 'bench/catalog-corpus.ts')
)) as typeof import('../../lib/catalog-corpus.ts');

const [dbPath, countArg, listingsArg, mode = 'first'] = process.argv.slice(2);
const count = Number(countArg);
const listings = Number(listingsArg);
const store = new CatalogStore(dbPath!);
const drafts =
  mode === 'new'
    ? [...corpusListings(listings + count)].slice(listings)
    : [...corpusListings(Math.min(listings, mode === 'steady' ? 100 : 5_000))];
const times: number[] = [];
// Two days after the corpus's first listing: its payments are all still in the quality window.
const at = Date.parse('2026-01-03T00:00:00Z');
for (let i = 0; i < count; i++) {
  const { draft } = drafts[mode === 'new' ? i : (i * 7919) % drafts.length]!;
  const started = performance.now();
  // The third argument (the payment's payer and id) is ignored by a store older than the quality signals.
  (store.writeListing as (...args: unknown[]) => unknown)(draft, new Date(at + i * 1000), {
    payer: mode === 'steady' ? `payer-of-${(i * 7919) % drafts.length}` : `payer-${i % 50}`,
    id: `tx-${i}`,
  });
  times.push(performance.now() - started);
}
store.close();
times.sort((a, b) => a - b);
const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!;
console.log(JSON.stringify({ p50: pct(50), p95: pct(95) }));
