/**
 * src/dev/postgres.ts: the embedded server leaves no process-wide exit hook behind. The package
 * registers some on import (a `beforeExit` that calls process.exit(0) turned failing test runs
 * into exit code 0, and SIGINT handlers took over `npm run dev`'s Ctrl-C).
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { createDatabase, startEmbeddedPostgres } from '../../src/dev/postgres.ts';

const EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'message'] as const;

describe('startEmbeddedPostgres', () => {
  it('serves a database and adds no process exit or signal listener', async () => {
    const before = EVENTS.map((e) => process.listenerCount(e));
    const server = await startEmbeddedPostgres();
    try {
      expect(EVENTS.map((e) => process.listenerCount(e))).toEqual(before);
      const client = new pg.Client({ connectionString: await createDatabase(server.url, 'svc_hooks') });
      await client.connect();
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await client.end();
    } finally {
      await server.stop();
    }
  });
});
