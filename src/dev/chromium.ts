/**
 * Debian's headless Chromium (`chromium-headless-shell`) for the browser tests,
 * bench/explorer/explorer.ts and scripts/explorer-image.ts (driven through playwright-core). It is
 * Chromium's renderer without the browser's own interface: the same pages, layout and scripts for
 * less CPU than the full `chromium` package (test/explorer/explorer.test.ts took 22 CPU-s in all
 * with it, 37.5 with `chromium`: docs/TESTING.md "Time"). A fresh machine does not have it, so `ensureChromium` installs it
 * (apt-get, as root) when absent; CHROMIUM_PATH points at another binary (the full `chromium` works
 * too). Without root and without a binary it fails with the command to run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell';
const PACKAGE = 'chromium-headless-shell';

export function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: run \`sudo apt-get install -y --no-install-recommends ${PACKAGE}\` (or set CHROMIUM_PATH).`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  // Without recommended packages (Perl modules, …): headless Chromium needs only its dependencies,
  // which bring a font through fontconfig.
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', PACKAGE], { stdio: 'inherit', env });
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed ${PACKAGE}, but ${CHROMIUM_PATH} is still missing`);
}
