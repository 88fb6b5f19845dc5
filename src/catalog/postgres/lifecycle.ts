/**
 * The end of a listing's life on PostgreSQL (../lifecycle.ts explains it), as sqlite/lifecycle.ts
 * runs it on SQLite. Several instances share the catalog and each runs the pass: a batch's
 * candidates are read without locks, then each listing is handled in its own transaction under its
 * identity's advisory lock (the one every write of it takes, store.ts), taken with a try (another
 * instance's write of it is left alone, this pass skips it) and with its condition read again
 * under the lock, so two passes never act on one listing twice and a settlement between the read
 * and the lock wins.
 */
import type pg from 'pg';
import { inTransaction } from '../../db/postgres.ts';
import {
  hideListing,
  maintainBatch,
  visibleAgain,
  type LifecycleBatch,
  type LifecycleCuts,
  type LifecycleRow,
  type LifecycleStore,
  type LifecycleStorePort,
} from '../lifecycle.ts';
import { runAsync } from '../statements.ts';
export type { LifecycleStorePort };
import { identityLockKey } from './identity-lock.ts';
import { SCORE_UNITS } from './migrations.ts';
import { nextSeq, postgresSql, type Db } from './queries.ts';
import { pruneRevisions, restoreStashed } from './revisions.ts';
import { removeListing } from './withdraw.ts';
import { moveListEntries } from './list-index.ts';

type Listing = Pick<LifecycleRow, 'id' | 'resource' | 'type' | 'tool_name'>;

/**
 * `work` on one listing in its own transaction under its identity's lock, if the lock is free and
 * `still` (a condition on the listing's row, with `params` from `$2`) holds under it; whether it ran.
 */
async function underLock(
  pool: pg.Pool,
  row: Listing,
  still: string,
  params: unknown[],
  work: (db: Db) => Promise<unknown>,
): Promise<boolean> {
  return inTransaction(pool, async (db) => {
    const identity = identityLockKey({ resource: row.resource, type: row.type, toolName: row.tool_name });
    const locked = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok', [identity]);
    if (!locked.rows[0]?.ok) return false;
    if ((await db.query(`SELECT 1 FROM listings WHERE id = $1 AND ${still}`, [row.id, ...params])).rows.length === 0) return false;
    await work(db);
    return true;
  });
}

/**
 * Puts a stashed listing back in the search index (revisions.ts restoreStashed) under a write sequence of its own, in a
 * transaction holding its identity's lock (underLock: every write of its stash holds it).
 */
const restore = async (db: Db, id: string | number): Promise<boolean> => restoreStashed(db, Number(id), await nextSeq(db));

/** The store's lifecycle port (../lifecycle.ts), each batch after `ready` (the catalog's schema). */
export const lifecyclePort = (pool: pg.Pool, ready: () => Promise<unknown>): LifecycleStorePort => ({
  maintain: async (cuts, now, limit) => (await ready(), maintain(pool, cuts, now, limit)),
});

/** A passing liveness check of a stashed listing: back in the index at once, under its identity's lock. */
export const restoreAfterCheck = (pool: pg.Pool) => async (id: string) => {
  const row = (
    await pool.query<Listing>('SELECT id, resource, type, tool_name FROM listings WHERE id = $1 AND search_stash IS NOT NULL', [id])
  ).rows[0];
  if (row) await underLock(pool, row, 'search_stash IS NOT NULL', [], (db) => restore(db, id));
};

/** One batch of a pass (../lifecycle.ts maintainBatch): its candidates read without locks, each act under the listing's lock. */
export async function maintain(pool: pg.Pool, cuts: LifecycleCuts, now: Date, limit: number): Promise<LifecycleBatch> {
  const store: LifecycleStore = {
    sql: postgresSql(pool),
    purge: (row) =>
      underLock(
        pool,
        row,
        '(last_updated < $2 OR liveness_failing_since < $3)',
        [cuts.purgeSettledBefore, cuts.purgeFailingBefore ?? null],
        (db) => removeListing(db, row.id),
      ),
    hide: (row, hiddenAt) =>
      underLock(pool, row, 'search_stash IS NULL', [], async (db) =>
        runAsync(
          hideListing(postgresSql(db), row.id, await nextSeq(db), hiddenAt, { column: 'units', units: SCORE_UNITS }, (at) =>
            moveListEntries(db, row.id, at),
          ),
        ),
      ),
    restore: (row) =>
      underLock(pool, row, visibleAgain('$2', '$3'), [cuts.visibleSince, cuts.failingBefore ?? null], (db) => restore(db, row.id)),
    // A prune changes a term's rows (any snapshot): like every such change it takes a sequence number (../search-engine.ts KeptCounts).
    prune: () =>
      inTransaction(pool, async (db) => {
        const pruned = await pruneRevisions(db, now, limit);
        if (pruned > 0) await nextSeq(db);
        return pruned;
      }),
  };
  return runAsync(maintainBatch(store, cuts, now, limit));
}
