/**
 * A `npm run dev` run owns its data directory (README "Try it"): `dev.lock` in it holds the
 * owner's pid, the boot it started in and, once svc is up, svc's URL and the run's ports. A second
 * run on the same directory reads it and refuses before it touches anything there; a lock whose
 * process is gone (killed, or from before a reboot) is stale and taken over. The owner removes the
 * lock when it exits.
 *
 *   const lock = lockDataDir('./data/dev');          // throws DataDirInUseError
 *   lock.update({ svcUrl, ports });                  // for the message a second run prints
 *   lock.release();                                  // on exit (sync)
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'dev.lock';

/** What a lock says about the run that holds it. */
export interface DevRun {
  pid: number;
  /** ISO time the run took the lock. */
  startedAt: string;
  /** The kernel's boot id where there is one (Linux): a lock from an earlier boot is stale whatever its pid. */
  bootId?: string;
  /** svc's URL, once it listens. */
  svcUrl?: string;
  ports?: Record<string, number>;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly lockPath: string,
    readonly owner: DevRun,
  ) {
    super(`${dataDir} is in use by another npm run dev (pid ${owner.pid})`);
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  readonly path: string;
  /** Adds what the run learned since it took the lock (svc's URL, ports). */
  update(info: Pick<DevRun, 'svcUrl' | 'ports'>): void;
  /** Removes the lock if it is still this process's; synchronous, so it can run on 'exit'. */
  release(): void;
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (EPERM: it does, as another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(path: string): DevRun | undefined {
  try {
    const run = JSON.parse(readFileSync(path, 'utf8')) as DevRun;
    return Number.isInteger(run.pid) && run.pid > 0 ? run : undefined;
  } catch {
    return undefined; // vanished, or not a lock (an interrupted write): stale
  }
}

/** Held by a live process of this boot other than this one. */
function held(run: DevRun | undefined, boot: string | undefined): run is DevRun {
  if (!run || run.pid === process.pid) return false;
  if (run.bootId && boot && run.bootId !== boot) return false;
  return alive(run.pid);
}

/**
 * Takes `dataDir` (created if missing) for this process, or throws DataDirInUseError naming the
 * live run that holds it. A stale lock is replaced.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const boot = bootId();
  let run: DevRun = { pid: process.pid, startedAt: new Date().toISOString(), ...(boot ? { bootId: boot } : {}) };
  const write = (flag: 'wx' | 'w') => {
    // An update goes through a rename, so a reader never sees half a file.
    if (flag === 'wx') return writeFileSync(path, `${JSON.stringify(run)}\n`, { flag });
    const next = `${path}.${process.pid}`;
    writeFileSync(next, `${JSON.stringify(run)}\n`);
    renameSync(next, path);
  };
  for (let attempt = 0; ; attempt++) {
    try {
      write('wx');
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
    }
    const owner = readLock(path);
    if (held(owner, boot)) throw new DataDirInUseError(dataDir, path, owner);
    rmSync(path, { force: true }); // stale: its process is gone
  }
  let released = false;
  return {
    path,
    update(info) {
      if (released) return;
      run = { ...run, ...info };
      write('w');
    },
    release() {
      if (released) return;
      released = true;
      if (readLock(path)?.pid === process.pid) rmSync(path, { force: true });
    },
  };
}
