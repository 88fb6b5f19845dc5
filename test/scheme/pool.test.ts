/** Submitter pool, confirmation polling and the ledger-time estimate, on their own. */
import { describe, expect, it } from 'vitest';
import { Keypair } from '@stellar/stellar-sdk';
import { SignerSelectionError, SubmitterPool } from '../../src/chains/stellar/submitters.ts';
import { LedgerCloseClock, confirmTransaction, FINE_POLL_MS } from '../../src/chains/stellar/exact/confirm.ts';
import { LedgerTimeEstimator, estimateFromSpan, FALLBACK_LEDGER_SECONDS } from '../../src/chains/stellar/ledger-time.ts';
import { RpcError, type TransactionStatus } from '../../src/chains/stellar/rpc.ts';

const keys = [Keypair.random(), Keypair.random(), Keypair.random()];

describe('SubmitterPool', () => {
  it('leases round-robin among free submitters, one in flight each, FIFO queue when all are busy', async () => {
    const pool = new SubmitterPool(keys, { loadSequence: async () => 10n });
    const a = await pool.lease();
    const b = await pool.lease();
    const c = await pool.lease();
    expect(new Set([a.address, b.address, c.address]).size).toBe(3);
    const order: string[] = [];
    const d = pool.lease().then((l) => (order.push('d'), l));
    const e = pool.lease().then((l) => (order.push('e'), l));
    expect(pool.waiting).toBe(2);
    expect(pool.busy).toBe(3);
    b.release();
    const dl = await d;
    expect(dl.address).toBe(b.address);
    a.release();
    expect((await e).address).toBe(a.address);
    expect(order).toEqual(['d', 'e']);
    b.release(); // a second release of the same lease is a no-op
    expect(pool.waiting).toBe(0);
  });

  it('tracks sequences locally and re-reads them after a failure', async () => {
    let reads = 0;
    const pool = new SubmitterPool([keys[0]!], { loadSequence: async () => (reads++, 100n) });
    const l1 = await pool.lease();
    expect(await l1.sequence()).toBe(100n);
    l1.consumed();
    l1.release();
    const l2 = await pool.lease();
    expect(await l2.sequence()).toBe(101n);
    expect(reads).toBe(1);
    l2.invalidate();
    l2.release();
    const l3 = await pool.lease();
    expect(await l3.sequence()).toBe(100n);
    expect(reads).toBe(2);
  });

  it('a full queue or a wait timeout is a SignerSelectionError', async () => {
    const pool = new SubmitterPool([keys[0]!], { loadSequence: async () => 1n, maxQueue: 1, waitTimeoutMs: 50 });
    await pool.lease();
    const waiting = pool.lease();
    await expect(pool.lease()).rejects.toBeInstanceOf(SignerSelectionError);
    await expect(waiting).rejects.toThrow(/within 50 ms/);
    await expect(new SubmitterPool([], { loadSequence: async () => 1n }).lease()).rejects.toBeInstanceOf(SignerSelectionError);
  });
});

describe('confirmTransaction', () => {
  function scripted(answers: (Partial<TransactionStatus> | Error)[]) {
    let clock = 1_000_000_000_000;
    const sleeps: number[] = [];
    const rpc = {
      async getTransaction() {
        const next = answers.length > 1 ? answers.shift()! : answers[0]!;
        if (next instanceof Error) throw next;
        // tsc needs the assertion (the literal `status` widens to string); eslint's view disagrees.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        return { status: 'NOT_FOUND', latestLedger: 1, latestLedgerCloseTime: clock / 1000, ...next } as TransactionStatus;
      },
    };
    return {
      rpc,
      sleeps,
      now: () => clock,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        clock += ms;
      },
      maxTime: clock / 1000 + 10,
    };
  }

  it('polls once right away, then just after the predicted close, finer only while the close is overdue', async () => {
    // Ledger 1 closed at the start clock; ledger 2 (which includes the transaction) 100 ms late.
    const start = 1_000_000_000_000;
    let clock = start + 300;
    const sleeps: number[] = [];
    const rpc = {
      async getTransaction() {
        const included = clock >= start + 1_100;
        return (
          included
            ? { status: 'SUCCESS', latestLedger: 2, latestLedgerCloseTime: (start + 1_000) / 1000, ledger: 2 }
            : { status: 'NOT_FOUND', latestLedger: 1, latestLedgerCloseTime: start / 1000 }
        ) as TransactionStatus;
      },
    };
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      clock += ms;
    };
    const outcome = await confirmTransaction({ rpc, hash: 'h', maxTime: start / 1000 + 10, ledgerSeconds: 1, now: () => clock, sleep });
    expect(outcome.kind).toBe('success');
    // 700 ms to the predicted close (+10 ms slack), then fine polls until the late close shows.
    const fine = FINE_POLL_MS;
    expect(sleeps[0]).toBe(710);
    expect(sleeps.slice(1).every((ms) => ms === fine)).toBe(true);
    expect(clock - (start + 1_100)).toBeLessThanOrEqual(fine);
  });

  it('a shared clock learns the close instant: the next settlement polls first just after its close', async () => {
    const shared = new LedgerCloseClock();
    shared.observe(5, 1000, 1_000_010, 1_000_020); // ledger 5 seen right after it closed at t=1 000 000 ms
    shared.observe(5, 1000, 1_000_400, 1_000_410);
    shared.observe(6, 1001, 1_001_030, 1_001_040); // first seen at 1 001 030, last seen old at 1 000 400
    expect(shared.nextClose(1_001_500, 1000)).toEqual({ sequence: 7, at: 1_002_000 });
    expect(shared.expectedClose(8, 1000)).toBe(1_003_000);
  });

  it('after an idle ledger or more, the last known close phase carries over (a whole-second close time alone is early)', () => {
    const shared = new LedgerCloseClock();
    shared.observe(4, 1000, 1_000_590, 1_000_595);
    shared.observe(5, 1000, 1_000_610, 1_000_620); // ledger 5 closed in (1 000 590, 1 000 610]
    // Idle for three ledgers: ledger 8 (close time 1003 s) is first seen 690 ms into that second.
    shared.observe(8, 1003, 1_003_690, 1_003_700, 1000);
    // A submission at 1 004 300 lands in ledger 9 (closing about 1 004 600), not ledger 10: the
    // first poll is due just before 9's projected close, not a whole guessed ledger later.
    const next = shared.nextClose(1_004_300, 1000)!;
    expect(next.sequence).toBe(9);
    expect(next.at).toBeGreaterThan(1_004_300);
    expect(next.at).toBeLessThanOrEqual(1_004_590);
    // The projection never leaves the bracket the close time and the polls give.
    const drifted = new LedgerCloseClock();
    drifted.observe(5, 1000, 1_000_990, 1_000_995);
    drifted.observe(9, 1003, 1_003_050, 1_003_060, 1000); // projected 1 004 900, but seen at 1 003 060
    expect(drifted.expectedClose(9, 1000)).toBeLessThanOrEqual(1_003_060);
    expect(drifted.expectedClose(9, 1000)).toBeGreaterThanOrEqual(1_003_000);
  });

  it('a send after the estimated but before the real close waits for that close, not the ledger after it', async () => {
    // Ledgers close every 1 000 ms, 15 ms into the second; the clock knows ledger 5 to ±20 ms, then
    // sees ledger 8 only 500 ms after it closed, so its estimate for 8 is the whole second (early).
    const realClose = (sequence: number) => 1_000_015 + (sequence - 5) * 1000;
    const shared = new LedgerCloseClock();
    shared.observe(5, 1000, 1_000_010, 1_000_020, 1000);
    shared.observe(8, 1003, 1_003_500, 1_003_510, 1000);
    expect(shared.expectedClose(9, 1000)).toBeLessThan(1_004_005); // the estimate is early
    // Sent at 1 004 005: ledger 9 (really closing at 1 004 015) includes it.
    let clock = 1_004_005;
    const rpc = {
      async getTransaction() {
        let latest = 8;
        while (realClose(latest + 1) <= clock) latest++;
        const closeTime = Math.floor(realClose(latest) / 1000);
        return (
          latest >= 9
            ? { status: 'SUCCESS', latestLedger: latest, latestLedgerCloseTime: closeTime, ledger: 9 }
            : { status: 'NOT_FOUND', latestLedger: latest, latestLedgerCloseTime: closeTime }
        ) as TransactionStatus;
      },
    };
    const sleep = async (ms: number) => void (clock += ms);
    const maxTime = 1_010;
    const outcome = await confirmTransaction({ rpc, hash: 'h', maxTime, ledgerSeconds: 1, now: () => clock, sleep, clock: shared });
    expect(outcome.kind).toBe('success');
    expect(clock - realClose(9)).toBeLessThanOrEqual(FINE_POLL_MS);
  });

  it('FAILED is final', async () => {
    const s = scripted([{ status: 'FAILED', ledger: 3, resultCode: 'txFAILED' }]);
    expect(
      (await confirmTransaction({ rpc: s.rpc, hash: 'h', maxTime: s.maxTime, ledgerSeconds: 1, now: s.now, sleep: s.sleep })).kind,
    ).toBe('failed');
  });

  it('NOT_FOUND is final only once a ledger closed after maxTime', async () => {
    const s = scripted([{}]);
    const outcome = await confirmTransaction({ rpc: s.rpc, hash: 'h', maxTime: s.maxTime, ledgerSeconds: 1, now: s.now, sleep: s.sleep });
    expect(outcome.kind).toBe('expired');
    expect(s.now()).toBeGreaterThan(s.maxTime * 1000);
  });

  /**
   * confirmTransaction on real timers against a getTransaction that never answers, with a maxTime 2 s past (the local
   * deadline comes 1-2 s from now instead of 3-4 s); `lagAfterCall` ms is how far the injected clock falls behind
   * Date.now() once the call is made.
   */
  async function hangingUntilDeadline(lagAfterCall = 0) {
    const maxTime = Math.floor(Date.now() / 1000) - 2;
    const deadline = (maxTime + 1) * 1000 + 3_000; // + max(2 s, 3 ledgers)
    let lag = 0;
    const now = () => Date.now() - lag;
    const rpc = {
      getTransaction: () => {
        lag = lagAfterCall;
        return new Promise<TransactionStatus>(() => {});
      },
    };
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const outcome = await confirmTransaction({ rpc, hash: 'h', maxTime, ledgerSeconds: 1, now, sleep });
    return { outcome, deadline, now };
  }

  it('a getTransaction that hangs every time ends at the local deadline, not one RPC timeout later', async () => {
    const { outcome, deadline } = await hangingUntilDeadline();
    expect(outcome.kind).toBe('unknown');
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);
    expect(Date.now()).toBeLessThan(deadline + 200);
  });

  it('a getTransaction that hangs ends at the deadline by the injected clock when the timer fires before it', async () => {
    // Timers and the clock disagree by a millisecond now and then (seen on a busy machine); here the clock falls 5 ms
    // behind from the call on, so the call's timer fires while now() still reads before the deadline.
    const { outcome, deadline, now } = await hangingUntilDeadline(5);
    expect(outcome.kind).toBe('unknown');
    expect(now()).toBeGreaterThanOrEqual(deadline);
  });

  it('a silent RPC ends at the local deadline, shortly after maxTime', async () => {
    const s = scripted([new RpcError('getTransaction', 'timeout')]);
    const outcome = await confirmTransaction({ rpc: s.rpc, hash: 'h', maxTime: s.maxTime, ledgerSeconds: 1, now: s.now, sleep: s.sleep });
    expect(outcome.kind).toBe('unknown');
    expect(s.now()).toBeLessThan((s.maxTime + 5) * 1000);
  });
});

describe('ledger seconds', () => {
  it('brackets the whole-second rounding of close times; a young chain is bounded above only', () => {
    expect(estimateFromSpan(30, 120)).toEqual({ seconds: 0.25, low: 29 / 120, high: 31 / 120, fallback: false });
    // 4 closes within the same second: at most 0.5 s each, possibly much less.
    expect(estimateFromSpan(0, 4)).toEqual({ seconds: 0.125, low: 0.05, high: 0.25, fallback: false });
    // One slow first close (2 s) over a single ledger: the high end says up to 3 s, the low end
    // is not trusted until MIN_TRUSTED_LEDGERS closes exist, so a later buyer is never refused.
    expect(estimateFromSpan(2, 1)).toEqual({ seconds: 2, low: 0.05, high: 3, fallback: false });
    expect(estimateFromSpan(4, 29)?.low).toBe(0.05);
    expect(estimateFromSpan(4, 30)?.low).toBe(0.1);
    // Nothing closed yet: the 5 s fallback for the cadence and the buyer, the floor for the facilitator.
    expect(estimateFromSpan(0, 0)).toEqual({ seconds: FALLBACK_LEDGER_SECONDS, low: 0.05, high: FALLBACK_LEDGER_SECONDS, fallback: true });
    expect(estimateFromSpan(10, 1.5)).toBeUndefined();
    expect(estimateFromSpan(-1, 5)).toBeUndefined();
  });

  it('caches within the TTL and falls back to 5 s when the RPC fails', async () => {
    let t = 0;
    let calls = 0;
    let fail = false;
    const rpc = {
      async getLedgerSpan() {
        calls++;
        if (fail) throw new Error('down');
        return { older: { sequence: 1, closeTime: 100 }, latest: { sequence: 11, closeTime: 120 } };
      },
    };
    const est = new LedgerTimeEstimator(rpc, { ttlMs: 1000, now: () => t });
    expect(await est.seconds()).toBe(2);
    expect(await est.seconds()).toBe(2);
    expect(calls).toBe(1);
    t = 1500;
    fail = true;
    expect(await est.estimate()).toMatchObject({ seconds: FALLBACK_LEDGER_SECONDS, fallback: true });
    expect(calls).toBe(2);
  });
});
