/**
 * A headless Chromium (installed by the global setup: test/helpers/chromium.ts) for tests that look at a page the
 * way a person does. Screenshots go to test-artifacts/ (kept by CI, ignored by git).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_PATH, chromiumInstalled } from './chromium.ts';

export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  // On a fresh machine the global setup is still installing it while the first files run.
  await chromiumInstalled();
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export const artifact = (name: string): string => join(ARTIFACTS, name);
