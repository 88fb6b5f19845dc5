/**
 * `--quick`, which every benchmark accepts: tiny sizes and counts so it finishes in a few seconds. It checks that the
 * benchmark still runs end to end, not what it measures; its figures mean
 * nothing. A benchmark that compares with another commit compares this checkout with itself in quick mode
 * (THIS_CHECKOUT as the baseline), so no other commit is exported or built.
 */
export const QUICK = process.argv.includes('--quick');

/** A baseline revision that means this checkout as it is (its dist/ built, its sources), not a commit. */
export const THIS_CHECKOUT = '.';

/** The arguments after the script's path, without `--quick` (for benchmarks that read them by position). */
export function argsWithoutQuick(): string[] {
  return process.argv.slice(2).filter((arg) => arg !== '--quick');
}
