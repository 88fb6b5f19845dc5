/**
 * Discovery over HTTP with the catalog on PostgreSQL beside the same catalog on SQLite.
 *
 * Discovery over HTTP with the catalog on PostgreSQL, beside the same catalog on SQLite, in one
 * run per size (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). Two svc processes
 * (`dist/main.js`, what `npm start` runs; run `npm run build` first) serve the same corpus: one
 * with DB_PATH on the SQLite file, one with DATABASE_URL on an embedded Postgres. Both answer the
 * same requests (bench/lib/catalog-corpus.ts `discoveryCases`) with the same client, at 1 and 16
 * connections; before timing, each request's first answer is compared between the two (items and
 * totals; cursors and liveness records differ, see `comparable`).
 *
 * The corpus is the one bench/catalog/catalog.ts seeds (through the SQLite store). Writing 1M listings
 * through the Postgres store one settlement at a time would take hours (writes serialize on the
 * catalog sequence, ~3 ms each), so the Postgres database is created by svc's own migrations and
 * then loaded from the SQLite file table by table with COPY: the two stores keep the same tables
 * (src/catalog/postgres/migrations.ts), a term's score becoming its exact `units` and each row
 * getting its revision's term signature (`sig`, from the server's own `catalog_term_bit`). The comparison
 * of answers above is what shows the load is faithful. `VACUUM ANALYZE` follows, as an operator
 * would run after a bulk load (docs/CATALOG.md "Postgres").
 *
 *   npm run build && npx tsx bench/catalog/catalog-postgres.ts --keep-dir DIR [--sizes 100000,1000000] [--requests 200] [--terms]
 *
 * DIR keeps the SQLite files and the Postgres data directory (`DIR/postgres`) between runs.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CATALOG_SCHEMA } from '../../src/catalog/postgres/migrations.ts';
import { migrate, openPool } from '../../src/db/postgres.ts';
import { createDatabase, databaseUrl, freePort, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { discoveryCases, mostCommonQuery, naturalQuery, seedCorpus } from '../lib/catalog-corpus.ts';
import { discoveryOnlyEnv } from './lib/catalog-sides.ts';
import { copyCatalog } from './lib/postgres-copy.ts';
import { fmt, getJson, load, loadAverage, machineLine, requireBuild, rssMb, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100000,1000000' },
    requests: { type: 'string', default: '200' },
    'keep-dir': { type: 'string' },
    /** Also several-term searches (3–8 terms). */
    terms: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, 3 requests a row, in a temporary directory unless --keep-dir (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { sizes: '300', requests: '3' });
if (values.quick && !values['keep-dir']) values['keep-dir'] = scratchDir('svc-bench-quick-pg-', { traversable: true });
if (!values['keep-dir']) {
  console.error('--keep-dir DIR is required: the seeded corpora and the Postgres data directory are kept there.');
  process.exit(2);
}
requireBuild();
const dir = values['keep-dir'];
mkdirSync(dir, { recursive: true });
const sizes = values.sizes.split(',').map(Number);
const REQUESTS = Number(values.requests);
/** As bench/catalog/catalog.ts: svc's young generation, sized deliberately. */
const SEMI_SPACE_MB = 4;
/** Untimed requests per case and server before measuring. */
const WARM_UP = 40;

/** The database holding this size's corpus, loaded from the SQLite file unless a previous run did. */
async function postgresCorpus(adminUrl: string, size: number, sqlitePath: string): Promise<string> {
  const name = `catalog_${size}`;
  const url = databaseUrl(adminUrl, name);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (exists) {
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      const loaded = await db
        .query("SELECT value FROM catalog_meta WHERE key = 'bench_loaded_from'")
        .then((r) => r.rows[0]?.value as string | undefined)
        .catch(() => undefined);
      await db.end();
      if (loaded === sqlitePath) {
        // Loaded by an earlier run, perhaps of an older svc: its newer migrations run here, not
        // in svc's start during the measurement.
        const pool = openPool(url, { max: 1 });
        try {
          const version = async () =>
            Number((await pool.query("SELECT version FROM svc_schema_versions WHERE component = 'catalog'")).rows[0]?.version ?? 0);
          const before = await version();
          const t0 = performance.now();
          await migrate(pool, 'catalog', CATALOG_SCHEMA);
          if ((await version()) !== before) {
            // A migration that rewrote rows (catalog migration 22 updates every term row) leaves
            // dead rows and pages not marked visible, so index-only scans read the table until
            // autovacuum passes: done here, as after a load, before measuring.
            await pool.query('VACUUM ANALYZE');
            process.stderr.write(
              `  migrated ${before} → ${await version()} and vacuumed in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
            );
          }
        } finally {
          await pool.end();
        }
        return url;
      }
      await admin.query(`DROP DATABASE ${name}`); // a load that did not finish
    }
  } finally {
    await admin.end();
  }
  await createDatabase(adminUrl, name);
  const pool = openPool(url, { max: 1 });
  try {
    await copyCatalog(pool, sqlitePath);
    const client = await pool.connect();
    try {
      await client.query("INSERT INTO catalog_meta (key, value) VALUES ('bench_loaded_from', $1)", [sqlitePath]);
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
  return url;
}

/**
 * The price filters (docs/CATALOG.md "List"; bench/catalog/catalog-price.ts): the corpus's one asset, held
 * by every listing at amounts spread over 1,000–1,001,000, so maxAmount 100,000 matches about 10%.
 */
function priceCases(common: string): Array<{ name: string; path: (i: number) => string }> {
  const priced = `asset=CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA&maxAmount`;
  const list = (query: string) => `/discovery/resources?limit=20&${priced}=${query}`;
  return [
    { name: 'search, 1 common term, asset + maxAmount 100,000', path: () => `/discovery/search?query=${common}&limit=20&${priced}=100000` },
    { name: 'list, asset + maxAmount 900,000', path: (i) => list(`900000&offset=${(i * 7) % 200}`) },
    { name: 'list, asset + maxAmount 100,000', path: (i) => list(`100000&offset=${(i * 7) % 200}`) },
    { name: 'list, asset + maxAmount 2,000', path: () => list('2000') },
    { name: 'list, asset + maxAmount 100,000 + type=http', path: () => list('100000&type=http') },
    { name: 'list, asset + maxAmount 100,000 + type=mcp', path: () => list('100000&type=mcp') },
    { name: 'list, asset + maxAmount 100,000, offset 5,000', path: () => list('100000&offset=5000') },
  ];
}

/**
 * Several-term searches (bench/catalog/catalog-terms.ts's queries): 3 to 8 terms, the most common
 * words (the worst case) and natural sentences, four variants each.
 */
function termCases(): Array<{ name: string; path: (i: number) => string }> {
  const search = (query: string) => `/discovery/search?query=${encodeURIComponent(query)}&limit=20`;
  return [3, 4, 5, 6, 7, 8].flatMap((n) => [
    { name: `search, ${n} most common terms ("${mostCommonQuery(n, 0)}")`, path: (i: number) => search(mostCommonQuery(n, i % 4)) },
    { name: `search, ${n} natural terms ("${naturalQuery(n, 0)}")`, path: (i: number) => search(naturalQuery(n, i % 4)) },
  ]);
}

/**
 * An answer without what legitimately differs between two servers: search cursors (each signs its
 * own) and each item's `liveness` (openapi.yaml `ListingLiveness`): each svc checks listings on its
 * own schedule and records the results in its own store (docs/CATALOG.md "Liveness"), so one may
 * have checked a listing (`checkedAt`, or a first record) that the other has not yet. With the 24 h
 * grace no listing is hidden by its failures during a run, so the items and totals still compare.
 */
function comparable(answer: unknown): string {
  return JSON.stringify(answer, (key, value: unknown) => (key === 'cursor' || key === 'liveness' ? undefined : value));
}

console.log(machineLine());
const postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres') });
try {
  for (const size of sizes) {
    const sqlitePath = join(dir, `catalog-${size}.sqlite`);
    if (!existsSync(sqlitePath)) {
      const t0 = performance.now();
      seedCorpus(sqlitePath, size, (n) => process.stderr.write(`seeded ${n}\r`));
      console.error(`seeded ${size} listings into SQLite in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
    // A file kept from an earlier run gets this checkout's schema before it is copied and served.
    new CatalogStore(sqlitePath).close();
    const t0 = performance.now();
    const corpusUrl = await postgresCorpus(postgres.url, size, sqlitePath);
    console.log(
      `\n### ${size.toLocaleString('en')} listings (Postgres ready in ${((performance.now() - t0) / 1000).toFixed(0)} s; 0 s means loaded by an earlier run)`,
    );
    // Free ports, not fixed ones: two runs at once (another checkout's) must not answer each other's requests.
    const sqlitePort = await freePort();
    let postgresPort = await freePort();
    while (postgresPort === sqlitePort) postgresPort = await freePort();
    const args = [`--max-semi-space-size=${SEMI_SPACE_MB}`, 'dist/main.js'];
    // Signals on as in production (quality, liveness checks, LISTING_TTL_DAYS), the TTL long enough
    // to keep the corpus's 2026 listings visible (bench/catalog/lib/catalog-sides.ts).
    const onSqlite = startNode(args, discoveryOnlyEnv(sqlitePort, sqlitePath));
    const onPostgres = startNode(args, discoveryOnlyEnv(postgresPort, join(dir, `unused-${size}.sqlite`), { DATABASE_URL: corpusUrl }));
    try {
      await Promise.all([waitReady(sqlitePort, '/discovery/resources?limit=1'), waitReady(postgresPort, '/discovery/resources?limit=1')]);
      let peak = { sqlite: 0, postgres: 0 };
      const sampler = setInterval(() => {
        peak = { sqlite: Math.max(peak.sqlite, rssMb(onSqlite.pid!)), postgres: Math.max(peak.postgres, rssMb(onPostgres.pid!)) };
      }, 200);
      const withPrices = async (port: number) => {
        const found = await discoveryCases(port);
        return { cases: [...found.cases, ...priceCases(found.common), ...(values.terms ? termCases() : [])] };
      };
      const [fromSqlite, fromPostgres] = await Promise.all([withPrices(sqlitePort), withPrices(postgresPort)]);
      let same = 0;
      for (const [i, { name, path }] of fromSqlite.cases.entries()) {
        const a = comparable(await getJson<unknown>(sqlitePort, path(0)));
        const b = comparable(await getJson<unknown>(postgresPort, fromPostgres.cases[i]!.path(0)));
        if (a === b) same++;
        else console.log(`DIFFERENT ANSWERS for ${name}:\n  SQLite   ${a.slice(0, 300)}\n  Postgres ${b.slice(0, 300)}`);
      }
      console.log(
        `\nSame answers from both stores: ${same} of ${fromSqlite.cases.length} requests (items, totals; cursors and liveness excluded).`,
      );
      // Warm both: the files were just written or copied, and the first reads of a 1M catalog come
      // from disk on whichever store was loaded first. Timed runs then compare warm caches.
      for (const [i, { path }] of fromSqlite.cases.entries()) {
        await load(sqlitePort, 4, WARM_UP, path);
        await load(postgresPort, 4, WARM_UP, fromPostgres.cases[i]!.path);
      }
      console.log(
        '\n| request | SQLite p50 / p95 ms, 1 conn | Postgres p50 / p95, 1 conn | Postgres ÷ SQLite p95 | SQLite p50 / p95, 16 conns | Postgres p50 / p95, 16 conns |',
      );
      console.log('|---|---|---|---|---|---|');
      for (const [i, { name, path }] of fromSqlite.cases.entries()) {
        const pgPath = fromPostgres.cases[i]!.path;
        const s1 = await load(sqlitePort, 1, REQUESTS, path);
        const p1 = await load(postgresPort, 1, REQUESTS, pgPath);
        const s16 = await load(sqlitePort, 16, REQUESTS * 2, path);
        const p16 = await load(postgresPort, 16, REQUESTS * 2, pgPath);
        const errors = s1.errors + p1.errors + s16.errors + p16.errors;
        console.log(
          `| ${name}${errors ? ` (${errors} non-200)` : ''} | ${fmt(s1.p50)} / ${fmt(s1.p95)} | ${fmt(p1.p50)} / ${fmt(p1.p95)} | ${(p1.p95 / s1.p95).toFixed(1)}× | ${fmt(s16.p50)} / ${fmt(s16.p95)} | ${fmt(p16.p50)} / ${fmt(p16.p95)} |`,
        );
      }
      clearInterval(sampler);
      console.log(
        `\nsvc peak RSS: on SQLite ${peak.sqlite.toFixed(0)} MB, on Postgres ${peak.postgres.toFixed(0)} MB (the Postgres server's own memory not included). Load average now ${loadAverage()}.`,
      );
    } finally {
      onSqlite.kill('SIGTERM');
      onPostgres.kill('SIGTERM');
    }
  }
} finally {
  await postgres.stop();
}
