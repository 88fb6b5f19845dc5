/**
 * Price-filtered list pages (asset + maxAmount) over HTTP against a baseline commit.
 *
 * `GET /discovery/resources` with `asset` + `maxAmount`, alone and with `type`, `network` or
 * `scheme` (the price index, docs/CATALOG.md "List") against an earlier commit (`--before`: by
 * default the one before the index kept the listing's type), side by side over HTTP
 * (docs/BENCHMARKS.md "Catalog price filters"). Each side seeds its own catalog file with its own code (the same generated corpus,
 * bench/lib/catalog-corpus.ts: one asset, amounts spread evenly over 1,000–1,001,000 base units, so
 * nearly every listing has its own price: the price index's worst case), runs its own
 * `dist/main.js` as a separate process, and is measured with the same client, alternating before
 * and after per request kind (two rounds, the better kept) so machine load hits both. Then the
 * catalog's part of settle latency (writeListing, bench/catalog/lib/catalog-write-latency.ts) on each.
 *
 *   npm run build && npx tsx bench/catalog/catalog-price.ts [--before COMMIT] [--size 100000] [--requests 200] [--keep-dir DIR]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { discoveryOnlyEnv, seededSides, stopServers, writeLatency } from './lib/catalog-sides.ts';
import { fmt, load, loadAverage, machineLine, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: '334afb8' },
    size: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
    writes: { type: 'string', default: '1000' },
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
const dir = values['keep-dir'] ?? scratchDir('svc-bench-price-');
out(machineLine());
out(`Catalog: ${SIZE.toLocaleString('en')} listings; before = ${values.before}, after = this checkout.`);
const { beforeDir, beforeFile, afterFile } = seededSides({ dir, before: values.before, size: SIZE, prefix: 'price-' });
const usdc = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';
const list = (query: string) => `/discovery/resources?limit=20&asset=${usdc}&${query}`;
const cases: Array<[string, (i: number) => string]> = [
  ['maxAmount 900,000 (about 90% match)', (i) => list(`maxAmount=900000&offset=${(i * 7) % 200}`)],
  ['maxAmount 100,000 (about 10% match)', (i) => list(`maxAmount=100000&offset=${(i * 7) % 200}`)],
  ['maxAmount 2,000 (about 0.1% match)', () => list('maxAmount=2000')],
  ['maxAmount 100,000, offset 5,000', () => list('maxAmount=100000&offset=5000')],
  ['maxAmount 100,000 + type=http', () => list('maxAmount=100000&type=http')],
  ['maxAmount 100,000 + type=mcp', () => list('maxAmount=100000&type=mcp')],
  ['maxAmount 100,000 + type=http, offset 5,000', () => list('maxAmount=100000&type=http&offset=5000')],
  // The network's own index key since catalog migration 13 (before it, the per-row check of the accepted entries).
  ['maxAmount 100,000 + network', () => list('maxAmount=100000&network=stellar:pubnet')],
  ['maxAmount 900,000 + network', (i) => list(`maxAmount=900000&network=stellar:pubnet&offset=${(i * 7) % 200}`)],
  ['maxAmount 100,000 + network + type=http', () => list('maxAmount=100000&network=stellar:pubnet&type=http')],
  ['maxAmount 100,000 + network, offset 5,000', () => list('maxAmount=100000&network=stellar:testnet&offset=5000')],
  // scheme keeps the per-row check on both sides (docs/CATALOG.md "List").
  ['maxAmount 100,000 + scheme', () => list('maxAmount=100000&scheme=exact')],
];
const beforePort = 47320;
const afterPort = 47321;
const before = startNode(['--max-semi-space-size=4', join(beforeDir, 'dist/main.js')], discoveryOnlyEnv(beforePort, beforeFile));
const after = startNode(['--max-semi-space-size=4', 'dist/main.js'], discoveryOnlyEnv(afterPort, afterFile));
try {
  await Promise.all([waitReady(beforePort, '/supported'), waitReady(afterPort, '/supported')]);
  out('\n| list, asset + (1 connection) | before p50 / p95 ms | after p50 / p95 ms | ratio p95 (after / before) |');
  out('| --- | --- | --- | --- |');
  for (const [name, path] of cases) {
    // As many requests on both sides: the baseline is a price index too, as fast, and its p95 as noisy.
    const runs = { before: [] as number[][], after: [] as number[][] };
    for (let round = 0; round < 2; round++) {
      const rb = await load(beforePort, 1, REQUESTS, path);
      const ra = await load(afterPort, 1, REQUESTS, path);
      runs.before.push([rb.p50, rb.p95]);
      runs.after.push([ra.p50, ra.p95]);
    }
    const best = (r: number[][]) => r.reduce((x, y) => (y[1]! < x[1]! ? y : x));
    const [bp50, bp95] = best(runs.before);
    const [ap50, ap95] = best(runs.after);
    out(`| ${name} | ${fmt(bp50!)} / ${fmt(bp95!)} | ${fmt(ap50!)} / ${fmt(ap95!)} | ${(ap95! / bp95!).toFixed(2)} |`);
  }
} finally {
  await stopServers(before, after);
}
// The catalog's write (settle hook) on copies of each file: before's code vs this checkout's.
const writes = (cwd: string, file: string) => writeLatency(cwd, file, values.writes, SIZE, 'steady');
// Interleaved: before, after, before, after; the better of each side's two runs.
const runs = [
  writes(beforeDir, beforeFile),
  writes(process.cwd(), afterFile),
  writes(beforeDir, beforeFile),
  writes(process.cwd(), afterFile),
];
const best = (a: { p50: number; p95: number }, b: { p50: number; p95: number }) => (a.p50 <= b.p50 ? a : b);
const [wb, wa] = [best(runs[0]!, runs[2]!), best(runs[1]!, runs[3]!)];
out('\n| settle hook write (writeListing) | before p50 / p95 ms | after p50 / p95 ms | ratio p50 / p95 |');
out('| --- | --- | --- | --- |');
out(
  `| ${values.writes} writes, steady | ${fmt(wb.p50)} / ${fmt(wb.p95)} | ${fmt(wa.p50)} / ${fmt(wa.p95)} | ${(wa.p50 / wb.p50).toFixed(2)} / ${(wa.p95 / wb.p95).toFixed(2)} |`,
);
out(`\nLoad average at end: ${loadAverage()}.`);
