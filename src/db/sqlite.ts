/**
 * SQLite plumbing shared by the catalog and the settlement journal: opening a file (WAL, the
 * schema), a per-connection cache of prepared statements and the two transaction shapes the
 * stores use.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';

/** Opening a file (WAL, migrations) waits this long for another connection's lock before failing. */
export const OPEN_WAIT_MS = 5_000;
const OPEN_RETRY_MS = 20;

/** SQLITE_BUSY or SQLITE_LOCKED, with or without an extended code. */
const isBusy = (err: unknown) => [5, 6].includes(((err as { errcode?: number })?.errcode ?? 0) & 0xff);

/**
 * Opens `dbPath` with the busy timeout, WAL (unless in memory) and `pragmas`, then runs `setup`
 * (the migrations). Another process starting on the same new file at the same moment holds the
 * write lock while it creates the schema, and switching a new file to WAL does not wait on the
 * busy timeout (it fails at once), so a setup that finds the file busy is tried again, on a new
 * connection, for up to OPEN_WAIT_MS. Synchronous: this runs once, at start-up.
 */
export function openSqlite(
  dbPath: string,
  options: { busyTimeoutMs: number; pragmas: string[]; setup: (db: DatabaseSync) => void },
): DatabaseSync {
  const giveUpAt = performance.now() + OPEN_WAIT_MS;
  for (;;) {
    // `timeout` is the connection's busy timeout (PRAGMA busy_timeout).
    const db = new DatabaseSync(dbPath, { timeout: options.busyTimeoutMs });
    try {
      if (dbPath !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
      for (const pragma of options.pragmas) db.exec(`PRAGMA ${pragma}`);
      options.setup(db);
      return db;
    } catch (err) {
      db.close();
      if (!isBusy(err) || performance.now() >= giveUpAt) throw err;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, OPEN_RETRY_MS);
  }
}

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
