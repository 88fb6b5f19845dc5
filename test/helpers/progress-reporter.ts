/**
 * A plain progress line at least every 30 s of a run, so a long run never looks hung: files done
 * of all, tests passed and failed, the time since the run began and the files running now with
 * how long each has run. Before the first file starts, the line names the global setup (the
 * build and PostgreSQL: test/helpers/global-setup.ts).
 *
 * At the end it prints the ten slowest files (wall time from their import to their last test,
 * which is what they add to a run) and the seed the run drew its sampled cases with
 * (test/helpers/cases.ts), so docs/TESTING.md's list can be kept true and a failure replayed.
 * Every line is plain text on stdout; the closing `N passed, N failed` line stays last
 * (summary-reporter.ts runs after this one).
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule, TestSpecification, Vitest } from 'vitest/node';

/** At most this long between two progress lines. */
const EVERY_MS = Number(process.env.TEST_PROGRESS_MS ?? 30_000);

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

export default class ProgressReporter implements Reporter {
  private root = process.cwd();
  private readonly began = Date.now();
  private total = 0;
  private done = 0;
  private passed = 0;
  private failed = 0;
  /** Files running now, by module id, with when they were queued (just before their import). */
  private readonly running = new Map<string, number>();
  /** Files done, with their wall time. */
  private readonly durations: Array<{ file: string; ms: number; state: string }> = [];
  private timer: NodeJS.Timeout | undefined;

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    this.timer = setInterval(() => this.line(), EVERY_MS);
    this.timer.unref();
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.total = specifications.length;
    const seed = process.env.TEST_SEED;
    process.stdout.write(
      `\n${this.total} test files; sampled cases drawn with TEST_SEED=${seed}${process.env.TEST_DEEP === '1' ? ', TEST_DEEP=1 (every case)' : ''}\n`,
    );
  }

  onTestModuleQueued(module: TestModule): void {
    this.running.set(module.moduleId, Date.now());
  }

  onTestCaseResult(test: TestCase): void {
    const state = test.result().state;
    if (state === 'passed') this.passed++;
    else if (state === 'failed') this.failed++;
  }

  onTestModuleEnd(module: TestModule): void {
    const queued = this.running.get(module.moduleId) ?? Date.now();
    this.running.delete(module.moduleId);
    this.done++;
    this.durations.push({ file: this.name(module.moduleId), ms: Date.now() - queued, state: module.state() });
  }

  onTestRunEnd(): void {
    clearInterval(this.timer);
    const all = [...this.durations].sort((a, b) => b.ms - a.ms);
    // Every file's time, slowest first, for docs/TESTING.md's table (TEST_TIMES_FILE=path npm test).
    const timesFile = process.env.TEST_TIMES_FILE;
    if (timesFile) writeFileSync(timesFile, all.map((d) => `${(d.ms / 1000).toFixed(1)}\t${d.file}\t${d.state}\n`).join(''));
    const slowest = all.slice(0, 10);
    process.stdout.write(
      `\nslowest files (wall time, ${clock(Date.now() - this.began)} in all):\n${slowest
        .map((d) => `  ${seconds(d.ms).padStart(6)}  ${d.file}${d.state === 'failed' ? '  (failed)' : ''}`)
        .join('\n')}\nsampled cases drawn with TEST_SEED=${process.env.TEST_SEED} (set it to replay this run's cases)\n`,
    );
  }

  private name(moduleId: string): string {
    return relative(this.root, moduleId);
  }

  private line(): void {
    const elapsed = clock(Date.now() - this.began);
    if (this.done === 0 && this.running.size === 0) {
      process.stdout.write(`[${elapsed}] starting: global setup (build, PostgreSQL), then the first files' imports\n`);
      return;
    }
    const now = Date.now();
    const running = [...this.running]
      .sort((a, b) => a[1] - b[1])
      .map(([id, queued]) => `${this.name(id)} ${seconds(now - queued)}`)
      .join(', ');
    process.stdout.write(
      `[${elapsed}] ${this.done}/${this.total} files, ${this.passed} passed, ${this.failed} failed; running: ${running || 'none'}\n`,
    );
  }
}
