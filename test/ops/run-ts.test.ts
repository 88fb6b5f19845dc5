/**
 * scripts/run-ts.mjs: `npm run mcp` and `npm run ts -- <file.ts>` (docs/SELLER.md's scripts) start
 * from the build when dist/ is current, and through tsx when it is not (docs/MCP.md, docs/SELLER.md).
 * The decision on a made-up tree (file times set); the scripts as a seller runs them, from scratch/
 * (svc/client served by dist/client/index.js, built from the current sources by the global setup);
 * and a script Node cannot strip, which still runs (tsx).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error a plain-Node script without type declarations (its JSDoc types it).
import { distIsCurrent as distIsCurrentJs } from '../../scripts/dist-current.mjs';

const distIsCurrent = distIsCurrentJs as (root: string, file?: string) => boolean;
const ROOT = new URL('../../', import.meta.url).pathname;
const RUN_DIR = join(ROOT, `scratch/.run-ts-${process.pid}`);
const tmp = mkdtempSync(join(tmpdir(), 'svc-run-ts-'));
afterAll(() => {
  rmSync(RUN_DIR, { recursive: true, force: true });
  rmSync(tmp, { recursive: true, force: true });
});

describe('dist/ is current', () => {
  /** A project tree whose files are `age` seconds old (dist's own age apart). */
  function tree(ages: { src: number; build: number; lock: number; dist?: number }): string {
    const root = mkdtempSync(join(tmp, 'tree-'));
    const now = Date.now() / 1000;
    const file = (path: string, age: number) => {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), '');
      utimesSync(join(root, path), now - age, now - age);
    };
    file('src/mcp/main.ts', ages.src);
    file('src/a.ts', 100);
    file('scripts/build.mjs', ages.build);
    file('package-lock.json', ages.lock);
    if (ages.dist !== undefined) file('dist/mcp/main.js', ages.dist);
    return root;
  }

  it('when its file is at least as new as every source, the build script and the lockfile', () => {
    expect(distIsCurrent(tree({ src: 50, build: 60, lock: 70, dist: 10 }), 'mcp/main.js')).toBe(true);
    expect(distIsCurrent(tree({ src: 5, build: 60, lock: 70, dist: 10 }), 'mcp/main.js')).toBe(false);
    expect(distIsCurrent(tree({ src: 50, build: 5, lock: 70, dist: 10 }), 'mcp/main.js')).toBe(false);
    expect(distIsCurrent(tree({ src: 50, build: 60, lock: 5, dist: 10 }), 'mcp/main.js')).toBe(false);
    expect(distIsCurrent(tree({ src: 50, build: 60, lock: 70 }), 'mcp/main.js')).toBe(false);
  });
});

describe('npm run ts', () => {
  function runScript(name: string, code: string, ...args: string[]) {
    mkdirSync(RUN_DIR, { recursive: true });
    writeFileSync(join(RUN_DIR, name), code);
    return spawnSync('npm', ['run', '--silent', 'ts', '--', join(RUN_DIR, name), ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
  }

  it("a seller script runs on Node's type stripping, svc/client from the build, its arguments its own", () => {
    const run = runScript(
      'from-build.ts',
      [
        "import { createFacilitatorClient } from 'svc/client';",
        'const port: number = Number(process.argv[2]!);',
        "console.log(JSON.stringify({ client: import.meta.resolve('svc/client'), url: createFacilitatorClient(`http://127.0.0.1:${port}`).url, argv: process.argv.slice(2) }));",
      ].join('\n'),
      '4021',
      'x',
    );
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      client: `file://${join(ROOT, 'dist/client/index.js')}`,
      url: 'http://127.0.0.1:4021',
      argv: ['4021', 'x'],
    });
  });

  it('a relative path is taken from where npm was run, as a shell would take it', () => {
    mkdirSync(RUN_DIR, { recursive: true });
    writeFileSync(join(RUN_DIR, 'here.ts'), "console.log('ran', process.argv[2]);");
    const run = spawnSync('npm', ['run', '--silent', 'ts', '--', 'here.ts', 'x'], { cwd: RUN_DIR, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('ran x');
  });

  it('a script with TypeScript Node cannot strip (an enum) runs through tsx', () => {
    const run = runScript(
      'not-strippable.ts',
      [
        "import { createFacilitatorClient } from 'svc/client';",
        'enum Port { Svc = 4021 }',
        'console.log(createFacilitatorClient(`http://127.0.0.1:${Port.Svc}`).url);',
      ].join('\n'),
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('http://127.0.0.1:4021');
  });
});
