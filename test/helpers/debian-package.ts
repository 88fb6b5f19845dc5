/**
 * Debian tools the tests run for real (nginx in front of svc, Prometheus' promtool on the shipped
 * rules). A fresh machine does not have them, so `ensureDebianTool` installs the package with
 * apt-get (as root, without recommended packages, waiting for another apt-get's lock) when the
 * binary is absent, as src/dev/chromium.ts does for Chromium. Without root it fails with the
 * command to run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The path of `binary` after making sure Debian's `pkg` is installed. */
export function ensureDebianTool(binary: string, pkg: string): string {
  if (existsSync(binary)) return binary;
  if (process.getuid?.() !== 0) throw new Error(`${binary} is missing: run \`sudo apt-get install -y --no-install-recommends ${pkg}\`.`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  const install = () =>
    execFileSync('apt-get', [...lock, 'install', '-y', '-qq', '--no-install-recommends', pkg], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    });
  try {
    install();
  } catch {
    // The package lists may be missing or stale on a fresh machine.
    execFileSync('apt-get', [...lock, 'update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    install();
  }
  if (!existsSync(binary)) throw new Error(`apt-get installed ${pkg}, but ${binary} is still missing`);
  return binary;
}
