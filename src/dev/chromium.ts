/**
 * Debian's Chromium for the explorer's browser tests and bench/explorer/explorer.ts (driven through
 * playwright-core). A fresh machine does not have it, so `ensureChromium` installs it (apt-get, as
 * root) when absent; CHROMIUM_PATH points at another binary. Without root and without a binary it
 * fails with the command to run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: run \`sudo apt-get install -y --no-install-recommends chromium\` (or set CHROMIUM_PATH).`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  // Without recommended packages (a printer dialog, Perl modules, …): headless Chromium needs only its
  // dependencies, which bring a font through fontconfig.
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env });
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium, but ${CHROMIUM_PATH} is still missing`);
}
