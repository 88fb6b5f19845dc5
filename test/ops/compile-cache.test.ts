/**
 * Start-up's compile cache and what the bundle loads (docs/OPERATIONS.md "Startup"): scripts/start.sh
 * keeps Node's compile cache in dist/.compile-cache, `npm run build` fills it, and a rebuilt bundle
 * runs its own code, never the previous build's, with that cache present. Loading svc's bundle does
 * not load Node's fetch.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it("the build fills it, and loading svc does not load Node's fetch", () => {
    ensureBuilt();
    // What a start loads: the chunks dist/main.js imports once the configuration is valid (the
    // service), then dist/main.js, which stops at its configuration check (no variables: exit 78).
    const afterConfig = [...readFileSync(join(root, 'dist/main.js'), 'utf8').matchAll(/import\("\.\/(chunks\/[^"]+\.js)"\)/g)].map(
      (m) => `dist/${m[1]}`,
    );
    expect(afterConfig.some((p) => p.includes('/service-'))).toBe(true);
    const script = [
      "process.on('exit', () => console.log(process.moduleLoadList.filter((m) => m.includes('undici')).length));",
      ...[...afterConfig, 'dist/main.js'].map((p) => `await import('./${p}');`),
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      env: { PATH, NODE_COMPILE_CACHE: 'dist/.compile-cache', NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(78);
    for (const file of [...afterConfig, 'dist/main.js']) expect(run.stderr).toContain(`${file} was accepted`);
    expect(run.stdout).toBe('0\n');
  });
});
