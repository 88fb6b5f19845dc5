/**
 * Postgres list pages in process, this checkout's store beside a baseline commit's.
 *
 * The Postgres catalog's list pages in process (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"): this
 * checkout's `PostgresCatalogStore.list` beside a baseline commit's, call by call alternating (the order flipped every
 * round), the same pages with the same clock, the signals' cuts as svc passes them (bench/catalog/lib/catalog-sides.ts's TTL, the
 * 24 h liveness grace). HTTP and the catalog threads are left out, and the machine's load weighs on both sides alike,
 * so a change to the statements shows where the HTTP bench's spread under load hides it. Before timing, both sides must
 * give the same page. Each side has its own copy of one bench database, since a baseline from before a catalog migration
 * refuses a database migrated past it; `--base HEAD` (this checkout's code on both) measures the spread that is noise.
 *
 *   npx tsx bench/catalog/catalog-list-postgres.ts --keep-dir DIR --base-dir BASEDIR --base COMMIT [--size 100000] [--pages 300]
 *
 * DIR and BASEDIR are directories bench/catalog/catalog-postgres.ts has loaded at the same size (BASEDIR a `cp -a` of DIR made
 * before this checkout migrated it); no other server may be running on either.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { THIS_CHECKOUT } from '../lib/quick.ts';
import { copyPostgresDir, QUICK_SIZE, quickPostgresDir } from './lib/quick-postgres.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { fmt, loadAverage, machineLine, pct } from '../lib/http-load.ts';
import { exportRevision } from '../lib/ops-procs.ts';

const { values } = parseArgs({
  options: {
    'keep-dir': { type: 'string' },
    'base-dir': { type: 'string' },
    base: { type: 'string' },
    size: { type: 'string', default: '100000' },
    pages: { type: 'string', default: '300' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 3 pages, this checkout on both sides, on a temporary 300-listing directory and its copy unless given (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { base: THIS_CHECKOUT, size: QUICK_SIZE, pages: '3' });
if (values.quick && !values['keep-dir']) {
  values['keep-dir'] = quickPostgresDir();
  values['base-dir'] = copyPostgresDir(values['keep-dir']);
}
if (!values['keep-dir'] || !values['base-dir'] || !values.base) {
  console.error('--keep-dir DIR, --base-dir BASEDIR and --base COMMIT are required.');
  process.exit(2);
}
const PAGES = Number(values.pages);
/** The corpus's one asset (bench/lib/catalog-corpus.ts); its amounts spread over 1,000–1,001,000. */
const ASSET = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';
/** bench/catalog/catalog-postgres.ts's list requests with and without the price filter. */
const CASES: Array<{ name: string; filters: DiscoveryFilters; page: (i: number) => { limit: number; offset: number } }> = [
  { name: 'list, no filter', filters: {}, page: (i) => ({ limit: 20, offset: (i * 7) % 200 }) },
  {
    name: 'list, asset + maxAmount 900,000',
    filters: { asset: ASSET, maxAmount: '900000' },
    page: (i) => ({ limit: 20, offset: (i * 7) % 200 }),
  },
  {
    name: 'list, asset + maxAmount 100,000',
    filters: { asset: ASSET, maxAmount: '100000' },
    page: (i) => ({ limit: 20, offset: (i * 7) % 200 }),
  },
  { name: 'list, asset + maxAmount 2,000', filters: { asset: ASSET, maxAmount: '2000' }, page: () => ({ limit: 20, offset: 0 }) },
  ...['http', 'mcp'].map((type) => ({
    name: `list, asset + maxAmount 100,000 + type=${type}`,
    filters: { asset: ASSET, maxAmount: '100000', type },
    page: () => ({ limit: 20, offset: 0 }),
  })),
  {
    name: 'list, asset + maxAmount 100,000, offset 5,000',
    filters: { asset: ASSET, maxAmount: '100000' },
    page: () => ({ limit: 20, offset: 5000 }),
  },
];

type Store = Pick<PostgresCatalogStore, 'list' | 'end'>;
const baseline = exportRevision(values.base);
const servers = await Promise.all(
  [values['base-dir'], values['keep-dir']].map((dir) => startEmbeddedPostgres({ dataDir: join(dir, 'postgres') })),
);
try {
  const database = (url: string) => url.replace(/\/postgres$/, `/catalog_${values.size}`);
  const { PostgresCatalogStore: BaseStore } = (await import(join(baseline.dir, 'src/catalog/postgres/store.ts'))) as {
    PostgresCatalogStore: typeof PostgresCatalogStore;
  };
  const stores: Record<'before' | 'after', Store> = {
    before: await BaseStore.open(database(servers[0]!.url)),
    after: await PostgresCatalogStore.open(database(servers[1]!.url)),
  };
  const now = new Date();
  const visibleSince = new Date(now.getTime() - 36500 * 86_400_000).toISOString(); // discoveryOnlyEnv's LISTING_TTL_DAYS
  const failingBefore = new Date(now.getTime() - 24 * 3_600_000).toISOString(); // the default liveness grace
  const list = (side: 'before' | 'after', c: (typeof CASES)[number], i: number) =>
    stores[side].list(c.filters, c.page(i), now, visibleSince, failingBefore);
  for (const c of CASES) {
    const [a, b] = [await list('before', c, 0), await list('after', c, 0)];
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`different pages for ${c.name}`);
    for (let i = 0; i < 30; i++) for (const side of ['before', 'after'] as const) await list(side, c, i); // warm both
  }
  console.log(machineLine());
  const loadBefore = loadAverage();
  const times = CASES.map(() => ({ before: [] as number[], after: [] as number[] }));
  for (let i = 0; i < PAGES; i++)
    for (const [k, c] of CASES.entries())
      for (const side of i % 2 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
        const t0 = performance.now();
        await list(side, c, i);
        times[k]![side].push(performance.now() - t0);
      }
  console.log(`\n${PAGES} pages per request and side, alternating; before = ${values.base}; load ${loadBefore} → ${loadAverage()}\n`);
  console.log('| request (in process) | before p50 / p95 ms | after p50 / p95 | after ÷ before, p50 / p95 |\n|---|---|---|---|');
  for (const [k, c] of CASES.entries()) {
    const { before, after } = times[k]!;
    const ratio = (p: number) => (pct(after, p) / pct(before, p)).toFixed(2);
    console.log(
      `| ${c.name} | ${fmt(pct(before, 50))} / ${fmt(pct(before, 95))} | ${fmt(pct(after, 50))} / ${fmt(pct(after, 95))} | ${ratio(50)} / ${ratio(95)} |`,
    );
  }
  await Promise.all(Object.values(stores).map((s) => s.end()));
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  baseline.remove();
}
