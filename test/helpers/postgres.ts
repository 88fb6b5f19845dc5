/**
 * A real PostgreSQL server for the suite (docs/SCALING.md), from src/dev/postgres.ts: the global
 * setup starts one server per `npm test`; each test file gets its own database from
 * `freshDatabase()` (empty) or `freshCatalogDatabase()` (the catalog migrated).
 */
import pg from 'pg';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { createDatabase, databaseUrl, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import type { Db } from '../../src/catalog/postgres/queries.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the suite's server (database `postgres`). */
    postgresUrl: string;
    /** A database with the catalog's migrations applied, copied by `freshCatalogDatabase()`; nothing connects to it. */
    postgresCatalogTemplate: string;
  }
}

/** The storage backends suites run on: a SQLite file, or a PostgreSQL database (docs/SCALING.md). */
export type Backend = 'SQLite' | 'Postgres';
export const BACKENDS: Backend[] = ['SQLite', 'Postgres'];

/** For the global setup (test/helpers/global-setup.ts): one server for the whole run; resolves with its stop. */
export async function startSuitePostgres(project: TestProject): Promise<() => Promise<void>> {
  const server = await startEmbeddedPostgres();
  project.provide('postgresUrl', server.url);
  const template = await createDatabase(server.url, 'svc_catalog_template');
  await (await PostgresCatalogStore.open(template)).end();
  project.provide('postgresCatalogTemplate', 'svc_catalog_template');
  return () => server.stop();
}

/** A new, empty database on the suite's server; returns its URL. */
export function freshDatabase(adminUrl: string = inject('postgresUrl')): Promise<string> {
  return createDatabase(adminUrl);
}

/**
 * A new database with the catalog's migrations applied, for a test that writes at once; returns its
 * URL. A copy of the template the global setup migrated through the store (about 0.1 CPU-s of the
 * server instead of 0.45 for a new database migrated): the copy then gets its own cursor secret and
 * catalog identifier, as the catalog's migrations give each database. Migrating on first use is
 * tested on empty databases (`freshDatabase()`, `lateDatabase()`: test/catalog/postgres.test.ts).
 */
export async function freshCatalogDatabase(adminUrl: string = inject('postgresUrl')): Promise<string> {
  const name = `svc_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('postgresCatalogTemplate')}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(adminUrl, name);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query(
      `UPDATE catalog_meta SET value = CASE key
         WHEN 'cursor_secret' THEN encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')
         ELSE gen_random_uuid()::text END
       WHERE key IN ('cursor_secret', 'catalog_id')`,
    );
  } finally {
    await db.end();
  }
  return url;
}

/**
 * The URL of a database that does not exist yet on the suite's server, and `create()` to make it
 * appear: for the stores that must recover, without a restart, from a database missing at start.
 */
export function lateDatabase(adminUrl: string = inject('postgresUrl')): { url: string; create: () => Promise<void> } {
  const name = `svc_late_${Math.random().toString(36).slice(2, 10)}`;
  return { url: databaseUrl(adminUrl, name), create: async () => void (await createDatabase(adminUrl, name)) };
}

/** `db`, recording the text of every statement sent through it in `statements` (to see which path a search took). */
export function recordingDb(db: Db, statements: string[]): Db {
  return {
    query: ((config: string | { text: string }, values?: unknown[]) => {
      statements.push(typeof config === 'string' ? config : config.text);
      return db.query(config as string, values);
    }) as Db['query'],
  };
}
