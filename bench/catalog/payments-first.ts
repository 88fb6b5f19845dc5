/**
 * The payment path first, search still fair (docs/BENCHMARKS.md "Payments first"), against a baseline commit.
 *
 * Three loads on svc as built here ("after") and svc at an earlier commit ("before",
 * bench/lib/baseline-build.ts), each serving a copy of the same seeded catalog in its own process
 * on one devnet (in this process), side by side; the phases alternate between the two servers
 * round by round so the machine's load weighs on both alike. Every client runs in a process of its
 * own (bench/catalog/lib/closed-loop-client.ts), closed loop over keep-alive connections:
 *
 * - a valid POST /verify (4 connections, one address; the devnet simulates it) alone, then beside
 *   16 search connections (16 loopback addresses) of a short query, then of a 2,048-character one:
 *   /verify's rate and p50 / p95 as a ratio of alone, and what the flood got answered;
 * - an honest client's search (1 connection, 50 ms apart) alone, then beside 16 connections of a
 *   rejected POST /verify (requirements the payload does not pay): how many were answered 200, p50 / p95.
 *
 *   npm run build && npx tsx bench/catalog/payments-first.ts [--listings 20000] [--before 2f03a27] [--seconds 5] [--rounds 3]
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePortPair } from '../../src/dev/postgres.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { seedCorpus, vocabularyWord } from '../lib/catalog-corpus.ts';
import { fmt, loadAverage, machineLine, requireBuild, waitReady } from '../lib/http-load.ts';
import { exactTerms } from '../lib/payments.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    listings: { type: 'string', default: '20000' },
    before: { type: 'string', default: '2f03a27' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    'keep-dir': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, this checkout on both sides, one 2 s round (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { listings: '300', before: '.', seconds: '2', rounds: '1' });
requireBuild();
const LISTINGS = Number(values.listings);
const PHASE_MS = Number(values.seconds) * 1000;
const FLOODERS = Array.from({ length: 16 }, (_, k) => `127.0.0.${10 + k}`);
const out = (s: string) => console.log(s);

const dir = values['keep-dir'] ?? scratchDir('svc-bench-payments-first-');
mkdirSync(dir, { recursive: true });
const seeded = join(dir, `catalog-${LISTINGS}.sqlite`);
if (!existsSync(seeded)) seedCorpus(seeded, LISTINGS, (n) => process.stderr.write(`seeded ${n}\r`));
const beforeDir = baselineBuild(values.before);

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

async function startSvc(cwd: string, port: number, name: string) {
  const dbPath = join(dir, `${name}.sqlite`);
  copyFileSync(seeded, dbPath);
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
  return child;
}

interface Answers {
  ok: number;
  busy: number;
  other: number;
  rps: number;
  p50: number;
  p95: number;
}

function client(load: Record<string, unknown>): Promise<Answers> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/catalog/lib/closed-loop-client.ts', JSON.stringify(load)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  child.stdout.on('data', (c: Buffer) => (text += c.toString()));
  return new Promise((resolve) => child.once('exit', () => resolve(JSON.parse(text.trim().split('\n').pop() ?? '{}') as Answers)));
}

/** The measured client for PHASE_MS, with `beside` (a flood) started a second before and running past it. */
async function phase(measured: Record<string, unknown>, beside?: Record<string, unknown>) {
  const flood = beside ? client({ ...beside, ms: PHASE_MS + 2_000 }) : undefined;
  if (flood) await new Promise((r) => setTimeout(r, 1_000));
  const result = await client({ ...measured, ms: PHASE_MS });
  return { result, flood: await flood, load: loadAverage() };
}

const [afterPort, beforePort] = await freePortPair();
const servers = [await startSvc(process.cwd(), afterPort, 'after'), await startSvc(beforeDir, beforePort, 'before')];
const sides = [
  ['before', beforePort],
  ['after', afterPort],
] as const;
try {
  await Promise.all([waitReady(afterPort, '/health'), waitReady(beforePort, '/health')]);
  const verify = (port: number) => ({ port, method: 'POST', path: '/verify', body: validVerify, addresses: ['127.0.0.2'], perAddress: 4 });
  const flood = (port: number, path: string) => ({ port, method: 'GET', path, addresses: FLOODERS });
  const honest = (port: number) => ({ port, method: 'GET', path: shortQuery, addresses: ['127.0.0.3'], gapMs: 50 });
  const rejectedFlood = (port: number) => ({ port, method: 'POST', path: '/verify', body: rejectedVerify, addresses: FLOODERS });
  // Warm-up: each server's JIT, catalog pages and the devnet's simulation.
  for (const [, port] of sides) {
    await client({ ...verify(port), ms: 1_500 });
    await client({ ...flood(port, shortQuery), ms: 1_000 });
    await client({ ...flood(port, longQuery), ms: 1_000 });
  }
  const scenarios = [
    { key: 'verify alone', run: (port: number) => phase(verify(port)) },
    { key: 'verify + short flood', run: (port: number) => phase(verify(port), flood(port, shortQuery)) },
    { key: 'verify + long flood', run: (port: number) => phase(verify(port), flood(port, longQuery)) },
    { key: 'search alone', run: (port: number) => phase(honest(port)) },
    { key: 'search + rejected verify flood', run: (port: number) => phase(honest(port), rejectedFlood(port)) },
  ];
  const results = new Map<string, Array<Awaited<ReturnType<typeof phase>>>>();
  out(
    '\n| round | server | phase | measured req/s | 200 / 503 / other | p50 / p95 ms | flood req/s (200 / 503 / other per s) | load average |',
  );
  out('|---|---|---|---|---|---|---|---|');
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const scenario of scenarios) {
      for (const [name, port] of sides) {
        const r = await scenario.run(port);
        const key = `${name}|${scenario.key}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        const secs = (PHASE_MS + 2_000) / 1000;
        const f = r.flood;
        out(
          `| ${round} | ${name} | ${scenario.key} | ${r.result.rps.toFixed(0)} | ${r.result.ok} / ${r.result.busy} / ${r.result.other} | ${fmt(r.result.p50)} / ${fmt(r.result.p95)} | ${f ? `${f.rps.toFixed(0)} (${(f.ok / secs).toFixed(0)} / ${(f.busy / secs).toFixed(0)} / ${(f.other / secs).toFixed(0)})` : '–'} | ${r.load} |`,
        );
      }
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const of = (name: string, key: string, pick: (r: Awaited<ReturnType<typeof phase>>) => number) =>
    mean((results.get(`${name}|${key}`) ?? []).map(pick));
  out('\n| server | phase | /verify req/s (÷ alone) | p50 ms | p95 ms (÷ alone) | flood answered 200 / 503 per s |');
  out('|---|---|---|---|---|---|');
  for (const [name] of sides) {
    const aloneRps = of(name, 'verify alone', (r) => r.result.rps);
    const aloneP95 = of(name, 'verify alone', (r) => r.result.p95);
    for (const key of ['verify alone', 'verify + short flood', 'verify + long flood']) {
      const rps = of(name, key, (r) => r.result.rps);
      const p95 = of(name, key, (r) => r.result.p95);
      const floodOk = key === 'verify alone' ? NaN : of(name, key, (r) => r.flood!.ok / ((PHASE_MS + 2_000) / 1000));
      const floodBusy = key === 'verify alone' ? NaN : of(name, key, (r) => r.flood!.busy / ((PHASE_MS + 2_000) / 1000));
      out(
        `| ${name} | ${key} | ${rps.toFixed(0)} (${(rps / aloneRps).toFixed(2)}×) | ${fmt(of(name, key, (r) => r.result.p50))} | ${fmt(p95)} (${(p95 / aloneP95).toFixed(2)}×) | ${Number.isNaN(floodOk) ? '–' : `${floodOk.toFixed(0)} / ${floodBusy.toFixed(0)}`} |`,
      );
    }
  }
  out('\n| server | phase | honest searches 200 / 503 / other | p50 ms | p95 ms | rejected /verify answered per s |');
  out('|---|---|---|---|---|---|');
  for (const [name] of sides) {
    for (const key of ['search alone', 'search + rejected verify flood']) {
      const rs = results.get(`${name}|${key}`) ?? [];
      const sum = (pick: (a: Answers) => number) => rs.reduce((a, r) => a + pick(r.result), 0);
      out(
        `| ${name} | ${key} | ${sum((a) => a.ok)} / ${sum((a) => a.busy)} / ${sum((a) => a.other)} | ${fmt(of(name, key, (r) => r.result.p50))} | ${fmt(of(name, key, (r) => r.result.p95))} | ${key === 'search alone' ? '–' : of(name, key, (r) => r.flood!.rps).toFixed(0)} |`,
      );
    }
  }
  out(`\nLoad average at the end: ${loadAverage()}.`);
} finally {
  for (const s of servers) s.kill('SIGKILL');
  await devnet.stop();
}
process.exit(0);
