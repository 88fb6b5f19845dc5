/**
 * Liveness records on SQLite (../liveness.ts explains the columns and runs their statements):
 * claiming due listings, and what list and search leave out. A check's record and a
 * postponement are written in the store's write transaction (BEGIN IMMEDIATE).
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement, inWriteTransaction } from '../../db/sqlite.ts';
import { livenessListingOf, livenessPort, settledLivenessSql, type LivenessListing, type LivenessStorePort } from '../liveness.ts';
import { runSync } from '../statements.ts';
import { sqliteSql } from './queries.ts';

/** The SET clause a settlement adds to its listing's row (../liveness.ts settledLivenessSql). */
export const SETTLED_LIVENESS_SQL = settledLivenessSql('?');

/** Claims up to `limit` due listings (oldest basis first): their basis becomes `now`. */
export function claimDue(db: DatabaseSync, now: number, dueBefore: number, limit: number): LivenessListing[] {
  return inWriteTransaction(db, () => {
    const rows = cachedStatement(
      db,
      `SELECT id, resource, type, tool_name, owner, body, liveness_status, liveness_checked_at, liveness_failing_since
       FROM listings WHERE liveness_basis_ms <= ? ORDER BY liveness_basis_ms, id LIMIT ?`,
    ).all(dueBefore, limit) as Array<Parameters<typeof livenessListingOf>[0]>;
    const claim = cachedStatement(db, 'UPDATE listings SET liveness_basis_ms = ? WHERE id = ?');
    for (const row of rows) claim.run(now, row.id);
    return rows.map((row) => livenessListingOf(row));
  });
}

/**
 * The store's LivenessStorePort over `db`; `writable` throws when the file cannot take writes.
 * `restore` puts a listing that passed its check back in the search index if a lifecycle pass
 * took it out (lifecycle.ts), in the check's write.
 */
export function livenessStore(db: DatabaseSync, writable: () => void, restore: (id: number) => void = () => {}): LivenessStorePort {
  const store = { sql: sqliteSql(db), restore: (key: string) => restore(Number(key)) };
  return livenessPort(
    (write, engine) => (write ? (writable(), inWriteTransaction(db, () => runSync(engine(store)))) : runSync(engine(store))),
    (now, dueBefore, limit) => (writable(), claimDue(db, now, dueBefore, limit)),
  );
}

/**
 * Whether any listing is hidden by its failures (one probe of a partial index). `indexed`: only those still in the
 * list index's range (no stash), as a read of list entries needs: a lifecycle pass moved the others' entries out of
 * every list read's range (../lifecycle.ts HIDDEN_LIST_TIME); else every one, as a read of listing rows needs.
 */
export function anyHiddenByFailures(db: DatabaseSync, before: string | undefined, indexed: boolean): boolean {
  if (before === undefined) return false;
  const sql = `SELECT 1 FROM listings WHERE liveness_failing_since < ?${indexed ? ' AND search_stash IS NULL' : ''} LIMIT 1`;
  return cachedStatement(db, sql).get(before) !== undefined;
}

/**
 * The ids of the listings hidden by their failures that a read of list entries leaves out (those still in the list
 * index's range: anyHiddenByFailures), as a subquery (one parameter: the cut).
 */
export const HIDDEN_IDS_SQL = '(SELECT id FROM listings WHERE liveness_failing_since < ? AND search_stash IS NULL)';
