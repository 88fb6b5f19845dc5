import { copyFileSync, existsSync, rmSync } from 'node:fs';

/**
 * Copies the SQLite file `from` to `to`, which no process may have open. The copy's own -wal and
 * -shm from an earlier run are removed first: SQLite would apply a stale log to the new copy and
 * find it malformed (a server on it then never answers /health). `from`'s own -wal is copied with
 * it: the svc that served the file may have left committed pages there, and the file alone can then
 * be part-checkpointed (also 'malformed').
 */
export function copySqlite(from: string, to: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(to + suffix, { force: true });
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
}
