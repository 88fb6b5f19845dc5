/**
 * `npm run dev` as a user runs it (a child process through tsx under this Node): with `--once
 * --postgres` it tells the whole story through two instances on one embedded PostgreSQL and exits
 * 0; an unknown option or a taken port refuses before starting anything. A serving run (the story,
 * SIGINT, a second run on its data directory, an `--ephemeral` one beside it) is checked by
 * test/interop/dev-serving.ts on the run test/interop/first-contact.test.ts starts. `--ephemeral`
 * and a temporary `--data-dir` keep these tests from touching a developer's own `npm run dev`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../src/dev/lock.ts';
import { DEV_PORTS } from '../../src/dev/stack.ts';
import type { StoryResult } from '../../src/dev/story.ts';
import { spawnDev } from '../helpers/dev-run.ts';

const SECRET_SEED = /\bS[A-Z2-7]{55}\b/;
/** What a test started, stopped after it (last first). */
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface DevOptions {
  /** Free ports (default); false: the fixed ports of DEV_PORTS. */
  ephemeral?: boolean;
  /** The --data-dir (default a new temporary directory). */
  dataDir?: string;
}

function startDev(args: string[], { ephemeral = true, dataDir }: DevOptions = {}) {
  if (dataDir === undefined) {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-dev-'));
    const dir = dataDir;
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  }
  const dev = spawnDev(args, { ephemeral, dataDir });
  // Registered after the directory's removal, so it runs before it.
  cleanups.push(() => {
    if (dev.child.exitCode === null && dev.child.signalCode === null) dev.child.kill('SIGKILL');
  });
  return { ...dev, dataDir };
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

  it('a port already in use is named, with the way out, before anything is started or replaced', async () => {
    // Hold svc's fixed port (or find it already held, e.g. by a developer's own npm run dev).
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.once('error', () => resolve()).listen(DEV_PORTS.svc, '127.0.0.1', () => resolve()));
    // A previous run's log in the directory: a run that cannot start leaves it.
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-dev-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
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
