/**
 * Devnet throughput: simulate, send and apply against a bare JSON-RPC round trip.
 *
 * Devnet throughput (docs/BENCHMARKS.md): how much of a later benchmark's time is the devnet itself.
 * Baseline: a bare JSON-RPC getHealth round trip over loopback HTTP, run in the same process.
 * Measured: simulateTransaction (record and enforce) of a USDC transfer, sendTransaction of
 * signed payments, and applying them at ledger close.
 *
 *   npx tsx bench/devnet/devnet.ts [--n 400]
 */
import os from 'node:os';
import { Keypair, rpc } from '@stellar/stellar-sdk';
import { startDevnet } from '../../src/devnet/index.ts';
import { buildTransfer, preparePayment, rawRpc } from '../../src/devnet/transfers.ts';
import { QUICK } from '../lib/quick.ts';

const nArg = process.argv.indexOf('--n');
const N = nArg > 0 ? Number(process.argv[nArg + 1]) : QUICK ? 20 : 400;

async function timed(label: string, n: number, f: (i: number) => Promise<unknown>) {
  for (let i = 0; i < Math.min(20, n); i++) await f(i); // warm-up
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await f(i);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  return { label, n, ms, perSec: (n / ms) * 1000, msPer: ms / n };
}

const devnet = await startDevnet({ ledgerMs: 0 });
const s = new rpc.Server(devnet.rpcUrl, { allowHttp: true });
const payer = await devnet.createAccount({ usdc: 10_000_000_000n });
const payee = await devnet.createAccount();
const sub = Keypair.fromSecret((await devnet.createAccount()).secret);

const base = await timed('getHealth round trip (baseline)', N * 2, () => rawRpc(devnet.rpcUrl, 'getHealth'));
const unsigned = await buildTransfer(s, devnet.networkPassphrase, {
  contractId: devnet.usdc.contractId,
  from: payer.publicKey,
  to: payee.publicKey,
  amount: 1n,
  source: sub,
});
const recordXdr = unsigned.toXDR();
const record = await timed('simulateTransaction, record mode', N, () =>
  rawRpc(devnet.rpcUrl, 'simulateTransaction', { transaction: recordXdr, useUpgradedAuth: true }),
);
const prepared = await preparePayment(s, devnet.networkPassphrase, {
  contractId: devnet.usdc.contractId,
  from: payer.publicKey,
  to: payee.publicKey,
  amount: 1n,
  source: sub,
  payer: Keypair.fromSecret(payer.secret),
});
const enforceXdr = prepared.tx.toXDR();
const enforce = await timed('simulateTransaction, enforce mode (signature verified)', N, () =>
  rawRpc(devnet.rpcUrl, 'simulateTransaction', { transaction: enforceXdr }),
);

// Submissions need distinct sources (one pending transaction per source account).
const M = Math.max(50, Math.floor(N / 2));
const txs = [];
for (let i = 0; i < M; i++) {
  const src = Keypair.fromSecret((await devnet.createAccount()).secret);
  txs.push(
    (
      await preparePayment(s, devnet.networkPassphrase, {
        contractId: devnet.usdc.contractId,
        from: payer.publicKey,
        to: payee.publicKey,
        amount: 1n,
        source: src,
        payer: Keypair.fromSecret(payer.secret),
      })
    ).tx.toXDR(),
  );
}
let t0 = process.hrtime.bigint();
for (const x of txs) {
  const r = await rawRpc<{ status: string }>(devnet.rpcUrl, 'sendTransaction', { transaction: x });
  if (r.result?.status !== 'PENDING') throw new Error(`unexpected ${JSON.stringify(r)}`);
}
const sendMs = Number(process.hrtime.bigint() - t0) / 1e6;
t0 = process.hrtime.bigint();
await devnet.closeLedger();
const applyMs = Number(process.hrtime.bigint() - t0) / 1e6;
await devnet.stop();

const rows = [
  base,
  record,
  enforce,
  { label: 'sendTransaction (validation + queue)', n: M, ms: sendMs, perSec: (M / sendMs) * 1000, msPer: sendMs / M },
  { label: 'apply at ledger close (per transaction)', n: M, ms: applyMs, perSec: (M / applyMs) * 1000, msPer: applyMs / M },
];
const cpu = os.cpus()[0]?.model ?? 'unknown';
console.log(`machine: nproc=${os.availableParallelism()} cpu="${cpu}" node=${process.version}`);
console.log('| operation | n | ms/op | ops/s | ratio vs getHealth baseline (ms/op) |');
console.log('|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.label} | ${r.n} | ${r.msPer.toFixed(3)} | ${r.perSec.toFixed(0)} | ${(r.msPer / base.msPer).toFixed(2)}× |`);
