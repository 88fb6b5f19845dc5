/**
 * README's first command, `npm ci`, runs on the machine's own Node and npm (Node 20 on a fresh
 * machine; the Node 24 of the `node` devDependency runs the scripts once it is installed). It must
 * print nothing a newcomer has to be told to ignore: .npmrc keeps npm's per-package `EBADENGINE`
 * warnings (about 80 packages want Node >= 22) off the screen. Run as `npm ci --dry-run` on a copy of
 * package.json, the lockfile and .npmrc: the same dependency tree and engine checks, nothing fetched
 * or written.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The machine's PATH: without the node_modules/.bin folders an npm script adds (they hold the pinned Node 24). */
const MACHINE_PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir.includes('node_modules'))
  .join(delimiter);

/** `npm ci --dry-run` on the machine's npm and Node, in a folder holding `files` copied from the checkout. */
function dryRunCi(files: string[]): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-npm-ci-'));
  dirs.push(dir);
  for (const file of files) copyFileSync(join(ROOT, file), join(dir, file));
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
  const run = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts'], {
    cwd: dir,
    env: { ...env, PATH: MACHINE_PATH },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const machineNodeMajor = (): number =>
  Number(/^v(\d+)/.exec(spawnSync('node', ['--version'], { env: { PATH: MACHINE_PATH }, encoding: 'utf8' }).stdout)?.[1] ?? 0);

describe('npm ci on the machine Node', () => {
  it('prints no warning: the install summary only', () => {
    const run = dryRunCi(['package.json', 'package-lock.json', '.npmrc']);
    expect(run.status, run.output).toBe(0);
    const lines = run.output.split('\n').filter((line) => line.trim() !== '' && !/^(add|remove|change) /.test(line));
    expect(lines).toEqual([expect.stringMatching(/^added \d+ packages in /)]);
  }, 150_000);

  it.runIf(machineNodeMajor() < 22)(
    "without .npmrc, the same install warns EBADENGINE (what .npmrc's setting is for)",
    () => {
      const run = dryRunCi(['package.json', 'package-lock.json']);
      expect(run.status, run.output).toBe(0);
      expect(run.output).toMatch(/npm warn EBADENGINE/);
    },
    150_000,
  );
});
