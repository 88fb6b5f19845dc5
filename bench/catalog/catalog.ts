/**
 * Search and list p50/p95 over HTTP beside a bare SQLite server, and /verify beside a search flood.
 *
 * Catalog benchmark over HTTP. For each size, a generated corpus (bench/lib/catalog-corpus.ts) is
 * seeded into a file through the store; then svc (as `npm start` runs it, scripts/start.sh, in a
 * separate process; run `npm run build` first) and a bare
 * node:http + node:sqlite server (bench/catalog/lib/catalog-baseline.ts, same file, same index queries) are
 * started side by side and measured with the same client: search (2 terms, 1 common term, a
 * cursor page) and list (no filter, network filter, payTo filter, a deep offset), p50/p95 at 1 and
 * 16 connections. Then the mixed run: POST /verify throughput alone and while 16 connections
 * search from another client process (bench/catalog/lib/catalog-flood.ts), and svc's peak RSS during the load.
 *
 *   npm run build && npm run bench -- catalog [--sizes 10000,100000] [--requests 200] [--keep-dir DIR] [--quick]
 *     [--mixed-only] [--mixed-rounds N]
 *
 * --mixed-only skips the request table; --mixed-rounds N runs N rounds of the mixed run (each five
 * alternating pairs of 1 s windows, /verify alone then beside the flood) and reports each round's
 * ratio and their median.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { discoveryCases, seedCorpus } from '../lib/catalog-corpus.ts';
import { discoveryOnlyEnv, floodSummary, rejectedVerifyBody } from './lib/catalog-sides.ts';
import {
  cpuSeconds,
  fmt,
  load,
  loadAverage,
  machineLine,
  pct,
  request,
  requireBuild,
  rssMb,
  startNode as start,
  startNpmStart,
  threadCpuSeconds,
  waitReady,
} from '../lib/http-load.ts';
import { freePortPair } from '../../src/dev/postgres.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    requests: { type: 'string', default: '200' },
    'keep-dir': { type: 'string' },
    'mixed-only': { type: 'boolean', default: false },
    'mixed-rounds': { type: 'string', default: '1' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, 5 requests a row, one short mixed round (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { sizes: '300', requests: '5', 'mixed-rounds': '1' });
const WINDOW_MS = values.quick ? 100 : 1000;
const PAIRS = values.quick ? 1 : 5;
const sizes = values.sizes.split(',').map(Number);
requireBuild();
const REQUESTS = Number(values.requests);
const dir = values['keep-dir'] ?? mkdtempSync(join(tmpdir(), 'svc-bench-catalog-'));
mkdirSync(dir, { recursive: true });

const out = (s: string) => console.log(s);
out(machineLine());

for (const size of sizes) {
  const dbPath = join(dir, `catalog-${size}.sqlite`);
  if (!existsSync(dbPath)) {
    const t0 = performance.now();
    seedCorpus(dbPath, size, (n) => process.stderr.write(`seeded ${n}\r`));
    out(`\n### ${size.toLocaleString('en')} listings (seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  } else out(`\n### ${size.toLocaleString('en')} listings (seeded file reused)`);
  // Free ports, not fixed ones: a fixed port may be another process's ephemeral one.
  const [svcPort, basePort] = await freePortPair();
  // The corpus is dated from 2026-01-01: discoveryOnlyEnv keeps all of it visible (LISTING_TTL_DAYS).
  // svc as `npm start` runs it (its Node flags and MALLOC_ARENA_MAX=2), so its peak RSS is what ships.
  const svc = startNpmStart(discoveryOnlyEnv(svcPort, dbPath));
  const base = start(['--import', 'tsx', 'bench/catalog/lib/catalog-baseline.ts', dbPath, String(basePort)], {});
  try {
    await Promise.all([waitReady(svcPort, '/supported'), waitReady(basePort, '/discovery/resources')]);
    const { cases, two, common, payTo } = await discoveryCases(svcPort);
    const table = values['mixed-only'] ? [] : cases;
    if (table.length) {
      out(
        '\n| request | svc p50 / p95 ms, 1 conn | baseline p50 / p95, 1 conn | ratio p95 | svc p50 / p95, 16 conns | baseline p50 / p95, 16 conns |',
      );
      out('|---|---|---|---|---|---|');
    }
    for (const { name, path, baselinePath } of table) {
      const b1 = await load(basePort, 1, REQUESTS, baselinePath ?? path);
      const s1 = await load(svcPort, 1, REQUESTS, path);
      const b16 = await load(basePort, 16, REQUESTS * 2, baselinePath ?? path);
      const s16 = await load(svcPort, 16, REQUESTS * 2, path);
      const failed = [
        s1.errors + s16.errors ? `svc ${s1.errors + s16.errors}` : '',
        b1.errors + b16.errors ? `baseline ${b1.errors + b16.errors}` : '',
      ].filter(Boolean);
      const errs = failed.length ? ` (non-200 or failed: ${failed.join(', ')})` : '';
      out(
        `| ${name}${errs} | ${fmt(s1.p50)} / ${fmt(s1.p95)} | ${fmt(b1.p50)} / ${fmt(b1.p95)} | ${(s1.p95 / b1.p95).toFixed(1)}× | ${fmt(s16.p50)} / ${fmt(s16.p95)} | ${fmt(b16.p50)} / ${fmt(b16.p95)} |`,
      );
    }

    // Mixed run: /verify alone, then beside 16 search connections (the payload is refused at decode: no RPC, all event loop).
    const verifyBody = rejectedVerifyBody(payTo);
    const verifyFor = async (ms: number) => {
      const until = performance.now() + ms;
      let n = 0;
      const times: number[] = [];
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (performance.now() < until) {
            const t0 = performance.now();
            const { status } = await request(svcPort, 'POST', '/verify', verifyBody);
            if (status === 200) n++;
            times.push(performance.now() - t0);
          }
        }),
      );
      return { rps: n / (ms / 1000), p50: pct(times, 50) };
    };
    const ratios: number[] = [];
    // A warm-up, so the first round's /verify alone does not run on a cold JIT.
    await verifyFor(values.quick ? 200 : 3000);
    // The flood comes from another client process, switched on and off through its stdin. Each
    // round alternates 1 s of /verify alone and 1 s beside the flood, five times, so a drift of
    // the machine's speed (large on a shared 2-core VM) weighs on both sides alike.
    const flood = start(
      ['--import', 'tsx', 'bench/catalog/lib/catalog-flood.ts', String(svcPort), '16', '0', two, common],
      {},
      { stdin: true },
    );
    const floodDone = floodSummary(flood);
    const switchFlood = (line: 'on' | 'off' | 'stop') => flood.stdin!.write(`${line}\n`);
    await new Promise((r) => setTimeout(r, 1500)); // the flood process starts (tsx)
    let floodSeconds = 0;
    // Where the CPU went in each kind of window, in seconds: svc's main thread (where /verify runs),
    // svc's other threads (the catalog readers, at a lower priority), the flood client and this
    // process (the /verify client). On 2 cores the clients share the machine with svc: this is what
    // the ratio is the reason of.
    const cpu = {
      alone: { main: 0, others: 0, flood: 0, client: 0, wall: 0 },
      mixed: { main: 0, others: 0, flood: 0, client: 0, wall: 0 },
    };
    const cpuNow = () => {
      const svcThreads = threadCpuSeconds(svc.pid!);
      const self = process.cpuUsage();
      return { ...svcThreads, flood: cpuSeconds(flood.pid!), client: (self.user + self.system) / 1e6, wall: performance.now() / 1000 };
    };
    const timedWindow = async (kind: 'alone' | 'mixed') => {
      const before = cpuNow();
      const result = await verifyFor(WINDOW_MS);
      const after = cpuNow();
      for (const key of ['main', 'others', 'flood', 'client', 'wall'] as const) cpu[kind][key] += after[key] - before[key];
      return result;
    };
    for (let round = 0; round < Number(values['mixed-rounds']); round++) {
      const alone: Array<{ rps: number; p50: number }> = [];
      const mixed: Array<{ rps: number; p50: number }> = [];
      for (let pair = 0; pair < PAIRS; pair++) {
        alone.push(await timedWindow('alone'));
        switchFlood('on');
        await new Promise((r) => setTimeout(r, 200));
        mixed.push(await timedWindow('mixed'));
        switchFlood('off');
        floodSeconds += WINDOW_MS / 1000 + 0.2;
        await new Promise((r) => setTimeout(r, 100));
      }
      const mean = (xs: Array<{ rps: number }>) => xs.reduce((sum, x) => sum + x.rps, 0) / xs.length;
      const median = (xs: Array<{ p50: number }>) =>
        pct(
          xs.map((x) => x.p50),
          50,
        );
      ratios.push(mean(mixed) / mean(alone));
      out(
        `\nMixed: /verify (4 connections) alone ${mean(alone).toFixed(0)} req/s (p50 ${fmt(median(alone))} ms); with 16 search connections ${mean(mixed).toFixed(0)} req/s (p50 ${fmt(median(mixed))} ms) = **${(mean(mixed) / mean(alone)).toFixed(2)}×** (target ≥ 0.9×, every search answered; 5 alternating pairs of 1 s windows).`,
      );
    }
    switchFlood('stop');
    const { searches, busy } = await floodDone;
    out(`Searches served while the flood was on: ${(searches / floodSeconds).toFixed(0)}/s; ${busy} answered 503 svc_catalog_busy.`);
    const share = (kind: 'alone' | 'mixed', key: 'main' | 'others' | 'flood' | 'client') =>
      `${((100 * cpu[kind][key]) / cpu[kind].wall).toFixed(0)} %`;
    for (const kind of ['alone', 'mixed'] as const)
      out(
        `CPU (% of one core) with /verify ${kind === 'alone' ? 'alone' : 'beside the flood'}: svc main thread ${share(kind, 'main')}, svc other threads ${share(kind, 'others')}, flood client ${share(kind, 'flood')}, /verify client ${share(kind, 'client')}.`,
      );
    if (ratios.length > 1)
      out(
        `\nMixed ratio over ${ratios.length} rounds: median **${pct(ratios, 50).toFixed(2)}×** (${ratios.map((r) => r.toFixed(2)).join(', ')}).`,
      );
    // The kernel's high-water mark (VmHWM), what the goal names: sampling VmRSS misses short peaks.
    out(
      `svc peak RSS under this load (VmHWM): **${rssMb(svc.pid!, 'VmHWM').toFixed(0)} MiB** (as npm start runs it: scripts/start.sh's Node flags and MALLOC_ARENA_MAX=2). Load average now ${loadAverage()}.`,
    );
  } finally {
    svc.kill('SIGTERM');
    base.kill('SIGTERM');
  }
}
if (!values['keep-dir']) rmSync(dir, { recursive: true, force: true });
