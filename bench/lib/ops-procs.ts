/**
 * Shared by the operations benchmarks: svc as a separate process, either the current tree's
 * compiled output under plain Node (`npm run build` first) or a baseline tree (a git revision
 * exported to a temporary directory, started the old way through tsx).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { THIS_CHECKOUT } from './quick.ts';

export const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Exports `revision` of this repository to `dir` (default a new temporary directory) sharing this
 * node_modules. THIS_CHECKOUT (quick mode) is this checkout itself, nothing exported.
 */
export function exportRevision(revision: string, dir?: string): { dir: string; remove(): void } {
  if (revision === THIS_CHECKOUT) return { dir: ROOT, remove: () => {} }; // quick mode: nothing exported
  dir ??= mkdtempSync(join(tmpdir(), 'svc-baseline-'));
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${revision}" | tar -x -C "${dir}"`]);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface SvcProcess {
  url: string;
  child: ChildProcess;
  /** ms from spawn to the first 200 of `path`. */
  readyAfter(path?: string, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

const NODE = join(ROOT, 'node_modules/.bin/node');
const TSX = join(ROOT, 'node_modules/.bin/tsx');

export function startSvc(kind: 'compiled' | 'tsx', cwd: string, env: Record<string, string>, port: number): SvcProcess {
  const started = performance.now();
  const [cmd, args] = kind === 'compiled' ? [NODE, ['dist/main.js']] : [TSX, ['src/main.ts']];
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    child,
    async readyAfter(path = '/health', timeoutMs = 30_000) {
      while (performance.now() - started < timeoutMs) {
        // An svc that exited (a taken port, a bad variable: its one line is on stderr) will not answer.
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`${kind} svc on port ${port} exited (${child.exitCode ?? child.signalCode}) before ${path} answered 200`);
        try {
          if ((await fetch(url + path)).status === 200) return performance.now() - started;
        } catch {
          /* not listening yet */
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error(`${kind} svc not ready on ${path} within ${timeoutMs} ms`);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(); // exited, or killed
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * For throughput benchmarks that pay one new seller (or from one new buyer) far more often than a
 * first day's allowance allows (docs/OPERATIONS.md "Sponsorship"): they measure settling, not the
 * budget. A baseline revision that predates the allowance ignores the variable.
 */
export const NO_NEW_ADDRESS_ALLOWANCE = { FEE_BUDGET_NEW_ADDRESS_DAILY_STROOPS: 'off' } as const;

export const machine = async () => {
  const os = await import('node:os');
  return `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`;
};
