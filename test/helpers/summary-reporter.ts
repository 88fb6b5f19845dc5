/**
 * Prints one plain closing line after the run, `N passed, N failed, N skipped`, so that a CI
 * reading only the last lines of the log (not vitest's coloured summary) sees how many tests ran;
 * before it, the longest source files (longest-files.ts), a review alarm.
 *
 * A passing test prints nothing on stderr: a line there reads as a failure to whoever scans the
 * log (docs/TESTING.md). One that does (console.error/warn in the test, its hooks or its file) is
 * named after the summary line and fails the run.
 */
import type { UserConsoleLog } from 'vitest';
import { longDocs, longestSourceFiles } from './longest-files.ts';
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  /** Task ids (test, suite or file) that wrote to stderr through the console. */
  private readonly wroteStderr = new Set<string>();

  onUserConsoleLog(log: UserConsoleLog): void {
    if (log.type === 'stderr' && log.taskId) this.wroteStderr.add(log.taskId);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const noisy: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
        if (state === 'passed' && this.wroteStderr.has(test.id)) noisy.push(`${module.moduleId} > ${test.fullName}`);
      }
      // A file that failed to load has no tests; count it so the line never reads as clean.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) counts.failed += 1;
      if (module.state() === 'passed') {
        if (this.wroteStderr.has(module.id)) noisy.push(module.moduleId);
        for (const suite of module.children.allSuites())
          if (this.wroteStderr.has(suite.id)) noisy.push(`${module.moduleId} > ${suite.fullName}`);
      }
    }
    counts.failed += unhandledErrors.length;
    // The review alarm (docs/ARCHITECTURE.md "Long files"): printed, never failing the run.
    const longest = longestSourceFiles().map(({ file, lines }) => `${lines} ${file}`);
    process.stdout.write(`\nlongest source files (a review alarm, not a limit):\n  ${longest.join('\n  ')}\n`);
    const docs = longDocs();
    if (docs.length > 0) process.stdout.write(`long doc blocks (a review alarm, not a limit):\n  ${docs.join('\n  ')}\n`);
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
    if (noisy.length > 0) {
      process.stdout.write(`passing tests wrote to stderr (a passing test prints nothing there):\n  ${noisy.join('\n  ')}\n`);
      process.exitCode = 1;
    }
  }
}
