/**
 * A burst of settles with channel accounts beside one submitter alone.
 *
 * Channel accounts under a burst (docs/BENCHMARKS.md): 64 settles POSTed at once over HTTP to svc
 * running as a separate process (compiled, plain Node: `npm run build` first) on a devnet with 1 s
 * ledgers, side by side in one run: one SUBMITTER_SECRET alone (the baseline: one transaction per
 * ledger) and the same single seed with CHANNEL_ACCOUNTS=8. Each service settles one payment first
 * (the channels are created then), so the burst measures steady state.
 *
 *   npm run build && npx tsx bench/facilitator/channels.ts [--burst 64] [--channels 8]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnet } from '../../src/devnet/index.ts';
import { machine, NO_NEW_ADDRESS_ALLOWANCE, ROOT, startSvc } from '../lib/ops-procs.ts';
import { exactTerms, postSettle } from '../lib/payments.ts';
import { QUICK } from '../lib/quick.ts';
import { freePort } from '../../src/dev/postgres.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const BURST = Number(arg('burst', QUICK ? '4' : '64'));
const CHANNELS = Number(arg('channels', QUICK ? '2' : '8'));

const devnet = await startDevnet({ ledgerMs: QUICK ? 250 : 1000 });
const seller = await devnet.createAccount({});
const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 120);

async function payments(n: number) {
  const signer = await buyer(100_000_000n);
  const out = [];
  for (let i = 0; i < n; i++) out.push(await sign(signer));
  return out;
}

async function run(label: string, env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-channels-'));
  const seed = await devnet.createAccount({ usdcTrustline: false });
  const svc = startSvc(
    'compiled',
    ROOT,
    { SUBMITTER_SECRET: seed.secret, RPC_URL: devnet.rpcUrl, DB_PATH: join(dir, 'svc.sqlite'), ...NO_NEW_ADDRESS_ALLOWANCE, ...env },
    await freePort(), // a port picked at random could be another process's ephemeral one
  );
  try {
    await svc.readyAfter('/health', 60_000);
    const settle = async (payload: unknown) => {
      const t0 = performance.now();
      const result = await postSettle(svc.url, payload, requirements);
      return { ...result, ms: result.at - t0 };
    };
    const [warm, ...burst] = await payments(BURST + 1);
    const warmUp = await settle(warm);
    const started = performance.now();
    const results = await Promise.all(burst.map(settle));
    const ok = results.filter((r) => r.ok);
    const lastOk = Math.max(...ok.map((r) => r.at));
    const codes: Record<string, number> = {};
    for (const r of results) codes[r.code] = (codes[r.code] ?? 0) + 1;
    return {
      label,
      warmUp: `${warmUp.code} in ${warmUp.ms.toFixed(0)} ms`,
      settled: ok.length,
      failed: results.length - ok.length,
      seconds: (lastOk - started) / 1000,
      perSecond: ok.length / ((lastOk - started) / 1000),
      codes,
    };
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  console.log(`machine: ${await machine()}`);
  const baseline = await run('one seed (baseline)', {});
  const channels = await run(`one seed + CHANNEL_ACCOUNTS=${CHANNELS}`, { CHANNEL_ACCOUNTS: String(CHANNELS) });
  console.log(`burst of ${BURST} settles at once, 1 s ledgers`);
  console.log('| service | warm-up settle | settled | failed | seconds to the last success | settled/s | outcomes |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of [baseline, channels]) {
    console.log(
      `| ${r.label} | ${r.warmUp} | ${r.settled} | ${r.failed} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(2)} | ${JSON.stringify(r.codes)} |`,
    );
  }
  console.log(`throughput ratio channels / baseline: ${(channels.perSecond / baseline.perSecond).toFixed(2)}`);
  console.log(`after: ${await machine()}`);
} finally {
  await devnet.stop();
}
