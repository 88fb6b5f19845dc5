/**
 * The one entry point of the benchmarks (docs/BENCHMARKS.md):
 *
 *   npm run bench -- --list                 every benchmark, by area, with its one-line description
 *   npm run bench -- <name> [args…]         runs one (`name` or `area/name`), e.g. `npm run bench -- catalog-terms --quick`
 *
 * A benchmark is a file `bench/<area>/<name>.ts`; it is found by listing those folders, so a new file needs no
 * registration here. The first line of its leading doc comment is its description. Files that are not benchmarks
 * (shared helpers, client and server processes a benchmark spawns) live in a `lib/` folder: `bench/lib/` when
 * several areas use them, `bench/<area>/lib/` otherwise. Every benchmark accepts `--quick` (tiny sizes, a few
 * seconds, the baseline replaced by this checkout where it would need another commit's build).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const BENCH_DIR = new URL('./', import.meta.url).pathname;
export const ROOT = join(BENCH_DIR, '..');

export interface Benchmark {
  /** The file's name without `.ts`, unique across areas. */
  name: string;
  area: string;
  /** Relative to the checkout's root, e.g. `bench/catalog/catalog-terms.ts`. */
  file: string;
  description: string;
}

/** The first line of the file's leading doc comment. */
export function describe(source: string): string {
  const match = /^\s*\/\*\*\s*\n\s*\*\s*(.+)/.exec(source);
  return match ? match[1]!.trim() : '';
}

/** Every benchmark under bench/<area>/, sorted by area then name. */
export function benchmarks(): Benchmark[] {
  const found: Benchmark[] = [];
  for (const area of readdirSync(BENCH_DIR).sort()) {
    const dir = join(BENCH_DIR, area);
    if (area === 'lib' || !statSync(dir).isDirectory()) continue;
    const names = readdirSync(dir)
      .filter((entry) => entry.endsWith('.ts'))
      .map((entry) => entry.slice(0, -'.ts'.length))
      .sort();
    for (const name of names) {
      const path = join(dir, `${name}.ts`);
      found.push({
        name,
        area,
        file: relative(ROOT, path),
        description: describe(readFileSync(path, 'utf8')),
      });
    }
  }
  return found;
}

/** The benchmark called `name` (`catalog-terms` or `catalog/catalog-terms`), if any. */
export function findBenchmark(name: string): Benchmark | undefined {
  return benchmarks().find((b) => b.name === name || `${b.area}/${b.name}` === name);
}

function list(): void {
  const all = benchmarks();
  const width = Math.max(...all.map((b) => `${b.area}/${b.name}`.length));
  for (const b of all) console.log(`${`${b.area}/${b.name}`.padEnd(width)}  ${b.description}`);
}

if (import.meta.main) {
  const [name, ...args] = process.argv.slice(2);
  if (name === undefined || name === '--list' || name === '--help' || name === '-h') {
    if (name === undefined || name !== '--list')
      console.log('usage: npm run bench -- --list | npm run bench -- <name> [--quick] [args…]\n');
    list();
  } else {
    const bench = findBenchmark(name);
    if (!bench) {
      console.error(`no benchmark "${name}"; \`npm run bench -- --list\` lists them`);
      process.exit(2);
    }
    // The benchmarks name their helpers and dist/ relative to the checkout's root.
    const child = spawn(process.execPath, ['--import', 'tsx', bench.file, ...args], { cwd: ROOT, stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  }
}
