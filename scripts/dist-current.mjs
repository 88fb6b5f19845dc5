/**
 * Whether dist/ was built from the current sources: `file` under dist/ is at least as new as every
 * file in src/, the build script and the lockfile (a few ms). Used by scripts/run-ts.mjs (`npm run
 * mcp` and `npm run ts` start from the build when it is current) and by the tests' build step
 * (test/helpers/build.ts).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The newest modification time of a file under `dir`.
 * @param {string} dir
 * @returns {number}
 */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/**
 * @param {string} root the project root
 * @param {string} [file] a file under dist/ (default main.js)
 * @returns {boolean}
 */
export function distIsCurrent(root, file = 'main.js') {
  const built = statSync(join(root, 'dist', file), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return (
    built >=
    Math.max(
      newest(join(root, 'src')),
      statSync(join(root, 'scripts/build.mjs')).mtimeMs,
      statSync(join(root, 'package-lock.json')).mtimeMs,
    )
  );
}
