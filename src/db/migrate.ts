/**
 * Every schema svc keeps, migrated in one call: what `npm run migrate` (src/migrate.ts) runs.
 * svc also applies these itself at start, under the same lock, so running it first is optional
 * (docs/SCALING.md).
 */
import { CatalogStore } from '../catalog/sqlite/store.ts';
import { CATALOG_SCHEMA } from '../catalog/postgres/migrations.ts';
import { migrate, openPool } from './postgres.ts';
import { latestVersion, type Schema } from './schema-versions.ts';
import { SUBMITTER_LEASE_MIGRATIONS } from './submitter-leases.ts';
import { JOURNAL_MIGRATIONS } from '../journal/postgres/store.ts';
import { SqliteJournalStore } from '../journal/sqlite/store.ts';

/** Every component svc keeps in Postgres, with its migrations. */
export const POSTGRES_COMPONENTS: ReadonlyArray<[string, Schema<string>]> = [
  ['journal', JOURNAL_MIGRATIONS],
  ['submitter_leases', SUBMITTER_LEASE_MIGRATIONS],
  ['catalog', CATALOG_SCHEMA],
];

/** Brings every component to its newest version; returns what it migrated, for the operator. */
export async function migrateAll(storage: { dbPath: string; databaseUrl: string | null }): Promise<string> {
  if (storage.databaseUrl) {
    const pool = openPool(storage.databaseUrl, { max: 1 });
    try {
      for (const [component, schema] of POSTGRES_COMPONENTS) await migrate(pool, component, schema);
      return `Postgres: ${POSTGRES_COMPONENTS.map(([component, schema]) => `${component} at version ${latestVersion(schema)}`).join(', ')}`;
    } finally {
      await pool.end();
    }
  }
  // The SQLite stores migrate when they open.
  new CatalogStore(storage.dbPath).close();
  await new SqliteJournalStore(storage.dbPath).close();
  return `SQLite ${storage.dbPath}: catalog and journal at their newest versions`;
}
