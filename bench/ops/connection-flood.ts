/**
 * Health probes while slow connections from several addresses hold svc's descriptors, against a baseline commit.
 *
 * Slow connections from several addresses (docs/BENCHMARKS.md "Slow connections from several
 * addresses"): svc under a 1,024 open-file limit (prlimit) while 5 addresses (127.0.0.2…6) hold
 * 250 slow connections each (half a request head, a header line every 2 s; reopened when closed),
 * and an honest prober from 127.0.0.7 asks GET /health on a new connection every 100 ms (2 s
 * timeout). svc as built here ("after") and svc at an earlier commit ("before",
 * bench/lib/baseline-build.ts) run side by side with the default configuration, flooded in turns.
 * Reported: the prober's success rate and latency, svc's open descriptors (from /proc), load.
 *
 *   npm run build && npx tsx bench/ops/connection-flood.ts [--before d4b1734] [--seconds 30] [--rounds 2]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { freePortPair } from '../../src/dev/postgres.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { fmt, loadAverage, machineLine, pct, requireBuild, waitReady } from '../lib/http-load.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: 'd4b1734' },
    seconds: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '2' },
    per: { type: 'string', default: '250' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: this checkout on both sides, one 4 s round of 20 slow connections an address (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { before: '.', seconds: '4', rounds: '1', per: '20' });
requireBuild();
const PHASE_MS = Number(values.seconds) * 1000;
const SLOW = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
const PROBER = '127.0.0.7';
const out = (s: string) => console.log(s);
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-conn-'));
const beforeDir = baselineBuild(values.before);

out(machineLine());
out(
  `svc under prlimit --nofile=1024:1024, default configuration; ${SLOW.length} addresses × ${values.per} slow connections; ` +
    `prober GET /health from ${PROBER}, a new connection every 100 ms, 2 s timeout. before = ${values.before}, after = this checkout.`,
);

function startSvc(cwd: string, port: number, name: string): ChildProcess {
  return spawn('prlimit', ['--nofile=1024:1024', process.execPath, '--max-semi-space-size=4', 'dist/main.js'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      DB_PATH: join(dir, `${name}.sqlite`),
      NETWORK: 'stellar:testnet',
      RPC_URL: 'http://127.0.0.1:9',
      SUBMITTER_SECRET: Keypair.random().secret(),
      LOG_LEVEL: 'error',
    },
  });
}

function probe(port: number): Promise<{ ok: boolean; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/health', localAddress: PROBER, agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.once('end', () => resolve({ ok: res.statusCode === 200, ms: performance.now() - started }));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve({ ok: false, ms: performance.now() - started }));
    req.end();
  });
}

const descriptors = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
};

async function phase(port: number, pid: number) {
  const flood = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/ops/lib/connection-flood-client.ts', String(port), String(PHASE_MS), values.per, ...SLOW],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let floodOut = '';
  flood.stdout.on('data', (c: Buffer) => (floodOut += c.toString()));
  const exited = new Promise<void>((r) => flood.once('exit', () => r()));
  let maxFds = 0;
  const fds: number[] = [];
  const sampler = setInterval(() => {
    const n = descriptors(pid);
    fds.push(n);
    maxFds = Math.max(maxFds, n);
  }, 250);
  await new Promise((r) => setTimeout(r, values.quick ? 1_500 : 5_000));
  const results: Array<{ ok: boolean; ms: number }> = [];
  const end = performance.now() + PHASE_MS - (values.quick ? 2_000 : 7_000);
  while (performance.now() < end) {
    results.push(await probe(port));
    await new Promise((r) => setTimeout(r, 100));
  }
  await exited;
  clearInterval(sampler);
  const counts = JSON.parse(floodOut.trim().split('\n').pop() ?? '{}') as { opened: number; closedByServer: number; failed: number };
  return { results, maxFds, medianFds: pct(fds, 50), flood: counts, load: loadAverage() };
}

// Kernel-picked ports: ports drawn at random could be other processes' ephemeral ones.
const [afterPort, beforePort] = await freePortPair();
const after = startSvc(process.cwd(), afterPort, 'after');
const before = startSvc(beforeDir, beforePort, 'before');
try {
  await Promise.all([waitReady(afterPort, '/health'), waitReady(beforePort, '/health')]);
  out(
    '\n| round | server | prober 200 | prober p50 / p95 ms (answered) | svc fds median / max | slow connections opened / closed by svc | load average |',
  );
  out('|---|---|---|---|---|---|---|');
  const all = { before: { ok: 0, n: 0, ms: [] as number[] }, after: { ok: 0, n: 0, ms: [] as number[] } };
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const [name, port, pid] of [
      ['before', beforePort, before.pid!],
      ['after', afterPort, after.pid!],
    ] as const) {
      const r = await phase(port, pid);
      const answered = r.results.filter((x) => x.ok).map((x) => x.ms);
      all[name].ok += answered.length;
      all[name].n += r.results.length;
      all[name].ms.push(...answered);
      out(
        `| ${round} | ${name} | ${answered.length} of ${r.results.length} | ${answered.length ? `${fmt(pct(answered, 50))} / ${fmt(pct(answered, 95))}` : '–'} | ${r.medianFds} / ${r.maxFds} | ${r.flood.opened} / ${r.flood.closedByServer} | ${r.load} |`,
      );
      // Let the closed connections drain before the other server's turn.
      await new Promise((res) => setTimeout(res, values.quick ? 200 : 2_000));
    }
  }
  const rate = (x: { ok: number; n: number }) => ((100 * x.ok) / Math.max(1, x.n)).toFixed(1);
  out(
    `\nAll rounds: prober success before ${all.before.ok} of ${all.before.n} (${rate(all.before)} %), after ${all.after.ok} of ${all.after.n} (${rate(all.after)} %); ` +
      `p95 of answered probes before ${all.before.ms.length ? fmt(pct(all.before.ms, 95)) : '–'} ms, after ${all.after.ms.length ? fmt(pct(all.after.ms, 95)) : '–'} ms.`,
  );
} finally {
  after.kill('SIGKILL');
  before.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
