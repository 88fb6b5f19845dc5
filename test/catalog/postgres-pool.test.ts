/**
 * The catalog's Postgres connections stay open while idle (src/db/postgres.ts openPool `keepIdle`, which the catalog
 * store's pool sets): a connection opened anew is a new server process, which maps each page of the shared buffers as it
 * first reads it (50–150 ms for a first `url` page at 100k listings, docs/CATALOG.md "Postgres").
 * Against a real server, with the idle wait lowered from pg's 10 s; a pool without `keepIdle` shows the wait is passed.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPool } from '../../src/db/postgres.ts';
import { freshDatabase } from '../helpers/postgres.ts';

let databaseUrl: string;
beforeAll(async () => {
  databaseUrl = await freshDatabase();
}, 60_000);

/** The server processes of `pool`'s connections: two opened by two statements at once. */
async function backendsOf(pool: pg.Pool): Promise<number[]> {
  const pids = await Promise.all([0, 1].map(() => pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)')));
  return pids.map((r) => r.rows[0]!.pid).sort();
}

describe('the catalog pool while idle', () => {
  const pools: pg.Pool[] = [];
  afterAll(() => Promise.all(pools.map((pool) => pool.end())));

  it('keeps its connections past the idle wait with keepIdle, and closes them without', async () => {
    const kept = openPool(databaseUrl, { max: 2, keepIdle: 2, idleMs: 100 });
    const plain = openPool(databaseUrl, { max: 2, idleMs: 100 });
    pools.push(kept, plain);
    const before = await backendsOf(kept);
    await backendsOf(plain);
    expect(new Set(before).size).toBe(2);
    // Until the plain pool has closed its connections (past its idle wait, however busy the machine), and as long again.
    const start = Date.now();
    while (plain.totalCount > 0 && Date.now() - start < 30_000) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, Math.max(300, Date.now() - start)));
    expect(plain.totalCount).toBe(0);
    expect(kept.totalCount).toBe(2);
    // The same server processes answer: nothing was reconnected.
    expect(await backendsOf(kept)).toEqual(before);
  });
});
