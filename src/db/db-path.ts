/**
 * Where svc's SQLite database lives (DB_PATH), prepared at start before any port is bound
 * (src/main.ts, and checked by src/config.ts `configErrors`): its directory created, the path
 * refused naming it when SQLite can never keep a database there, and what a refused start created
 * removed again.
 */
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ConfigError } from '../config-env.ts';
import { isBusy } from './sqlite.ts';

/**
 * Creates the parent directory of DB_PATH (at start, before binding), one missing component at a
 * time: Node's recursive mkdir loops forever where creating a directory fails with ENOENT although
 * its parent exists (under /proc/<pid>/ of a process that is gone, say). For SQLite (no DATABASE_URL),
 * a DB_PATH where SQLite can never keep a database (`/dev/null`, under /proc: databasePathProblem)
 * is refused naming the path, and what was created removed. Returns the directories it created
 * (outermost first), which a start refused later removes (src/main.ts).
 */
export function ensureDbDirectory(dbPath: string, sqlite: boolean): string[] {
  const missing: string[] = [];
  let dir = dirname(resolve(dbPath));
  try {
    while (!existsSync(dir)) {
      missing.unshift(dir);
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
    for (const path of missing) mkdirSync(path);
    // A missing directory beneath a regular file: mkdir's error; an existing parent that is a file: this check.
    if (!statSync(dirname(resolve(dbPath))).isDirectory()) throw new ConfigError('DB_PATH', 'parent is not a directory');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('DB_PATH', `parent directory cannot be created (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const problem = sqlite ? databasePathProblem(dbPath) : null;
  if (problem) {
    removeDirectories(missing);
    throw new ConfigError('DB_PATH', `${dbPath} ${problem}`);
  }
  return missing;
}

/** Removes `dirs` (outermost first, as ensureDbDirectory returns them) where they are empty, innermost first. */
export function removeDirectories(dirs: readonly string[]): void {
  for (const dir of [...dirs].reverse()) {
    try {
      rmdirSync(dir);
    } catch (err) {
      // Not empty: what is above it stays too.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
    }
  }
}

/**
 * Why SQLite can never keep a database at `dbPath`, as the end of a sentence ("DB_PATH " + the path
 * + this), or null when it can: a path that is not a regular file (`/dev/null`, a directory), one
 * that cannot be created (under /proc, in a directory svc may not write), a file svc may not write,
 * a file that is not an SQLite database. Checked at start (src/config.ts), its parent directory
 * already created, and leaves nothing behind. A read-only filesystem is not such a reason: svc starts
 * and waits for it to become writable (docs/OPERATIONS.md "When the journal cannot write").
 */
export function databasePathProblem(dbPath: string): string | null {
  if (dbPath === ':memory:') return null;
  const code = (err: unknown) => (err as NodeJS.ErrnoException).code ?? 'error';
  let st;
  try {
    st = statSync(dbPath, { throwIfNoEntry: false });
  } catch (err) {
    return `cannot be looked up (${code(err)})`;
  }
  if (!st) {
    try {
      closeSync(openSync(dbPath, 'wx'));
    } catch (err) {
      return ['EROFS', 'EEXIST'].includes(code(err)) ? null : `cannot be created (${code(err)})`;
    }
    rmSync(dbPath, { force: true });
    return null;
  }
  if (st.isDirectory()) return 'is a directory, not a database file';
  if (!st.isFile()) return 'is not a regular file (SQLite keeps its database in one)';
  try {
    accessSync(dbPath, constants.R_OK | constants.W_OK);
  } catch (err) {
    if (code(err) !== 'EROFS') return `cannot be opened read-write (${code(err)})`;
  }
  try {
    const db = new DatabaseSync(dbPath, { readOnly: true, timeout: 500 });
    try {
      db.prepare('PRAGMA schema_version').get();
    } finally {
      db.close();
    }
  } catch (err) {
    if (isBusy(err)) return null;
    return (((err as { errcode?: number }).errcode ?? 0) & 0xff) === SQLITE_NOTADB
      ? 'is not an SQLite database'
      : `cannot be opened (${(err as Error).message})`;
  }
  return null;
}

const SQLITE_NOTADB = 26;
