/**
 * The benchmarks' quick modes run in the suite, so none rots unnoticed (docs/BENCHMARKS.md
 * "Running them"): one benchmark per run, drawn from the run's TEST_SEED (test/helpers/cases.ts)
 * among those whose quick mode is cheap, every one under `npm run test:deep`. A quick run still
 * starts svc and its load clients as separate processes; the quick modes of HEAVY cost 12–55
 * CPU-seconds each, the others 4–10 (measured one by one), so the default draw leaves HEAVY to the
 * deep run. A quick run proves the benchmark works end to end, not a figure: no benchmark exits
 * non-zero for a missed target.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { benchmarks, ROOT } from '../../bench/run.ts';
import { caseRandom, DEEP, sample } from '../helpers/cases.ts';

const run = promisify(execFile);

/** Quick modes over 10 CPU-seconds (user + system of `npm run bench -- <name> --quick`): run only under TEST_DEEP=1. */
const HEAVY = [
  'catalog/catalog-list-postgres',
  'catalog/catalog-postgres',
  'catalog/catalog-price',
  'catalog/catalog-quality',
  'catalog/catalog-rss',
  'catalog/catalog-terms',
  'catalog/filter-combos',
  'catalog/hidden-search',
  'catalog/path-mix',
  'catalog/postgres-idle',
  'catalog/schema-soak',
  'catalog/search-bands',
  'catalog/search-rounds',
  'catalog/validate-flood',
  'devnet/devnet-memory',
  'explorer/explorer',
  'facilitator/settle-latency',
  'facilitator/sponsorship-lockout',
  'facilitator/verify-floor',
  'ops/dev',
  'ops/instances',
  'ops/mixed-memory',
  'ops/start',
];

const all = benchmarks();
const chosen = sample(
  all.filter((b) => DEEP || !HEAVY.includes(`${b.area}/${b.name}`)),
  1,
  caseRandom('bench-quick'),
);

describe('a benchmark drawn for this run, in its quick mode', () => {
  it('every benchmark named heavy exists (a renamed one would otherwise join the default draw unmeasured)', () => {
    expect(HEAVY.filter((name) => !all.some((b) => `${b.area}/${b.name}` === name))).toEqual([]);
  });

  it.each(chosen.map((b) => [`${b.area}/${b.name}`]))(
    'npm run bench -- %s --quick exits 0 and prints its figures',
    async (name) => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/run.ts', name, '--quick'], {
        cwd: ROOT,
        timeout: 280_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      expect(stdout.trim().length).toBeGreaterThan(0);
    },
    300_000,
  );
});
