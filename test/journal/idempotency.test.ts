/**
 * Idempotency that means "the same payment" and the x402 SDKs' retry language, on the devnet
 * through a real journal (SQLite file, and Postgres for the key rules):
 * - a key (Idempotency-Key header or `payment-identifier` id) is bound to its payment and request:
 *   reused with other requirements or another payment it is a 409, also after reconciliation;
 * - `settlement_pending`: a stock `@x402/core` resource server whose settle meets an RPC that cannot
 *   confirm in time gets it, retries once by itself, and gets the success once the transaction is
 *   confirmed — one transaction on chain; a later copy is a replay.
 */
import { x402ResourceServer, HTTPFacilitatorClient } from '@x402/core/server';
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { PostgresJournalStore } from '../../src/journal/postgres/store.ts';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';
import type { JournalStore } from '../../src/journal/types.ts';
import { api } from '../helpers/contract.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { journaledFacilitator, tempDbPath } from './harness.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

async function paidRequest(overrides: Partial<PaymentRequirements> = {}) {
  const { buyer, seller } = await h.parties();
  const req = h.requirements(seller.publicKey(), overrides);
  return { buyer, seller, req, payload: await h.pay(req, buyer) };
}

/** The payload as a stock client sends it with the seller's `payment-identifier` declaration and `id`. */
function withPaymentId(payload: PaymentPayload, id: string): PaymentPayload {
  const extensions: Record<string, unknown> = { 'payment-identifier': declarePaymentIdentifierExtension() };
  appendPaymentIdentifierToExtensions(extensions, id);
  return { ...payload, extensions };
}

async function transactionsBy(submitter: string, work: () => Promise<unknown>): Promise<number> {
  const before = await h.rpc.getAccountSequence(submitter);
  await work();
  return Number((await h.rpc.getAccountSequence(submitter)) - before);
}

const backends: Array<[string, () => Promise<JournalStore>]> = [
  ['SQLite', async () => new SqliteJournalStore(tempDbPath())],
  ['Postgres', async () => PostgresJournalStore.open(await freshDatabase())],
];

describe.each(backends)('keys bound to the payment and the request, on %s', (_name, store) => {
  it('the same key with other requirements or another payment is a 409, also after reconciliation; with the same request it is the outcome', async () => {
    const f = await journaledFacilitator(h, { store: await store() });
    const p = await paidRequest();
    const other = await paidRequest();
    const first = await f.settle(p.payload, p.req, 'seller-key-1');
    expect(first.body).toMatchObject({ success: true });
    const dearer = { ...p.req, amount: String(BigInt(p.req.amount) * 1000n) };
    const elsewhere = { ...p.req, payTo: other.seller.publicKey(), maxTimeoutSeconds: 1 };
    const sent = await transactionsBy(f.submitter, async () => {
      for (const req of [dearer, elsewhere]) {
        const res = await f.settle(p.payload, req, 'seller-key-1');
        expect(res.status).toBe(409);
        expect(res.body).toMatchObject({ success: false, transaction: '', errorReason: 'svc_idempotency_key_conflict' });
      }
      // Another payment under the key is refused before anything is sent.
      expect((await f.settle(other.payload, other.req, 'seller-key-1')).status).toBe(409);
      await f.journal.reconcile(f.scheme.tracking);
      expect((await f.settle(p.payload, dearer, 'seller-key-1')).status).toBe(409);
      expect((await f.settle(p.payload, p.req, 'seller-key-1')).body).toEqual(first.body);
    });
    expect(sent).toBe(0);
    expect(h.devnet.balances(other.seller.publicKey()).usdc).toBe(0n);
    await f.close();
  });

  it('payment-identifier: advertised; same id and payload → the cached answer; another payload or other requirements → 409; malformed → refused by verify and settle', async () => {
    const f = await journaledFacilitator(h, { store: await store() });
    expect((await api(f.url).get('/supported')).body.extensions).toContain('payment-identifier');
    const p = await paidRequest();
    const other = await paidRequest();
    const id = 'pay_7d5d747be160e280504c099d984bcfe0';
    const payload = withPaymentId(p.payload, id);
    const first = await f.settle(payload, p.req);
    expect(first.body).toMatchObject({ success: true });
    const sent = await transactionsBy(f.submitter, async () => {
      expect((await f.settle(payload, p.req)).body).toEqual(first.body);
      const dearer = await f.settle(payload, { ...p.req, amount: '100000000' });
      expect([dearer.status, dearer.body.errorReason]).toEqual([409, 'svc_idempotency_key_conflict']);
      const another = await f.settle(withPaymentId(other.payload, id), other.req);
      expect([another.status, another.body.errorReason]).toEqual([409, 'svc_idempotency_key_conflict']);
      // The header key and the id are checked both: a fresh header key does not launder a bound id.
      expect((await f.settle(withPaymentId(other.payload, id), other.req, 'fresh-header-key')).status).toBe(409);
      const malformed = withPaymentId(other.payload, 'pay_ok_length_123');
      (malformed.extensions!['payment-identifier'] as { info: { id: string } }).info.id = 'short';
      const verify = await api(f.url).post('/verify', { x402Version: 2, paymentPayload: malformed, paymentRequirements: other.req });
      expect(verify.body).toMatchObject({ isValid: false, invalidReason: 'svc_payment_identifier_invalid' });
      expect((await f.settle(malformed, other.req)).body).toMatchObject({ success: false, errorReason: 'svc_payment_identifier_invalid' });
    });
    expect(sent).toBe(0);
    await f.close();
  });
});

describe('settlement_pending with a stock @x402/core resource server', () => {
  it('an RPC that cannot confirm in time: settlement_pending with the hash, one automatic retry gets the success, one transaction; a later copy is a replay', async () => {
    const f = await journaledFacilitator(h);
    const p = await paidRequest({ maxTimeoutSeconds: 4 });
    // The stock HTTPFacilitatorClient asks for headers before every call: the seam where the test
    // sees the SDK's settle attempts (and brings the RPC back before the retry).
    const settleCalls: number[] = [];
    const facilitator = new HTTPFacilitatorClient({
      url: f.url,
      createAuthHeaders: async () => {
        settleCalls.push(Date.now());
        if (settleCalls.length === 2) h.devnet.faults.clear();
        return { verify: {}, settle: {}, supported: {} };
      },
    });
    const server = new x402ResourceServer(facilitator);
    h.devnet.faults.set('getTransaction', { kind: 'rpcError' });
    let result;
    const sent = await transactionsBy(f.submitter, async () => {
      try {
        result = await server.settlePayment(p.payload as never, p.req as never);
      } finally {
        h.devnet.faults.clear();
      }
    });
    expect(sent).toBe(1);
    // The SDK retries only a settlement_pending carrying the broadcast hash: two calls, then the success.
    expect(settleCalls).toHaveLength(2);
    expect(result).toMatchObject({ success: true, transaction: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const record = await f.journal.store.getByTransaction((result as unknown as { transaction: string }).transaction);
    expect(record!.history.map((x) => x.state)).toEqual(['submitted', 'unknown', 'settled']);
    expect(h.devnet.balances(p.seller.publicKey()).usdc).toBe(100_000n);
    // The outcome was told once: the same request again is a replay, and still nothing is sent.
    const copy = await f.settle(p.payload, p.req);
    expect(copy.body).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_simulation_failed' });
    await f.close();
  });
});
