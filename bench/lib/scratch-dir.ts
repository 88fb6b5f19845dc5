/**
 * A benchmark's own temporary directory, removed when its process exits (at the end of the script or
 * through process.exit): a 100k catalog and the copies each side serves take gigabytes, and runs that
 * left theirs in the system's temporary directory filled the disk. A directory the user names with
 * `--keep-dir` is never removed: it is there to be reused.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Removes `path` (a file or a directory) when this process exits. */
export function removeOnExit(path: string): void {
  process.once('exit', () => rmSync(path, { recursive: true, force: true }));
}

/**
 * A new directory under the system's temporary directory, named `prefix` and a random suffix,
 * removed when this process exits. `traversable`: readable by other users, as a Postgres data
 * directory inside it needs when initdb runs as the postgres user and this process as root.
 */
export function scratchDir(prefix: string, { traversable = false } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (traversable) chmodSync(dir, 0o755);
  removeOnExit(dir);
  return dir;
}
