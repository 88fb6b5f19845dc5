/**
 * SQLite plumbing shared by the catalog and the settlement journal: opening a file (WAL, the
 * schema), which file a connection has open (device and inode), a per-connection cache of prepared
 * statements and the two transaction shapes the stores use.
 */
import { statSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

/** Opening a file (WAL, migrations) waits this long for another connection's lock before failing. */
export const OPEN_WAIT_MS = 5_000;
const OPEN_RETRY_MS = 20;

/** SQLITE_BUSY or SQLITE_LOCKED, with or without an extended code. */
export const isBusy = (err: unknown) => [5, 6].includes(((err as { errcode?: number })?.errcode ?? 0) & 0xff);

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

/** The file a connection opened, by device and inode (null in memory): what its path named then. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

export function fileIdentity(dbPath: string): FileIdentity | null {
  if (dbPath === ':memory:') return null;
  const st = statSync(dbPath);
  return { dev: st.dev, ino: st.ino };
}

/** fileProblem's answer for a file that is no longer the one open. */
export const FILE_REPLACED = 'was deleted or replaced';

/**
 * Why the file at `dbPath` cannot serve a connection opened on `identity`, as the end of a sentence
 * ("the … database file " + this), or null when it can. SQLite keeps reading and writing a file
 * that was unlinked (its inode lives on while open) and, for root, ignores file modes, so the stores
 * check themselves: a deleted or replaced file (another device or inode at the path) cannot serve,
 * and a file an operator marked read-only takes no writes. Never names the path.
 */
export function fileProblem(dbPath: string, identity: FileIdentity | null, forWrite: boolean): string | null {
  if (!identity) return null;
  let st;
  try {
    st = statSync(dbPath, { throwIfNoEntry: false });
  } catch (err) {
    return `cannot be looked up (${(err as { code?: string }).code ?? 'error'})`;
  }
  if (!st || st.dev !== identity.dev || st.ino !== identity.ino) return FILE_REPLACED;
  if (forWrite && (st.mode & 0o222) === 0) return 'is read-only';
  return null;
}

const statementCache = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/**
 * Statements kept per connection, least recently used first out. Some SQL texts depend on the
 * request (the search tiers write a query's term slots into theirs, the price plans their class
 * count), so an unbounded cache would grow with every distinct query a caller invents; an evicted
 * statement is finalized when it is collected.
 */
export const STATEMENT_CACHE_LIMIT = 256;

/** A prepared statement cached per connection (the write path runs these per settlement). */
export function cachedStatement(db: DatabaseSync, sql: string): StatementSync {
  let byDb = statementCache.get(db);
  if (!byDb) statementCache.set(db, (byDb = new Map<string, StatementSync>()));
  let st = byDb.get(sql);
  if (st) {
    // Most recently used last: the Map's order is the eviction order.
    byDb.delete(sql);
  } else {
    st = db.prepare(sql);
    if (byDb.size >= STATEMENT_CACHE_LIMIT) byDb.delete(byDb.keys().next().value!);
  }
  byDb.set(sql, st);
  return st;
}

/** How many statements `db` has cached (tests). */
export function cachedStatementCount(db: DatabaseSync): number {
  return statementCache.get(db)?.size ?? 0;
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
