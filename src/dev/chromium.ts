/**
 * Debian's headless Chromium (`chromium-headless-shell`) for the browser tests,
 * bench/explorer/explorer.ts and scripts/explorer-image.ts (driven through playwright-core). It is
 * Chromium's renderer without the browser's own interface: the same pages, layout and scripts for
 * less CPU than the full `chromium` package (test/explorer/explorer.test.ts took 22 CPU-s in all
 * with it, 37.5 with `chromium`: docs/TESTING.md "Time"). A fresh machine does not have it, so `ensureChromium` installs it
 * (apt-get, as root) when absent; CHROMIUM_PATH points at another binary (the full `chromium` works
 * too). Without root and without a binary it fails with the command to run. The test run's global
 * setup installs it with `installChromium` instead, beside the tests that do not need it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell';
const PACKAGE = 'chromium-headless-shell';

/**
 * The apt-get runs that install it: the package lists, then the package without recommended
 * packages (Perl modules, …): headless Chromium needs only its dependencies, which bring a font
 * through fontconfig. Undefined when it is present; throws without root.
 */
function installSteps(): string[][] | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: run \`sudo apt-get install -y --no-install-recommends ${PACKAGE}\` (or set CHROMIUM_PATH).`,
    );
  }
  return [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', PACKAGE],
  ];
}

const APT_ENV = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

function checkInstalled(): void {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed ${PACKAGE}, but ${CHROMIUM_PATH} is still missing`);
}

/** Installs Chromium when absent, before returning. */
export function ensureChromium(): void {
  const steps = installSteps();
  if (!steps) return;
  for (const args of steps) execFileSync('apt-get', args, { stdio: 'inherit', env: APT_ENV });
  checkInstalled();
}

/** As `ensureChromium`, without blocking the caller's event loop while apt-get runs. */
export async function installChromium(): Promise<void> {
  const steps = installSteps();
  if (!steps) return;
  for (const args of steps) {
    const child = spawn('apt-get', args, { stdio: 'inherit', env: APT_ENV });
    const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('exit', resolve));
    if (code !== 0) throw new Error(`apt-get ${args.join(' ')} exited ${code}`);
  }
  checkInstalled();
}
