/**
 * svc's memory under the catalog search load, part by part (heap, threads, malloc arenas).
 *
 * svc's memory under the 100k-catalog search load, part by part (docs/BENCHMARKS.md "Catalog on
 * SQLite at 100k and 1M", goal ≤ 250 MiB peak). Each variant is a separate svc process on the same
 * seeded file (bench/lib/catalog-corpus.ts), in turn, round after round: the `before` commit's build
 * started as bench/catalog/catalog.ts started svc for its figures up to 2026-11-25 (`node
 * --max-semi-space-size=4 dist/main.js`, no MALLOC_ARENA_MAX), the same build under `npm start` (scripts/start.sh, which adds MALLOC_ARENA_MAX=2)
 * and this checkout's build under `npm start` (with `--env` added, to try a setting). Each gets the
 * load of bench/catalog/catalog.ts: its request table (1 and 16 connections) then /verify beside 16
 * search connections (bench/catalog/lib/catalog-flood.ts) for --mixed-seconds.
 *
 * Reported per process: peak RSS (VmHWM), and at the end of the load RssAnon / RssFile / RssShmem
 * (/proc/PID/status), glibc's malloc (the brk heap and the other arenas' 64 MiB regions, from
 * /proc/PID/smaps), each thread's V8 heap (bench/catalog/lib/thread-heap-probe.ts, preloaded) and the
 * process's threads; and the 1-connection p50 / p95 of each request kind.
 *
 *   npm run build && npx tsx bench/catalog/catalog-rss.ts --keep-dir DIR [--size 100000] [--before HEAD] [--rounds 2]
 *     [--requests 200] [--mixed-seconds 10] [--env KEY=VALUE]… [--skip-node-flags]
 *
 * --skip-node-flags leaves out the first process (the `before` build started with node flags
 * only), to compare the two `npm start` processes alone.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { baselineBuild } from '../lib/baseline-build.ts';
import { discoveryCases, seedCorpus } from '../lib/catalog-corpus.ts';
import { discoveryOnlyEnv, floodSummary, rejectedVerifyBody, stopServers } from './lib/catalog-sides.ts';
import { fmt, load, loadAverage, machineLine, pct, request, requireBuild, startNode, startNpmStart, waitReady } from '../lib/http-load.ts';
import { freePort } from '../../src/dev/postgres.ts';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    before: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '2' },
    requests: { type: 'string', default: '200' },
    'mixed-seconds': { type: 'string', default: '10' },
    'keep-dir': { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
    'skip-node-flags': { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, this checkout's build as the before side, one round of 3 requests a row and 1 s of mixed load (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { size: '300', before: '.', rounds: '1', requests: '3', 'mixed-seconds': '1' });
requireBuild();
const SIZE = Number(values.size);
const REQUESTS = Number(values.requests);
const MiB = 1024 * 1024;
const dir = values['keep-dir'] ?? mkdtempSync(join(tmpdir(), 'svc-bench-rss-'));
mkdirSync(dir, { recursive: true });
const dbPath = join(dir, `catalog-${SIZE}.sqlite`);
if (!existsSync(dbPath)) seedCorpus(dbPath, SIZE, (n) => process.stderr.write(`seeded ${n}\r`));
const beforeDir = baselineBuild(values.before);
const extraEnv = Object.fromEntries(values.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const heapDir = mkdtempSync(join(tmpdir(), 'svc-thread-heap-'));
// The probe is preloaded as JavaScript, its types stripped here: a .ts preload makes every thread
// load Node's TypeScript stripper, 30-35 MiB of svc's peak that svc itself never has (2026-11-25).
const probe = join(heapDir, 'thread-heap-probe.mjs');
writeFileSync(probe, stripTypeScriptTypes(readFileSync(resolve('bench/catalog/lib/thread-heap-probe.ts'), 'utf8')));

interface Variant {
  name: string;
  cwd: string;
  /** `node` flags as bench/catalog/catalog.ts gives them, or scripts/start.sh as `npm start` runs it. */
  start: 'node-flags' | 'npm-start';
  env: Record<string, string>;
}
const variants: Variant[] = (
  [
    { name: `${values.before}, node --max-semi-space-size=4 dist/main.js`, cwd: beforeDir, start: 'node-flags', env: {} },
    { name: `${values.before} under npm start`, cwd: beforeDir, start: 'npm-start', env: {} },
    {
      name: `this checkout under npm start${values.env.length ? ` + ${values.env.join(' ')}` : ''}`,
      cwd: process.cwd(),
      start: 'npm-start',
      env: extraEnv,
    },
  ] satisfies Variant[]
).filter((v) => !(values['skip-node-flags'] && v.start === 'node-flags'));

const kib = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) / 1024;

/** glibc malloc's resident memory: the brk heap, and the other arenas (each a 64 MiB-aligned region of 64 MiB). */
function mallocMiB(pid: number): { brk: number; arenas: number; arenaCount: number } {
  const text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  let brk = 0;
  const regions: Array<{ start: bigint; end: bigint; rss: number; name: string }> = [];
  for (const block of text.split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+[ \t]*(.*)$/m.exec(block);
    if (!m) continue;
    const rss = kib(block, 'Rss');
    if (m[3] === '[heap]') brk += rss;
    regions.push({ start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), rss, name: m[3]! });
  }
  const ARENA = 64n * BigInt(MiB);
  let arenas = 0;
  let arenaCount = 0;
  for (let i = 0; i < regions.length; i++) {
    const r = regions[i]!;
    if (r.name !== '' || r.start % ARENA !== 0n) continue;
    // An arena's region: anonymous mappings (its used part, then its reserve) ending exactly 64 MiB on.
    let rss = 0;
    let j = i;
    while (j < regions.length && regions[j]!.name === '' && regions[j]!.end <= r.start + ARENA) rss += regions[j++]!.rss;
    if (regions[j - 1]!.end === r.start + ARENA) {
      arenas += rss;
      arenaCount++;
      i = j - 1;
    }
  }
  return { brk, arenas, arenaCount };
}

interface ThreadHeap {
  role: string;
  threadId: number;
  now: Record<string, number>;
  peak: Record<string, number>;
}
function threadHeaps(pid: number): ThreadHeap[] {
  return readdirSync(heapDir)
    .filter((f) => f.startsWith(`${pid}-`) && f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(heapDir, f), 'utf8')) as ThreadHeap)
    .sort((a, b) => a.threadId - b.threadId);
}

function startSvc(v: Variant, port: number): ChildProcess {
  const env = {
    ...discoveryOnlyEnv(port, dbPath),
    ...v.env,
    THREAD_HEAP_DIR: heapDir,
    NODE_OPTIONS: `${v.env.NODE_OPTIONS ?? ''} --import ${probe}`.trim(),
  };
  if (v.start === 'node-flags') return startNode(['--max-semi-space-size=4', join(v.cwd, 'dist/main.js')], env);
  return startNpmStart(env, v.cwd);
}

/** bench/catalog/catalog.ts's load on one process; the p95 of each request kind at 1 connection. */
async function catalogLoad(
  port: number,
): Promise<{ rows: Array<{ name: string; p50: number; p95: number }>; verifyRps: number; searchRps: number }> {
  const { cases, two, common, payTo } = await discoveryCases(port);
  const rows = [];
  for (const c of cases) {
    const one = await load(port, 1, REQUESTS, c.path);
    await load(port, 16, REQUESTS * 2, c.path);
    rows.push({ name: c.name, p50: one.p50, p95: one.p95 });
  }
  const verifyBody = rejectedVerifyBody(payTo);
  const ms = Number(values['mixed-seconds']) * 1000;
  const flood = startNode(['--import', 'tsx', 'bench/catalog/lib/catalog-flood.ts', String(port), '16', String(ms), two, common], {});
  const floodDone = floodSummary(flood);
  const until = performance.now() + ms;
  let verified = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < until) if ((await request(port, 'POST', '/verify', verifyBody)).status === 200) verified++;
    }),
  );
  const { searches } = await floodDone;
  return { rows, verifyRps: verified / (ms / 1000), searchRps: searches / (ms / 1000) };
}

const out = (s: string) => console.log(s);
out(machineLine());
out(`Catalog: ${SIZE.toLocaleString('en')} listings (${dbPath}); before = ${values.before}.`);
const results = new Map<string, string[]>();
const latency = new Map<string, Map<string, number[][]>>();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const v of variants) {
    // A free port, not a fixed one: a fixed port may be another process's ephemeral one.
    const svcPort = await freePort();
    const svc = startSvc(v, svcPort);
    try {
      await waitReady(svcPort, '/supported');
      const loaded = await catalogLoad(svcPort);
      const status = readFileSync(`/proc/${svc.pid}/status`, 'utf8');
      const malloc = mallocMiB(svc.pid!);
      const heaps = threadHeaps(svc.pid!);
      const heapText = heaps
        .map(
          (h) =>
            `${h.role} ${(h.now.heap! / MiB).toFixed(0)} (peak ${(h.peak.heap! / MiB).toFixed(0)}: young ${(h.peak.new_space! / MiB).toFixed(0)}, ` +
            `old ${(h.peak.old_space! / MiB).toFixed(0)}; external ${(h.peak.external! / MiB).toFixed(0)})`,
        )
        .join('; ');
      const line =
        `| ${v.name} | ${round + 1} | ${kib(status, 'VmHWM').toFixed(0)} | ${kib(status, 'VmRSS').toFixed(0)} | ` +
        `${kib(status, 'RssAnon').toFixed(0)} / ${kib(status, 'RssFile').toFixed(0)} / ${kib(status, 'RssShmem').toFixed(0)} | ` +
        `${malloc.brk.toFixed(0)} + ${malloc.arenas.toFixed(0)} (${malloc.arenaCount} arenas) | ${heapText} | ` +
        `${readdirSync(`/proc/${svc.pid}/task`).length} | ${loaded.verifyRps.toFixed(0)} / ${loaded.searchRps.toFixed(0)} |`;
      results.set(v.name, [...(results.get(v.name) ?? []), line]);
      const byCase = latency.get(v.name) ?? new Map<string, number[][]>();
      for (const r of loaded.rows) byCase.set(r.name, [...(byCase.get(r.name) ?? []), [r.p50, r.p95]]);
      latency.set(v.name, byCase);
      process.stderr.write(`${line}\n`);
    } finally {
      await stopServers(svc);
    }
  }
}
out(
  '\n| svc | round | peak RSS (VmHWM) MiB | RSS at end | RssAnon / RssFile / RssShmem | malloc: brk + arenas | V8 heap per thread, MiB at end (peak) | threads | /verify req/s / searches/s beside |',
);
out('|---|---|---|---|---|---|---|---|---|');
for (const v of variants) for (const line of results.get(v.name) ?? []) out(line);
out(`\n| request (1 connection), p50 / p95 ms, median over rounds | ${variants.map((v) => v.name).join(' | ')} |`);
out(`|---|${variants.map(() => '---').join('|')}|`);
for (const name of latency.get(variants[0]!.name)?.keys() ?? []) {
  const cells = variants.map((v) => {
    const runs = latency.get(v.name)?.get(name) ?? [];
    return `${fmt(
      pct(
        runs.map((r) => r[0]!),
        50,
      ),
    )} / ${fmt(
      pct(
        runs.map((r) => r[1]!),
        50,
      ),
    )}`;
  });
  out(`| ${name} | ${cells.join(' | ')} |`);
}
out(`\nLoad average at end: ${loadAverage()}.`);
rmSync(heapDir, { recursive: true, force: true });
if (!values['keep-dir']) rmSync(dir, { recursive: true, force: true });
