/**
 * `npm start` runs plain Node on the built bundles (no tsx, no esbuild child): it settles a real
 * payment on the devnet whose seller schema is checked and listed (the catalog and schema worker
 * threads load their own bundles), and a SIGTERM to the process it started leaves no process
 * behind. The build runs first, as a deployment would (`npm run build`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpBazaar } from '../catalog/fixtures.ts';
import { ensureBuilt } from '../helpers/build.ts';
import { SchemeHarness } from '../scheme/harness.ts';

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
  let h: SchemeHarness;
  /** The process tree under test, killed here if an assertion failed before its SIGTERM. */
  let started: number[] = [];
  beforeAll(async () => {
    ensureBuilt(); // also done by the global setup; kept so this file runs alone too
    dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
    h = await SchemeHarness.start(250);
  }, 180_000);
  afterAll(async () => {
    for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL');
    await h?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('settles and lists from the built bundles under plain Node, and SIGTERM leaves no process behind', async () => {
    const submitter = await h.devnet.createAccount({ usdcTrustline: false });
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const youngDir = join(dir, 'young');
    mkdirSync(youngDir);
    const child = spawn(npm, ['start', '--silent'], {
      cwd: root,
      env: {
        ...process.env,
        MALLOC_ARENA_MAX: undefined, // scripts/start.sh's own value, not the environment's
        SUBMITTER_SECRET: submitter.secret,
        RPC_URL: h.devnet.rpcUrl,
        DB_PATH: join(dir, 'svc.sqlite'),
        PORT: String(port),
        LOG_LEVEL: 'warn',
        // The settlement of a made-up URL lists at once (ownership from the origin has its own tests).
        LISTING_OWNERSHIP: 'first-settlement',
        // Each thread reports its young generation's limit (test/helpers/young-generation-probe.ts).
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${join(root, 'test/helpers/young-generation-probe.ts')}`,
        YOUNG_GENERATION_DIR: youngDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const track = setInterval(() => (started = [child.pid!, ...descendants(child.pid!)]), 100);
    void exited.then(() => clearInterval(track));
    const up = await until(async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
      } catch {
        return false;
      }
    }, 30_000);
    expect(up, output).toBe(true);
    const { buyer, seller } = await h.parties();
    const requirements = h.requirements(seller.publicKey());
    const paid = await h.pay(requirements, buyer);
    const url = `https://api.example.com/start/${seller.publicKey().slice(0, 12)}`;
    const settled = await fetch(`http://127.0.0.1:${port}/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        x402Version: 2,
        paymentPayload: { ...paid, resource: { url, description: 'Started from the bundle' }, extensions: { bazaar: httpBazaar() } },
        paymentRequirements: requirements,
      }),
    });
    const receipt = (await settled.json()) as { success: boolean };
    expect(receipt.success, JSON.stringify(receipt)).toBe(true);
    // The seller schema was checked by the schema worker and the listing written by the catalog's.
    const header = settled.headers.get('extension-responses') ?? '';
    expect(JSON.parse(Buffer.from(header, 'base64').toString()).bazaar, output).toEqual({ status: 'success' });
    const found = (await (await fetch(`http://127.0.0.1:${port}/discovery/search?query=bundle`)).json()) as {
      resources: { resource: string }[];
    };
    expect(found.resources.map((r) => r.resource)).toContain(url);
    const tree = [child.pid!, ...descendants(child.pid!)];
    const commands = tree.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
    expect(commands.some((c) => c.includes('dist/main.js'))).toBe(true);
    expect(commands.join('\n')).not.toMatch(/tsx|esbuild/);
    // The Node flags and environment svc's memory figures rely on (scripts/start.sh, docs/BENCHMARKS.md
    // "svc memory and its Node flags"): the process that runs dist/main.js has them.
    const svcPid = tree[commands.findIndex((c) => c.includes('dist/main.js'))]!;
    expect(readFileSync(`/proc/${svcPid}/cmdline`, 'utf8').split('\0')).toEqual(
      expect.arrayContaining(['--max-semi-space-size=4', '--max-old-space-size=1024']),
    );
    expect(readFileSync(`/proc/${svcPid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
    // The flags size the main thread's heap only (4 MiB semi-spaces, a 1 GiB old generation); each
    // worker thread gets what its resourceLimits ask for (catalog/threads/pool.ts): a reader 8 MiB of
    // young generation (V8 reserves 12 for it), the writer and the seller-schema threads 4 (6
    // reserved), where the flags alone would give each of them 12 reserved and a 1 GiB old generation
    // (so `youngMiB`, its heap limit less the old generation it asked for, would be far larger).
    process.kill(svcPid, 'SIGUSR2');
    type Young = { role: string; youngMiB?: number; semiSpaceMiB?: number; heapLimitMiB?: number };
    const young = () =>
      readdirSync(youngDir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(readFileSync(join(youngDir, f), 'utf8')) as Young);
    expect(await until(() => young().some((t) => t.role === 'main'), 10_000), output).toBe(true);
    const threads = young();
    const seen = JSON.stringify(threads);
    expect(new Set(threads.map((t) => t.role)), seen).toEqual(new Set(['main', 'writer', 'reader', 'worker']));
    for (const t of threads.filter((t) => t.role !== 'main')) expect(t.youngMiB, seen).toBe(t.role === 'reader' ? 12 : 6);
    const main = threads.find((t) => t.role === 'main')!;
    expect(main.semiSpaceMiB, seen).toBeCloseTo(4, 0);
    expect(main.heapLimitMiB, seen).toBe(1024 + 3 * 4);

    child.kill('SIGTERM');
    await exited;
    expect(await until(() => tree.every((pid) => !alive(pid)), 5_000), `still running: ${tree.filter(alive).join(', ')}`).toBe(true);
    expect(output).not.toMatch(/"level":(50|60)/);
  }, 60_000);
});

/** A temporary copy of the project's start script and package.json alone: `npm start` without the rest. */
function startScriptCopy(prefix: string): string {
  const copy = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(copy, 'scripts'));
  for (const file of ['package.json', 'scripts/start.sh']) copyFileSync(join(root, file), join(copy, file));
  return copy;
}

describe('npm start and NODE_OPTIONS', () => {
  it('gives node its heap flags, save one NODE_OPTIONS names itself (which the command line would override)', () => {
    // scripts/start.sh in a copy of the project whose dist/main.js is a stand-in reporting the flags and heap it got.
    const copy = startScriptCopy('svc-flags-');
    try {
      mkdirSync(join(copy, 'dist'));
      writeFileSync(
        join(copy, 'dist/main.js'),
        "import v8 from 'node:v8';\nconsole.log(JSON.stringify({ execArgv: process.execArgv, heapLimitMiB: v8.getHeapStatistics().heap_size_limit / 2 ** 20 }));\n",
      );
      const started = (nodeOptions: string) => {
        const run = spawnSync('sh', ['scripts/start.sh'], {
          cwd: copy,
          encoding: 'utf8',
          timeout: 30_000,
          env: { ...process.env, PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH}`, NODE_OPTIONS: nodeOptions },
        });
        expect(run.status, run.stderr).toBe(0);
        return JSON.parse(run.stdout) as { execArgv: string[]; heapLimitMiB: number };
      };
      expect(started('')).toEqual({ execArgv: ['--max-semi-space-size=4', '--max-old-space-size=1024'], heapLimitMiB: 1024 + 3 * 4 });
      // An operator's old-space limit holds, and start.sh's semi-spaces stay.
      expect(started('--max-old-space-size=700')).toEqual({ execArgv: ['--max-semi-space-size=4'], heapLimitMiB: 700 + 3 * 4 });
      expect(started('--max-semi-space-size=2').execArgv).toEqual(['--max-old-space-size=1024']);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe('npm start without a build', () => {
  it('says in one line to build first and exits 1, instead of a MODULE_NOT_FOUND stack', () => {
    // The project's own start script in a copy of the project that has not been built.
    const copy = startScriptCopy('svc-unbuilt-');
    try {
      const run = spawnSync(npm, ['start', '--silent'], { cwd: copy, encoding: 'utf8', timeout: 30_000 });
      expect(run.status, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      const lines = run.stderr.split('\n').filter((l) => l && !l.startsWith('npm warn'));
      expect(lines).toEqual(['svc: dist/main.js is missing; run `npm run build` first']);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
