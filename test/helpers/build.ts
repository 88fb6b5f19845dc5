/**
 * Vitest global setup: tests that spawn `npm start` need dist/ compiled from the current sources.
 * Builds only when dist/main.js is missing or older than a file in src/, the build script or the
 * lockfile (a few ms otherwise).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

export function ensureBuilt(): void {
  let built = 0;
  try {
    built = statSync(join(ROOT, 'dist/main.js')).mtimeMs;
  } catch {
    /* not built yet */
  }
  if (
    built >=
    Math.max(
      newest(join(ROOT, 'src')),
      statSync(join(ROOT, 'scripts/build.mjs')).mtimeMs,
      statSync(join(ROOT, 'package-lock.json')).mtimeMs,
    )
  )
    return;
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

export default function setup(): void {
  ensureBuilt();
}
