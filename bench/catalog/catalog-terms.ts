/**
 * Search p95 by number of query terms over HTTP against a baseline commit.
 *
 * Search p95 by number of query terms (docs/BENCHMARKS.md "Search by number of terms"), against a
 * baseline commit, side by side over HTTP. Each side seeds its own catalog file with its own code
 * (bench/catalog/lib/catalog-sides.ts: the same generated corpus, bench/lib/catalog-corpus.ts), runs its own
 * `dist/main.js` as a separate process, and is measured with the same client, alternating
 * baseline and this checkout per row (two rounds, the better kept) so machine load hits both.
 *
 * For each number of terms n (1..8) two query kinds, as agents send them:
 *   - "most common": the n most frequent words of the corpus's Zipf vocabulary (the worst case:
 *     at 100k the first is in 95 % of listings, the fourth in about half);
 *   - "natural": a sentence-like mix, every other word one of the most common (the corpus's
 *     stand-ins for "for", "the", "api", ...), the others content words of rank 40–3,000.
 * Each row cycles over 4 such queries (different content words, the same n), limit 20; from 4 terms on
 * the baseline gets at most 40 requests per round (it took seconds per query there).
 * Then the catalog's part of settle latency (writeListing, bench/catalog/lib/catalog-write-latency.ts) on
 * copies of both files, since a faster search must not make the write dear.
 *
 *   npm run build && npx tsx bench/catalog/catalog-terms.ts [--before COMMIT] [--sizes 100000[,1000000]] [--requests 100]
 *     [--keep-dir DIR] [--writes 500]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { mostCommonQuery, naturalQuery } from '../lib/catalog-corpus.ts';
import { discoveryOnlyEnv, seededSides, stopServers, writeLatency } from './lib/catalog-sides.ts';
import { fmt, load, loadAverage, machineLine, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: '334afb8' },
    sizes: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '100' },
    writes: { type: 'string', default: '500' },
    'max-terms': { type: 'string', default: '8' },
    'keep-dir': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings on both sides of this checkout, 3 requests a row up to 3 terms, 20 writes (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { before: '.', sizes: '300', requests: '3', writes: '20', 'max-terms': '3' });
requireBuild();
const REQUESTS = Number(values.requests);
const out = (s: string) => console.log(s);
const dir = values['keep-dir'] ?? scratchDir('svc-bench-terms-');

const mostCommon = mostCommonQuery;
const natural = naturalQuery;
const search = (query: string) => `/discovery/search?query=${encodeURIComponent(query)}&limit=20`;

out(machineLine());
for (const size of values.sizes.split(',').map(Number)) {
  out(`\n### ${size.toLocaleString('en')} listings; before = ${values.before}, after = this checkout`);
  const { beforeDir, beforeFile, afterFile } = seededSides({ dir, before: values.before, size, prefix: 'terms-' });
  const beforePort = 47330;
  const afterPort = 47331;
  const before = startNode(['--max-semi-space-size=4', join(beforeDir, 'dist/main.js')], discoveryOnlyEnv(beforePort, beforeFile));
  const after = startNode(['--max-semi-space-size=4', 'dist/main.js'], discoveryOnlyEnv(afterPort, afterFile));
  try {
    await Promise.all([waitReady(beforePort, '/supported'), waitReady(afterPort, '/supported')]);
    out(`\n| terms | query kind (first of 4) | before p50 / p95 ms | after p50 / p95 ms | ratio p95 (after / before) |`);
    out('| --- | --- | --- | --- | --- |');
    for (let n = 1; n <= Number(values['max-terms']); n++) {
      for (const [kind, make] of [
        ['most common', mostCommon],
        ['natural', natural],
      ] as const) {
        if (n === 1 && kind === 'natural') continue; // one term: the most common word is the only hard case
        const path = (i: number) => search(make(n, i % 4));
        const runs = { before: [] as number[][], after: [] as number[][] };
        const errors = { before: 0, after: 0 };
        for (let round = 0; round < 2; round++) {
          // The baseline takes up to seconds per query at 5+ terms: fewer requests there (its p95 of 40 is the 3rd slowest).
          const rb = await load(beforePort, 1, n >= 4 ? Math.min(REQUESTS, 40) : REQUESTS, path);
          const ra = await load(afterPort, 1, REQUESTS, path);
          runs.before.push([rb.p50, rb.p95]);
          runs.after.push([ra.p50, ra.p95]);
          errors.before += rb.errors;
          errors.after += ra.errors;
        }
        const best = (r: number[][]) => r.reduce((x, y) => (y[1]! < x[1]! ? y : x));
        const [bp50, bp95] = best(runs.before);
        const [ap50, ap95] = best(runs.after);
        const failed = errors.before + errors.after ? ` (non-200: before ${errors.before}, after ${errors.after})` : '';
        out(
          `| ${n} | ${kind} ("${make(n, 0)}")${failed} | ${fmt(bp50!)} / ${fmt(bp95!)} | ${fmt(ap50!)} / ${fmt(ap95!)} | ${(ap95! / bp95!).toFixed(2)} |`,
        );
      }
    }
  } finally {
    await stopServers(before, after);
  }
  out(`\nLoad average after the searches: ${loadAverage()}.`);
  // The catalog's write (settle hook) on copies of each file, interleaved, the better of two runs per
  // side: `first` rewrites the listing's term rows (what a search index makes dearer), `steady` not.
  // `--writes 0` skips it: at 1M the two copies need about 22 GB of disk.
  if (Number(values.writes) === 0) {
    out('\nsettle hook write not measured (--writes 0).');
    continue;
  }
  out('\n| settle hook write (writeListing) | before p50 / p95 ms | after p50 / p95 ms | ratio p50 / p95 |');
  out('| --- | --- | --- | --- |');
  for (const mode of ['first', 'steady']) {
    const writes = (cwd: string, file: string) => writeLatency(cwd, file, values.writes, size, mode);
    const runs = [
      writes(beforeDir, beforeFile),
      writes(process.cwd(), afterFile),
      writes(beforeDir, beforeFile),
      writes(process.cwd(), afterFile),
    ];
    const better = (a: { p50: number; p95: number }, b: { p50: number; p95: number }) => (a.p50 <= b.p50 ? a : b);
    const [wb, wa] = [better(runs[0]!, runs[2]!), better(runs[1]!, runs[3]!)];
    out(
      `| ${values.writes} writes, ${mode} | ${fmt(wb.p50)} / ${fmt(wb.p95)} | ${fmt(wa.p50)} / ${fmt(wa.p95)} | ${(wa.p50 / wb.p50).toFixed(2)} / ${(wa.p95 / wb.p95).toFixed(2)} |`,
    );
  }
  out(`\nLoad average at end: ${loadAverage()}.`);
}
