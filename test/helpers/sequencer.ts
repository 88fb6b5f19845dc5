/**
 * The order files start in (vitest.config.ts): vitest's own order (groups, then its cache of past
 * durations, or on a clean clone the largest files first), except that the files that start
 * several processes or a browser are spread through the run, one after every few others, so two
 * of them rarely start side by side and none is left for the end, where a long file alone would
 * leave a core idle.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
 * The two longest files (about 60-70 s alone) start only after this many others: `npm test` runs
 * the lint beside vitest (package.json), which takes about a core for its first 80 s, and a clean
 * clone's order (largest first) started these two beside it, past 90 s each.
 */
export const AFTER_LINT = ['test/catalog/postgres-differential.test.ts', 'test/explorer/explorer.test.ts'];
const AFTER_LINT_POSITION = 8;

export default class SpreadSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const spread = (spec: TestSpecification) => SPREAD_TESTS.includes(relative(root, spec.moduleId));
    const out: TestSpecification[] = [];
    // Groups and projects keep vitest's order; only runs of files of one project are interleaved.
    for (let i = 0; i < sorted.length;) {
      const project = sorted[i]!.project;
      let j = i;
      while (j < sorted.length && sorted[j]!.project === project) j++;
      const run = sorted.slice(i, j);
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
