import { defineConfig } from 'vitest/config';
import SpreadSequencer from './test/helpers/sequencer.ts';

/**
 * Tests whose verdicts depend on getting CPU when they ask for it: svc's latency with and without
 * an attack, and the seller-schema time budget (a schema is judged only if its low-priority thread
 * got CPU; docs/CATALOG.md "Seller schemas"). They run after every other file, alone, so the files
 * running beside them do not decide their outcome.
 */
const LATENCY_TESTS = ['test/security/schema-load.test.ts', 'test/security/schemas.test.ts'];

/**
 * Files that change or inspect process-wide state (environment variables read at import, the
 * process's exit and signal listeners, the process's one seller-schema thread and its first boot):
 * each in its own process.
 */
const OWN_PROCESS_TESTS = ['test/security/ssrf.test.ts', 'test/scale/embedded-postgres.test.ts', 'test/catalog/soft-budget.test.ts'];

/**
 * The seed the differential and property tests draw their sampled cases from (test/helpers/cases.ts):
 * TEST_SEED when set (to replay a run), else a new one each run; the progress reporter prints it.
 */
const TEST_SEED = process.env.TEST_SEED ?? String(1 + Math.floor(Math.random() * 2 ** 31));
process.env.TEST_SEED = TEST_SEED;

const shared = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  // Every test seller listens on loopback, which paid_call and the catalog refuse by default
  // (docs/SECURITY.md "SSRF"); the tests of that guard clear this in their own process.
  // Catalog and schema threads load dist/ (built from the current sources by the global setup)
  // instead of stripping the types of src/ again in every thread: a catalog opened from source
  // cost about 570 ms of CPU, from the bundles about 240 ms (src/files.ts).
  env: { ALLOW_PRIVATE_TARGETS: '127.0.0.0/8,::1/128', SVC_WORKER_BUNDLES: '1', TEST_SEED },
  // expect.poll waits for a browser to fetch and render (the explorer tests); its default 1 s ran
  // out on a machine with half its CPU taken by other work. A longer wait only delays a failure.
  expect: { poll: { timeout: 10_000 } },
};

export default defineConfig({
  test: {
    // The second prints a progress line at least every 30 s and, at the end, the ten slowest files
    // and the run's TEST_SEED; the third a plain `N passed, N failed` closing line for CI logs.
    reporters: ['default', './test/helpers/progress-reporter.ts', './test/helpers/summary-reporter.ts'],
    sequence: { sequencer: SpreadSequencer },
    // Once for the whole run, for every project: `npm start` runs compiled output, so tests that
    // spawn it need dist/ current; browser tests need Chromium, installed when absent (beside the
    // first files); Postgres tests share one embedded server (freshDatabase()); a run that leaves
    // files in the checkout fails. Set per project, each ran once per project (two PostgreSQL
    // servers started).
    globalSetup: ['./test/helpers/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...LATENCY_TESTS, ...OWN_PROCESS_TESTS],
          // Two files at a time (vitest's own default is one worker on a 2-core machine, and most
          // files spend their time waiting on the devnet, on processes or on sockets). The files
          // that start several processes or a browser run among the others, spread through the
          // run (test/helpers/sequencer.ts), not one at a time after them: each waits on
          // conditions, not on a share of the CPU (docs/TESTING.md).
          maxWorkers: 2,
          // Two long-lived processes keep the modules they imported: a fresh process per file
          // imported svc again every time, about 128 s of a run in all (docs/TESTING.md).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // isolate (vitest's default): a fresh process per file. maxWorkers as `suite`'s, so both run in
        // one group, side by side: with 1, vitest runs such files one by one after every group.
        test: { ...shared, name: 'own-process', include: OWN_PROCESS_TESTS, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        test: { ...shared, name: 'latency', include: LATENCY_TESTS, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
