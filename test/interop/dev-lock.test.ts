/**
 * The lock by which a `npm run dev` run owns its data directory (src/dev/lock.ts): held by a live
 * process, it refuses and names that run; left by a process that is gone (or from another boot, or
 * not a lock at all), it is taken over; released, it is removed only while it is still ours.
 * test/interop/dev.test.ts runs it between real `npm run dev` processes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../../src/dev/lock.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-dev-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lockPath = () => join(dir, LOCK_FILE);
const lockOf = (run: object) => writeFileSync(lockPath(), JSON.stringify(run));
const held = () => JSON.parse(readFileSync(lockPath(), 'utf8')) as { pid: number; svcUrl?: string };
/** A pid whose process has exited (and been reaped). */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid;

describe('the data directory lock', () => {
  it('creates the directory and holds this pid; updates add the URL and ports; release removes it', () => {
    const sub = join(dir, 'data', 'dev');
    const lock = lockDataDir(sub);
    expect(JSON.parse(readFileSync(join(sub, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.update({ svcUrl: 'http://127.0.0.1:4021', ports: { svc: 4021 } });
    expect(JSON.parse(readFileSync(join(sub, LOCK_FILE), 'utf8'))).toMatchObject({
      pid: process.pid,
      svcUrl: 'http://127.0.0.1:4021',
      ports: { svc: 4021 },
    });
    lock.release();
    expect(existsSync(join(sub, LOCK_FILE))).toBe(false);
  });

  it('a lock held by a live process refuses, naming that run, and is left as it was', () => {
    const owner = { pid: process.ppid, startedAt: '2026-01-01T00:00:00.000Z', svcUrl: 'http://127.0.0.1:4021' };
    lockOf(owner);
    let error: unknown;
    try {
      lockDataDir(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as DataDirInUseError).owner).toMatchObject({ pid: process.ppid, svcUrl: 'http://127.0.0.1:4021' });
    expect(held()).toEqual(owner);
  });

  const stale: Array<[string, () => void]> = [
    ['its process is gone', () => lockOf({ pid: deadPid(), startedAt: '2026-01-01T00:00:00.000Z' })],
    ['it is not a lock (an interrupted write)', () => writeFileSync(lockPath(), '{"pid":')],
  ];
  // Where the kernel names its boot (Linux): a live pid from an earlier boot is another process.
  if (existsSync('/proc/sys/kernel/random/boot_id'))
    stale.push([
      'it is from another boot',
      () => lockOf({ pid: process.ppid, startedAt: '2026-01-01T00:00:00.000Z', bootId: 'an earlier boot' }),
    ]);
  it.each(stale)('a stale lock is taken over: %s', (_name, leave) => {
    leave();
    const lock = lockDataDir(dir);
    expect(held().pid).toBe(process.pid);
    lock.release();
  });

  it('release leaves a lock that is no longer ours', () => {
    const lock = lockDataDir(dir);
    const other = { pid: process.ppid, startedAt: '2026-01-01T00:00:00.000Z' };
    lockOf(other); // another run took it (ours was removed meanwhile)
    lock.release();
    expect(held()).toEqual(other);
  });
});
