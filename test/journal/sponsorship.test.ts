/**
 * Fair sponsorship (docs/OPERATIONS.md "Sponsorship"): the fee budget knows sellers. One sink paid
 * by many payers is stopped by its per-payTo cap, not by the daily cap every seller shares; payTo
 * addresses without history share a smaller budget, so fresh sinks cannot touch what sellers paid
 * before today keep; a payer without history has a smaller allowance; a payer whose settlements
 * fail on chain is refused for a cool-down. Verify answers what settle would. All on the devnet
 * with real signatures and a real journal file; the lockout runs against svc as a real process.
 */
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { startSvc } from '../helpers/svc-process.ts';
import { journaledFacilitator, tempDbPath } from './harness.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

const DAY = 86_400_000;

async function post(url: string, path: '/settle' | '/verify', paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements }),
  });
  return (await res.json()) as any;
}

async function payers(n: number): Promise<Keypair[]> {
  const accounts = await Promise.all(Array.from({ length: n }, () => h.devnet.createAccount({ usdc: 1_000_000n })));
  return accounts.map((a) => Keypair.fromSecret(a.secret));
}

describe('one sink paid by many payers', () => {
  it('12 payers paying 1 unit to one sink: the sink is capped, an honest seller is still paid (svc as a process)', async () => {
    const submitters = await Promise.all(Array.from({ length: 4 }, () => h.devnet.createAccount({ usdcTrustline: false })));
    // The daily cap of the attack as it was first measured (1,000,000 stroops, used up in 43
    // settles), and a new address's allowance below it (about 4 settlements).
    const svc = await startSvc(h.devnet.rpcUrl, {
      DB_PATH: tempDbPath(),
      SUBMITTER_SECRET: submitters.map((s) => s.secret).join(','),
      FEE_BUDGET_DAILY_STROOPS: '1000000',
      FEE_BUDGET_NEW_ADDRESS_DAILY_STROOPS: '100000',
      FEE_BUDGET_NEW_PAYTOS_DAILY_STROOPS: '400000',
    });
    try {
      const attackers = await payers(12);
      const sink = Keypair.fromSecret((await h.devnet.createAccount({})).secret);
      const req = h.requirements(sink.publicKey(), { amount: '1' });
      const codes: string[] = [];
      for (let round = 0; round < 4; round++) {
        const answers = await Promise.all(attackers.map(async (payer) => post(svc.url, '/settle', await h.pay(req, payer), req)));
        for (const a of answers) codes.push(a.success ? 'success' : a.errorReason);
      }
      const landed = codes.filter((c) => c === 'success').length;
      expect(landed, codes.join(',')).toBeGreaterThan(0);
      expect(h.devnet.balances(sink.publicKey()).usdc).toBe(BigInt(landed));
      // Refused by the sink's own cap (or a payer's), never by the budget every seller shares.
      expect(new Set(codes.filter((c) => c !== 'success'))).toEqual(new Set(['svc_fee_budget_payto_exhausted']));
      const more = await h.pay(req, attackers[0]!);
      expect(await post(svc.url, '/verify', more, req)).toMatchObject({ isValid: false, invalidReason: 'svc_fee_budget_payto_exhausted' });

      const { buyer, seller } = await h.parties();
      const honest = h.requirements(seller.publicKey());
      expect(await post(svc.url, '/settle', await h.pay(honest, buyer), honest)).toMatchObject({ success: true });
      expect(h.devnet.balances(seller.publicKey()).usdc).toBe(100_000n);
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
  });
});

describe('addresses without history', () => {
  it('fresh sinks share a smaller budget that leaves sellers paid before today alone; a fresh payer has a smaller allowance', async () => {
    const dbPath = tempDbPath();
    const submitter = await h.devnet.createAccount({ usdcTrustline: false });
    let clock = Math.floor(Date.now() / DAY) * DAY + 3_600_000;
    const now = () => clock;
    const { buyer, seller } = await h.parties();
    const shop = h.requirements(seller.publicKey());

    // Yesterday: the seller and its buyer were paid and paid once.
    const yesterday = await journaledFacilitator(h, { dbPath, submitterSecret: submitter.secret, now });
    const first = await yesterday.settle(await h.pay(shop, buyer), shop);
    expect(first.body.success).toBe(true);
    const fee = (await yesterday.journal.store.getByTransaction(first.body.transaction))!.feeStroops;
    await yesterday.close();

    clock += DAY;
    const f = await journaledFacilitator(h, {
      dbPath,
      submitterSecret: submitter.secret,
      now,
      policy: { newPayTosDailyFeeCapStroops: 2n * fee + fee / 2n, newAddressDailyFeeCapStroops: fee + fee / 2n },
    });
    try {
      // Fresh payers paying fresh sinks: two fit in the shared budget of new payTo addresses, the third does not.
      const fresh = await payers(3);
      const sinks = await Promise.all(fresh.map(async () => Keypair.fromSecret((await h.devnet.createAccount({})).secret)));
      const answers = [];
      for (const [i, payer] of fresh.entries()) {
        const req = h.requirements(sinks[i]!.publicKey());
        const payload = await h.pay(req, payer);
        const verified = (await f.verify(payload, req)).body;
        const settled = (await f.settle(payload, req)).body;
        answers.push(settled.success ? 'success' : settled.errorReason);
        if (!settled.success) expect(verified).toMatchObject({ isValid: false, invalidReason: settled.errorReason });
      }
      expect(answers).toEqual(['success', 'success', 'svc_fee_budget_new_paytos_exhausted']);

      // The seller paid before today is not affected, nor is its buyer's allowance.
      for (let i = 0; i < 2; i++) expect((await f.settle(await h.pay(shop, buyer), shop)).body).toMatchObject({ success: true });
      // A payer without history gets the smaller allowance: its second payment would pass it
      // (verify judges the fee its own simulation derived, as settle does).
      const again = await h.pay(shop, fresh[0]!);
      expect((await f.verify(again, shop)).body).toMatchObject({ isValid: false, invalidReason: 'svc_fee_budget_payer_exhausted' });
      const refused = (await f.settle(again, shop)).body;
      expect(refused).toMatchObject({ success: false, transaction: '', errorReason: 'svc_fee_budget_payer_exhausted' });
      expect(refused.errorMessage).toContain('without history');
    } finally {
      await f.close();
    }
  });
});

describe('a payer whose settlements fail on chain', () => {
  it('is refused for a cool-down after 3 failures, by verify and settle, without a fee; others are not', async () => {
    let clock = Date.now();
    const port = createSdkRpc({ url: h.devnet.rpcUrl });
    let failing: string | null = null;
    const f = await journaledFacilitator(h, {
      now: () => clock,
      policy: { payerFailureLimit: 3, payerFailureWindowMs: 600_000 },
      scheme: {
        rpc: {
          ...port,
          // The payer's trustline is frozen after svc simulated the payment: the transaction then
          // fails in its ledger, at svc's cost (as when a payer moves its balance in between).
          send: async (tx: Parameters<typeof port.send>[0]) => {
            if (failing) h.devnet.setUsdcAuthorized(failing, false);
            return port.send(tx);
          },
        },
      },
    });
    try {
      const { buyer, seller } = await h.parties();
      const req = h.requirements(seller.publicKey());
      failing = buyer.publicKey();
      for (let i = 0; i < 3; i++) {
        const settled = (await f.settle(await h.pay(req, buyer), req)).body;
        h.devnet.setUsdcAuthorized(buyer.publicKey(), true);
        expect(settled, `failure ${i + 1}`).toMatchObject({ success: false, errorReason: 'settle_exact_stellar_transaction_failed' });
      }
      failing = null;
      const submitterXlm = h.devnet.balances(f.submitter).xlm;
      const next = await h.pay(req, buyer);
      expect((await f.verify(next, req)).body).toMatchObject({ isValid: false, invalidReason: 'svc_policy_payer_cooling_down' });
      expect((await f.settle(next, req)).body).toMatchObject({
        success: false,
        transaction: '',
        errorReason: 'svc_policy_payer_cooling_down',
      });
      expect(h.devnet.balances(f.submitter).xlm).toBe(submitterXlm);

      const other = await h.parties();
      const otherReq = h.requirements(other.seller.publicKey());
      expect((await f.settle(await h.pay(otherReq, other.buyer), otherReq)).body).toMatchObject({ success: true });

      // Once the failures have left the window the payer is served again.
      clock += 600_001;
      expect((await f.settle(await h.pay(req, buyer), req)).body).toMatchObject({ success: true });
    } finally {
      await f.close();
    }
  });
});
