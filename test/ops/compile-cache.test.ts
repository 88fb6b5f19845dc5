/**
 * Start-up's compile cache and what the bundle loads (docs/OPERATIONS.md "Startup"): scripts/start.sh
 * keeps Node's compile cache in dist/.compile-cache, `npm run build` fills it, and a rebuilt bundle
 * runs its own code, never the previous build's, with that cache present. Importing the bundle does
 * not load Node's fetch.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.ts';

const root = new URL('../../', import.meta.url).pathname;
/** This Node first on PATH: scripts/start.sh runs `node`, as under `npm start`. */
const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
const work = mkdtempSync(join(tmpdir(), 'svc-compile-cache-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `sh scripts/start.sh` in `dir` with Node's compile-cache tracing on. */
function start(dir: string) {
  return spawnSync('sh', ['scripts/start.sh'], {
    cwd: dir,
    env: { PATH, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

/** An ES module printing `build`, with enough functions for V8 to have code worth caching. */
const bundle = (build: string) =>
  [
    ...Array.from({ length: 200 }, (_, i) => `export function f${i}(x) { return x * ${i} + ${i % 7}; }`),
    `console.log('build ${build}', f3(2));`,
  ].join('\n');

describe('compile cache', () => {
  it("a rebuilt bundle of the same size runs its own code with the old build's cache present", () => {
    const dir = join(work, 'project');
    mkdirSync(join(dir, 'dist'), { recursive: true });
    cpSync(join(root, 'scripts/start.sh'), join(dir, 'scripts/start.sh'));
    writeFileSync(join(dir, 'dist/main.js'), bundle('one'));
    const first = start(dir);
    expect(first.stdout, first.stderr).toBe('build one 9\n');
    const [versionDir] = readdirSync(join(dir, 'dist/.compile-cache'));
    expect(readdirSync(join(dir, 'dist/.compile-cache', versionDir!))).toHaveLength(1);
    const again = start(dir);
    expect(again.stdout).toBe('build one 9\n');
    expect(again.stderr).toMatch(/main\.js was accepted/);
    // Same length, other content: only the content hash Node keeps beside each entry tells them apart.
    writeFileSync(join(dir, 'dist/main.js'), bundle('two'));
    const rebuilt = start(dir);
    expect(rebuilt.stdout, rebuilt.stderr).toBe('build two 9\n');
    expect(rebuilt.stderr).not.toMatch(/main\.js was accepted/);
  });

  it("the build fills it, and importing the bundle does not load Node's fetch", () => {
    ensureBuilt();
    // No configuration: svc stops at its check (78) after every static import has been evaluated.
    const probe = "data:text/javascript,process.on('exit',()=>console.log(process.moduleLoadList.filter(m=>m.includes('undici')).length))";
    const run = spawnSync(process.execPath, ['--import', probe, 'dist/main.js'], {
      cwd: root,
      env: { PATH, NODE_COMPILE_CACHE: 'dist/.compile-cache', NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(78);
    expect(run.stderr).toMatch(/dist\/main\.js was accepted/);
    expect(run.stdout).toBe('0\n');
  });
});
