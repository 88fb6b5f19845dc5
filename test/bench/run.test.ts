/** The benchmarks' one entry point, bench/run.ts (docs/BENCHMARKS.md "Running them"). */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCH_DIR, benchmarks, describe as description, findBenchmark, ROOT } from '../../bench/run.ts';

describe('bench/run.ts', () => {
  it('finds every bench/<area>/<name>.ts and nothing in a lib/ folder', () => {
    const onDisk = readdirSync(BENCH_DIR, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'lib')
      .flatMap((area) =>
        readdirSync(join(BENCH_DIR, area.name))
          .filter((f) => f.endsWith('.ts'))
          .map((f) => `bench/${area.name}/${f}`),
      );
    expect(
      benchmarks()
        .map((b) => b.file)
        .sort(),
    ).toEqual(onDisk.sort());
    expect(benchmarks().some((b) => b.file.includes('/lib/'))).toBe(false);
    expect(onDisk.length).toBeGreaterThan(20);
  });

  it('gives every benchmark a one-line description and a unique name', () => {
    const all = benchmarks();
    expect(all.filter((b) => b.description === '').map((b) => b.file)).toEqual([]);
    expect(new Set(all.map((b) => b.name)).size).toBe(all.length);
  });

  it('reads the first line of the leading doc comment', () => {
    expect(description('/**\n * What it measures.\n *\n * More.\n */\nimport x;')).toBe('What it measures.');
    expect(description('import x;\n')).toBe('');
  });

  it('finds a benchmark by name or by area/name', () => {
    expect(findBenchmark('catalog-terms')?.file).toBe('bench/catalog/catalog-terms.ts');
    expect(findBenchmark('catalog/catalog-terms')?.file).toBe('bench/catalog/catalog-terms.ts');
    expect(findBenchmark('catalog-corpus')).toBeUndefined();
  });

  it('`npm run bench -- --list` prints every benchmark; an unknown name exits 2', () => {
    const listed = execFileSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--list'], { cwd: ROOT, encoding: 'utf8' });
    for (const b of benchmarks()) expect(listed).toContain(`${b.area}/${b.name}`);
    let status: number | null = null;
    try {
      execFileSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'no-such-bench'], { cwd: ROOT, stdio: 'pipe' });
    } catch (error) {
      status = (error as { status: number | null }).status;
    }
    expect(status).toBe(2);
  });
});
