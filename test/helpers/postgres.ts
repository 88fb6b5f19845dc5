/**
 * A real PostgreSQL server for the suite (docs/SCALING.md), from src/dev/postgres.ts: the global
 * setup starts one server per `npm test`; each test file gets its own database from
 * `freshDatabase()`.
 */
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { createDatabase, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import type { Db } from '../../src/catalog/postgres/queries.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the suite's server (database `postgres`). */
    postgresUrl: string;
  }
}

/** The storage backends suites run on: a SQLite file, or a PostgreSQL database (docs/SCALING.md). */
export type Backend = 'SQLite' | 'Postgres';
export const BACKENDS: Backend[] = ['SQLite', 'Postgres'];

/** Vitest global setup: one server for the whole run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startEmbeddedPostgres();
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}

/** A new, empty database on the suite's server; returns its URL. */
export function freshDatabase(adminUrl: string = inject('postgresUrl')): Promise<string> {
  return createDatabase(adminUrl);
}

/**
 * The URL of a database that does not exist yet on the suite's server, and `create()` to make it
 * appear: for the stores that must recover, without a restart, from a database missing at start.
 */
export function lateDatabase(adminUrl: string = inject('postgresUrl')): { url: string; create: () => Promise<void> } {
  const name = `svc_late_${Math.random().toString(36).slice(2, 10)}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), create: async () => void (await createDatabase(adminUrl, name)) };
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
