/**
 * `npm run lint` checks the project's own files: whatever git ignores (build output, data, test
 * artifacts, a developer's scratch/ and .scratch-*\/ scripts) is no source of the project, and a
 * stray file there must not fail `eslint .` (eslint.config.js reads .gitignore; Prettier does by
 * default).
 */
import { readFileSync } from 'node:fs';
import { ESLint } from 'eslint';
import { expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A path each .gitignore pattern matches (`*` filled in, a directory given a TypeScript file). */
function ignoredSamples(): string[] {
  return readFileSync(`${ROOT}.gitignore`, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#') && !line.startsWith('!'))
    .map((pattern) => pattern.replaceAll('*', 'any').replace(/^\//, ''))
    .map((path) => (path.endsWith('/') ? `${path}sample.ts` : path));
}

it('ESLint ignores every path .gitignore ignores, and still lints the sources', async () => {
  const eslint = new ESLint({ cwd: ROOT });
  const samples = ignoredSamples();
  expect(samples).toContain('.scratch-any/sample.ts');
  for (const path of samples) expect(await eslint.isPathIgnored(path), path).toBe(true);
  for (const path of ['src/main.ts', 'test/config/lint-ignores.test.ts', 'eslint.config.js'])
    expect(await eslint.isPathIgnored(path), path).toBe(false);
});
