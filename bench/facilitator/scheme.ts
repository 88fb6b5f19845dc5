/**
 * Our exact scheme beside @x402/stellar's: verify, settle and burst throughput in process.
 *
 * Scheme benchmark (docs/BENCHMARKS.md): our ExactStellarScheme side by side with @x402/stellar 2.9.0's
 * facilitator ExactStellarScheme, both driven in-process against the same devnet.
 *
 *   npx tsx bench/facilitator/scheme.ts [--verify 200] [--settle 10] [--burst 32]
 *
 * 1. verify latency and throughput (manual-close devnet, so one payload stays valid);
 * 2. settle latency against the ledger close interval (250 ms and 1000 ms devnets);
 * 3. burst throughput per submitter count (1, 2, 4, 8) on a 250 ms devnet.
 *
 * Payloads come from our client with classic address credentials (x402 2.9.0 rejects CAP-71
 * AddressV2). x402 estimates ledger time through Horizon testnet: every non-loopback DNS lookup
 * is refused here (named boundary: the global agents' `lookup`), so it uses its 5 s fallback
 * and nothing leaves the machine. x402 payloads are signed with an expiry inside that fallback's
 * bound (latest + timeout / 5 ledgers, with maxTimeoutSeconds 300 so that bound spans a burst);
 * ours with the client's default. Burst rows break failures down by errorReason.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import { Keypair } from '@stellar/stellar-sdk';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as X402Facilitator } from '@x402/stellar/exact/facilitator';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc, type ChainRpc } from '../../src/chains/stellar/rpc.ts';
import { LedgerTimeEstimator } from '../../src/chains/stellar/ledger-time.ts';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import type { PaymentPayload, PaymentRequirements, PaymentScheme } from '../../src/scheme/types.ts';
import { exactRequirements } from '../lib/payments.ts';
import { QUICK } from '../lib/quick.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const N_VERIFY = arg('verify', QUICK ? 5 : 200);
const N_SETTLE = arg('settle', QUICK ? 2 : 10);
const N_BURST = arg('burst', QUICK ? 4 : 32);
/**
 * The settle rows' ledger intervals and the bursts' submitter counts. Quick mode keeps one of each: every row waits on
 * ledger closes (its devnet's first three, then each settle's), so the full set took 33 s of wall time for 6 CPU-s.
 */
const SETTLE_LEDGER_MS = QUICK ? [250] : [250, 1000];
const BURST_SUBMITTERS = QUICK ? [2] : [1, 2, 4, 8];

// Offline: refuse every non-loopback lookup (x402's Horizon call falls back to 5 s at once).
for (const agent of [http.globalAgent, https.globalAgent]) {
  (agent as unknown as { options: { lookup?: unknown } }).options.lookup = (
    host: string,
    opts: dns.LookupOptions,
    cb: (e: Error | null, a?: unknown, f?: number) => void,
  ) => {
    if (host === 'localhost' || host === '127.0.0.1') return dns.lookup(host, opts, cb as never);
    process.nextTick(() => cb(Object.assign(new Error(`offline bench: no DNS for ${host}`), { code: 'ENOTFOUND' })));
  };
}

interface Party {
  buyer: Keypair;
  seller: Keypair;
}

const quiet = () => {}; // x402 logs every failed simulation and poll attempt to the console
const x402Log = { warn: console.warn, error: console.error };

async function parties(devnet: Devnet, n: number, usdc = 100_000_000n): Promise<Party[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const [b, s] = await Promise.all([devnet.createAccount({ usdc }), devnet.createAccount({})]);
      return { buyer: Keypair.fromSecret(b.secret), seller: Keypair.fromSecret(s.secret) };
    }),
  );
}

/** A long timeout, so x402's 5 s-fallback expiry bound (timeout / 5 ledgers) still spans a whole burst. */
const MAX_TIMEOUT_SECONDS = 300;

function requirements(devnet: Devnet, payTo: string, maxTimeoutSeconds = MAX_TIMEOUT_SECONDS): PaymentRequirements {
  return exactRequirements(devnet, payTo, maxTimeoutSeconds);
}

async function pay(
  rpc: ChainRpc,
  est: LedgerTimeEstimator,
  req: PaymentRequirements,
  buyer: Keypair,
  forX402: boolean,
): Promise<PaymentPayload> {
  // x402 2.9.0 accepts expiries up to latest + ceil(timeout / 5 s) + 2 (its offline fallback).
  const expirationLedger = forX402 ? (await rpc.getLatestLedger()).sequence + Math.floor(req.maxTimeoutSeconds / 5) : undefined;
  return createStellarPayment({
    requirements: req,
    signer: buyer,
    rpc,
    ledgerTime: est,
    credentials: 'address',
    ...(expirationLedger ? { expirationLedger } : {}),
  });
}

async function submitters(devnet: Devnet, n: number): Promise<Keypair[]> {
  return Promise.all(
    Array.from({ length: n }, async () => Keypair.fromSecret((await devnet.createAccount({ usdcTrustline: false })).secret)),
  );
}

function ours(devnet: Devnet, keys: Keypair[]): PaymentScheme {
  return new ExactStellarScheme({ network: 'stellar:testnet', rpc: createSdkRpc({ url: devnet.rpcUrl }), submitters: keys });
}

function theirs(devnet: Devnet, keys: Keypair[]): PaymentScheme {
  const f = new X402Facilitator(
    keys.map((k) => createEd25519Signer(k.secret(), 'stellar:testnet')),
    { rpcConfig: { url: devnet.rpcUrl }, areFeesSponsored: true },
  );
  return f as unknown as PaymentScheme;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const f1 = (x: number) => x.toFixed(1);

async function verifyBench(): Promise<string[]> {
  const devnet = await startDevnet({ ledgerMs: 0 });
  try {
    const rpc = createSdkRpc({ url: devnet.rpcUrl });
    const est = new LedgerTimeEstimator(rpc);
    const [p] = await parties(devnet, 1);
    const req = requirements(devnet, p!.seller.publicKey());
    const payload = await pay(rpc, est, req, p!.buyer, true);
    const rows: string[] = [];
    const results: Record<string, { p50: number; p95: number; seqPerSec: number; concPerSec: number }> = {};
    for (const [name, scheme] of [
      ['svc', ours(devnet, await submitters(devnet, 1))],
      ['@x402/stellar 2.9.0', theirs(devnet, await submitters(devnet, 1))],
    ] as const) {
      for (let i = 0; i < 10; i++) await scheme.verify(payload, req); // warm-up
      const lat: number[] = [];
      let valid = 0;
      const t0 = performance.now();
      for (let i = 0; i < N_VERIFY; i++) {
        const t = performance.now();
        valid += (await scheme.verify(payload, req)).isValid ? 1 : 0;
        lat.push(performance.now() - t);
      }
      const seqMs = performance.now() - t0;
      if (valid !== N_VERIFY) throw new Error(`${name}: only ${valid}/${N_VERIFY} verifications were valid`);
      const t1 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next++ < N_VERIFY) if (!(await scheme.verify(payload, req)).isValid) throw new Error(`${name}: invalid under concurrency`);
        }),
      );
      const concMs = performance.now() - t1;
      results[name] = {
        p50: pct(lat, 50),
        p95: pct(lat, 95),
        seqPerSec: (N_VERIFY / seqMs) * 1000,
        concPerSec: (N_VERIFY / concMs) * 1000,
      };
    }
    const [a, b] = [results['svc']!, results['@x402/stellar 2.9.0']!];
    rows.push(
      `| verify latency p50 / p95 (ms) | ${f1(a.p50)} / ${f1(a.p95)} | ${f1(b.p50)} / ${f1(b.p95)} | ${(b.p50 / a.p50).toFixed(2)}× faster (p50) |`,
    );
    rows.push(
      `| verify throughput, sequential (/s) | ${f1(a.seqPerSec)} | ${f1(b.seqPerSec)} | ${(a.seqPerSec / b.seqPerSec).toFixed(2)}× |`,
    );
    rows.push(
      `| verify throughput, 16 in flight (/s) | ${f1(a.concPerSec)} | ${f1(b.concPerSec)} | ${(a.concPerSec / b.concPerSec).toFixed(2)}× |`,
    );
    return rows;
  } finally {
    await devnet.stop();
  }
}

async function settleBench(ledgerMs: number): Promise<string[]> {
  const devnet = await startDevnet({ ledgerMs });
  try {
    const rpc = createSdkRpc({ url: devnet.rpcUrl });
    const est = new LedgerTimeEstimator(rpc);
    const first = devnet.latestLedger().closeTime;
    while (devnet.latestLedger().closeTime - first < 3) await new Promise((r) => setTimeout(r, ledgerMs));
    const ps = await parties(devnet, 2);
    const out: Record<string, number[]> = {};
    for (const [name, scheme, forX402] of [
      ['svc', ours(devnet, await submitters(devnet, 1)), false],
      ['@x402/stellar 2.9.0', theirs(devnet, await submitters(devnet, 1)), true],
    ] as const) {
      const lat: number[] = [];
      for (let i = 0; i < N_SETTLE; i++) {
        const p = ps[i % 2]!;
        const req = requirements(devnet, p.seller.publicKey());
        const payload = await pay(rpc, est, req, p.buyer, forX402);
        const t = performance.now();
        const r = await scheme.settle(payload, req);
        if (!r.success) throw new Error(`${name} settle failed: ${r.errorReason} ${r.errorMessage ?? ''}`);
        lat.push(performance.now() - t);
      }
      out[name] = lat;
    }
    const a = out['svc']!;
    const b = out['@x402/stellar 2.9.0']!;
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    return [
      `| settle latency, ${ledgerMs} ms ledgers: mean / p95 (ms) | ${f1(mean(a))} / ${f1(pct(a, 95))} (${(mean(a) / ledgerMs).toFixed(1)} ledgers) | ${f1(mean(b))} / ${f1(pct(b, 95))} (${(mean(b) / ledgerMs).toFixed(1)} ledgers) | ${(mean(b) / mean(a)).toFixed(2)}× faster |`,
    ];
  } finally {
    await devnet.stop();
  }
}

async function burstBench(): Promise<string[]> {
  const rows: string[] = [];
  for (const k of BURST_SUBMITTERS) {
    const devnet = await startDevnet({ ledgerMs: 250 });
    try {
      const rpc = createSdkRpc({ url: devnet.rpcUrl });
      const est = new LedgerTimeEstimator(rpc);
      const first = devnet.latestLedger().closeTime;
      while (devnet.latestLedger().closeTime - first < 3) await new Promise((r) => setTimeout(r, 250));
      const ps = await parties(devnet, 8);
      const cells: string[] = [];
      const rates: number[] = [];
      for (const [name, make, forX402] of [
        ['svc', ours, false],
        ['@x402/stellar 2.9.0', theirs, true],
      ] as const) {
        const scheme = make(devnet, await submitters(devnet, k));
        const jobs = await Promise.all(
          Array.from({ length: N_BURST }, async (_, i) => {
            const p = ps[i % ps.length]!;
            const req = requirements(devnet, p.seller.publicKey());
            return { req, payload: await pay(rpc, est, req, p.buyer, forX402) };
          }),
        );
        const t = performance.now();
        const results = await Promise.all(jobs.map((j) => scheme.settle(j.payload, j.req)));
        const ms = performance.now() - t;
        const ok = results.filter((r) => r.success).length;
        const reasons = new Map<string, number>();
        for (const r of results) if (!r.success) reasons.set(String(r.errorReason), (reasons.get(String(r.errorReason)) ?? 0) + 1);
        const why = [...reasons]
          .map(([code, n]) => `${n}× ${code.replace('settle_exact_stellar_', '').replace('invalid_exact_stellar_payload_', '')}`)
          .join(', ');
        rates.push((ok / ms) * 1000);
        cells.push(`${ok}/${N_BURST} ok, ${f1(ms / 1000)} s, ${f1((ok / ms) * 1000)} settled/s${why ? ` (failed: ${why})` : ''}`);
        void name;
      }
      rows.push(
        `| burst of ${N_BURST}, ${k} submitter${k > 1 ? 's' : ''} | ${cells[0]} | ${cells[1]} | ${rates[1]! > 0 ? `${(rates[0]! / rates[1]!).toFixed(1)}×` : '∞ (x402: none settled)'} |`,
      );
    } finally {
      await devnet.stop();
    }
  }
  return rows;
}

console.warn = quiet;
console.error = quiet;
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const header = [
  `Machine: ${os.cpus().length} cores (nproc), ${cpu}, Node ${process.versions.node}. Run: \`npx tsx bench/facilitator/scheme.ts --verify ${N_VERIFY} --settle ${N_SETTLE} --burst ${N_BURST}\` (${new Date().toISOString()}).`,
  '',
  '| Measure | svc ExactStellarScheme | @x402/stellar 2.9.0 facilitator | svc vs x402 |',
  '|---|---|---|---|',
];
const rows = [...(await verifyBench())];
for (const ledgerMs of SETTLE_LEDGER_MS) rows.push(...(await settleBench(ledgerMs)));
rows.push(...(await burstBench()));
console.warn = x402Log.warn;
console.error = x402Log.error;
console.log([...header, ...rows].join('\n'));
