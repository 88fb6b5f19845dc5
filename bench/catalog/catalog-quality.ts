/**
 * Discovery with quality signals, TTL and price filters over HTTP against a baseline commit.
 *
 * Discovery with quality signals, LISTING_TTL_DAYS and the price filters against the commit before
 * them, side by side over HTTP (docs/BENCHMARKS.md "Catalog with quality signals"). Each side seeds
 * its own catalog file with its own code (the same generated corpus, bench/lib/catalog-corpus.ts; the
 * schemas differ), runs its own `dist/main.js` as a separate process, and is measured with the
 * same client, alternating before/after per request kind (two rounds) so machine load hits both.
 * Then the catalog's part of settle latency (writeListing, bench/catalog/lib/catalog-write-latency.ts) on each.
 *
 *   npm run build && npx tsx bench/catalog/catalog-quality.ts [--before 0583278] [--size 100000] [--requests 200] [--keep-dir DIR]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { discoveryCases } from '../lib/catalog-corpus.ts';
import { discoveryOnlyEnv, seededSides, stopServers, writeLatency } from './lib/catalog-sides.ts';
import { cpuSeconds, fmt, load, loadAverage, machineLine, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: '0583278' },
    size: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
    writes: { type: 'string', default: '2000' },
    'keep-dir': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings on both sides of this checkout, 3 requests a row, 20 writes (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { before: '.', size: '300', requests: '3', writes: '20' });
requireBuild();
const SIZE = Number(values.size);
const REQUESTS = Number(values.requests);
const out = (s: string) => console.log(s);
const dir = values['keep-dir'] ?? scratchDir('svc-bench-quality-');
out(machineLine());
out(`Catalog: ${SIZE.toLocaleString('en')} listings; before = ${values.before}, after = this checkout.`);
const { beforeDir, beforeFile, afterFile } = seededSides({ dir, before: values.before, size: SIZE, prefix: '' });
const beforePort = 47310;
const afterPort = 47311;
const before = startNode(['--max-semi-space-size=4', join(beforeDir, 'dist/main.js')], discoveryOnlyEnv(beforePort, beforeFile));
const after = startNode(['--max-semi-space-size=4', 'dist/main.js'], discoveryOnlyEnv(afterPort, afterFile));
try {
  await Promise.all([waitReady(beforePort, '/supported'), waitReady(afterPort, '/supported')]);
  const [b, a] = await Promise.all([discoveryCases(beforePort), discoveryCases(afterPort)]);
  const usdc = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';
  // svc's CPU per request (every thread, from /proc), both rounds: on this shared machine it moves far
  // less with the load than a p95 does, so its ratio is the steadier measure of a change.
  const measured = async (side: typeof before, port: number, path: (i: number) => string) => {
    const cpu = cpuSeconds(side.pid!);
    const r = await load(port, 1, REQUESTS, path);
    return { ...r, cpuMs: ((cpuSeconds(side.pid!) - cpu) * 1000) / REQUESTS };
  };
  out(
    '\n| request (1 connection) | before p50 / p95 ms | after p50 / p95 ms | ratio p95 (after / before) | svc CPU ms per request, before / after |',
  );
  out('| --- | --- | --- | --- | --- |');
  for (let k = 0; k < b.cases.length; k++) {
    const [cb, ca] = [b.cases[k]!, a.cases[k]!];
    const runs = { before: [] as number[][], after: [] as number[][] };
    const cpuMs = { before: 0, after: 0 };
    for (let round = 0; round < 2; round++) {
      const rb = await measured(before, beforePort, cb.path);
      const ra = await measured(after, afterPort, ca.path);
      runs.before.push([rb.p50, rb.p95]);
      runs.after.push([ra.p50, ra.p95]);
      cpuMs.before += rb.cpuMs / 2;
      cpuMs.after += ra.cpuMs / 2;
    }
    const best = (r: number[][]) => r.reduce((x, y) => (y[1]! < x[1]! ? y : x));
    const [bp50, bp95] = best(runs.before);
    const [ap50, ap95] = best(runs.after);
    out(
      `| ${ca.name} | ${fmt(bp50!)} / ${fmt(bp95!)} | ${fmt(ap50!)} / ${fmt(ap95!)} | ${(ap95! / bp95!).toFixed(2)} | ${fmt(cpuMs.before)} / ${fmt(cpuMs.after)} |`,
    );
  }
  // Only the after side has the price filter: absolute figures.
  for (const [name, path] of [
    ['search, 1 common term, asset + maxAmount', `/discovery/search?query=${a.common}&limit=20&asset=${usdc}&maxAmount=100000`],
    ['list, asset filter', `/discovery/resources?limit=20&asset=${usdc}`],
    ['list, asset + maxAmount', `/discovery/resources?limit=20&asset=${usdc}&maxAmount=100000`],
  ] as const) {
    const r = await measured(after, afterPort, () => path);
    out(`| ${name} | — | ${fmt(r.p50)} / ${fmt(r.p95)}${r.errors ? ` (${r.errors} errors)` : ''} | — | — / ${fmt(r.cpuMs)} |`);
  }
} finally {
  await stopServers(before, after);
}
// The catalog's write (settle hook) on copies of each file: before's code vs this checkout's.
const writes = (cwd: string, file: string, mode: string) => writeLatency(cwd, file, values.writes, SIZE, mode);
out('\n| settle hook write (writeListing) | before p50 / p95 ms | after p50 / p95 ms | ratio p50 / p95 |');
out('| --- | --- | --- | --- |');
for (const mode of ['steady', 'first']) {
  // Interleaved: before, after, before, after; the better of each side's two runs.
  const runs = [
    writes(beforeDir, beforeFile, mode),
    writes(process.cwd(), afterFile, mode),
    writes(beforeDir, beforeFile, mode),
    writes(process.cwd(), afterFile, mode),
  ];
  const best = (a: { p50: number; p95: number }, b: { p50: number; p95: number }) => (a.p50 <= b.p50 ? a : b);
  const [wb, wa] = [best(runs[0]!, runs[2]!), best(runs[1]!, runs[3]!)];
  out(
    `| ${values.writes} writes, ${mode} | ${fmt(wb.p50)} / ${fmt(wb.p95)} | ${fmt(wa.p50)} / ${fmt(wa.p95)} | ${(wa.p50 / wb.p50).toFixed(2)} / ${(wa.p95 / wb.p95).toFixed(2)} |`,
  );
}
out(`\nLoad average at end: ${loadAverage()}.`);
