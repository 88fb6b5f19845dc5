/**
 * Quick mode (bench/lib/quick.ts) of the in-process Postgres benchmarks, which read a directory
 * bench/catalog/catalog-postgres.ts has loaded: that benchmark's own quick run (300 listings) loads a
 * temporary one.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const QUICK_SIZE = '300';

export function quickPostgresDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-quick-pg-'));
  chmodSync(dir, 0o755); // initdb runs as the postgres user when this runs as root
  execFileSync(process.execPath, ['--import', 'tsx', 'bench/catalog/catalog-postgres.ts', '--quick', '--keep-dir', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return dir;
}

/** A copy of `dir` beside it, owners and modes kept (a Postgres data directory must stay its user's). */
export function copyPostgresDir(dir: string): string {
  execFileSync('cp', ['-a', dir, `${dir}-base`]);
  return `${dir}-base`;
}
