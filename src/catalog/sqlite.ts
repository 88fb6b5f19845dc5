/**
 * SQLite plumbing shared by the catalog and the settlement journal: a per-connection cache of
 * prepared statements and the two transaction shapes the stores use.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';

const statementCache = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/** A prepared statement cached per connection (the write path runs these per settlement). */
export function cachedStatement(db: DatabaseSync, sql: string): StatementSync {
  let byDb = statementCache.get(db);
  if (!byDb) statementCache.set(db, (byDb = new Map<string, StatementSync>()));
  let st = byDb.get(sql);
  if (!st) byDb.set(sql, (st = db.prepare(sql)));
  return st;
}

/**
 * Runs `work` inside BEGIN IMMEDIATE (the write lock is taken up front, waiting ≤ busy timeout).
 * Inside a transaction the caller already opened (bulk loading), `work` joins it.
 */
export function inWriteTransaction<T>(db: DatabaseSync, work: () => T): T {
  if (db.isTransaction) return work();
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Runs `work` inside one read transaction, so every statement sees the same snapshot. */
export function inReadTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN');
  try {
    return work();
  } finally {
    if (db.isTransaction) db.exec('COMMIT');
  }
}
