/**
 * dist/ compiled from the current sources, for tests that spawn `npm start` (and the catalog
 * threads, loaded from dist/: vitest.config.ts). Builds only when dist/main.js is missing or older
 * than a file in src/, the build script or the lockfile (a few ms otherwise).
 */
import { execFileSync, spawn } from 'node:child_process';
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

function isBuilt(): boolean {
  let built = 0;
  try {
    built = statSync(join(ROOT, 'dist/main.js')).mtimeMs;
  } catch {
    /* not built yet */
  }
  return (
    built >=
    Math.max(
      newest(join(ROOT, 'src')),
      statSync(join(ROOT, 'scripts/build.mjs')).mtimeMs,
      statSync(join(ROOT, 'package-lock.json')).mtimeMs,
    )
  );
}

const BUILD = ['run', '--silent', 'build'];

export function ensureBuilt(): void {
  if (!isBuilt()) execFileSync('npm', BUILD, { cwd: ROOT, stdio: 'inherit' });
}

/** As `ensureBuilt`, for the global setup: the build runs while it starts PostgreSQL. */
export async function build(): Promise<void> {
  if (isBuilt()) return;
  const child = spawn('npm', BUILD, { cwd: ROOT, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('exit', resolve));
  if (code !== 0) throw new Error(`npm run build exited ${code}`);
}
