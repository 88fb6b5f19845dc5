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
import { CATALOG_MIGRATIONS } from '../../../src/catalog/postgres/migrations.ts';
import { PRICE_CLASSES_FROM_BUCKETS } from '../../../src/catalog/postgres/price-index.ts';
import { LONG_QUERY_SHARE_SUMS_FROM_TERM_ROWS, REVISION_BOUNDS_FROM_TERM_ROWS } from '../../../src/catalog/postgres/revision-bounds.ts';
import { scoreUnits } from '../../../src/catalog/postgres/revisions.ts';
import { LONG_QUERY_SHARE_SUMS, topSharesColumn } from '../../../src/catalog/terms.ts';
import { migrate } from '../../../src/db/postgres.ts';

/**
 * Tables not copied: the Postgres migrations write their own `catalog_meta` (the cursor secret) and
 * `catalog_seq` row; the sequence's value is set after the copy.
 */
const NOT_COPIED = new Set(['catalog_meta', 'catalog_seq']);

/**
 * SQLite columns that Postgres names otherwise: search_terms' `score` is `units` (scaled, scoreUnits),
 * search_common_terms' `bit` is `term_bit` (the same bit: both stores number the common terms by
 * rows, then term).
 */
const POSTGRES_NAMES: Record<string, Record<string, string>> = {
  search_terms: { score: 'units' },
  search_common_terms: { bit: 'term_bit' },
};
const postgresName = (table: string, column: string) => POSTGRES_NAMES[table]?.[column] ?? column;

/**
 * What to copy: every table both stores have (the SQLite file migrated to this checkout's schema
 * first, the database by svc's migrations), with the columns both have (POSTGRES_NAMES); each
 * search_terms row also gets its revision's `sig` (copyTable). A table only one side has is
 * skipped and named.
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
      .filter((c) => pgColumns.has(postgresName(table, c)))
      // search_terms' `sig` is the server's own (catalog_term_bit, copyTable): SQLite's signature
      // column of the same name is computed by another function. So are the revisions' bounds,
      // computed from the copied term rows after the copy (postgresCorpus). The term rows'
      // sketches (catalog migration 22) are copied: both stores' come from terms.ts termSignature.
      .filter((c) => !(table === 'search_terms' && c === 'sig') && !(table === 'search_revisions' && REVISION_BOUNDS.has(c)));
    shared.push([table, columns]);
  }
  for (const table of onPostgres.keys())
    if (!tables.includes(table) && !NOT_COPIED.has(table)) process.stderr.write(`  ${table}: only in the Postgres schema, not copied\n`);
  return shared;
}

/**
 * search_revisions' columns that Postgres derives from the term rows (src/catalog/postgres/revision-bounds.ts,
 * catalog migrations 17 and 19): copied as 0, as a revision without term rows has them, then set
 * from the copied term rows by the migrations' own backfill statements.
 */
const REVISION_BOUNDS = new Set(['top_shares', 'sig', 'sketch_a', 'sketch_b', ...LONG_QUERY_SHARE_SUMS.map(topSharesColumn)]);

/** A value in COPY's text format. */
function copyText(value: string | number | bigint | null | undefined): string {
  if (value === null || value === undefined) return '\\N';
  return String(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);
}

/**
 * Each revision's term signature (src/catalog/postgres/migrations.ts, migration 4): the OR of the server's
 * `catalog_term_bit` over the revision's terms, asked once per distinct term.
 */
async function revisionSignatures(client: pg.PoolClient, sqlite: DatabaseSync): Promise<Map<number, bigint>> {
  const terms = (sqlite.prepare('SELECT DISTINCT term FROM search_terms').all() as Array<{ term: string }>).map((r) => r.term);
  const bits = new Map<string, bigint>();
  for (let i = 0; i < terms.length; i += 10_000) {
    const { rows } = await client.query<{ term: string; bit: string }>(
      'SELECT q AS term, catalog_term_bit(q) AS bit FROM unnest($1::text[]) AS q',
      [terms.slice(i, i + 10_000)],
    );
    for (const r of rows) bits.set(r.term, BigInt(r.bit));
  }
  const signatures = new Map<number, bigint>();
  for (const { rev, term } of sqlite.prepare('SELECT rev, term FROM search_terms').iterate() as Iterable<{ rev: number; term: string }>)
    signatures.set(rev, (signatures.get(rev) ?? 0n) | bits.get(term)!);
  return signatures;
}

async function copyTable(
  client: pg.PoolClient,
  sqlite: DatabaseSync,
  table: string,
  columns: string[],
  signatures?: Map<number, bigint>,
): Promise<number> {
  const zeroed = table === 'search_revisions' ? [...REVISION_BOUNDS] : [];
  const pgColumns = [...columns.map((c) => postgresName(table, c)), ...(signatures ? ['sig'] : []), ...zeroed];
  const select = sqlite.prepare(`SELECT ${columns.join(', ')} FROM ${table}`);
  // Integers as BigInt: the sketches (and signatures) use all 64 bits, past a JavaScript number's 53.
  select.setReadBigInts(true);
  const rows = select.iterate() as Iterable<Record<string, unknown>>;
  let n = 0;
  function* lines(): Generator<string> {
    let chunk = '';
    for (const row of rows) {
      const values = columns.map((c) => copyText(c === 'score' ? scoreUnits(row[c] as number) : (row[c] as string | bigint | null)));
      if (signatures) values.push(BigInt.asIntN(64, signatures.get(Number(row.rev))!).toString());
      values.push(...zeroed.map(() => '0'));
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
    await migrate(pool, 'catalog', CATALOG_MIGRATIONS);
    const client = await pool.connect();
    try {
      for (const [table, columns] of await sharedTables(client, sqlite)) {
        const t0 = performance.now();
        const signatures = table === 'search_terms' ? await revisionSignatures(client, sqlite) : undefined;
        const n = await copyTable(client, sqlite, table, columns, signatures);
        process.stderr.write(`  copied ${n.toLocaleString('en')} rows of ${table} in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
      }
      await client.query(REVISION_BOUNDS_FROM_TERM_ROWS);
      await client.query(LONG_QUERY_SHARE_SUMS_FROM_TERM_ROWS);
      // The class counts are Postgres's own (catalog migration 16, src/catalog/postgres/price-index.ts): from the copied buckets.
      await client.query(PRICE_CLASSES_FROM_BUCKETS);
      const { seq } = sqlite.prepare('SELECT seq FROM catalog_seq').get() as { seq: number };
      await client.query('UPDATE catalog_seq SET seq = $1', [seq]);
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
