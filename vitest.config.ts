import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // `npm start` runs compiled output: tests that spawn it need dist/ current.
    globalSetup: ['./test/helpers/build.ts'],
    // The second reporter prints a plain `N passed, N failed` closing line for CI logs.
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
