/**
 * Chromium for the browser tests (src/dev/chromium.ts installs it when absent). On a fresh machine
 * its install (apt-get: about 15 s) runs beside the first test files instead of before them: the
 * global setup starts it and returns, and `chromiumInstalled()` (test/helpers/browser.ts) waits
 * for it in the files that launch a browser. A file written when it ends tells the test processes
 * how it went.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_PATH, installChromium } from '../../src/dev/chromium.ts';

export { CHROMIUM_PATH };

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the global setup writes how the install it started ended; empty when none was needed. */
    chromiumInstallStatus: string;
  }
}

interface InstallStatus {
  ok: boolean;
  error?: string;
}

/**
 * Vitest global setup: starts the install when Chromium is absent. Its teardown waits for the
 * install, so a run never ends with apt-get still at work.
 */
export function startChromiumInstall(project: TestProject): () => Promise<void> {
  if (existsSync(CHROMIUM_PATH)) {
    project.provide('chromiumInstallStatus', '');
    return async () => {};
  }
  const statusFile = join(tmpdir(), `svc-chromium-install-${process.pid}.json`);
  rmSync(statusFile, { force: true });
  const done = installChromium()
    .then(
      (): InstallStatus => ({ ok: true }),
      (error: unknown): InstallStatus => ({ ok: false, error: error instanceof Error ? error.message : String(error) }),
    )
    .then((status) => writeFileSync(statusFile, JSON.stringify(status)));
  project.provide('chromiumInstallStatus', statusFile);
  return async () => {
    await done;
    rmSync(statusFile, { force: true });
  };
}

/** In a test process: resolves once the global setup's install (if any) succeeded; rejects with its error. */
export async function chromiumInstalled(timeoutMs = 300_000): Promise<void> {
  const statusFile = inject('chromiumInstallStatus');
  if (!statusFile) return;
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(statusFile)) {
    if (Date.now() > deadline) throw new Error(`Chromium's install (started by the global setup) did not end within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
  const status = JSON.parse(readFileSync(statusFile, 'utf8')) as InstallStatus;
  if (!status.ok) throw new Error(`installing Chromium failed: ${status.error}`);
}
