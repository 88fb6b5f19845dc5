/**
 * Quick mode (bench/lib/quick.ts) of the in-process Postgres benchmarks, which read a directory
 * bench/catalog/catalog-postgres.ts has loaded: that benchmark's own quick run (300 listings) loads a
 * temporary one.
 */
import { execFileSync } from 'node:child_process';
import { removeOnExit, scratchDir } from '../../lib/scratch-dir.ts';

export const QUICK_SIZE = '300';

export function quickPostgresDir(): string {
  // Traversable: initdb runs as the postgres user when this runs as root.
  const dir = scratchDir('svc-bench-quick-pg-', { traversable: true });
  execFileSync(process.execPath, ['--import', 'tsx', 'bench/catalog/catalog-postgres.ts', '--quick', '--keep-dir', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return dir;
}

/** A copy of `dir` beside it, owners and modes kept (a Postgres data directory must stay its user's). */
export function copyPostgresDir(dir: string): string {
  execFileSync('cp', ['-a', dir, `${dir}-base`]);
  removeOnExit(`${dir}-base`);
  return `${dir}-base`;
}
