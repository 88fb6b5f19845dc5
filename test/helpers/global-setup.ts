/**
 * Vitest's global setup, once for the whole run (vitest.config.ts). Its steps run side by side
 * rather than one after another: the build of dist/ while the suite's PostgreSQL server starts, and
 * on a fresh machine Chromium's install beside the first test files (only the browser tests wait
 * for it: test/helpers/chromium.ts). The teardown waits for the install, stops the server and
 * fails the run if it left files in the checkout.
 */
import type { TestProject } from 'vitest/node';
import { build } from './build.ts';
import { checkoutGuard } from './checkout.ts';
import { startChromiumInstall } from './chromium.ts';
import { startSuitePostgres } from './postgres.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const checkCheckout = checkoutGuard();
  const chromiumInstalled = startChromiumInstall(project);
  const [, stopPostgres] = await Promise.all([build(), startSuitePostgres(project)]);
  return async () => {
    await chromiumInstalled();
    await stopPostgres();
    checkCheckout();
  };
}
