/**
 * `npm run migrate` (docs/SCALING.md), run as an operator runs it: on a real Postgres database
 * it creates every component's tables at their newest version, twice is a no-op; on SQLite it
 * migrates DB_PATH; a bad DATABASE_URL exits 78 and an unreachable one exits 1, neither printing
 * the URL's password.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { POSTGRES_COMPONENTS } from '../../src/db/migrate.ts';
import { latestVersion } from '../../src/db/postgres.ts';
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
