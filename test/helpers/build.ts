/**
 * dist/ compiled from the current sources, for tests that spawn `npm start` (and the catalog
 * threads, loaded from dist/: vitest.config.ts). Builds only when dist/main.js is missing or older
 * than a file in src/, the build script or the lockfile (a few ms otherwise). A build must end with
 * its result line (`build: dist/ in … s, … MB: main.js with N chunks (npm start), …`, README.md), which is shown.
 */
import { execFileSync, spawn } from 'node:child_process';
// @ts-expect-error a plain-Node script without type declarations (its JSDoc types it).
import { distIsCurrent } from '../../scripts/dist-current.mjs';

const ROOT = new URL('../../', import.meta.url).pathname;
const isBuilt = (): boolean => (distIsCurrent as (root: string) => boolean)(ROOT);

const BUILD = ['run', '--silent', 'build'];

/** The build's output, shown, after checking that it ends with the result line. */
function resultLine(stdout: string): void {
  process.stdout.write(stdout);
  const last = stdout.trimEnd().split('\n').at(-1) ?? '';
  if (!/^build: dist\/ in \d+\.\d s, \d+\.\d MB: main\.js with \d+ chunks \(npm start\), /.test(last))
    throw new Error(`npm run build did not end with its result line; it printed: ${JSON.stringify(stdout)}`);
}

export function ensureBuilt(): void {
  if (!isBuilt()) resultLine(execFileSync('npm', BUILD, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }));
}

/** As `ensureBuilt`, for the global setup: the build runs while it starts PostgreSQL. */
export async function build(): Promise<void> {
  if (isBuilt()) return;
  const child = spawn('npm', BUILD, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
  if (code !== 0) throw new Error(`npm run build exited ${code}`);
  resultLine(stdout);
}
