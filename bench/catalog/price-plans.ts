/**
 * Each price page plan timed in process on a catalog file: `asset` + `maxAmount` (caps at price quantiles of the most
 * held asset), alone and with `type` or `network`, at several offsets, read by the plan the counts choose and by each
 * plan forced (src/catalog/price.ts PricePagePlan), through the store's listPriced (sqlite/price-index.ts). The file is
 * opened by the tree's store first (its migrations run: give a copy); nothing is hidden by age or failures. `--postgres`:
 * the file loaded into an embedded Postgres (lib/postgres-copy.ts) and each page read as the Postgres store reads it, its
 * counts first (postgres/price-counts.ts priceCountsSql: one round trip more), then listPriced (postgres/price-index.ts).
 * `--quick`: a fresh catalog of 400 corpus listings, 3 reads each.
 *
 *   (cd TREE && npx tsx CHECKOUT/bench/catalog/price-plans.ts COPY.sqlite [reps] [--postgres])
 *   npm run bench -- price-plans --quick
 *
 * Prints per case the plan chosen, then p50 / p95 ms of the chosen and of each forced plan, and the pages' equality.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const quick = process.argv.includes('--quick');
const onPostgres = process.argv.includes('--postgres');
const [pathArg, repsArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!pathArg && !quick) throw new Error('usage: price-plans.ts CATALOG.sqlite [reps] | --quick');
const reps = quick ? 3 : Number(repsArg ?? 15);
const { CatalogStore } = (await import(resolve('src/catalog/sqlite/store.ts'))) as typeof import('../../src/catalog/sqlite/store.ts');
const path = pathArg ?? join(mkdtempSync(join(tmpdir(), 'svc-price-plans-')), 'catalog.sqlite');
if (quick) {
  const { corpusListings } = (await import(resolve('bench/lib/catalog-corpus.ts'))) as typeof import('../lib/catalog-corpus.ts');
  const store = new CatalogStore(path);
  let i = 0;
  for (const { draft, at } of corpusListings(400)) store.writeListing(draft, at, { payer: `payer-${i % 50}`, id: `tx-${i++}` });
  store.close();
}
const { listPriced } = (await import(
  resolve('src/catalog/sqlite/price-index.ts')
)) as typeof import('../../src/catalog/sqlite/price-index.ts');
type Plan = Parameters<typeof listPriced>[6];
type Filters = Parameters<typeof listPriced>[1];
type Counted = Parameters<typeof listPriced>[2];
const { takenPaths } = (await import(resolve('src/catalog/query-paths.ts'))) as typeof import('../../src/catalog/query-paths.ts');
const { filterKeys } = (await import(resolve('src/catalog/listing.ts'))) as typeof import('../../src/catalog/listing.ts');

const t0 = performance.now();
new CatalogStore(path).close();
console.log(`opened (migrations) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const db = new DatabaseSync(path, { readOnly: true });
const { value: asset } = db.prepare("SELECT value FROM listing_counts WHERE kind = 'asset' ORDER BY n DESC LIMIT 1").get() as {
  value: string;
};
const prices = (db.prepare('SELECT price FROM listing_prices WHERE asset = ? ORDER BY price').all(asset) as Array<{ price: string }>).map(
  (r) => r.price,
);
const { value: network } = db.prepare("SELECT value FROM listing_counts WHERE kind = 'network' ORDER BY n DESC LIMIT 1").get() as {
  value: string;
};
const count = (key: { kind: string; value: string }) =>
  Number(
    (db.prepare('SELECT n FROM listing_counts WHERE kind = ? AND value = ?').get(key.kind, key.value) as { n: number } | undefined)?.n ?? 0,
  );

/** A priced page's listing ids and total as the store reads it (undefined: not a priced page), with `plan` forced when given. */
let readPriced = (filters: Filters, counted: Counted, page: { limit: number; offset: number }, plan: Plan) =>
  Promise.resolve(listPriced(db, filters, counted, page, undefined, undefined, plan));
let finish = () => Promise.resolve();
if (onPostgres) {
  const { openPool } = (await import(resolve('src/db/postgres.ts'))) as typeof import('../../src/db/postgres.ts');
  const { startEmbeddedPostgres, createDatabase } = (await import(
    resolve('src/dev/postgres.ts')
  )) as typeof import('../../src/dev/postgres.ts');
  const { copyCatalog } = (await import(resolve('bench/catalog/lib/postgres-copy.ts'))) as typeof import('./lib/postgres-copy.ts');
  const postgresIndex = (await import(
    resolve('src/catalog/postgres/price-index.ts')
  )) as typeof import('../../src/catalog/postgres/price-index.ts');
  const { priceCountsSql } = (await import(
    resolve('src/catalog/postgres/price-counts.ts')
  )) as typeof import('../../src/catalog/postgres/price-counts.ts');
  const { parameters } = (await import(
    resolve('src/catalog/postgres/queries.ts')
  )) as typeof import('../../src/catalog/postgres/queries.ts');
  const server = await startEmbeddedPostgres();
  const url = await createDatabase(server.url);
  const loading = openPool(url, { max: 1 });
  const loaded = performance.now();
  await copyCatalog(loading, path);
  await loading.end();
  console.log(`loaded into Postgres in ${((performance.now() - loaded) / 1000).toFixed(0)} s`);
  // One connection, pipelined as the store's pool is.
  const pool = openPool(url, { max: 1, pipeline: true });
  const client = await pool.connect();
  const now = new Date();
  readPriced = async (filters, counted, page, plan) => {
    const { values, p } = parameters();
    const counts = (await client.query(priceCountsSql(filters, p, undefined, undefined, page.offset + page.limit), values)).rows[0];
    const listed = await postgresIndex.listPriced(client, filters, counted, counts, page, now, undefined, undefined, plan);
    return listed && { ids: listed.rows.map((row) => row.id), total: listed.total };
  };
  finish = async () => {
    client.release();
    await pool.end();
    await server.stop();
  };
}

const ms = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[Math.floor(s.length / 2)]!.toFixed(2)} / ${s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)]!.toFixed(2)}`;
};
const plans = [undefined, 'by-time', 'by-price', 'by-classes'] as const;
console.log(`asset ${asset.slice(0, 8)}… ${prices.length} listings; network ${network}; ${reps} reps; p50 / p95 ms`);
console.log('| filters | offset | chosen | chosen | by-time | by-price | by-classes |');
for (const share of [0.001, 0.01, 0.1, 0.5, 0.9])
  for (const extra of [{}, { type: 'mcp' }, { network }])
    for (const offset of [0, 1000, 5000]) {
      const maxAmount = prices[Math.floor(share * (prices.length - 1))]!.slice(9);
      const filters = { asset, maxAmount, ...extra };
      const counted = filterKeys(filters)
        .map((key) => ({ key, n: count(key) }))
        .sort((x, y) => x.n - y.n);
      const page = { limit: 20, offset };
      const row: string[] = [];
      let chosen = '';
      let first: string | undefined;
      let same = true;
      for (const plan of plans) {
        takenPaths();
        const times: number[] = [];
        for (let i = 0; i < reps; i++) {
          const start = performance.now();
          const listed = await readPriced(filters, counted, page, plan);
          times.push(performance.now() - start);
          const answer = JSON.stringify(listed);
          first ??= answer;
          same &&= answer === first;
        }
        if (plan === undefined)
          chosen = takenPaths()
            .map((p) => p[1])
            .join(',');
        row.push(ms(times));
      }
      const label = `≤ ${share * 100} %${'type' in extra ? ' + type=mcp' : 'network' in extra ? ' + network' : ''}`;
      console.log(`| ${label} | ${offset} | ${chosen} | ${row.join(' | ')} |${same ? '' : ' PAGES DIFFER'}`);
    }
db.close();
if (quick) rmSync(dirname(path), { recursive: true, force: true });
await finish();
