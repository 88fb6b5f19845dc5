/**
 * Seeds the catalog of bench/catalog/hidden-search.ts with the tree it runs in (the working directory), so each side
 * writes its own schema: the corpus's first `total` listings (bench/lib/catalog-corpus.ts), every tenth last settled a
 * day ago and the others 60 days ago (past a 30-day LISTING_TTL_DAYS), or with `visible-only` the visible tenth alone,
 * in the same order. A tree with the lifecycle pass (src/catalog/lifecycle.ts) then runs it to the end, as svc's first
 * passes would, so the hidden listings are out of its search index before svc starts.
 *
 *   (cd TREE && npx tsx CHECKOUT/bench/catalog/lib/hidden-corpus.ts <dbPath> <total> [all|visible-only])
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const { CatalogStore } = (await import(resolve('src/catalog/sqlite/store.ts'))) as typeof import('../../../src/catalog/sqlite/store.ts');
const { corpusListings } = (await import(
  resolve(existsSync('bench/lib/catalog-corpus.ts') ? 'bench/lib/catalog-corpus.ts' : 'bench/catalog-corpus.ts')
)) as typeof import('../../lib/catalog-corpus.ts');

const DAY = 86_400_000;
const [dbPath, totalArg, mode = 'all'] = process.argv.slice(2);
const total = Number(totalArg);
const now = Date.now();
const store = new CatalogStore(dbPath!);
let i = 0;
store.db.exec('BEGIN IMMEDIATE');
for (const { draft } of corpusListings(total)) {
  const visible = i % 10 === 0;
  if (visible || mode === 'all') store.writeListing(draft, new Date(now - (visible ? DAY : 60 * DAY) + i));
  if (++i % 5000 === 0) store.db.exec('COMMIT; BEGIN IMMEDIATE');
}
store.db.exec('COMMIT');
const lifecycle = (store as { lifecycle?: { maintain(cuts: unknown, now: Date, limit: number): { hidden: number } } }).lifecycle;
if (lifecycle && existsSync('src/catalog/lifecycle.ts')) {
  const { lifecycleCuts } = (await import(resolve('src/catalog/lifecycle.ts'))) as typeof import('../../../src/catalog/lifecycle.ts');
  const cuts = lifecycleCuts(Date.now(), 30 * DAY, 24 * 3_600_000, 90 * DAY);
  while (lifecycle.maintain(cuts, new Date(), 2000).hidden > 0);
}
store.close();
