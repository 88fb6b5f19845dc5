/**
 * The journal's SQLite connection and the checks before each write (docs/OPERATIONS.md "When the
 * journal cannot write"). Every write first checks that the file at DB_PATH is still the one open
 * (device and inode, src/db/sqlite.ts fileProblem). A file that was deleted or replaced takes no
 * more writes until svc restarts: SQLite would go on writing into the unlinked inode, and a new
 * connection at the path would share its -wal and -shm files with the connections still on the old
 * one (svc's catalog has one), so it is never reopened; instead a copy of the open database is
 * written beside it, for the operator to put back. Reads keep serving from the open connection:
 * it holds what svc knows. svc's own journal (`openLater`) that cannot open at all (a read-only or
 * full filesystem at start) opens on a later call instead: nothing was open, so nothing is shared.
 */
import type { DatabaseSync } from 'node:sqlite';
import { backup } from 'node:sqlite';
import { FILE_REPLACED, fileIdentity, fileProblem, type FileIdentity } from '../../db/sqlite.ts';
import { JournalStorageError, storageReason } from '../types.ts';

/** A journal that could not open is tried again on a call at most this often. */
const REOPEN_INTERVAL_MS = 1_000;

export interface JournalConnectionOptions {
  /**
   * svc's own journal: a file that cannot open now does not fail the constructor; each later call
   * tries again (at most once per second) and fails with the reason until it opens. Without it
   * (`npm run migrate`, tests) the constructor throws.
   */
  openLater?: boolean;
  /** Where the loss of the file and the copy written beside it are reported. */
  logger?: { error(obj: Record<string, unknown>, msg: string): void };
}

export class JournalConnection {
  private opened: { db: DatabaseSync; identity: FileIdentity | null } | null = null;
  private openFailure: { at: number; error: JournalStorageError } | null = null;
  private closed = false;
  /** Set once the file at the path is not the one open; then the copy written beside it. */
  private lost: { copy: string; written: 'pending' | 'done' | 'failed'; writing: Promise<void> | null } | null = null;

  constructor(
    private readonly dbPath: string,
    private readonly open: () => DatabaseSync,
    private readonly options: JournalConnectionOptions = {},
  ) {
    try {
      this.reader();
    } catch (err) {
      if (!options.openLater) throw (err as Error).cause ?? err;
    }
  }

  /** The open connection, opening it first when it is not (at most once per REOPEN_INTERVAL_MS). */
  reader(): DatabaseSync {
    if (this.opened) return this.opened.db;
    if (this.closed) throw new JournalStorageError('the journal is closed');
    if (this.openFailure && performance.now() - this.openFailure.at < REOPEN_INTERVAL_MS) throw this.openFailure.error;
    let db: DatabaseSync | undefined;
    try {
      db = this.open();
      this.opened = { db, identity: fileIdentity(this.dbPath) };
      this.openFailure = null;
      return db;
    } catch (err) {
      if (db?.isOpen) db.close();
      const error = new JournalStorageError(`cannot open (${storageReason(err)})`, { cause: err });
      this.openFailure = { at: performance.now(), error };
      throw error;
    }
  }

  /** The connection for a write: refused while the file at the path is not the one open, or is read-only. */
  writer(): DatabaseSync {
    if (this.lost) throw this.lostError();
    const db = this.reader();
    const problem = fileProblem(this.dbPath, this.opened!.identity, true);
    if (problem === FILE_REPLACED) {
      this.lose();
      throw this.lostError();
    }
    if (problem) throw new JournalStorageError(`the journal database file ${problem}`);
    return db;
  }

  /** Waits for a copy being written after the file was lost, then closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    await this.lost?.writing;
    if (this.opened?.db.isOpen) this.opened.db.close();
  }

  private lostError(): JournalStorageError {
    const lost = this.lost!;
    if (lost.written === 'failed') this.writeCopy();
    const copy = { pending: 'being written', done: 'written', failed: 'could not be written' }[lost.written];
    return new JournalStorageError(
      `the journal database file was deleted or replaced: settles are refused until svc restarts on a restored file (a copy of the open journal ${copy} beside it; see the log)`,
    );
  }

  /** The file at the path is not the one open: from now on no write, and a copy of the open database beside it. */
  private lose(): void {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    this.lost = { copy: `${this.dbPath}.rescued-${stamp}`, written: 'pending', writing: null };
    this.options.logger?.error(
      { dbPath: this.dbPath },
      'the journal database file was deleted or replaced: svc takes no new settlement until it restarts; writing a copy of the open journal beside it',
    );
    this.writeCopy();
  }

  /** Writes (or tries again to write) the copy of the open database (SQLite's online backup). */
  private writeCopy(): void {
    const lost = this.lost!;
    if (lost.writing || !this.opened) return;
    lost.written = 'pending';
    lost.writing = backup(this.opened.db, lost.copy).then(
      () => {
        lost.written = 'done';
        this.options.logger?.error(
          { copy: lost.copy, dbPath: this.dbPath },
          'copy of the journal written: stop svc, remove any DB_PATH-wal and DB_PATH-shm left behind, move the copy to DB_PATH, start svc',
        );
      },
      (err: unknown) => {
        lost.written = 'failed';
        lost.writing = null;
        this.options.logger?.error(
          { copy: lost.copy, err: storageReason(err) },
          'could not write a copy of the journal (tried again at the next write or probe); do not stop svc before it is written',
        );
      },
    );
  }
}
