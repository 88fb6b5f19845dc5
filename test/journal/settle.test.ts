/**
 * /settle through the settlement journal, over real HTTP on the devnet, once with a real SQLite
 * file and once with a real PostgreSQL database (DATABASE_URL, docs/SCALING.md): concurrent copies
 * submit one transaction, idempotent retries, the policy and fee budget (also across a restart on
 * the same database), and an RPC that is blind or answers garbage → `unknown`, later reconciled.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemeHarness } from '../scheme/harness.ts';
import type { JournalStore } from '../../src/journal/types.ts';
import type { PaymentPolicy } from '../../src/journal/policy.ts';
import { api } from '../helpers/contract.ts';
import { journaledFacilitator, settleUnconfirmed, tempDbPath } from './harness.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { PostgresJournalStore } from '../../src/journal/postgres/store.ts';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';
import { SettlementJournal } from '../../src/journal/journal.ts';
import { DEFAULT_POLICY } from '../../src/journal/policy.ts';
import pg from 'pg';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

async function paidRequest(opts: { maxTimeoutSeconds?: number; amount?: string; selfPay?: boolean } = {}) {
  const { buyer, seller } = await h.parties();
  const req = h.requirements(opts.selfPay ? buyer.publicKey() : seller.publicKey(), {
    ...(opts.maxTimeoutSeconds ? { maxTimeoutSeconds: opts.maxTimeoutSeconds } : {}),
    ...(opts.amount ? { amount: opts.amount } : {}),
  });
  return { buyer, seller, req, payload: await h.pay(req, buyer) };
}

/** How many transactions the submitter sourced, and the XLM it paid, while `work` ran. */
async function spent(submitter: string, work: () => Promise<unknown>) {
  const seq = await h.rpc.getAccountSequence(submitter);
  const xlm = h.devnet.balances(submitter).xlm;
  await work();
  return { transactions: Number((await h.rpc.getAccountSequence(submitter)) - seq), stroops: xlm - h.devnet.balances(submitter).xlm };
}

interface Database {
  /** A store on this database (a new connection each call, like a restarted svc). */
  store(): Promise<JournalStore>;
  /** Everything stored, as text (to prove no seed reaches it). */
  dump(): Promise<string>;
}

const backends: Array<[string, () => Promise<Database>]> = [
  [
    'SQLite',
    async () => {
      const dbPath = tempDbPath();
      return {
        store: async () => new SqliteJournalStore(dbPath),
        dump: async () =>
          readdirSync(dirname(dbPath))
            .map((name) => readFileSync(join(dirname(dbPath), name)).toString('latin1'))
            .join(''),
      };
    },
  ],
  [
    'Postgres',
    async () => {
      const url = await freshDatabase();
      return {
        store: () => PostgresJournalStore.open(url),
        dump: async () => {
          const client = new pg.Client({ connectionString: url });
          await client.connect();
          try {
            const rows = await client.query(
              'SELECT s::text AS row FROM journal_settlements s UNION ALL SELECT j::text FROM journal_history j',
            );
            return rows.rows.map((r: { row: string }) => r.row).join('\n');
          } finally {
            await client.end();
          }
        },
      };
    },
  ],
];

describe.each(backends)('the journal on %s', (_name, backend) => {
  let database: Database;

  describe('concurrent copies of one payment', () => {
    it.each([10, 100])(
      '%i copies without a key: one transaction, one success, the rest the replay code, no fee burnt on failures',
      async (copies) => {
        const f = await journaledFacilitator(h, { store: await (database = await backend()).store() });
        const p = await paidRequest();
        let bodies: any[] = [];
        const cost = await spent(f.submitter, async () => {
          bodies = (await Promise.all(Array.from({ length: copies }, () => f.settle(p.payload, p.req)))).map((r) => r.body);
        });
        const successes = bodies.filter((b) => b.success);
        expect(successes).toHaveLength(1);
        expect(bodies.filter((b) => b.errorReason === 'invalid_exact_stellar_payload_simulation_failed')).toHaveLength(copies - 1);
        expect(cost.transactions).toBe(1);
        const landed = await h.rpc.getTransaction(successes[0].transaction);
        expect(cost.stroops).toBe(landed.feeCharged);
        expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(100_000n);
        await f.close();
      },
    );

    it('100 copies carrying one Idempotency-Key: all get the same success, one transaction', async () => {
      const f = await journaledFacilitator(h, { store: await (database = await backend()).store() });
      const p = await paidRequest();
      let bodies: any[] = [];
      const cost = await spent(f.submitter, async () => {
        bodies = (await Promise.all(Array.from({ length: 100 }, () => f.settle(p.payload, p.req, 'seller-retry-1')))).map((r) => r.body);
      });
      expect(bodies.every((b) => b.success === true && b.transaction === bodies[0].transaction)).toBe(true);
      expect(cost.transactions).toBe(1);
      await f.close();
    });
  });

  describe('idempotent retry and the public record', () => {
    it('a retry with the key gets the outcome, without it the replay code; GET /settlements shows the record', async () => {
      const f = await journaledFacilitator(h, { store: await (database = await backend()).store() });
      const p = await paidRequest();
      const first = await f.settle(p.payload, p.req, 'k1');
      expect(first.body.success).toBe(true);
      const cost = await spent(f.submitter, async () => {
        expect((await f.settle(p.payload, p.req, 'k1')).body).toEqual(first.body);
        expect((await f.settle(p.payload, p.req)).body.errorReason).toBe('invalid_exact_stellar_payload_simulation_failed');
        expect((await f.settle(p.payload, p.req, 'other')).body.errorReason).toBe('invalid_exact_stellar_payload_simulation_failed');
      });
      expect(cost).toEqual({ transactions: 0, stroops: 0n });
      const record = await api(f.url).get(`/settlements/${first.body.transaction}`);
      expect(record.status).toBe(200);
      expect(record.body).toMatchObject({
        transaction: first.body.transaction,
        state: 'settled',
        payer: p.buyer.publicKey(),
        payTo: p.seller.publicKey(),
        amount: '100000',
      });
      expect(record.body.history.map((x: any) => x.state)).toEqual(['submitted', 'settled']);
      expect(record.text).not.toContain('k1');
      expect((await api(f.url).get(`/settlements/${'0'.repeat(64)}`)).body.error.code).toBe('svc_settlement_not_found');
      const malformed = await api(f.url).get('/settlements/nothex');
      expect([malformed.status, malformed.body.error.code]).toEqual([400, 'svc_invalid_transaction_hash']);
      expect(malformed.body.error.reason).toContain('"nothex"');
      // Either letter case names the same settlement.
      expect((await api(f.url).get(`/settlements/${first.body.transaction.toUpperCase()}`)).body.state).toBe('settled');
      await f.close();
      // The stored journal never holds a seed.
      const stored = await database.dump();
      expect(stored.includes(f.submitterSecret)).toBe(false);
      expect(stored).toContain(first.body.transaction);
    });
  });

  describe('payment policy and fee budget', () => {
    it('refuses the free self-payment drain and amounts under the minimum, before submission', async () => {
      const f = await journaledFacilitator(h, {
        store: await (database = await backend()).store(),
        policy: { minAmountByAsset: new Map([[h.devnet.usdc.contractId, 1_000n]]) },
      });
      const self = await paidRequest({ selfPay: true, amount: '1' });
      const small = await paidRequest({ amount: '999' });
      const cost = await spent(f.submitter, async () => {
        // /verify refuses each with the code /settle answers (verify and settle agree).
        expect((await f.verify(self.payload, self.req)).body).toMatchObject({ isValid: false, invalidReason: 'svc_policy_self_payment' });
        expect((await f.verify(small.payload, small.req)).body).toMatchObject({
          isValid: false,
          invalidReason: 'svc_policy_amount_below_minimum',
        });
        expect((await f.settle(self.payload, self.req)).body.errorReason).toBe('svc_policy_self_payment');
        expect((await f.settle(small.payload, small.req)).body.errorReason).toBe('svc_policy_amount_below_minimum');
      });
      // An honest payment of the minimum is valid.
      const fine = await paidRequest({ amount: '1000' });
      expect((await f.verify(fine.payload, fine.req)).body).toMatchObject({ isValid: true });
      expect(cost).toEqual({ transactions: 0, stroops: 0n });
      await f.close();
    });

    it('per-payer and daily caps hold across a restart on the same database', async () => {
      const shared = await backend();
      const account = await h.devnet.createAccount({ usdcTrustline: false });
      const first = await journaledFacilitator(h, { store: await shared.store(), submitterSecret: account.secret });
      const a = await paidRequest();
      const settled = await first.settle(a.payload, a.req);
      expect(settled.body.success).toBe(true);
      const fee = (await first.journal.store.getByTransaction(settled.body.transaction))!.feeStroops;
      await first.close();

      // Restarted with a per-payer cap below two settlements: the same payer is refused, another is not.
      const again = await journaledFacilitator(h, {
        store: await shared.store(),
        submitterSecret: account.secret,
        policy: { payerDailyFeeCapStroops: fee + fee / 2n, dailyFeeCapStroops: null },
      });
      const { buyer } = a;
      const req2 = h.requirements(a.seller.publicKey());
      const second = await h.pay(req2, buyer);
      expect((await again.settle(second, req2)).body.errorReason).toBe('svc_fee_budget_payer_exhausted');
      await again.close();

      // With caps the journal has used up, /verify refuses with the code /settle answers; another
      // payer is still valid under a spent per-payer cap.
      const spentUp = async (policy: Partial<PaymentPolicy>) =>
        journaledFacilitator(h, { store: await shared.store(), submitterSecret: account.secret, policy });
      const payerCapped = await spentUp({ payerDailyFeeCapStroops: fee, dailyFeeCapStroops: null });
      expect((await payerCapped.verify(second, req2)).body).toMatchObject({
        isValid: false,
        invalidReason: 'svc_fee_budget_payer_exhausted',
      });
      const other = await paidRequest();
      expect((await payerCapped.verify(other.payload, other.req)).body).toMatchObject({ isValid: true });
      await payerCapped.close();
      const dayCapped = await spentUp({ dailyFeeCapStroops: fee, payerDailyFeeCapStroops: null });
      expect((await dayCapped.verify(other.payload, other.req)).body).toMatchObject({
        isValid: false,
        invalidReason: 'svc_fee_budget_daily_exhausted',
      });
      await dayCapped.close();

      const capped = await journaledFacilitator(h, {
        store: await shared.store(),
        submitterSecret: account.secret,
        policy: { dailyFeeCapStroops: fee + fee / 2n, payerDailyFeeCapStroops: null },
      });
      const b = await paidRequest();
      expect((await capped.settle(b.payload, b.req)).body.errorReason).toBe('svc_fee_budget_daily_exhausted');
      expect(h.devnet.balances(b.seller.publicKey()).usdc).toBe(0n);
      await capped.close();
    });
  });

  describe('an RPC that cannot tell the outcome', () => {
    it.each([
      ['blind (getTransaction errors throughout the settle wait)', { kind: 'rpcError' as const }],
      ['garbage (getTransaction answers result null)', { kind: 'garbage' as const }],
    ])('%s → settlement_pending, later reconciled to settled, listed, and the retry tells the truth', async (_name, fault) => {
      // Pending once the settle wait (SETTLE_WAIT_SECONDS, 1 s here) is over, before the time bound
      // (test/scheme/settle.test.ts waits out the bound): the journal records both alike.
      const f = await journaledFacilitator(h, { store: await (database = await backend()).store(), scheme: { settleWaitMs: 1_000 } });
      const p = await paidRequest({ maxTimeoutSeconds: 4 });
      await settleUnconfirmed(h, f, p, { fault, idempotencyKey: 'blind-key' });
      // It lands (possibly after the answer: an unreadable getTransaction is given up at once).
      for (let i = 0; i < 40 && h.devnet.balances(p.seller.publicKey()).usdc === 0n; i++) await new Promise((r) => setTimeout(r, 250));
      expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(100_000n);
      const [record] = await f.journal.store.unresolved(10);
      expect(record!.state).toBe('unknown');
      expect(f.landed).toHaveLength(0);

      expect(await f.journal.reconcile(f.scheme.tracking)).toBe(1);
      expect((await f.journal.store.get(record!.identity))!.state).toBe('settled');
      expect(f.landed).toHaveLength(1);
      const retry = await f.settle(p.payload, p.req, 'blind-key');
      expect(retry.body).toMatchObject({ success: true, transaction: record!.transaction });
      await f.close();
    });

    it('a long time bound: settle answers settlement_pending once its wait (SETTLE_WAIT_SECONDS) is over, and the retry owed the outcome waits for it', async () => {
      // The stock x402 HTTP client gives up on a facilitator after 90 s; a payment may allow 300 s.
      const f = await journaledFacilitator(h, { scheme: { settleWaitMs: 1_000 }, pendingRetryWaitMs: 30_000 });
      const p = await paidRequest({ maxTimeoutSeconds: 120 });
      const first = await settleUnconfirmed(h, f, p, { fault: { kind: 'rpcError' } });
      const record = await f.journal.store.getByTransaction(first.body.transaction);
      // Answered while the transaction could still land for minutes: the wait, not its bound, ended it.
      expect(Date.now()).toBeLessThan(record!.validUntil * 1000);
      expect(first.body.errorMessage).toContain('SETTLE_WAIT_SECONDS');
      // The SDK's retry comes at once and meets the same blind RPC, which recovers while it waits.
      h.devnet.faults.set('getTransaction', { kind: 'rpcError' });
      const recovered = setTimeout(() => h.devnet.faults.clear(), 1_000);
      try {
        const retry = await f.settle(p.payload, p.req);
        expect(retry.body).toMatchObject({ success: true, transaction: first.body.transaction });
      } finally {
        clearTimeout(recovered);
        h.devnet.faults.clear();
      }
      expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(100_000n);
      await f.close();
    });
  });
});

describe('stopping the reconciler (a drain, then the close)', () => {
  it('waits for the pass in flight: a payment it finds landed keeps its catalog write', async () => {
    const f = await journaledFacilitator(h, { scheme: { settleWaitMs: 1_000 } });
    const p = await paidRequest({ maxTimeoutSeconds: 4 });
    await settleUnconfirmed(h, f, p);
    for (let i = 0; i < 40 && h.devnet.balances(p.seller.publicKey()).usdc === 0n; i++) await new Promise((r) => setTimeout(r, 250));
    expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(100_000n);
    // Another journal on the same file, whose catalog hook is slow: the one a stopping svc runs.
    let hookStarted!: () => void;
    const started = new Promise<void>((resolve) => (hookStarted = resolve));
    const listed: string[] = [];
    const journal = new SettlementJournal({
      store: new SqliteJournalStore(f.dbPath),
      policy: DEFAULT_POLICY,
      onLanded: async ({ response }) => {
        hookStarted();
        await new Promise((r) => setTimeout(r, 500));
        listed.push(response.transaction);
      },
    });
    const stop = journal.startReconciler(f.scheme.tracking, 60_000);
    await started;
    await stop();
    expect(listed).toHaveLength(1);
    await journal.store.close();
    await f.close();
  });
});

describe('before the catalog closes', () => {
  it('a settled payment whose catalog hook faulted moments ago is listed now, not 10 s later or after a restart', async () => {
    const f = await journaledFacilitator(h);
    const p = await paidRequest();
    const settled = await f.settle(p.payload, p.req);
    expect(settled.body.success).toBe(true);
    // As a hook that faulted during the request leaves it: settled, not listed.
    const db = new DatabaseSync(f.dbPath);
    db.prepare('UPDATE journal_settlements SET listed = 0').run();
    db.close();
    const listed: string[] = [];
    const journal = new SettlementJournal({
      store: new SqliteJournalStore(f.dbPath),
      policy: DEFAULT_POLICY,
      onLanded: ({ response }) => void listed.push(response.transaction),
    });
    // The reconciler's pass leaves a record changed within 10 s to the request that may still run its hook.
    await journal.reconcile(f.scheme.tracking);
    expect(listed).toEqual([]);
    await journal.listBeforeClose();
    expect(listed).toEqual([settled.body.transaction]);
    expect(await journal.store.unlisted(10, Date.now() + 1, Date.now())).toEqual([]);
    await journal.store.close();
    await f.close();
  });
});
