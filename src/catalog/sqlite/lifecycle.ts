/**
 * The end of a listing's life on SQLite (../lifecycle.ts explains it): hidden listings out of the
 * search index and back, and the purge. postgres/lifecycle.ts does the same on PostgreSQL.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement, inWriteTransaction } from '../../db/sqlite.ts';
import {
  hideListing,
  maintainBatch,
  restoreListing,
  type LifecycleBatch,
  type LifecycleCuts,
  type LifecycleStore,
  type LifecycleStorePort,
} from '../lifecycle.ts';
import { runSync } from '../statements.ts';
import { sqliteSql } from './queries.ts';
export type { LifecycleStorePort };
import { insertRevision, nextSeq, pruneSupersededRevisions } from './revisions.ts';
import { withUrlKeys } from '../url-search.ts';
import { removeListing } from './withdraw.ts';
import { moveListEntries } from './list-index.ts';

/**
 * A new current search revision of `listingId` from its term scores (with the quality level in them) and the URL keys of
 * its `resource` (../url-search.ts withUrlKeys).
 */
export function insertScoredRevision(
  db: DatabaseSync,
  listingId: number,
  resource: string,
  hash: string,
  scores: Map<string, number>,
  seq: number,
): void {
  insertRevision(db, { listingId, fromSeq: seq, toSeq: null, textHash: hash }, withUrlKeys(scores, resource));
}

/** Puts a stashed listing back in the search index, and its list entries in the list (../lifecycle.ts restoreListing). */
export const restore = (db: DatabaseSync, id: number, seq: number): boolean =>
  runSync(
    restoreListing(
      sqliteSql(db),
      id,
      seq,
      (resource, hash, scores, from) => insertScoredRevision(db, id, resource, hash, scores, from),
      (lastUpdated) => moveListEntries(db, id, lastUpdated),
    ),
  );

/** A passing liveness check of a stashed listing (inside its write): back in the index at once, not at the next pass. */
export const restoreAfterCheck = (db: DatabaseSync) => (id: number) => {
  const stashed = cachedStatement(db, 'SELECT 1 FROM listings WHERE id = ? AND search_stash IS NOT NULL').get(id);
  if (stashed) restore(db, id, nextSeq(db));
};

/** The store's lifecycle port (../lifecycle.ts); `writable` throws when the file cannot take writes. */
export const lifecyclePort = (db: DatabaseSync, writable: () => void): LifecycleStorePort => ({
  maintain: (cuts, now, limit) => (writable(), maintain(db, cuts, now, limit)),
});

/**
 * One batch of a pass (../lifecycle.ts maintainBatch), in one write transaction, its listings hidden and put back at one
 * place in the write sequence: cursors pinned before it keep what they saw.
 */
export function maintain(db: DatabaseSync, cuts: LifecycleCuts, now: Date, limit: number): LifecycleBatch {
  return inWriteTransaction(db, () => {
    let seq: number | undefined;
    const batchSeq = () => (seq ??= nextSeq(db));
    const sql = sqliteSql(db);
    const store: LifecycleStore = {
      sql,
      purge: (row) => (removeListing(db, Number(row.id)), true),
      hide: (row, hiddenAt) => {
        const id = Number(row.id);
        runSync(hideListing(sql, id, batchSeq(), hiddenAt, { column: 'score', units: 1 }, (at) => moveListEntries(db, id, at)));
        return true;
      },
      restore: (row) => restore(db, Number(row.id), batchSeq()),
      // A prune changes a term's rows (any snapshot): like every such change it takes a sequence number (../search-engine.ts KeptCounts).
      prune: () => {
        const pruned = pruneSupersededRevisions(db, now);
        if (pruned > 0) batchSeq();
        return pruned;
      },
    };
    return runSync(maintainBatch(store, cuts, now, limit));
  });
}
