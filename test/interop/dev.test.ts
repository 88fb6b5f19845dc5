/**
 * `npm run dev` as a user runs it (a child process through tsx under this Node): it tells the
 * whole story with a result file that says what happened, then with `--once` exits 0 (the
 * --postgres run), without it keeps serving until SIGINT, then exits 0 with every port closed. A run owns its data directory:
 * a second run on it refuses before touching anything, and `--ephemeral` alone runs beside it in
 * a temporary directory of its own. `--ephemeral` and a temporary `--data-dir` keep these tests
 * from touching a developer's own running `npm run dev`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../src/dev/lock.ts';
import { DEV_PORTS } from '../../src/dev/stack.ts';
import type { StoryResult } from '../../src/dev/story.ts';

const SECRET_SEED = /\bS[A-Z2-7]{55}\b/;
/** What a test started, stopped after it; what a describe block's beforeAll started, after the block. */
const cleanups = { test: [] as Array<() => void>, block: [] as Array<() => void> };
const cleanUp = (list: Array<() => void>) => {
  for (const cleanup of list.splice(0).reverse()) cleanup();
};
afterEach(() => cleanUp(cleanups.test));
afterAll(() => cleanUp(cleanups.block));

interface DevOptions {
  /** Free ports (default); false: the fixed ports of DEV_PORTS. */
  ephemeral?: boolean;
  /** The --data-dir (default a new temporary directory); null: none given, the run chooses. */
  dataDir?: string | null;
  /** Until when the test keeps the run: its own end (default) or its describe block's. */
  until?: keyof typeof cleanups;
}

function startDev(args: string[], { ephemeral = true, dataDir, until = 'test' }: DevOptions = {}) {
  if (dataDir === undefined) {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-dev-'));
    const dir = dataDir;
    cleanups[until].push(() => rmSync(dir, { recursive: true, force: true }));
  }
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/dev/main.ts', ...(ephemeral ? ['--ephemeral'] : []), ...(dataDir ? ['--data-dir', dataDir] : []), ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0' },
    },
  );
  // Registered after the directory's removal, so it runs before it (each list runs last first).
  cleanups[until].push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitFor = (pattern: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = stdout.match(pattern);
        if (m) {
          clearInterval(poll);
          clearTimeout(timer);
          resolve(m);
        }
      };
      const poll = setInterval(check, 50);
      const timer = setTimeout(() => {
        clearInterval(poll);
        reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
      }, timeoutMs);
      check();
    });
  return { child, dataDir, exited, waitFor, output: () => ({ stdout, stderr }) };
}

/**
 * The child processes of `pid` (pid and command), but for tsx's esbuild service: tsx starts it
 * when a source file is not in its transform cache yet, and it lives as long as the process.
 */
function childProcesses(pid: number): string[] {
  const out = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/\/esbuild --service=/.test(l));
}

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2000) });
    return false;
  } catch (err) {
    return /ECONNREFUSED/.test(String((err as { cause?: unknown }).cause ?? err));
  }
}

describe('npm run dev', () => {
  it('--postgres: the same story through a round-robin front over two instances sharing an embedded PostgreSQL', async () => {
    const dev = startDev(['--once', '--postgres']);
    const code = await dev.exited;
    const { stdout, stderr } = dev.output();
    expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
    expect(stdout).toContain('starting two svc instances on PostgreSQL and a round-robin front');
    const spread =
      /spread svc's requests over the two instances: (\d+) and (\d+); both read and write one PostgreSQL database \(postgres:\/\/127\.0\.0\.1:\d+\/svc_dev\)/.exec(
        stdout,
      );
    expect(spread, stdout).not.toBeNull();
    // Round-robin: both instances answered, alternately.
    expect(Number(spread![1])).toBeGreaterThan(3);
    expect(Math.abs(Number(spread![1]) - Number(spread![2]))).toBeLessThanOrEqual(1);
    const result = JSON.parse(readFileSync(join(dev.dataDir!, 'story.json'), 'utf8')) as StoryResult;
    expect(result.ok).toBe(true);
    expect(result.agent).toMatchObject({ ok: true, mcpListed: true });
    expect(stdout).not.toMatch(SECRET_SEED);
    expect(stdout).not.toContain('svc-dev@'); // the database password
  }, 120_000);

  it('an unknown option exits 2 with the usage, starting nothing', async () => {
    const dev = startDev(['--bogus']);
    expect(await dev.exited).toBe(2);
    expect(dev.output().stderr).toMatch(/dev: Unknown option '--bogus'[\s\S]*usage: npm run dev/);
    expect(dev.output().stdout).toBe('');
  });

  it('a port already in use is named, with the way out, before anything is started or replaced', async () => {
    // Hold svc's fixed port (or find it already held, e.g. by a developer's own npm run dev).
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.once('error', () => resolve()).listen(DEV_PORTS.svc, '127.0.0.1', () => resolve()));
    // A previous run's log in the directory: a run that cannot start leaves it.
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-dev-'));
    cleanups.test.push(() => rmSync(dataDir, { recursive: true, force: true }));
    writeFileSync(join(dataDir, 'svc.log'), 'the last run\n');
    try {
      const dev = startDev(['--once'], { ephemeral: false, dataDir });
      expect(await dev.exited).toBe(1);
      expect(dev.output().stderr).toMatch(
        /dev: port \d+ is already in use \(another npm run dev\?\)\. Stop it, or run: npm run dev -- --ephemeral/,
      );
      expect(dev.output().stdout).not.toContain('starting the devnet');
      expect(readFileSync(join(dataDir, 'svc.log'), 'utf8')).toBe('the last run\n');
      expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 60_000);
});

describe('npm run dev beside a serving run', () => {
  let first: ReturnType<typeof startDev>;
  let urls: { svc: string; seller: string; mcpSeller: string; rpc: string; https: string };
  /** The first run's files (inode and text) once its story was told. */
  let files: Map<string, { ino: number; text: string }>;
  const FILES = ['svc.log', 'story.json', 'devnet-ca.pem', 'catalog.sqlite'];
  const snapshot = () =>
    new Map(FILES.map((f) => [f, { ino: statSync(join(first.dataDir!, f)).ino, text: readFileSync(join(first.dataDir!, f), 'latin1') }]));
  /** Never deleted or replaced: the same inodes, story and certificate unchanged, the log only appended to. */
  const expectIntact = () => {
    const now = snapshot();
    for (const f of FILES) expect(now.get(f)!.ino, f).toBe(files.get(f)!.ino);
    for (const f of ['story.json', 'devnet-ca.pem']) expect(now.get(f)!.text, f).toBe(files.get(f)!.text);
    expect(now.get('svc.log')!.text.startsWith(files.get('svc.log')!.text), 'svc.log').toBe(true);
  };

  beforeAll(async () => {
    first = startDev([], { until: 'block' });
    await first.waitFor(/Ctrl-C stops everything/, 60_000);
    const { stdout } = first.output();
    urls = {
      svc: stdout.match(/svc \(facilitator\)\s+(http:\/\/\S+)/)![1]!,
      seller: stdout.match(/demo seller \(HTTP\)\s+(http:\/\/\S+)/)![1]!,
      mcpSeller: stdout.match(/demo seller \(MCP\)\s+(http:\/\/\S+)/)![1]!,
      rpc: stdout.match(/devnet RPC\s+(http:\/\/\S+)/)![1]!,
      https: stdout.match(/https: (https:\/\/\S+)/)![1]!,
    };
    files = snapshot();
  }, 90_000);

  // The story `--once` tells (the --postgres run above exits after it) is the one a serving run
  // tells before it prints its URLs: checked here, on SQLite, from the serving run's output.
  it('tells the whole story, checks it, and only then shows the demo keys', () => {
    const { stdout } = first.output();
    const story = stdout.slice(0, stdout.indexOf('Everything keeps running.'));
    expect(story.length, stdout).toBeGreaterThan(0);
    for (const step of [
      '402 Payment Required',
      'seller → svc POST /verify: isValid: true',
      'seller → svc POST /settle: success: true',
      // A new listing: svc asks the seller's server before listing it (docs/CATALOG.md "Ownership and refresh").
      'EXTENSION-RESPONSES (to the seller only): {"bazaar":{"status":"processing"}}',
      'PAYMENT-RESPONSE receipt',
      '/discovery/resources',
      '/discovery/search',
      'tools: search_resources, paid_call',
      'the agent paid the MCP tool over the x402 MCP transport',
      'The same listings, for people: the catalog explorer at http://',
      'tools/list: search_resources',
      'finds what GET /discovery/search finds',
      'Story complete',
    ]) {
      expect(story).toContain(step);
    }
    const result = JSON.parse(readFileSync(join(first.dataDir!, 'story.json'), 'utf8')) as StoryResult;
    expect(result.ok).toBe(true);
    expect(result.payments.map((p) => new URL(p.url).pathname)).toEqual(['/weather', '/summarize']);
    for (const p of result.payments) expect(p.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(result.listed.map((u) => new URL(u).pathname).sort()).toEqual(['/summarize', '/weather']);
    expect(new URL(result.searchHits[0]!).pathname).toBe('/weather');
    // An MCP client added by URL (POST /mcp) found the same listings in the same order.
    expect(result.hostedHits).toEqual(result.searchHits);
    // The agent (MCP client → stdio tool server) paid the HTTP resource and the MCP tool.
    expect(result.agent).toMatchObject({ ok: true, mcpListed: true });
    expect(result.agent!.payments).toHaveLength(2);
    for (const p of result.agent!.payments) expect(p.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set([...result.payments, ...result.agent!.payments].map((p) => p.transaction)).size).toBe(4);
    // No secret seed in the story output or in svc's log file.
    expect(story).not.toMatch(SECRET_SEED);
    expect(files.get('svc.log')!.text).not.toMatch(SECRET_SEED);
  });

  it('serves: health, the real readiness checks, the sellers, the labelled demo keys; no child process is left', async () => {
    expect((await fetch(`${urls.svc}/health`)).status).toBe(200);
    // /ready runs the checks `npm start` runs (docs/OPERATIONS.md), against the devnet.
    const ready = await fetch(`${urls.svc}/ready`);
    const body = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean }> };
    expect(ready.status, JSON.stringify(body)).toBe(200);
    expect(Object.keys(body.checks).sort()).toEqual(['balances', 'database', 'draining', 'rpc']);
    expect((await fetch(`${urls.seller}/weather?city=Oslo`)).status).toBe(402);
    expect(first.output().stdout).toMatch(/secret \(dev-only\) S[A-Z2-7]{55}/); // the demo keys are shown, and labelled
    // The agent's tool server was closed after the story: no child process is left running.
    expect(childProcesses(first.child.pid!)).toEqual([]);
  });

  it('a second run on its data directory, with the fixed ports, refuses before touching anything, naming it and the ways out', async () => {
    const second = startDev([], { ephemeral: false, dataDir: first.dataDir });
    expect(await second.exited).toBe(1);
    const { stdout, stderr } = second.output();
    expect(stderr).toContain(
      `dev: ${first.dataDir} is in use by another npm run dev (pid ${first.child.pid}, svc ${urls.svc}), which is still running; nothing here was changed.`,
    );
    expect(stderr).toContain('npm run dev -- --ephemeral');
    expect(stderr).toContain('npm run dev -- --data-dir <dir>');
    expect(stdout).toBe(''); // it started nothing
    expectIntact();
  });

  it('a third with --ephemeral runs beside it in a temporary directory of its own; Ctrl-C mid-story stops it and removes that directory', async () => {
    const third = startDev([], { dataDir: null });
    const ready = await third.waitFor(/ready: svc (\S+), sellers (\S+) and (\S+), devnet (\S+)/, 60_000);
    const dir = /data directory (\S+) \(held by this run, pid \d+; temporary/.exec(third.output().stdout)![1]!;
    cleanups.test.push(() => rmSync(dir, { recursive: true, force: true }));
    expect(dir).not.toBe(first.dataDir);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    expect((await fetch(`${ready[1]}/discovery/resources`)).status).toBe(200);
    third.child.kill('SIGINT');
    expect(await third.exited).toBe(0);
    for (const url of [ready[1]!, ready[2]!, ready[3]!.replace(/\/mcp$/, ''), ready[4]!]) expect(await refused(url), url).toBe(true);
    expect(existsSync(dir)).toBe(false);
  }, 90_000);

  it('the first still serves discovery from its intact files; SIGINT then stops every piece, frees every port and the directory', async () => {
    expect((await fetch(`${urls.svc}/discovery/resources`)).status).toBe(200);
    expectIntact();
    expect(readFileSync(join(first.dataDir!, 'svc.log'), 'utf8')).toContain('/discovery/resources'); // it still logs there
    expect(JSON.parse(readFileSync(join(first.dataDir!, LOCK_FILE), 'utf8'))).toMatchObject({ pid: first.child.pid, svcUrl: urls.svc });

    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    expect(first.output().stdout).toContain('stopped; every port is free.');
    for (const url of [urls.svc, urls.seller, urls.mcpSeller, urls.rpc, urls.https.replace('https:', 'http:')])
      expect(await refused(url), url).toBe(true);
    // Its lock is gone; its files stay for a look afterwards, the catalog closed (no -wal or -shm
    // left: every connection to it was closed, its readiness probe's too).
    expect(existsSync(join(first.dataDir!, LOCK_FILE))).toBe(false);
    for (const f of FILES) expect(existsSync(join(first.dataDir!, f)), f).toBe(true);
    for (const f of ['catalog.sqlite-wal', 'catalog.sqlite-shm']) expect(existsSync(join(first.dataDir!, f)), f).toBe(false);
  }, 30_000);
});
