/**
 * The order files start in (vitest.config.ts): the longest first, by the wall times of a past run
 * (file-times.tsv), so the run ends on short files and both workers finish close together; vitest's
 * own order (on a clean clone: the largest files first) put a 14-s file with little code last, alone
 * on one core. The files that start several processes or a browser are spread through the run, one
 * after every few others, so two of them rarely start side by side.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds per file of an idle run (TEST_TIMES_FILE=test/helpers/file-times.tsv npm test writes it
 * anew: docs/TESTING.md "Time"). It only orders the files; a file missing from it (a new one) is
 * guessed from its size, about a second per 1.5 KB, as the fit of that run's times gives.
 */
function expectedSeconds(root: string): (file: string) => number {
  const known = new Map<string, number>();
  for (const line of readFileSync(join(root, 'test/helpers/file-times.tsv'), 'utf8').split('\n')) {
    const [seconds, file] = line.split('\t');
    if (file) known.set(file, Number(seconds));
  }
  return (file) => known.get(file) ?? statSync(join(root, file)).size / 1500;
}

/** Files that start several processes or a browser and wait on them (vitest.config.ts). */
export const SPREAD_TESTS = [
  'test/interop/dev.test.ts',
  'test/explorer/explorer.test.ts',
  'test/scale/instances.test.ts',
  'test/journal/process.test.ts',
  'test/journal/storage.test.ts',
  'test/security/sockets.test.ts',
  'test/ops/signals.test.ts',
  'test/interop/first-contact.test.ts',
  'test/ops/migrate.test.ts',
];

/** A spread file starts, then this many others, then the next spread file. */
const OTHERS_BETWEEN = 3;

/**
 * The longest files that also start processes or a browser start only after this many others:
 * `npm test` runs the lint beside vitest (package.json), which takes about a core for its first
 * 80 s (and on a fresh machine Chromium's install, beside the first files), and the longest
 * started beside it took past 90 s.
 */
export const AFTER_LINT = [
  'test/catalog/postgres-differential.test.ts',
  'test/explorer/explorer.test.ts',
  'test/interop/first-contact.test.ts',
];
const AFTER_LINT_POSITION = 8;

export default class SpreadSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const expected = expectedSeconds(root);
    const seconds = new Map(files.map((spec) => [spec, expected(relative(root, spec.moduleId))]));
    const spread = (spec: TestSpecification) => SPREAD_TESTS.includes(relative(root, spec.moduleId));
    const out: TestSpecification[] = [];
    // Groups and projects keep vitest's order; within a run of files of one project, the longest
    // first, and the spread files interleaved.
    for (let i = 0; i < sorted.length;) {
      const project = sorted[i]!.project;
      let j = i;
      while (j < sorted.length && sorted[j]!.project === project) j++;
      const run = sorted.slice(i, j).sort((a, b) => seconds.get(b)! - seconds.get(a)!);
      const heavy = run.filter(spread);
      const others = run.filter((spec) => !spread(spec));
      while (heavy.length > 0 || others.length > 0) {
        if (heavy.length > 0) out.push(heavy.shift()!);
        out.push(...others.splice(0, OTHERS_BETWEEN));
      }
      i = j;
    }
    const late = out.filter((spec) => AFTER_LINT.includes(relative(root, spec.moduleId)));
    const rest = out.filter((spec) => !late.includes(spec));
    late.forEach((spec, k) => rest.splice(Math.min(AFTER_LINT_POSITION + k * OTHERS_BETWEEN, rest.length), 0, spec));
    return rest;
  }
}
