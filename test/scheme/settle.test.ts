/**
 * Settle over HTTP on the devnet: every settle code, the submitter-pool burst (and the naive
 * round-robin that fails it), and each devnet fault switch giving its documented code within the
 * time bound, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeeBumpTransaction, Keypair, Networks, TransactionBuilder, rpc } from '@stellar/stellar-sdk';
import { SchemeHarness } from './harness.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { MAX_SETTLEMENT_WINDOW_SECONDS } from '../../src/chains/stellar/exact/settle.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

async function paidRequest(opts: { maxTimeoutSeconds?: number; usdc?: bigint } = {}) {
  const { buyer, seller } = await h.parties(opts.usdc);
  const req = h.requirements(seller.publicKey(), opts.maxTimeoutSeconds ? { maxTimeoutSeconds: opts.maxTimeoutSeconds } : {});
  return { buyer, seller, req, payload: await h.pay(req, buyer) };
}

const failureOf = (body: any, code: string) => {
  expect(body).toMatchObject({ success: false, transaction: '', network: 'stellar:testnet', errorReason: code });
  expect(typeof body.errorMessage).toBe('string');
};

describe('settle codes', () => {
  it('settle_exact_stellar_signer_selection_failed: every submitter busy and no queue', async () => {
    const f = await h.facilitator({ scheme: { pool: { maxQueue: 0 } } });
    const a = await paidRequest();
    const b = await paidRequest();
    const [ra, rb] = await Promise.all([f.settle(a.payload, a.req), f.settle(b.payload, b.req)]);
    const bodies = [ra.body, rb.body];
    expect(bodies.filter((x) => x.success)).toHaveLength(1);
    failureOf(
      bodies.find((x) => !x.success),
      'settle_exact_stellar_signer_selection_failed',
    );
  });

  it('settle_exact_stellar_transaction_signing_failed / fee_bump_signing_failed: a key that cannot sign', async () => {
    const account = await h.devnet.createAccount({ usdcTrustline: false });
    const noSecret = Keypair.fromPublicKey(account.publicKey);
    const f1 = await h.facilitator({ scheme: { submitters: [noSecret] } });
    const a = await paidRequest();
    failureOf((await f1.settle(a.payload, a.req)).body, 'settle_exact_stellar_transaction_signing_failed');
    const f2 = await h.facilitator({ scheme: { feeBump: Keypair.fromPublicKey(account.publicKey) } });
    failureOf((await f2.settle(a.payload, a.req)).body, 'settle_exact_stellar_fee_bump_signing_failed');
    expect(h.devnet.balances(a.seller.publicKey()).usdc).toBe(0n);
  });

  it('settle_exact_stellar_transaction_submission_failed: the network rejects the submission (status in errorMessage)', async () => {
    const f = await h.facilitator();
    const a = await paidRequest();
    h.devnet.faults.sendStatus('ERROR', { times: 1 });
    const res = await f.settle(a.payload, a.req);
    failureOf(res.body, 'settle_exact_stellar_transaction_submission_failed');
    expect(res.body.errorMessage).toMatch(/ERROR/);
    // The submitter's sequence is re-read after the failure: the next settlement goes through.
    expect((await f.settle(a.payload, a.req)).body.success).toBe(true);
  });

  it('settle_exact_stellar_transaction_failed: submitted, then failed on-chain (two payments racing for one balance)', async () => {
    const manual = await SchemeHarness.start(0);
    try {
      // Count accepted submissions through the port (the boundary), so ledgers close only once both are in.
      const rpc = createSdkRpc({ url: manual.devnet.rpcUrl });
      let sent = 0;
      const counting = {
        ...rpc,
        send: async (tx: Parameters<typeof rpc.send>[0]) => {
          const r = await rpc.send(tx);
          sent++;
          return r;
        },
      };
      // This devnet closes no ledgers by itself, so it has no history and the scheme estimates the
      // 5 s fallback; ledgers close every 100 ms by the test's timer: the settle's waits for the
      // next close are cut to 100 ms (polling sooner only finds the outcome sooner).
      const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 100)));
      const f = await manual.facilitator({ submitters: 2, scheme: { rpc: counting, sleep } });
      const { buyer, seller } = await manual.parties(100_000n);
      const req = manual.requirements(seller.publicKey());
      const [p1, p2] = await Promise.all([manual.pay(req, buyer), manual.pay(req, buyer)]);
      const settling = Promise.all([f.settle(p1, req), f.settle(p2, req)]);
      // Both re-verify against the same ledger and are submitted; only then do ledgers close.
      while (sent < 2) await new Promise((r) => setTimeout(r, 10));
      const closer = setInterval(() => void manual.devnet.closeLedger(), 100);
      const results = (await settling).map((r) => r.body);
      clearInterval(closer);
      expect(results.filter((r) => r.success)).toHaveLength(1);
      const failed = results.find((r) => !r.success);
      failureOf(failed, 'settle_exact_stellar_transaction_failed');
      expect(failed.errorMessage).toMatch(/txFAILED|failed on-chain/);
      expect(manual.devnet.balances(seller.publicKey()).usdc).toBe(100_000n);
    } finally {
      await manual.stop();
    }
  });

  it('a settlement that waited in the queue is verified again: an authorization that expired meanwhile is refused, not sent', async () => {
    const f = await h.facilitator();
    const a = await paidRequest({ maxTimeoutSeconds: 2 });
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());
    const shortLived = await h.pay(req, buyer, { expirationLedger: (await h.rpc.getLatestLedger()).sequence + 4 });
    h.devnet.faults.dropSubmissions({ times: 1 }); // the first settlement holds the only submitter until its time bound
    const first = f.settle(a.payload, a.req);
    await new Promise((r) => setTimeout(r, 100));
    const feeBefore = h.devnet.balances(f.submitters[0]!).xlm;
    const second = await f.settle(shortLived, req);
    failureOf(second.body, 'invalid_exact_stellar_payload_simulation_failed');
    failureOf((await first).body, 'settle_exact_stellar_transaction_failed');
    expect(h.devnet.balances(f.submitters[0]!).xlm).toBe(feeBefore); // nothing was submitted for it
  });

  it('unexpected_settle_error: the submitter account cannot be read', async () => {
    const f = await h.facilitator();
    const a = await paidRequest();
    h.devnet.faults.set('getLedgerEntries', { kind: 'rpcError', code: -32603, message: 'storage unavailable' }, { times: 1 });
    try {
      failureOf((await f.settle(a.payload, a.req)).body, 'unexpected_settle_error');
    } finally {
      h.devnet.faults.clear();
    }
    expect((await f.settle(a.payload, a.req)).body.success).toBe(true);
  });
});

describe('submitter pool under a burst', () => {
  async function burst(mode: 'leased' | 'naive') {
    const f = await h.facilitator({ submitters: 3, scheme: { pool: { mode } } });
    const buyers = await Promise.all(Array.from({ length: 10 }, () => h.parties(1_000_000n)));
    const jobs = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const { buyer, seller } = buyers[i % 10]!;
        // Authorizations valid for 2 minutes: at load 10 the last of 40 settlements queued for
        // three submitters waited past the default 30 s and its authorization expired.
        const req = h.requirements(seller.publicKey(), { maxTimeoutSeconds: 120 });
        return { req, payload: await h.pay(req, buyer) };
      }),
    );
    const started = Date.now();
    const results = await Promise.all(jobs.map((j) => f.settle(j.payload, j.req)));
    return { results: results.map((r) => (expect(r.status).toBe(200), r.body)), ms: Date.now() - started };
  }

  it('40 concurrent settlements with 3 leased submitters all succeed', async () => {
    const { results, ms } = await burst('leased');
    const failures = results.filter((r) => !r.success);
    expect(failures).toEqual([]);
    expect(new Set(results.map((r) => r.transaction)).size).toBe(40);
    // About 14 ledgers of 250 ms when the machine is idle; the bound only catches a pool that stalls.
    expect(ms).toBeLessThan(110_000);
  });

  it('the same burst through naive round-robin without leasing fails', async () => {
    const { results } = await burst('naive');
    const failures = results.filter((r) => !r.success);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) expect(failure.errorReason).toMatch(/^settle_exact_stellar_transaction_(submission_)?failed$/);
  });
});

describe('devnet fault switches', () => {
  const quickly = async <T>(limitMs: number, run: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const value = await run();
    expect(Date.now() - started).toBeLessThan(limitMs);
    return value;
  };

  it.each([
    ['rpcError', { kind: 'rpcError', code: -32603, message: 'boom' }],
    ['timeout', { kind: 'timeout' }],
    ['httpError', { kind: 'httpError', status: 503 }],
  ] as const)('simulateTransaction %s → unexpected_verify_error / verification_failed', async (_, fault) => {
    const f = await h.facilitator({ rpcTimeoutMs: 1_000 });
    const a = await paidRequest();
    h.devnet.faults.set('simulateTransaction', fault);
    try {
      const v = await quickly(5_000, () => f.verify(a.payload, a.req));
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ isValid: false, invalidReason: 'unexpected_verify_error' });
      const s = await quickly(5_000, () => f.settle(a.payload, a.req));
      failureOf(s.body, 'verification_failed');
    } finally {
      h.devnet.faults.clear();
    }
  });

  it('a slow simulateTransaction (delay) still verifies', async () => {
    const f = await h.facilitator();
    const a = await paidRequest();
    h.devnet.faults.set('simulateTransaction', { kind: 'delay', ms: 300 });
    try {
      expect((await f.verify(a.payload, a.req)).body.isValid).toBe(true);
    } finally {
      h.devnet.faults.clear();
    }
  });

  it('TRY_AGAIN_LATER is retried within the time bound', async () => {
    const f = await h.facilitator();
    const a = await paidRequest();
    h.devnet.faults.sendStatus('TRY_AGAIN_LATER', { times: 2 });
    expect((await f.settle(a.payload, a.req)).body).toMatchObject({ success: true });
  });

  it('a silently dropped submission → transaction_failed once its time bound has passed, not before, not much after', async () => {
    const f = await h.facilitator();
    const a = await paidRequest({ maxTimeoutSeconds: 2 });
    h.devnet.faults.dropSubmissions({ times: 1 });
    const started = Date.now();
    const res = await f.settle(a.payload, a.req);
    const elapsed = Date.now() - started;
    failureOf(res.body, 'settle_exact_stellar_transaction_failed');
    // Its maxTime is at least the start's whole second + 2; only a ledger whose close time (whole
    // seconds, floored) is past it proves the transaction can never land.
    expect(Date.now()).toBeGreaterThanOrEqual((Math.floor(started / 1000) + 3) * 1000);
    expect(elapsed).toBeLessThan(2_000 + 4_000);
  });

  it('a huge maxTimeoutSeconds (2^53) settles with the transaction window capped at MAX_SETTLEMENT_WINDOW_SECONDS', async () => {
    const f = await h.facilitator();
    // Signed for the usual window, then offered with an absurd maxTimeoutSeconds (as the fuzzer did):
    // the verify bound only grows, so the payment is valid, and settle must still bound its window.
    const a = await paidRequest();
    a.req.maxTimeoutSeconds = 2 ** 53;
    const before = Math.floor(Date.now() / 1000);
    const res = await f.settle(a.payload, a.req);
    expect(res.body).toMatchObject({ success: true, network: 'stellar:testnet' });
    const tx = await new rpc.Server(h.devnet.rpcUrl, { allowHttp: true }).getTransaction(res.body.transaction);
    if (tx.status !== 'SUCCESS') throw new Error(`expected SUCCESS, got ${tx.status}`);
    const parsed = TransactionBuilder.fromXDR(tx.envelopeXdr.toXDR('base64'), Networks.TESTNET);
    const inner = parsed instanceof FeeBumpTransaction ? parsed.innerTransaction : parsed;
    const maxTime = Number(inner.timeBounds?.maxTime);
    expect(maxTime).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + MAX_SETTLEMENT_WINDOW_SECONDS);
    expect(maxTime).toBeGreaterThanOrEqual(before + MAX_SETTLEMENT_WINDOW_SECONDS);
  });

  it('sendTransaction that never answers → polled by hash, submission_failed within the bound', async () => {
    const f = await h.facilitator({ rpcTimeoutMs: 1_000 });
    const a = await paidRequest({ maxTimeoutSeconds: 2 });
    h.devnet.faults.set('sendTransaction', { kind: 'timeout' }, { times: 1 });
    try {
      const res = await quickly(8_000, () => f.settle(a.payload, a.req));
      failureOf(res.body, 'settle_exact_stellar_transaction_submission_failed');
    } finally {
      h.devnet.faults.clear();
    }
  });

  it('transient getTransaction errors are retried; the settlement still succeeds', async () => {
    const f = await h.facilitator();
    const a = await paidRequest();
    h.devnet.faults.set('getTransaction', { kind: 'rpcError', code: -32603, message: 'flaky' }, { times: 3 });
    try {
      expect((await f.settle(a.payload, a.req)).body).toMatchObject({ success: true });
    } finally {
      h.devnet.faults.clear();
    }
  });

  it('getTransaction failing throughout → svc_settlement_outcome_unknown ("not confirmed"), never a false failure, within the bound', async () => {
    const f = await h.facilitator();
    const a = await paidRequest({ maxTimeoutSeconds: 2 });
    h.devnet.faults.set('getTransaction', { kind: 'httpError', status: 502 });
    try {
      const res = await quickly(7_000, () => f.settle(a.payload, a.req));
      // The transaction landed; only the RPC cannot tell (docs/OPERATIONS.md).
      failureOf(res.body, 'svc_settlement_outcome_unknown');
      expect(res.body.errorMessage).toMatch(/not confirmed/);
    } finally {
      h.devnet.faults.clear();
    }
  });

  it('a lagging RPC (lagLedger) still verifies and settles', async () => {
    const f = await h.facilitator();
    const a = await paidRequest();
    h.devnet.faults.lagLedger(3);
    try {
      expect((await f.settle(a.payload, a.req)).body).toMatchObject({ success: true });
    } finally {
      h.devnet.faults.clear();
    }
  });

  it('getLedgers failing → the 5 s fallback estimate, a tighter expiry bound: expiration_too_far on a 250 ms chain', async () => {
    const f = await h.facilitator();
    const a = await paidRequest();
    h.devnet.faults.set('getLedgers', { kind: 'rpcError', code: -32603, message: 'no history' });
    try {
      const v = await f.verify(a.payload, a.req);
      expect(v.body).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_stellar_signature_expiration_too_far' });
    } finally {
      h.devnet.faults.clear();
    }
  });
});
