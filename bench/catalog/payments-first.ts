/**
 * The payment path first, search still fair (docs/BENCHMARKS.md "Payments first"), against a baseline commit.
 *
 * Three loads on svc as built here ("after") and svc at an earlier commit ("before",
 * bench/lib/baseline-build.ts), each serving a copy of the same corpus seeded by its own code
 * (bench/catalog/lib/catalog-sides.ts seededSides: an earlier commit cannot open a catalog of a later
 * schema, and would answer every search 500) in its own process on one devnet (in this process),
 * side by side. Every client runs in a process of its own
 * (bench/catalog/lib/closed-loop-client.ts), closed loop over keep-alive connections, and is
 * measured in pairs of windows (alone, then beside the flood), the two servers in turn, so a drift
 * of the machine's speed weighs on both sides and both kinds of window alike:
 *
 * - a valid POST /verify (4 connections, one address; the devnet simulates it) alone, then beside
 *   16 search connections (16 loopback addresses) of a short query, then of a 2,048-character one:
 *   /verify's rate and p50 / p95 as a ratio of alone, and what the flood got answered;
 * - an honest client's search (1 connection, 50 ms apart) alone, then beside 16 connections of a
 *   rejected POST /verify (requirements the payload does not pay): how many were answered 200, p50 / p95.
 *
 *   npm run build && npx tsx bench/catalog/payments-first.ts [--listings 20000] [--before 2f03a27] [--window 2] [--pairs 6]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { freePortPair } from '../../src/dev/postgres.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { vocabularyWord } from '../lib/catalog-corpus.ts';
import { fmt, loadAverage, machineLine, pct, requireBuild, waitReady } from '../lib/http-load.ts';
import { exactTerms } from '../lib/payments.ts';
import { scratchDir } from '../lib/scratch-dir.ts';
import { copySqlite } from '../lib/sqlite-copy.ts';
import { seededSides } from './lib/catalog-sides.ts';

const { values } = parseArgs({
  options: {
    listings: { type: 'string', default: '20000' },
    before: { type: 'string', default: '2f03a27' },
    window: { type: 'string', default: '2' },
    pairs: { type: 'string', default: '6' },
    'keep-dir': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, this checkout on both sides, one pair of 0.5 s windows (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { listings: '300', before: '.', window: '0.5', pairs: '1' });
requireBuild();
const LISTINGS = Number(values.listings);
const WINDOW_MS = Number(values.window) * 1000;
const PAIRS = Number(values.pairs);
const FLOODERS = Array.from({ length: 16 }, (_, k) => `127.0.0.${10 + k}`);
const out = (s: string) => console.log(s);

const dir = values['keep-dir'] ?? scratchDir('svc-bench-payments-first-');
mkdirSync(dir, { recursive: true });
const { beforeDir, beforeFile, afterFile } = seededSides({ dir, before: values.before, size: LISTINGS, prefix: 'payments-first-' });

const devnet = await startDevnet({ ledgerMs: 0 });
const seller = await devnet.createAccount({});
const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 3600);
const payload = await sign(await buyer(10_000_000n));
const validVerify = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
const rejectedVerify = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: { ...requirements, amount: '999' } });

const shortQuery = `/discovery/search?query=${encodeURIComponent(`${vocabularyWord(3)} ${vocabularyWord(40)}`)}&limit=20`;
/** 2,048 characters of the corpus's words (the longest query accepted). */
const longText = (() => {
  let text = '';
  for (let k = 0; text.length < 2048; k++) text += `${vocabularyWord(k % 400)} `;
  return text.slice(0, 2048).trimEnd();
})();
const longQuery = `/discovery/search?query=${encodeURIComponent(longText)}&limit=20`;

out(machineLine());
out(`Catalog: ${LISTINGS.toLocaleString('en')} listings (bench/lib/catalog-corpus.ts); before = ${values.before}, after = this checkout.`);

const servers: ChildProcess[] = [];
const clients: Array<ReturnType<typeof client>> = [];
let stopping = false;
function stop() {
  stopping = true;
  for (const c of clients) c.stop();
  for (const s of servers) s.kill('SIGKILL');
}

/** Starts one side's svc on a fresh copy of its catalog; a server that exits before the run's end ends it: every figure after would be its connection errors. */
async function startSvc(cwd: string, port: number, name: string, seeded: string) {
  const dbPath = join(dir, `${name}.sqlite`);
  copySqlite(seeded, dbPath);
  const submitter = await devnet.createAccount({ usdcTrustline: false });
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      DB_PATH: dbPath,
      RPC_URL: devnet.rpcUrl,
      SUBMITTER_SECRET: submitter.secret,
      LOG_LEVEL: 'error',
      LISTING_TTL_DAYS: '36500',
      LIVENESS_CHECKS_PER_MINUTE: '0',
    },
  });
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`svc ${name} exited (${signal ?? `code ${code}`}) before the run's end; no figures.`);
    stop();
    process.exit(1);
  });
  return child;
}

interface Window {
  ok: number;
  busy: number;
  other: number;
  seconds: number;
  times: number[];
}

/** A client process (bench/catalog/lib/closed-loop-client.ts) driven line by line. */
function client(load: Record<string, unknown>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/catalog/lib/closed-loop-client.ts', JSON.stringify(load)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ask = async (command: string): Promise<Window> => {
    child.stdin.write(`${command}\n`);
    return JSON.parse(String((await lines.next()).value)) as Window;
  };
  return {
    measure: (ms: number) => ask(`measure ${ms}`),
    on: () => void child.stdin.write('on\n'),
    off: () => ask('off'),
    stop: () => child.stdin.write('stop\n'),
  };
}

const [afterPort, beforePort] = await freePortPair();
servers.push(await startSvc(process.cwd(), afterPort, 'after', afterFile), await startSvc(beforeDir, beforePort, 'before', beforeFile));
const track = (c: ReturnType<typeof client>) => (clients.push(c), c);
try {
  await Promise.all([waitReady(afterPort, '/health'), waitReady(beforePort, '/health')]);
  const sides = [
    { name: 'before', port: beforePort },
    { name: 'after', port: afterPort },
  ].map(({ name, port }) => ({
    name,
    verify: track(client({ port, method: 'POST', path: '/verify', body: validVerify, addresses: ['127.0.0.2'], perAddress: 4 })),
    honest: track(client({ port, method: 'GET', path: shortQuery, addresses: ['127.0.0.3'], gapMs: 50 })),
    floods: {
      short: track(client({ port, method: 'GET', path: shortQuery, addresses: FLOODERS })),
      long: track(client({ port, method: 'GET', path: longQuery, addresses: FLOODERS })),
      rejected: track(client({ port, method: 'POST', path: '/verify', body: rejectedVerify, addresses: FLOODERS })),
    },
  }));
  // Warm-up: each server's JIT, catalog pages and the devnet's simulation.
  for (const side of sides) {
    await side.verify.measure(1_500);
    for (const flood of Object.values(side.floods)) {
      flood.on();
      await new Promise((r) => setTimeout(r, 700));
      await flood.off();
    }
  }
  const scenarios = [
    { key: 'verify beside short-query flood', measured: 'verify', flood: 'short' },
    { key: 'verify beside 2,048-character flood', measured: 'verify', flood: 'long' },
    { key: 'search beside rejected-verify flood', measured: 'honest', flood: 'rejected' },
  ] as const;
  const merge = (a: Window | undefined, b: Window): Window =>
    a
      ? {
          ok: a.ok + b.ok,
          busy: a.busy + b.busy,
          other: a.other + b.other,
          seconds: a.seconds + b.seconds,
          times: [...(a.times ?? []), ...(b.times ?? [])],
        }
      : b;
  const totals = new Map<string, Window>();
  const add = (key: string, w: Window) => totals.set(key, merge(totals.get(key), w));
  const loads: string[] = [loadAverage()];
  for (const scenario of scenarios) {
    // Pairs of windows, alone then beside the flood, each side in turn: a drift of the machine's
    // speed (large on a shared machine) weighs on both sides and both kinds of window alike.
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const side of sides) {
        const measured = side[scenario.measured];
        add(`${side.name}|${scenario.key}|alone`, await measured.measure(WINDOW_MS));
        const flood = side.floods[scenario.flood];
        flood.on();
        await new Promise((r) => setTimeout(r, 300));
        add(`${side.name}|${scenario.key}|beside`, await measured.measure(WINDOW_MS));
        add(`${side.name}|${scenario.key}|flood`, await flood.off());
      }
    }
    loads.push(loadAverage());
  }
  out(`Load average (1/5/15 min) at the start and after each scenario: ${loads.join('; ')}.`);
  const rate = (w: Window) => (w.ok + w.busy + w.other) / w.seconds;
  out(
    `\n| scenario | server | measured alone: req/s, p50 / p95 ms | beside the flood: req/s, p50 / p95 ms | ratio req/s | ratio p95 | beside: 200 / 503 / other | flood answered per s: 200 / 503 |`,
  );
  out('|---|---|---|---|---|---|---|---|');
  for (const scenario of scenarios) {
    for (const side of sides) {
      const alone = totals.get(`${side.name}|${scenario.key}|alone`)!;
      const beside = totals.get(`${side.name}|${scenario.key}|beside`)!;
      const flood = totals.get(`${side.name}|${scenario.key}|flood`)!;
      out(
        `| ${scenario.key} | ${side.name} | ${rate(alone).toFixed(0)}, ${fmt(pct(alone.times, 50))} / ${fmt(pct(alone.times, 95))} | ${rate(beside).toFixed(0)}, ${fmt(pct(beside.times, 50))} / ${fmt(pct(beside.times, 95))} | ${(rate(beside) / rate(alone)).toFixed(2)}× | ${(pct(beside.times, 95) / pct(alone.times, 95)).toFixed(2)}× | ${beside.ok} / ${beside.busy} / ${beside.other} | ${(flood.ok / flood.seconds).toFixed(0)} / ${(flood.busy / flood.seconds).toFixed(0)} |`,
      );
    }
  }
} finally {
  stop();
  await devnet.stop();
}
process.exit(0);
