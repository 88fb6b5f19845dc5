/**
 * `npm run dev` as a user runs it (a child process through tsx under this Node): `--once` tells
 * the whole story and exits 0 with a result file that says what happened; without `--once` it
 * keeps serving until SIGINT, then exits 0 with every port closed. `--ephemeral` and a temporary
 * `--data-dir` keep it from touching a developer's own running `npm run dev`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEV_PORTS } from '../../src/dev/stack.ts';
import type { StoryResult } from '../../src/dev/story.ts';

const SECRET_SEED = /\bS[A-Z2-7]{55}\b/;
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function startDev(args: string[], { ephemeral = true } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-dev-'));
  dirs.push(dataDir);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/dev/main.ts', ...(ephemeral ? ['--ephemeral'] : []), '--data-dir', dataDir, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0' },
    },
  );
  children.push(child);
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

function childPids(pid: number): number[] {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
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
  it('--once tells the whole story, checks it, and exits 0', async () => {
    const dev = startDev(['--once']);
    const code = await dev.exited;
    const { stdout, stderr } = dev.output();
    expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
    for (const step of [
      '402 Payment Required',
      'seller → svc POST /verify: isValid: true',
      'seller → svc POST /settle: success: true',
      'EXTENSION-RESPONSES (to the seller only): {"bazaar":{"status":"success"}}',
      'PAYMENT-RESPONSE receipt',
      '/discovery/resources',
      '/discovery/search',
      'tools: search_resources, paid_call',
      'the agent paid the MCP tool over the x402 MCP transport',
      'The same listings, for people: the catalog explorer at http://',
      'Story complete',
    ]) {
      expect(stdout).toContain(step);
    }
    const result = JSON.parse(readFileSync(join(dev.dataDir, 'story.json'), 'utf8')) as StoryResult;
    expect(result.ok).toBe(true);
    expect(result.payments.map((p) => new URL(p.url).pathname)).toEqual(['/weather', '/summarize']);
    for (const p of result.payments) expect(p.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(result.listed.map((u) => new URL(u).pathname).sort()).toEqual(['/summarize', '/weather']);
    expect(new URL(result.searchHits[0]!).pathname).toBe('/weather');
    // The agent (MCP client → stdio tool server) paid the HTTP resource and the MCP tool.
    expect(result.agent).toMatchObject({ ok: true, mcpListed: true });
    expect(result.agent!.payments).toHaveLength(2);
    for (const p of result.agent!.payments) expect(p.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set([...result.payments, ...result.agent!.payments].map((p) => p.transaction)).size).toBe(4);
    // No secret seed in the story output or in svc's log file.
    expect(stdout).not.toMatch(SECRET_SEED);
    expect(readFileSync(join(dev.dataDir, 'svc.log'), 'utf8')).not.toMatch(SECRET_SEED);
  }, 90_000);

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
    const result = JSON.parse(readFileSync(join(dev.dataDir, 'story.json'), 'utf8')) as StoryResult;
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

  it('a port already in use is named, with the way out, and nothing is left running', async () => {
    // Hold svc's fixed port (or find it already held, e.g. by a developer's own npm run dev).
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.once('error', () => resolve()).listen(DEV_PORTS.svc, '127.0.0.1', () => resolve()));
    const devnetWasFree = await refused(`http://127.0.0.1:${DEV_PORTS.devnet}`);
    try {
      const dev = startDev(['--once'], { ephemeral: false });
      expect(await dev.exited).toBe(1);
      expect(dev.output().stderr).toMatch(
        /dev: port \d+ is already in use \(another npm run dev\?\)\. Stop it, or run: npm run dev -- --ephemeral/,
      );
      // The devnet it had started before reaching svc's port was stopped again.
      if (devnetWasFree) expect(await refused(`http://127.0.0.1:${DEV_PORTS.devnet}`)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  }, 60_000);

  it('keeps serving until SIGINT, then stops every piece and frees every port', async () => {
    const dev = startDev([]);
    await dev.waitFor(/Ctrl-C stops everything/, 60_000);
    const { stdout } = dev.output();
    const svcUrl = stdout.match(/svc \(facilitator\)\s+(http:\/\/\S+)/)![1]!;
    const sellerUrl = stdout.match(/demo seller \(HTTP\)\s+(http:\/\/\S+)/)![1]!;
    const mcpSellerUrl = stdout.match(/demo seller \(MCP\)\s+(http:\/\/\S+)/)![1]!;
    const rpcUrl = stdout.match(/devnet RPC\s+(http:\/\/\S+)/)![1]!;
    const httpsUrl = stdout.match(/https: (https:\/\/\S+)/)![1]!;
    expect((await fetch(`${svcUrl}/health`)).status).toBe(200);
    expect((await fetch(`${sellerUrl}/weather?city=Oslo`)).status).toBe(402);
    expect(stdout).toMatch(/secret \(dev-only\) S[A-Z2-7]{55}/); // the demo keys are shown, and labelled

    // The agent's tool server was closed after the story: no child process is left running.
    expect(childPids(dev.child.pid!)).toEqual([]);

    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    expect(dev.output().stdout).toContain('stopped; every port is free.');
    for (const url of [svcUrl, sellerUrl, mcpSellerUrl, rpcUrl, httpsUrl.replace('https:', 'http:')])
      expect(await refused(url), url).toBe(true);
  }, 90_000);

  it('Ctrl-C in the middle of the story also stops every piece', async () => {
    const dev = startDev([]);
    const ready = await dev.waitFor(/ready: svc (\S+), sellers (\S+) and (\S+), devnet (\S+)/, 60_000);
    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    const urls = [ready[1]!, ready[2]!, ready[3]!.replace(/\/mcp$/, ''), ready[4]!];
    for (const url of urls) expect(await refused(url), url).toBe(true);
  }, 90_000);
});
