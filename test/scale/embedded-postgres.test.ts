/**
 * src/dev/postgres.ts: the embedded server leaves no process-wide exit hook behind. The package
 * registers some on import (a `beforeExit` that calls process.exit(0) turned failing test runs
 * into exit code 0, and SIGINT handlers took over `npm run dev`'s Ctrl-C).
 *
 * The check is by identity: every listener present after the start was present before it. Counts
 * are not a fact about this start: in a shared test process other files' child processes remove
 * their own `exit` listeners at any time (a count of 1 before and 0 after failed CI once). The
 * file also runs in its own process (vitest.config.ts), so the package's import is its own. The
 * server takes the settings it is started with (a benchmark's `--pg-setting`), and a start that
 * fails says why (the package itself rejects with nothing).
 */
import type { EventEmitter } from 'node:events';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { createDatabase, startEmbeddedPostgres } from '../../src/dev/postgres.ts';

const EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'message'] as const;

describe('startEmbeddedPostgres', () => {
  it('serves a database with the settings asked and adds no process exit or signal listener', async () => {
    const emitter: EventEmitter = process;
    const before = new Map(EVENTS.map((e) => [e, new Set(emitter.listeners(e))]));
    const server = await startEmbeddedPostgres({ settings: ['work_mem=5MB'] });
    try {
      const added = EVENTS.flatMap((e) =>
        emitter
          .listeners(e)
          .filter((l) => !before.get(e)!.has(l))
          .map(() => e),
      );
      expect(added).toEqual([]);
      const client = new pg.Client({ connectionString: await createDatabase(server.url, 'svc_hooks') });
      await client.connect();
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect((await client.query<{ work_mem: string }>('SHOW work_mem')).rows).toEqual([{ work_mem: '5MB' }]);
      await client.end();
    } finally {
      await server.stop();
    }
  });

  it('says why a server did not start: another server holds its data directory', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'svc-pg-held-'));
    chmodSync(parent, 0o755);
    const dataDir = join(parent, 'data');
    const first = await startEmbeddedPostgres({ dataDir });
    try {
      const failure = await startEmbeddedPostgres({ dataDir }).then(
        async (second) => {
          await second.stop();
          return 'started';
        },
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toMatch(/did not start in .*postmaster\.pid/);
    } finally {
      await first.stop();
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
