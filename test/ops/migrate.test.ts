/**
 * `npm run migrate` (docs/SCALING.md), run as an operator runs it: on a real Postgres database
 * it creates every component's tables at their newest version, twice is a no-op; on SQLite it
 * migrates DB_PATH; a catalog older than the schema's baseline is refused (exit 1, left as it was); a bad
 * DATABASE_URL exits 78 and an unreachable one exits 1, neither printing the URL's password.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { POSTGRES_COMPONENTS } from '../../src/db/migrate.ts';
import { LAST_FULL_HISTORY, latestVersion } from '../../src/db/schema-versions.ts';
import { BASELINE_VERSION } from '../../src/catalog/sqlite/migrations.ts';
import { CATALOG_SCHEMA } from '../../src/catalog/postgres/migrations.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Runs `npm run migrate`'s script: as the npm script runs it (from source under tsx) when
 * `fromSource`, else its bundle (dist/migrate.js, built by the global setup from the current
 * sources; 0.5 CPU-s a run instead of 2.7).
 */
function migrate(env: Record<string, string>, { fromSource = false } = {}) {
  const { DATABASE_URL: _u, DB_PATH: _p, ...rest } = process.env;
  return spawnSync(process.execPath, fromSource ? ['--import', 'tsx', 'src/migrate.ts'] : ['dist/migrate.js'], {
    cwd: ROOT,
    env: { ...rest, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('npm run migrate', () => {
  it('brings a Postgres database to the newest version of every component; a second run changes nothing', async () => {
    const url = await freshDatabase();
    for (let run = 0; run < 2; run++) {
      const result = migrate({ DATABASE_URL: url }, { fromSource: run === 0 });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(
        /^svc: migrated Postgres: journal at version \d+, submitter_leases at version \d+, catalog at version \d+/,
      );
      expect(result.stdout).not.toContain(new URL(url).password);
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const versions = await client.query<{ component: string; version: number }>('SELECT component, version FROM svc_schema_versions');
      expect(Object.fromEntries(versions.rows.map((r) => [r.component, r.version]))).toEqual(
        Object.fromEntries(POSTGRES_COMPONENTS.map(([component, schema]) => [component, latestVersion(schema)])),
      );
      const tables = await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
      expect(tables.rows.map((r) => r.tablename)).toEqual(
        expect.arrayContaining(['journal_settlements', 'submitter_leases', 'listings', 'search_terms']),
      );
    } finally {
      await client.end();
    }
  });

  it('migrates the SQLite file at DB_PATH when DATABASE_URL is unset', () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), 'svc-migrate-')), 'svc.sqlite');
    const result = migrate({ DB_PATH: dbPath });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`SQLite ${dbPath}`);
    const db = new DatabaseSync(dbPath);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name);
    db.close();
    expect(tables).toEqual(expect.arrayContaining(['listings', 'journal_settlements']));
  });

  it('refuses a catalog older than the baseline, SQLite or Postgres, exits 1 and leaves it as it was', async () => {
    const older = (version: number, baseline: number) =>
      `svc: migration failed: catalog schema ${version} is older than this code's first (${baseline}): migrate it with svc ${LAST_FULL_HISTORY} first`;
    const dbPath = join(mkdtempSync(join(tmpdir(), 'svc-migrate-')), 'svc.sqlite');
    const file = new DatabaseSync(dbPath);
    file.exec(
      `CREATE TABLE catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT; PRAGMA user_version = ${BASELINE_VERSION - 1}`,
    );
    file.close();
    const sqlite = migrate({ DB_PATH: dbPath });
    expect(sqlite.status).toBe(1);
    expect(sqlite.stderr).toContain(older(BASELINE_VERSION - 1, BASELINE_VERSION));
    const kept = new DatabaseSync(dbPath, { readOnly: true });
    try {
      expect(kept.prepare('PRAGMA user_version').get()).toEqual({ user_version: BASELINE_VERSION - 1 });
      expect(kept.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: 'catalog_meta' }]);
    } finally {
      kept.close();
    }
    const url = await freshDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const baseline = CATALOG_SCHEMA.baseline;
      await client.query('CREATE TABLE svc_schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
      await client.query("INSERT INTO svc_schema_versions VALUES ('catalog', $1)", [baseline - 1]);
      const postgres = migrate({ DATABASE_URL: url });
      expect(postgres.status).toBe(1);
      expect(postgres.stderr).toContain(older(baseline - 1, baseline));
      expect((await client.query("SELECT to_regclass('listings') AS t")).rows).toEqual([{ t: null }]);
    } finally {
      await client.end();
    }
  });

  it('a bad DATABASE_URL exits 78, an unreachable server exits 1; the password is never printed', () => {
    const bad = migrate({ DATABASE_URL: 'mysql://svc:hunter2-secret@db/svc' });
    expect(bad.status).toBe(78);
    expect(bad.stderr).toMatch(/^svc: invalid configuration: DATABASE_URL: /);
    const down = migrate({ DATABASE_URL: 'postgres://svc:hunter2-secret@127.0.0.1:1/svc' });
    expect(down.status).toBe(1);
    expect(down.stderr).toBe('svc: migration failed: database ECONNREFUSED\n');
    for (const r of [bad, down]) expect(r.stdout + r.stderr).not.toContain('hunter2');
  });
});
