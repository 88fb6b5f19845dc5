/**
 * The Postgres threshold walk alone, this checkout's function beside a baseline's.
 *
 * The Postgres threshold walk alone (`catalog_walk`, src/catalog/postgres/migrations.ts), timed inside one
 * database: this checkout's function beside catalog migration 4's (the baseline, created beside it as
 * `catalog_walk_migration_4`), alternating call by call on the same connection, so HTTP, JavaScript and
 * the load of the machine weigh on both alike (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite").
 * Each call is a first page of 10 (the walk's own arguments as src/catalog/postgres/search.ts passes them);
 * before timing, both must return the same page.
 *
 *   npx tsx bench/catalog/catalog-walk-postgres.ts --keep-dir DIR [--size 100000] [--calls 300] [--query "ru pami"] [--every-lookup]
 *
 * --every-lookup: the baseline is this checkout's walk making every lookup (`catalog_walk_every_lookup`).
 *
 * DIR is a directory bench/catalog/catalog-postgres.ts has loaded (its `DIR/postgres` at this checkout's schema:
 * run that bench with this checkout first). No other server may be running on it.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { QUICK_SIZE, quickPostgresDir } from './lib/quick-postgres.ts';
import pg from 'pg';
import { CATALOG_MIGRATIONS } from '../../src/catalog/postgres/migrations.ts';
import { THRESHOLD_WALK_CAP, WALK_CHUNKS } from '../../src/catalog/search.ts';
import { distinctTerms } from '../../src/catalog/term-budget.ts';
import { databaseUrl, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { fmt, loadAverage, machineLine, pct } from '../lib/http-load.ts';

const { values } = parseArgs({
  options: {
    'keep-dir': { type: 'string' },
    size: { type: 'string', default: '100000' },
    calls: { type: 'string', default: '300' },
    query: { type: 'string', default: 'ru pami' },
    'every-lookup': { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 5 calls on a temporary 300-listing directory unless --keep-dir (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { size: QUICK_SIZE, calls: '5' });
if (values.quick) values['keep-dir'] ??= quickPostgresDir();
if (!values['keep-dir']) {
  console.error('--keep-dir DIR is required (a directory bench/catalog/catalog-postgres.ts has loaded).');
  process.exit(2);
}
const calls = Number(values.calls);
const terms = distinctTerms(values.query);

// Migration 4's walk under another name: its text from `CREATE OR REPLACE FUNCTION catalog_walk(` on. With
// --every-lookup, migration 12's walk with its bit test made always true instead: what the skipped lookups cost.
const migration4 = CATALOG_MIGRATIONS[3]!;
const baselineName = values['every-lookup'] ? 'catalog_walk_every_lookup' : 'catalog_walk_migration_4';
const everyLookupSql = CATALOG_MIGRATIONS[11]!.replace('CASE WHEN (m.sig & bits[3 - i]) <> 0', 'CASE WHEN true');
if (values['every-lookup'] && everyLookupSql === CATALOG_MIGRATIONS[11]) throw new Error('migration 12 has no bit test to remove');
const baselineSql = (
  values['every-lookup'] ? everyLookupSql : migration4.slice(migration4.indexOf('CREATE OR REPLACE FUNCTION catalog_walk('))
).replace('FUNCTION catalog_walk(', `FUNCTION ${baselineName}(`);

console.log(machineLine());
const postgres = await startEmbeddedPostgres({ dataDir: join(values['keep-dir'], 'postgres') });
try {
  const db = new pg.Client({ connectionString: databaseUrl(postgres.url, `catalog_${values.size}`) });
  await db.connect();
  try {
    await db.query(baselineSql);
    const asOf = (await db.query<{ seq: string }>('SELECT seq FROM catalog_seq WHERE id = 1')).rows[0]!.seq;
    const call = async (fn: string) => {
      const t0 = performance.now();
      const r = await db.query<{ listing_ids: string[]; ranks: string[]; gave_up: boolean }>(
        `SELECT listing_ids, ranks, gave_up FROM ${fn}($1::text[], $2, 11, NULL, NULL, $3, $4::int[])`,
        [terms, asOf, THRESHOLD_WALK_CAP, WALK_CHUNKS],
      );
      return { ms: performance.now() - t0, page: JSON.stringify(r.rows[0]) };
    };
    const [current, baseline] = [await call('catalog_walk'), await call(baselineName)];
    if (current.page !== baseline.page) throw new Error(`different pages:\n${current.page}\n${baseline.page}`);
    // Warm both plans (PL/pgSQL caches a statement's plan after its first runs).
    for (let i = 0; i < 20; i++) await Promise.all([call('catalog_walk'), call(baselineName)]);
    const loadBefore = loadAverage();
    const times: Record<string, number[]> = { catalog_walk: [], [baselineName]: [] };
    for (let i = 0; i < calls; i++) {
      const order = i % 2 === 0 ? ['catalog_walk', baselineName] : [baselineName, 'catalog_walk'];
      for (const fn of order) times[fn]!.push((await call(fn)).ms);
    }
    console.log(`query ${JSON.stringify(values.query)} (${terms.join(', ')}), ${values.size} listings, ${calls} calls each, same page`);
    console.log(`load average ${loadBefore} -> ${loadAverage()}`);
    console.log('| walk | p50 ms | p95 ms |\n|---|---|---|');
    for (const [fn, xs] of Object.entries(times)) console.log(`| ${fn} | ${fmt(pct(xs, 50))} | ${fmt(pct(xs, 95))} |`);
    console.log(`p50 ratio catalog_walk ÷ ${baselineName}: ${(pct(times.catalog_walk!, 50) / pct(times[baselineName]!, 50)).toFixed(2)}`);
    await db.query(`DROP FUNCTION ${baselineName}`);
  } finally {
    await db.end();
  }
} finally {
  await postgres.stop();
}
