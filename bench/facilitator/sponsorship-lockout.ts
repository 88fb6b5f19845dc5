/**
 * What it costs an attacker to lock an honest seller out of fee sponsorship, against a baseline commit.
 *
 * The cost of locking an honest seller out of svc's fee sponsorship (docs/OPERATIONS.md
 * "Sponsorship", figures in docs/BENCHMARKS.md):
 *
 *   npm run build && npx tsx bench/facilitator/sponsorship-lockout.ts [--scale 20] [--baseline bd10c5c]
 *
 * svc runs as separate processes on one devnet: this tree and a baseline revision (before the
 * per-payTo caps), side by side, their attack rounds interleaved. Both get the default caps divided
 * by `--scale` (so a day's budget is spent in minutes, not hours; the ratios are the defaults').
 * Two attacks, each round followed by one honest payment checked with POST /verify (which judges the
 * budget as settle would, without spending it): a fresh buyer paying one honest seller.
 * - one sink: 12 payer accounts pay 1 base unit each to one sink account, 12 at a time;
 * - fresh sinks: 12 payers each pay 1 base unit to a sink of its own; a pair that is refused is
 *   replaced by a fresh payer and a fresh sink (so the attack is not stopped by per-address caps).
 * An attack "locks out" when the honest payment is refused with a fee-budget code, or when every
 * attack payment of a round is refused with `svc_fee_budget_daily_exhausted` (the budget all
 * sellers share is spent: the baseline's /verify says so only once not a stroop is left); it stops then,
 * or after `--rounds` rounds. Reported per build: rounds, landed attack settlements, accounts,
 * seconds, and the code that refused the honest seller (or that none did).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { requireBuild } from '../lib/http-load.ts';
import { machine, ROOT, startSvc, type SvcProcess } from '../lib/ops-procs.ts';
import { exactTerms, postSettle } from '../lib/payments.ts';
import { QUICK } from '../lib/quick.ts';
import { freePort } from '../../src/dev/postgres.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const SCALE = BigInt(arg('scale', '20'));
const BASELINE = arg('baseline', QUICK ? '.' : 'bd10c5c');
const ROUNDS = Number(arg('rounds', QUICK ? '1' : '30'));
const PAYERS = 12;

/** The defaults of docs/OPERATIONS.md "Sponsorship", divided by SCALE. */
const caps = {
  FEE_BUDGET_DAILY_STROOPS: 100_000_000n,
  FEE_BUDGET_PAYER_DAILY_STROOPS: 10_000_000n,
  FEE_BUDGET_PAYTO_DAILY_STROOPS: 10_000_000n,
  FEE_BUDGET_NEW_ADDRESS_DAILY_STROOPS: 2_000_000n,
  FEE_BUDGET_NEW_PAYTOS_DAILY_STROOPS: 40_000_000n,
};
const scaledCaps = Object.fromEntries(Object.entries(caps).map(([k, v]) => [k, String(v / SCALE)]));

interface Side {
  name: string;
  svc: SvcProcess;
  rounds: number;
  landed: number;
  accounts: number;
  fees: bigint;
  startedAt: number;
  lockedBy: string | null;
  seconds: number;
}

const account = async (devnet: Devnet, usdc?: bigint) =>
  Keypair.fromSecret((await devnet.createAccount(usdc === undefined ? {} : { usdc })).secret);

async function postVerify(svcUrl: string, payload: unknown, requirements: unknown): Promise<{ isValid?: boolean; invalidReason?: string }> {
  const res = await fetch(`${svcUrl}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements }),
  });
  return (await res.json()) as { isValid?: boolean; invalidReason?: string };
}

async function feeOf(svc: SvcProcess, transaction: string): Promise<bigint> {
  const record = (await (await fetch(`${svc.url}/settlements/${transaction}`)).json()) as { feeStroops?: string };
  return BigInt(record.feeStroops ?? 0);
}

/** One attack against both builds, rounds interleaved; `round` returns the payments of one round. */
async function attack(
  devnet: Devnet,
  sides: Side[],
  /** Per side: returns one round's payments, given the codes the previous round got (in order). */
  setup: (side: Side) => Promise<(side: Side, previous: string[]) => Promise<Array<{ payer: Keypair; payTo: string }>>>,
) {
  const rounds = new Map<Side, Awaited<ReturnType<typeof setup>>>();
  const honestSeller = await account(devnet);
  const lastCodes = new Map<Side, string[]>();
  for (const side of sides) {
    rounds.set(side, await setup(side));
    side.startedAt = performance.now();
  }
  for (let r = 0; r < ROUNDS && sides.some((s) => s.lockedBy === null && s.rounds === r); r++) {
    for (const side of sides) {
      if (side.lockedBy !== null) continue;
      const payments = await rounds.get(side)!(side, lastCodes.get(side) ?? []);
      const answers = await Promise.all(
        payments.map(async ({ payer, payTo }) => {
          const terms = exactTerms(devnet, payTo, 30, '1');
          return postSettle(side.svc.url, await terms.sign(payer), terms.requirements);
        }),
      );
      lastCodes.set(
        side,
        answers.map((a) => a.code),
      );
      if (answers.every((a) => a.code === 'svc_fee_budget_daily_exhausted')) side.lockedBy = 'svc_fee_budget_daily_exhausted';
      for (const a of answers.filter((x) => x.ok)) {
        side.landed++;
        side.fees += await feeOf(side.svc, a.transaction);
      }
      side.rounds++;
      // One honest payment, verified: a fresh buyer paying the honest seller.
      const honest = exactTerms(devnet, honestSeller.publicKey(), 30);
      const answer = await postVerify(side.svc.url, await honest.sign(await account(devnet, 1_000_000n)), honest.requirements);
      if (answer.invalidReason?.startsWith('svc_fee_budget')) side.lockedBy = answer.invalidReason;
      side.seconds = (performance.now() - side.startedAt) / 1000;
    }
  }
}

async function main() {
  requireBuild();
  const baselineDir = baselineBuild(BASELINE);
  const devnet = await startDevnet({ ledgerMs: 200 });
  const report: string[] = [];
  for (const attackName of ['one sink', 'fresh sinks'] as const) {
    const sides: Side[] = await Promise.all(
      [ROOT, baselineDir].map(async (dir, i) => {
        const submitters = await Promise.all(Array.from({ length: 8 }, () => devnet.createAccount({ usdcTrustline: false })));
        const svc = startSvc(
          'compiled',
          dir,
          {
            ...scaledCaps,
            SUBMITTER_SECRET: submitters.map((s) => s.secret).join(','),
            RPC_URL: devnet.rpcUrl,
            DB_PATH: join(mkdtempSync(join(tmpdir(), 'svc-lockout-')), 'svc.sqlite'),
          },
          await freePort(), // a port picked at random could be another process's ephemeral one
        );
        await svc.readyAfter('/health', 60_000);
        return {
          name: i === 0 ? 'this tree' : `baseline ${BASELINE}`,
          svc,
          rounds: 0,
          landed: 0,
          accounts: 0,
          fees: 0n,
          startedAt: 0,
          lockedBy: null,
          seconds: 0,
        };
      }),
    );
    await attack(devnet, sides, async (side) => {
      const payers = await Promise.all(Array.from({ length: PAYERS }, () => account(devnet, 1_000_000n)));
      if (attackName === 'one sink') {
        const sink = await account(devnet);
        side.accounts = PAYERS + 1;
        return async () => payers.map((payer) => ({ payer, payTo: sink.publicKey() }));
      }
      const sinks = await Promise.all(payers.map(() => account(devnet)));
      side.accounts = 2 * PAYERS;
      return async (_side, previous) => {
        // A pair its caps refused is replaced by fresh accounts.
        await Promise.all(
          previous.map(async (code, i) => {
            if (!code.startsWith('svc_fee_budget_pay')) return;
            [payers[i], sinks[i]] = await Promise.all([account(devnet, 1_000_000n), account(devnet)]);
            side.accounts += 2;
          }),
        );
        return payers.map((payer, i) => ({ payer, payTo: sinks[i]!.publicKey() }));
      };
    });
    for (const s of sides) {
      const fee = s.landed > 0 ? s.fees / BigInt(s.landed) : 0n;
      report.push(
        `| ${attackName} | ${s.name} | ${s.lockedBy ? `locked out (${s.lockedBy})` : 'not locked out'} | ${s.rounds} | ${s.landed} | ${s.accounts} | ${s.seconds.toFixed(1)} | ${fee} |`,
      );
      await s.svc.stop();
    }
  }
  await devnet.stop();
  console.log(`caps ÷ ${SCALE}: ${JSON.stringify(scaledCaps)}; up to ${ROUNDS} rounds of ${PAYERS} payments, then 1 honest payment`);
  console.log(
    '| attack | build | honest seller | rounds | attack settlements landed | attacker accounts | seconds | fee/settle (stroops) |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const line of report) console.log(line);
  console.log(await machine());
}

await main();
