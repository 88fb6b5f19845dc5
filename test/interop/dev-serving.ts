/**
 * A serving `npm run dev` (the run test/interop/first-contact.test.ts starts and shares with the
 * README and SELLER.md checks): it told the whole story with a result file that says what
 * happened, serves with the real readiness checks, owns its data directory (a second run on it
 * refuses before touching anything; `--ephemeral` alone runs beside it in a temporary directory of
 * its own) and on SIGINT exits 0 with every port closed. Registered last: it stops the run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../src/dev/lock.ts';
import type { StoryResult } from '../../src/dev/story.ts';
import { spawnDev, type DevProcess, type DevRun } from '../helpers/dev-run.ts';

const SECRET_SEED = /\bS[A-Z2-7]{55}\b/;
const FILES = ['svc.log', 'story.json', 'devnet-ca.pem', 'catalog.sqlite'];

/** A run's files (inode and text). */
export type DevFiles = Map<string, { ino: number; text: string }>;
export const devFiles = (dataDir: string): DevFiles =>
  new Map(FILES.map((f) => [f, { ino: statSync(join(dataDir, f)).ino, text: readFileSync(join(dataDir, f), 'latin1') }]));

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

/**
 * The checks of the serving `run()`, whose files were `filesAtReady()` once it printed its URLs
 * (the other checks on the run may append to its log and catalog, never replace them).
 */
export function describeServingRun(run: () => DevRun, filesAtReady: () => DevFiles): void {
  describe('npm run dev, serving, and beside it', () => {
    /** What a test started, stopped after it (last first). */
    const cleanups: Array<() => void> = [];
    afterEach(() => {
      for (const cleanup of cleanups.splice(0).reverse()) cleanup();
    });
    const started = (dev: DevProcess) => {
      cleanups.push(() => {
        if (dev.child.exitCode === null && dev.child.signalCode === null) dev.child.kill('SIGKILL');
      });
      return dev;
    };
    /** Never deleted or replaced: the same inodes, story and certificate unchanged, the log only appended to. */
    const expectIntact = () => {
      const [now, files] = [devFiles(run().dataDir), filesAtReady()];
      for (const f of FILES) expect(now.get(f)!.ino, f).toBe(files.get(f)!.ino);
      for (const f of ['story.json', 'devnet-ca.pem']) expect(now.get(f)!.text, f).toBe(files.get(f)!.text);
      expect(now.get('svc.log')!.text.startsWith(files.get('svc.log')!.text), 'svc.log').toBe(true);
    };

    // The story `--once` tells (test/interop/dev.test.ts's --postgres run exits after it) is the one
    // a serving run tells before it prints its URLs: checked here, on SQLite, from its output.
    it('tells the whole story, checks it, and only then shows the demo keys', () => {
      const stdout = run().output();
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
      const result = JSON.parse(readFileSync(join(run().dataDir, 'story.json'), 'utf8')) as StoryResult;
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
      expect(filesAtReady().get('svc.log')!.text).not.toMatch(SECRET_SEED);
    });

    it('serves: health, the real readiness checks, the sellers, the labelled demo keys; no child process is left', async () => {
      expect((await fetch(`${run().svcUrl}/health`)).status).toBe(200);
      // /ready runs the checks `npm start` runs (docs/OPERATIONS.md), against the devnet.
      const ready = await fetch(`${run().svcUrl}/ready`);
      const body = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean }> };
      expect(ready.status, JSON.stringify(body)).toBe(200);
      expect(Object.keys(body.checks).sort()).toEqual(['balances', 'database', 'draining', 'rpc']);
      expect((await fetch(`${run().sellerUrl}/weather?city=Oslo`)).status).toBe(402);
      expect(run().output()).toMatch(/secret \(dev-only\) S[A-Z2-7]{55}/); // the demo keys are shown, and labelled
      // The agent's tool server was closed after the story: no child process is left running.
      expect(childProcesses(run().process.child.pid!)).toEqual([]);
    });

    it('a second run on its data directory, with the fixed ports, refuses before touching anything, naming it and the ways out', async () => {
      const second = started(spawnDev([], { ephemeral: false, dataDir: run().dataDir }));
      expect(await second.exited).toBe(1);
      const { stdout, stderr } = second.output();
      expect(stderr).toContain(
        `dev: ${run().dataDir} is in use by another npm run dev (pid ${run().process.child.pid}, svc ${run().svcUrl}), which is still running; nothing here was changed.`,
      );
      expect(stderr).toContain('npm run dev -- --ephemeral');
      expect(stderr).toContain('npm run dev -- --data-dir <dir>');
      expect(stdout).toBe(''); // it started nothing
      expectIntact();
    });

    it('a third with --ephemeral runs beside it in a temporary directory of its own; Ctrl-C mid-story stops it and removes that directory', async () => {
      const third = started(spawnDev([]));
      const ready = await third.waitFor(/ready: svc (\S+), sellers (\S+) and (\S+), devnet (\S+)/, 60_000);
      const dir = /data directory (\S+) \(held by this run, pid \d+; temporary/.exec(third.output().stdout)![1]!;
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      expect(dir).not.toBe(run().dataDir);
      expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
      expect((await fetch(`${ready[1]}/discovery/resources`)).status).toBe(200);
      third.child.kill('SIGINT');
      expect(await third.exited).toBe(0);
      for (const url of [ready[1]!, ready[2]!, ready[3]!.replace(/\/mcp$/, ''), ready[4]!]) expect(await refused(url), url).toBe(true);
      expect(existsSync(dir)).toBe(false);
    }, 90_000);

    it('the first still serves discovery from its intact files; SIGINT then stops every piece, frees every port and the directory', async () => {
      expect((await fetch(`${run().svcUrl}/discovery/resources`)).status).toBe(200);
      expectIntact();
      expect(readFileSync(join(run().dataDir, 'svc.log'), 'utf8')).toContain('/discovery/resources'); // it still logs there
      expect(JSON.parse(readFileSync(join(run().dataDir, LOCK_FILE), 'utf8'))).toMatchObject({
        pid: run().process.child.pid,
        svcUrl: run().svcUrl,
      });

      run().process.child.kill('SIGINT');
      expect(await run().process.exited).toBe(0);
      expect(run().output()).toContain('stopped; every port is free.');
      for (const url of [run().svcUrl, run().sellerUrl, run().mcpSellerUrl, run().rpcUrl, run().httpsRpcUrl.replace('https:', 'http:')])
        expect(await refused(url), url).toBe(true);
      // Its lock is gone; its files stay for a look afterwards, the catalog closed (no -wal or -shm
      // left: every connection to it was closed, its readiness probe's too).
      expect(existsSync(join(run().dataDir, LOCK_FILE))).toBe(false);
      for (const f of FILES) expect(existsSync(join(run().dataDir, f)), f).toBe(true);
      for (const f of ['catalog.sqlite-wal', 'catalog.sqlite-shm']) expect(existsSync(join(run().dataDir, f)), f).toBe(false);
    }, 30_000);
  });
}
