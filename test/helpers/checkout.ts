/**
 * A run leaves the checkout as it found it (test/helpers/global-setup.ts). Tests write their files to the
 * system's temporary directory (or to ignored paths: dist/, test-artifacts/); a file a test leaves
 * in the checkout shows up in `git status` and would be committed by the next `git add -A`. Files
 * not ignored by git that appeared during the run fail it (a developer's edits to tracked files
 * meanwhile do not). Outside a git checkout (an unpacked tarball) there is nothing to compare.
 */
import { execFileSync } from 'node:child_process';

const ROOT = new URL('../../', import.meta.url).pathname;

function status(): Set<string> | undefined {
  try {
    const out = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
    return new Set(out.split('\n').filter((line) => line.startsWith('?? ')));
  } catch {
    return undefined;
  }
}

/** Notes the checkout's untracked files; the function returned fails the run if others appeared. */
export function checkoutGuard(): () => void {
  const before = status();
  return () => {
    const after = status();
    if (!before || !after) return;
    const left = [...after].filter((entry) => !before.has(entry));
    if (left.length === 0) return;
    // Vitest logs an error thrown here without failing the run.
    process.stderr.write(`\nthe test run left files in the checkout (git status --porcelain):\n${left.join('\n')}\n`);
    process.exitCode = 1;
  };
}
