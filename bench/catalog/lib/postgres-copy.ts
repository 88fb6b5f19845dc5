/**
 * Loads a SQLite catalog file into an empty PostgreSQL database with COPY, table by table
 * (bench/catalog/catalog-postgres.ts explains why and how; bench/catalog/hidden-search.ts --postgres
 * loads its catalogs so too): the database migrated by svc's own migrations, every table both
 * stores have with the columns both have, then the columns Postgres derives, the write sequence,
 * the identity sequences, and VACUUM ANALYZE, as an operator runs after a bulk load.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DatabaseSync } from 'node:sqlite';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { CATALOG_SCHEMA } from '../../../src/catalog/postgres/migrations.ts';
import { scoreUnits } from '../../../src/catalog/postgres/revisions.ts';
import { migrate } from '../../../src/db/postgres.ts';

/**
 * Tables not copied: the Postgres migrations write their own `catalog_meta` (the cursor secret, the
 * write sequence); the sequence's value is set after the copy.
 */
const NOT_COPIED = new Set(['catalog_meta']);

/** SQLite columns that Postgres names otherwise: search_terms' `score` is `units` (scaled, scoreUnits). */
const POSTGRES_NAMES: Record<string, Record<string, string>> = { search_terms: { score: 'units' } };
const postgresName = (table: string, column: string) => POSTGRES_NAMES[table]?.[column] ?? column;

/**
 * What to copy: every table both stores have (the SQLite file migrated to this checkout's schema
 * first, the database by svc's migrations), with the columns both have (POSTGRES_NAMES). A table
 * only one side has is skipped and named.
 */
async function sharedTables(client: pg.PoolClient, sqlite: DatabaseSync): Promise<Array<[table: string, columns: string[]]>> {
  const onPostgres = new Map<string, Set<string>>();
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()',
  );
  for (const r of rows) onPostgres.set(r.table_name, (onPostgres.get(r.table_name) ?? new Set()).add(r.column_name));
  const tables = (
    sqlite.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{
      name: string;
    }>
  ).map((r) => r.name);
  const shared: Array<[string, string[]]> = [];
  for (const table of tables) {
    const pgColumns = onPostgres.get(table);
    if (NOT_COPIED.has(table)) continue;
    if (!pgColumns) {
      process.stderr.write(`  ${table}: not in the Postgres schema, not copied\n`);
      continue;
    }
    const columns = (sqlite.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>)
      .map((c) => c.name)
      .filter((c) => pgColumns.has(postgresName(table, c)));
    shared.push([table, columns]);
  }
  for (const table of onPostgres.keys())
    if (!tables.includes(table) && !NOT_COPIED.has(table)) process.stderr.write(`  ${table}: only in the Postgres schema, not copied\n`);
  return shared;
}

/** A value in COPY's text format. */
function copyText(value: string | number | bigint | null | undefined): string {
  if (value === null || value === undefined) return '\\N';
  return String(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);
}

async function copyTable(client: pg.PoolClient, sqlite: DatabaseSync, table: string, columns: string[]): Promise<number> {
  const pgColumns = columns.map((c) => postgresName(table, c));
  const select = sqlite.prepare(`SELECT ${columns.join(', ')} FROM ${table}`);
  // Integers as BigInt: exact whatever their size.
  select.setReadBigInts(true);
  const rows = select.iterate() as Iterable<Record<string, unknown>>;
  let n = 0;
  function* lines(): Generator<string> {
    let chunk = '';
    for (const row of rows) {
      const values = columns.map((c) => copyText(c === 'score' ? scoreUnits(row[c] as number) : (row[c] as string | bigint | null)));
      chunk += values.join('\t') + '\n';
      if (++n % 5_000 === 0) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  await pipeline(Readable.from(lines()), client.query(copyFrom(`COPY ${table} (${pgColumns.join(', ')}) FROM STDIN`)));
  return n;
}

/** Copies the catalog file at `sqlitePath` into the empty database of `pool` (see the top of this file). */
export async function copyCatalog(pool: pg.Pool, sqlitePath: string): Promise<void> {
  const sqlite = new DatabaseSync(sqlitePath, { readOnly: true });
  try {
    await migrate(pool, 'catalog', CATALOG_SCHEMA);
    const client = await pool.connect();
    try {
      for (const [table, columns] of await sharedTables(client, sqlite)) {
        const t0 = performance.now();
        const n = await copyTable(client, sqlite, table, columns);
        process.stderr.write(`  copied ${n.toLocaleString('en')} rows of ${table} in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
      }
      const { value } = sqlite.prepare("SELECT value FROM catalog_meta WHERE key = 'seq'").get() as { value: string };
      await client.query("UPDATE catalog_meta SET value = $1 WHERE key = 'seq'", [value]);
      // Identity columns continue after the copied ids.
      await client.query("SELECT setval(pg_get_serial_sequence('listings', 'id'), (SELECT max(id) FROM listings))");
      await client.query("SELECT setval(pg_get_serial_sequence('search_revisions', 'rev'), (SELECT max(rev) FROM search_revisions))");
      // Statistics for the planner, and the visibility map for index-only scans: what autovacuum
      // would do over the next minutes, done before measuring so it does not run during the load.
      await client.query('VACUUM ANALYZE');
    } finally {
      client.release();
    }
  } finally {
    sqlite.close();
  }
}
