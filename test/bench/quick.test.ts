/**
 * The benchmarks' quick modes run in the suite, so none rots unnoticed (docs/BENCHMARKS.md
 * "Running them"): one benchmark per run, drawn from the run's TEST_SEED (test/helpers/cases.ts),
 * every one under `npm run test:deep`. A quick run still starts svc and its load clients as
 * separate processes and costs 5–40 CPU-seconds, so all of them in every run would cost the suite
 * minutes. A quick run proves the benchmark works end to end, not a figure: no benchmark exits
 * non-zero for a missed target.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { benchmarks, ROOT } from '../../bench/run.ts';
import { caseRandom, sample } from '../helpers/cases.ts';

const run = promisify(execFile);
const chosen = sample(benchmarks(), 1, caseRandom('bench-quick'));

describe('a benchmark drawn for this run, in its quick mode', () => {
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
