/**
 * The "before" side of a benchmark that compares svc with an earlier commit of itself: that
 * commit's tree (git archive, no worktree), sharing this checkout's node_modules, built once with
 * its own `npm run build` and kept in the temporary directory for the next run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportRevision, ROOT } from './ops-procs.ts';
import { THIS_CHECKOUT } from './quick.ts';

/**
 * The directory holding `commit`'s tree with dist/ built; svc starts there as `node dist/main.js`. THIS_CHECKOUT
 * (quick mode) is this checkout, whose dist/ `npm run build` made.
 */
export function baselineBuild(commit: string): string {
  if (commit === THIS_CHECKOUT) return ROOT; // quick mode: this checkout's own build
  const sha = execFileSync('git', ['rev-parse', '--short=12', commit], { encoding: 'utf8' }).trim();
  const dir = join(tmpdir(), `svc-baseline-${sha}`);
  if (existsSync(join(dir, 'dist/main.js'))) return dir;
  rmSync(dir, { recursive: true, force: true }); // what an interrupted build left
  exportRevision(sha, dir);
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return dir;
}
