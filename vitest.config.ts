import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // `npm start` runs compiled output: tests that spawn it need dist/ current. Browser tests need
    // Chromium, installed when absent. Postgres tests share one embedded server (freshDatabase()).
    globalSetup: ['./test/helpers/build.ts', './test/helpers/chromium.ts', './test/helpers/postgres.ts'],
    // Every test seller listens on loopback, which paid_call and the catalog refuse by default
    // (docs/SECURITY.md "SSRF"); the tests of that guard clear this in their own process.
    env: { ALLOW_PRIVATE_TARGETS: '127.0.0.0/8,::1/128' },
    // The second reporter prints a plain `N passed, N failed` closing line for CI logs.
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
