/**
 * The journal store contract, run against both stores (SQLite file and PostgreSQL, docs/SCALING.md):
 * reserve once per payment, a failed attempt may be retried, the fee caps, state changes and their
 * history, the catalog backlog (a faulting catalog hook backs off) and the reconciler's queue. On Postgres, two stores stand for two svc
 * instances sharing one database: concurrent reserves of one payment leave exactly one, and
 * concurrent reserves under a daily cap spend exactly what the cap allows.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listingRetryDelay, SettlementJournal } from '../../src/journal/journal.ts';
import { DEFAULT_POLICY, reserveRule, type PaymentPolicy } from '../../src/journal/policy.ts';
import { PostgresJournalStore } from '../../src/journal/postgres/store.ts';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';
import type { BudgetRule, BudgetUsage, JournalStore, NewSettlement } from '../../src/journal/types.ts';
import type {
  PaymentPayload,
  PaymentRequirements,
  PaymentScheme,
  SettleHooks,
  SettlementTracking,
  SubmissionAttempt,
} from '../../src/scheme/types.ts';
import { freshDatabase, lateDatabase } from '../helpers/postgres.ts';

const NO_CAPS: BudgetRule = { window: { dayStart: 0, failuresSince: 0 }, judge: () => null };
/** The default policy with only the given caps: what reserve judges, as svc's journal calls it. */
const capped = (over: Partial<PaymentPolicy>): PaymentPolicy => ({
  ...DEFAULT_POLICY,
  dailyFeeCapStroops: null,
  payerDailyFeeCapStroops: null,
  payToDailyFeeCapStroops: null,
  newAddressDailyFeeCapStroops: null,
  newPayTosDailyFeeCapStroops: null,
  payerFailureLimit: 0,
  ...over,
});
const rule = (policy: PaymentPolicy, a: NewSettlement, now: number): BudgetRule => reserveRule(policy, a, a.feeStroops, now);
let n = 0;
/** What a scheme knows of an attempt before submitting it, with a transaction of its own. */
function submission(): SubmissionAttempt {
  n++;
  return {
    transaction: `tx-${n}`,
    submitter: 'GSUBMITTER',
    feeStroops: 100n,
    payer: 'GPAYER',
    payTo: 'GPAYTO',
    asset: 'CASSET',
    amount: '1000',
    validUntil: 2_000_000_000,
  };
}
function attempt(over: Partial<NewSettlement> = {}): NewSettlement {
  const own = submission();
  return {
    identity: `payment-${n}`,
    idempotencyKey: null,
    requestDigest: `digest-${n}`,
    keys: [],
    network: 'stellar:testnet',
    paymentPayload: '{"p":1}',
    paymentRequirements: '{"r":1}',
    ...own,
    ...over,
  };
}

const backends: Array<[string, () => Promise<{ open: () => Promise<JournalStore> }>]> = [
  [
    'SQLite',
    async () => {
      const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-contract-')), 'svc.sqlite');
      return { open: () => Promise.resolve(new SqliteJournalStore(path)) };
    },
  ],
  [
    'Postgres',
    async () => {
      const url = await freshDatabase();
      return { open: () => PostgresJournalStore.open(url) };
    },
  ],
];

describe.each(backends)('journal store on %s', (_name, backend) => {
  it('reserves a payment once; a failed attempt may be attempted again, with its history', async () => {
    const store = await (await backend()).open();
    try {
      const a = attempt();
      expect(await store.reserve(a, NO_CAPS, 1_000)).toEqual({ ok: true });
      expect(await store.reserve({ ...a, transaction: 'tx-copy' }, NO_CAPS, 1_001)).toEqual({ ok: false, reason: 'duplicate' });
      expect(
        await store.resolve(a.identity, 'failed', { errorCode: 'tx_failed', errorMessage: 'boom', note: 'the chain refused it' }, 1_002),
      ).toBe(true);
      expect(await store.resolve(a.identity, 'settled', { note: 'too late' }, 1_003)).toBe(false); // final
      expect(await store.reserve({ ...a, transaction: 'tx-again' }, NO_CAPS, 1_004)).toEqual({ ok: true });
      const record = (await store.get(a.identity))!;
      expect(record).toMatchObject({
        state: 'submitted',
        transaction: 'tx-again',
        feeStroops: 100n,
        errorCode: null,
        createdAt: 1_000,
        updatedAt: 1_004,
      });
      expect(record.history.map((h) => [h.state, h.at])).toEqual([
        ['submitted', 1_000],
        ['failed', 1_002],
        ['submitted', 1_004],
      ]);
      expect((await store.getByTransaction('tx-again'))?.identity).toBe(a.identity);
      expect(await store.getByTransaction(a.transaction)).toBeNull();
      expect(await store.get('nothing')).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('a key is bound to its payment and request once: a failed attempt under a new key never re-binds it; another payment or request with it is a conflict', async () => {
    const store = await (await backend()).open();
    try {
      const k1 = { kind: 'header' as const, key: 'k1' };
      const k2 = { kind: 'header' as const, key: 'k2' };
      const pid = { kind: 'payment-identifier' as const, key: 'pay_0123456789abcdef' };
      const a = attempt({ keys: [k1, pid], requestDigest: 'd1', idempotencyKey: 'k1' });
      expect(await store.reserve(a, NO_CAPS, 1_000)).toEqual({ ok: true });
      expect(await store.keyBinding(k1)).toEqual({ identity: a.identity, digest: 'd1' });
      expect(await store.keyBinding(pid)).toEqual({ identity: a.identity, digest: 'd1' });
      expect(await store.keyBinding({ kind: 'payment-identifier', key: 'k1' })).toBeNull(); // kinds do not mix
      await store.resolve(a.identity, 'failed', { note: 'failed on chain' }, 1_001);
      // Another payment, or the same payment with another request digest, under a bound key: refused, nothing written.
      expect(await store.reserve(attempt({ keys: [k1], requestDigest: 'd1' }), NO_CAPS, 1_002)).toEqual({
        ok: false,
        reason: 'key_conflict',
      });
      expect(await store.reserve({ ...a, transaction: 'tx-other', keys: [pid], requestDigest: 'd9' }, NO_CAPS, 1_003)).toMatchObject({
        reason: 'key_conflict',
      });
      // The retry after the failure under a new key binds k2 and leaves k1 (and its first key) as they were.
      expect(await store.reserve({ ...a, transaction: 'tx-again', keys: [k2], idempotencyKey: 'k2' }, NO_CAPS, 1_004)).toEqual({
        ok: true,
      });
      expect(await store.keyBinding(k1)).toEqual({ identity: a.identity, digest: 'd1' });
      expect(await store.keyBinding(k2)).toEqual({ identity: a.identity, digest: 'd1' });
      expect((await store.get(a.identity))!.idempotencyKey).toBe('k1');
    } finally {
      await store.close();
    }
  });

  it('the outcome owed after settlement_pending is claimed exactly once, by the request it is owed to', async () => {
    const store = await (await backend()).open();
    try {
      const a = attempt();
      await store.reserve(a, NO_CAPS, 1_000);
      expect((await store.get(a.identity))!.owedDigest).toBeNull();
      await store.markOwed(a.identity, 'd1');
      expect((await store.get(a.identity))!.owedDigest).toBe('d1');
      expect(await store.claimOwed(a.identity, 'd2')).toBe(false);
      const claims = await Promise.all([store.claimOwed(a.identity, 'd1'), store.claimOwed(a.identity, 'd1')]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect((await store.get(a.identity))!.owedDigest).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('daily and per-payer fee caps count every attempt, and hold across a reopen', async () => {
    const b = await backend();
    let store = await b.open();
    const DAY = 86_400_000;
    const reserve = (a: NewSettlement, policy: PaymentPolicy, now: number) => store.reserve(a, rule(policy, a, now), now);
    try {
      const policy = capped({ dailyFeeCapStroops: 1_000n, payerDailyFeeCapStroops: 300n });
      expect(await reserve(attempt({ payer: 'GA', feeStroops: 300n }), policy, DAY + 600)).toEqual({ ok: true });
      expect(await reserve(attempt({ payer: 'GA', feeStroops: 1n }), policy, DAY + 601)).toMatchObject({
        ok: false,
        reason: 'refused',
        refusal: { code: 'svc_fee_budget_payer_exhausted' },
      });
      await store.close();
      store = await b.open();
      expect(await reserve(attempt({ payer: 'GB', feeStroops: 300n }), policy, DAY + 602)).toEqual({ ok: true });
      expect(await reserve(attempt({ payer: 'GC', feeStroops: 300n }), policy, DAY + 603)).toEqual({ ok: true });
      expect(await reserve(attempt({ payer: 'GD', feeStroops: 101n }), policy, DAY + 604)).toMatchObject({
        ok: false,
        reason: 'refused',
        refusal: { code: 'svc_fee_budget_daily_exhausted', message: expect.stringContaining('900 stroops') },
      });
      // Yesterday's spending does not count today.
      expect(await reserve(attempt({ payer: 'GA', feeStroops: 300n }), policy, 2 * DAY + 1)).toEqual({ ok: true });
    } finally {
      await store.close();
    }
  });

  it("sums today's sponsored fees by payTo: how many, how many near and at their cap, the largest", async () => {
    const store = await (await backend()).open();
    const DAY = 86_400_000;
    const reserve = (payTo: string, feeStroops: bigint, now: number, network = 'stellar:testnet') =>
      store.reserve(attempt({ payTo, feeStroops, network }), NO_CAPS, now);
    try {
      await reserve('GSHOP', 900n, DAY - 1); // yesterday: not counted
      await reserve('GSHOP', 60n, DAY + 1);
      await reserve('GSHOP', 30n, DAY + 2);
      await reserve('GNEAR', 85n, DAY + 3);
      await reserve('GSMALL', 10n, DAY + 4);
      await reserve('GOTHER', 500n, DAY + 5, 'stellar:pubnet'); // another network
      const bounds = { nearCap: 80n, cap: 90n };
      expect(await store.payToSpending('stellar:testnet', DAY, bounds)).toEqual({ payTos: 3, nearCap: 2, atCap: 1, largest: 90n });
      expect(await store.payToSpending('stellar:testnet', DAY, { nearCap: null, cap: null })).toEqual({
        payTos: 3,
        nearCap: 0,
        atCap: 0,
        largest: 90n,
      });
      expect(await store.payToSpending('stellar:testnet', 2 * DAY, bounds)).toEqual({ payTos: 0, nearCap: 0, atCap: 0, largest: 0n });
    } finally {
      await store.close();
    }
  });

  it('counts what the budget judges: fees by payer, by payTo and to new payTos, history before today, on-chain failures', async () => {
    const store = await (await backend()).open();
    const DAY = 86_400_000;
    const usage = (payer: string, payTo: string, now: number, network = 'stellar:testnet'): Promise<BudgetUsage> =>
      store.budgetUsage({ payer, payTo, network }, { dayStart: Math.floor(now / DAY) * DAY, failuresSince: now - 1_000 });
    const reserve = (a: NewSettlement, now: number) => store.reserve(a, NO_CAPS, now);
    try {
      // Yesterday: GA paid GSHOP (settled), GB's payment to GSINK failed.
      const old = attempt({ payer: 'GA', payTo: 'GSHOP', feeStroops: 50n });
      await reserve(old, DAY - 10);
      await store.resolve(old.identity, 'settled', { note: 'test' }, DAY - 5);
      const failedYesterday = attempt({ payer: 'GB', payTo: 'GSINK', feeStroops: 70n });
      await reserve(failedYesterday, DAY - 9);
      await store.resolve(
        failedYesterday.identity,
        'failed',
        { errorCode: 'settle_exact_stellar_transaction_failed', note: 'test' },
        DAY - 4,
      );
      // Today: GB pays GSINK three times (new payTo), GA pays GSHOP once (known payTo); two of GB's fail on chain, one not on chain.
      for (const fee of [10n, 20n, 30n]) await reserve(attempt({ payer: 'GB', payTo: 'GSINK', feeStroops: fee }), DAY + 1);
      const known = attempt({ payer: 'GA', payTo: 'GSHOP', feeStroops: 5n });
      expect(await store.reserve(known, { window: { dayStart: DAY, failuresSince: 0 }, judge: () => null }, DAY + 2)).toEqual({ ok: true });
      const gb = (await store.unresolved(10)).filter((r) => r.payer === 'GB');
      expect(gb).toHaveLength(3);
      await store.resolve(gb[0]!.identity, 'failed', { errorCode: 'settle_exact_stellar_transaction_failed', note: 'test' }, DAY + 3);
      await store.resolve(gb[1]!.identity, 'failed', { errorCode: 'settle_exact_stellar_transaction_failed', note: 'test' }, DAY + 500);
      await store.resolve(
        gb[2]!.identity,
        'failed',
        { errorCode: 'settle_exact_stellar_transaction_submission_failed', note: 'test' },
        DAY + 501,
      );

      expect(await usage('GB', 'GSINK', DAY + 1_200)).toEqual({
        total: 65n,
        payer: 60n,
        payTo: 60n,
        newPayTos: 60n,
        payerHasHistory: false,
        payToHasHistory: false,
        // failuresSince = DAY + 200: the one at DAY + 3 has left the window, the submission failure never counts.
        payerFailures: 1,
      } satisfies BudgetUsage);
      expect(await usage('GA', 'GSHOP', DAY + 1_200)).toMatchObject({
        payer: 5n,
        payTo: 5n,
        payerHasHistory: true,
        payToHasHistory: true,
        payerFailures: 0,
      });
      // Another network's fees, history and failures are its own: pubnet XLM is not testnet XLM.
      expect(await usage('GB', 'GSINK', DAY + 1_200, 'stellar:pubnet')).toEqual({
        total: 0n,
        payer: 0n,
        payTo: 0n,
        newPayTos: 0n,
        payerHasHistory: false,
        payToHasHistory: false,
        payerFailures: 0,
      } satisfies BudgetUsage);
      await reserve(attempt({ payer: 'GA', payTo: 'GSHOP', feeStroops: 7n, network: 'stellar:pubnet' }), DAY + 3);
      expect(await usage('GA', 'GSHOP', DAY + 1_200, 'stellar:pubnet')).toMatchObject({ total: 7n, payer: 7n, payerHasHistory: false });
      expect(await usage('GA', 'GSHOP', DAY + 1_200)).toMatchObject({ total: 65n, payer: 5n });
      // A payment to a payTo with history is not counted with the new ones; tomorrow everything starts again.
      expect(await usage('GA', 'GSHOP', 2 * DAY + 1)).toMatchObject({
        total: 0n,
        payer: 0n,
        payTo: 0n,
        newPayTos: 0n,
        payerHasHistory: true,
      });
    } finally {
      await store.close();
    }
  });

  it('feeds the reconciler (unresolved, oldest first) and the catalog backlog (settled, not listed)', async () => {
    const store = await (await backend()).open();
    try {
      const [a, b, c] = [attempt(), attempt(), attempt()];
      await store.reserve(b, NO_CAPS, 20);
      await store.reserve(a, NO_CAPS, 10);
      await store.reserve(c, NO_CAPS, 30);
      expect(await store.resolve(c.identity, 'unknown', { note: 'rpc blind' }, 31)).toBe(true);
      expect((await store.unresolved(10)).map((r) => r.identity)).toEqual([a.identity, b.identity, c.identity]);
      expect(await store.resolve(a.identity, 'settled', { note: 'landed' }, 40)).toBe(true);
      expect(await store.resolve(c.identity, 'settled', { note: 'landed' }, 41)).toBe(true);
      expect((await store.unresolved(10)).map((r) => r.identity)).toEqual([b.identity]);
      expect((await store.unlisted(10, 41, 41)).map((r) => r.identity)).toEqual([a.identity]);
      expect((await store.unlisted(10, 100, 100)).map((r) => r.identity)).toEqual([a.identity, c.identity]);
      // A deferred record is not due before its time, then comes after the records always due.
      await store.deferListing(a.identity, 150);
      expect((await store.unlisted(10, 100, 149)).map((r) => r.identity)).toEqual([c.identity]);
      expect((await store.unlisted(10, 100, 150)).map((r) => r.identity)).toEqual([c.identity, a.identity]);
      expect((await store.get(a.identity))!.listFailures).toBe(1);
      expect((await store.get(c.identity))!.listFailures).toBe(0);
      // A claim takes a due record once, until its time.
      expect(await store.claimListing(c.identity, 150, 170)).toBe(true);
      expect(await store.claimListing(c.identity, 150, 170)).toBe(false);
      expect((await store.unlisted(10, 100, 169)).map((r) => r.identity)).toEqual([a.identity]);
      expect(await store.claimListing(c.identity, 170, 180)).toBe(true);
      expect(await store.claimListing(b.identity, 170, 180)).toBe(false); // not settled
      await store.markListed(a.identity);
      expect((await store.unlisted(10, 100, 200)).map((r) => r.identity)).toEqual([c.identity]);
      expect(await store.claimListing(a.identity, 200, 210)).toBe(false); // listed
      expect((await store.get(c.identity))!.history.map((h) => h.state)).toEqual(['submitted', 'unknown', 'settled']);
    } finally {
      await store.close();
    }
  });
});

describe.each(backends)('catalog backlog on %s', (_name, backend) => {
  it('a payment whose catalog hook keeps faulting is retried later and later, and does not hold back the others', async () => {
    const store = await (await backend()).open();
    let clock = 1_000_000;
    const BASE = 10_000;
    const landed: string[] = [];
    let faulty = true;
    const journal = new SettlementJournal({
      store,
      policy: DEFAULT_POLICY,
      now: () => clock,
      listingRetryBaseMs: BASE,
      onLanded: ({ paymentRequirements }) => {
        const name = (paymentRequirements as unknown as { name: string }).name;
        if (name === 'faulty' && faulty) throw new Error('catalog write failed');
        landed.push(name);
      },
    });
    // The chain is never asked: no record is unresolved.
    const tracking = {} as SettlementTracking;
    try {
      const [bad, good, later] = [
        attempt({ paymentRequirements: '{"name":"faulty"}' }),
        attempt({ paymentRequirements: '{"name":"good"}' }),
        attempt({ paymentRequirements: '{"name":"later"}' }),
      ];
      for (const [i, a] of [bad, good, later].entries()) {
        await store.reserve(a, NO_CAPS, i);
        await store.resolve(a.identity, 'settled', { note: 'landed' }, 10 + i);
      }
      // One record per pass: the faulting one first (it is the oldest), then the others.
      await journal.reconcile(tracking, 1);
      expect(landed).toEqual([]);
      expect((await store.get(bad.identity))!.listFailures).toBe(1);
      await journal.reconcile(tracking, 1);
      await journal.reconcile(tracking, 1);
      expect(landed).toEqual(['good', 'later']);
      // Not retried before its delay (the base), then retried; the next delay doubles.
      clock += listingRetryDelay(0, BASE) - 1;
      await journal.reconcile(tracking, 1);
      expect((await store.get(bad.identity))!.listFailures).toBe(1);
      clock += 1;
      await journal.reconcile(tracking, 1);
      expect((await store.get(bad.identity))!.listFailures).toBe(2);
      expect(listingRetryDelay(0, BASE)).toBe(BASE);
      expect(listingRetryDelay(1, BASE)).toBe(2 * BASE);
      expect(listingRetryDelay(40, BASE)).toBe(3_600_000);
      // Once the hook works again, the payment is listed at its next retry.
      faulty = false;
      clock += listingRetryDelay(1, BASE);
      await journal.reconcile(tracking, 1);
      expect(landed).toEqual(['good', 'later', 'faulty']);
      expect(await store.unlisted(10, clock, clock)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe.each(backends)('reconciler on %s', (_name, backend) => {
  it("records held by this process's own settles do not count against a pass's limit, so a record a dead instance left is reached", async () => {
    const store = await (await backend()).open();
    let clock = 1_000_000;
    const journal = new SettlementJournal({ store, policy: DEFAULT_POLICY, now: () => clock });
    // The chain boundary: a scheme whose settles reserve their journal record, then stay in flight.
    const release: Array<() => void> = [];
    const scheme = {
      settle: async (_payload: PaymentPayload, _requirements: PaymentRequirements, hooks?: SettleHooks) => {
        expect(await hooks!.beforeSubmit(submission())).toBeNull();
        await new Promise<void>((resolve) => release.push(resolve));
        return { success: true, transaction: '', network: 'stellar:testnet', payer: 'GPAYER' };
      },
    } as unknown as PaymentScheme;
    const requirements = { network: 'stellar:testnet' } as PaymentRequirements;
    const inFlight = [1, 2, 3].map((held) =>
      journal.settle({
        scheme,
        payload: { x402Version: 2, payload: { held } }, // a payment of its own (its identity)
        requirements,
        idempotencyKey: null,
      }),
    );
    try {
      while (release.length < 3) await new Promise((r) => setTimeout(r, 5));
      // Another instance reserved this payment after them and died before resolving it.
      clock += 1;
      const orphan = attempt();
      await store.reserve(orphan, NO_CAPS, clock);
      const asked: string[] = [];
      const tracking: SettlementTracking = {
        identity: () => null,
        replayCode: 'settle_exact_stellar_transaction_failed',
        status: (transaction) => {
          asked.push(transaction);
          return Promise.resolve('settled');
        },
      };
      expect(await journal.reconcile(tracking, 2)).toBe(1);
      expect(asked).toEqual([orphan.transaction]);
      expect((await store.get(orphan.identity))!.state).toBe('settled');
    } finally {
      for (const resolve of release) resolve();
      await Promise.all(inFlight);
      await store.close();
    }
  });
});

describe('journal on Postgres shared by two instances', () => {
  it('concurrent reserves of one payment from two stores: exactly one succeeds, 20 trials', async () => {
    const url = await freshDatabase();
    const [one, two] = await Promise.all([PostgresJournalStore.open(url), PostgresJournalStore.open(url)]);
    try {
      for (let trial = 0; trial < 20; trial++) {
        const a = attempt();
        const results = await Promise.all([
          ...Array.from({ length: 5 }, (_, i) => one.reserve({ ...a, transaction: `${a.transaction}-1-${i}` }, NO_CAPS, 1)),
          ...Array.from({ length: 5 }, (_, i) => two.reserve({ ...a, transaction: `${a.transaction}-2-${i}` }, NO_CAPS, 1)),
        ]);
        expect(results.filter((r) => r.ok)).toHaveLength(1);
      }
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('two instances reconciling at once list each landed payment once (the listing is claimed), 20 trials', async () => {
    const url = await freshDatabase();
    const [one, two] = await Promise.all([PostgresJournalStore.open(url), PostgresJournalStore.open(url)]);
    const landed: string[] = [];
    const clock = () => 1_000_000;
    const journalOn = (store: JournalStore) =>
      new SettlementJournal({
        store,
        policy: DEFAULT_POLICY,
        now: clock,
        onLanded: async ({ paymentRequirements }) => {
          await new Promise((r) => setTimeout(r, 5)); // a catalog write takes a moment
          landed.push((paymentRequirements as unknown as { name: string }).name);
        },
      });
    const [first, second] = [journalOn(one), journalOn(two)];
    const tracking = {} as SettlementTracking; // no record is unresolved: the chain is never asked
    try {
      for (let trial = 0; trial < 20; trial++) {
        const a = attempt({ paymentRequirements: JSON.stringify({ name: `trial-${trial}` }) });
        await one.reserve(a, NO_CAPS, 1);
        await one.resolve(a.identity, 'settled', { note: 'landed' }, 2);
        await Promise.all([first.reconcile(tracking), second.reconcile(tracking)]);
        expect(landed.filter((name) => name === `trial-${trial}`)).toHaveLength(1);
      }
      expect(await one.unlisted(10, clock(), clock() + 3_600_000)).toEqual([]);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('concurrent reserves under a daily cap from two stores spend exactly the cap', async () => {
    const url = await freshDatabase();
    const [one, two] = await Promise.all([PostgresJournalStore.open(url), PostgresJournalStore.open(url)]);
    try {
      const policy = capped({ dailyFeeCapStroops: 1_000n });
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => {
          const a = attempt({ feeStroops: 100n });
          return (i % 2 ? one : two).reserve(a, rule(policy, a, 5), 5);
        }),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      expect(results.filter((r) => !r.ok && r.reason === 'refused' && r.refusal.code === 'svc_fee_budget_daily_exhausted')).toHaveLength(
        20,
      );
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe('journal store on a Postgres database that appears after svc started', () => {
  it('a call while the database is missing fails; once it exists the next call migrates and answers', async () => {
    const late = lateDatabase();
    const store = new PostgresJournalStore(late.url);
    try {
      await expect(store.get('payment-x')).rejects.toThrow(/does not exist/);
      await late.create();
      expect(await store.get('payment-x')).toBeNull();
      expect(await store.reserve(attempt(), NO_CAPS, 1_000)).toEqual({ ok: true });
    } finally {
      await store.close();
    }
  });
});
