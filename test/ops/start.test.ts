/**
 * `npm start` runs plain Node on the compiled output (no tsx, no esbuild child), answers, and a
 * SIGTERM to the process it started leaves no process behind. The build runs first, as a
 * deployment would (`npm run build`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.ts';

const root = new URL('../../', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Every descendant pid of `pid` (from /proc), depth first. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  let children: string[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return out;
  }
  for (const child of children.map(Number)) out.push(child, ...descendants(child));
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

async function until(what: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('npm start', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt(); // also done by the global setup; kept so this file runs alone too
    dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves from compiled JavaScript under plain Node, and SIGTERM leaves no process behind', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(npm, ['start', '--silent'], {
      cwd: root,
      env: {
        ...process.env,
        SUBMITTER_SECRET: Keypair.random().secret(),
        RPC_URL: 'http://127.0.0.1:9',
        DB_PATH: join(dir, 'svc.sqlite'),
        PORT: String(port),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const up = await until(async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
      } catch {
        return false;
      }
    }, 30_000);
    expect(up, output).toBe(true);
    // The catalog's worker threads load compiled modules too (dist/catalog/*.js).
    for (const path of ['/discovery/resources', '/discovery/search?query=weather']) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      expect(res.status, `${path}: ${await res.clone().text()}\n${output}`).toBe(200);
    }
    const tree = [child.pid!, ...descendants(child.pid!)];
    const commands = tree.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
    expect(commands.some((c) => c.includes('dist/main.js'))).toBe(true);
    expect(commands.join('\n')).not.toMatch(/tsx|esbuild/);

    child.kill('SIGTERM');
    await exited;
    expect(await until(() => tree.every((pid) => !alive(pid)), 5_000), `still running: ${tree.filter(alive).join(', ')}`).toBe(true);
    expect(output).not.toMatch(/"level":(50|60)/);
  }, 60_000);

  it('the compiled seller-schema validator starts its worker (dist/catalog/schema-worker.js)', async () => {
    const compiled = join(root, 'dist/catalog/schema-validator.js');
    const { SchemaValidator } = (await import(compiled)) as typeof import('../../src/catalog/schema-validator.ts');
    const validator = new SchemaValidator({ maxWaitMs: 10_000 });
    try {
      const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
      expect(await validator.validate(schema, { city: 'Lisbon' })).toEqual({ ok: true });
      expect(await validator.validate(schema, {})).toMatchObject({ ok: false, code: 'bazaar_schema_validation_failed' });
    } finally {
      await validator.close();
    }
  }, 30_000);
});
