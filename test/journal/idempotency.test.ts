/**
 * Idempotency that means "the same payment" and the x402 SDKs' retry language, on the devnet
 * through a real journal (SQLite file, and Postgres for the key rules):
 * - a key (Idempotency-Key header or `payment-identifier` id) is bound to its payment and request:
 *   reused with other requirements or another payment it is a 409, also after reconciliation;
 * - `settlement_pending`: a stock `@x402/core` seller (test/interop/stock-seller.ts, over HTTP) and
 *   svc's own seller toolkit, whose settles meet an RPC that cannot confirm in time, get it, retry
 *   once by themselves, get the success once the transaction is confirmed and serve the buyer —
 *   one transaction each on chain; a later copy is a replay.
 */
import { HTTPFacilitatorClient } from '@x402/core/server';
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { PostgresJournalStore } from '../../src/journal/postgres/store.ts';
import { SqliteJournalStore } from '../../src/journal/sqlite/store.ts';
import type { JournalStore } from '../../src/journal/types.ts';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
  settleOffer,
  type PaidOffer,
} from '../../src/client/seller.ts';
import { startStockSeller } from '../interop/stock-seller.ts';
import { api } from '../helpers/contract.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { journaledFacilitator, settleUnconfirmed, tempDbPath } from './harness.ts';

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

/** How many transactions the submitters sourced while `work` ran. */
async function transactionsBy(submitters: string | string[], work: () => Promise<unknown>): Promise<number> {
  const all = typeof submitters === 'string' ? [submitters] : submitters;
  const before = await Promise.all(all.map((s) => h.rpc.getAccountSequence(s)));
  await work();
  const after = await Promise.all(all.map((s) => h.rpc.getAccountSequence(s)));
  return after.reduce((sum, seq, i) => sum + Number(seq - before[i]!), 0);
}

/**
 * A facilitator that answers `settlement_pending` once its settle wait (SETTLE_WAIT_SECONDS) is
 * over, after 1 s instead of at the payment's time bound, and whose retry owed the outcome waits
 * for it up to 10 s (a loaded machine's devnet may not have closed the ledger yet).
 */
const PENDING_SOON = { scheme: { settleWaitMs: 1_000 }, pendingRetryWaitMs: 10_000 };

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

describe("settlement_pending with a stock @x402/core seller and with svc's own seller toolkit", () => {
  it('an RPC that cannot confirm in time: settlement_pending with the hash, one automatic retry gets the success, the buyer is served; one transaction each; a later copy is a replay', async () => {
    // Two submitters, one per seller's settlement.
    const submitters = await Promise.all([0, 1].map(() => h.devnet.createAccount({ usdcTrustline: false })));
    const f = await journaledFacilitator(h, { submitterSecret: submitters.map((a) => a.secret).join(','), ...PENDING_SOON });
    // Each seller's facilitator client is asked once per settle call: the seam where the test
    // counts the SDK's settle attempts and brings the RPC back before the retry.
    let stockCalls = 0;
    let ownCalls = 0;
    const stockClient = new HTTPFacilitatorClient({
      url: f.url,
      createAuthHeaders: async () => {
        if (++stockCalls === 4) h.devnet.faults.clear(); // 1: /supported, 2: verify, 3: settle, 4: its retry
        return { verify: {}, settle: {}, supported: {} };
      },
    });
    const stock = await h.parties();
    const seller = await startStockSeller({
      facilitatorUrl: f.url,
      facilitatorClient: stockClient,
      routes: {
        'GET /report': {
          accepts: {
            scheme: 'exact',
            network: 'stellar:testnet',
            payTo: stock.seller.publicKey(),
            price: { amount: '100000', asset: h.devnet.usdc.contractId },
            maxTimeoutSeconds: 4,
          },
          description: 'a report',
          mimeType: 'application/json',
        },
      },
      handlers: { 'GET /report': () => ({ report: 'ok' }) },
    });
    const ownClient = createFacilitatorClient(f.url);
    const ownOffer = {
      facilitator: {
        ...ownClient,
        settle: (payload: unknown, requirements: unknown) => {
          if (++ownCalls === 2) h.devnet.faults.clear();
          return ownClient.settle(payload, requirements);
        },
      },
    } as unknown as PaidOffer;
    try {
      const unpaid = await fetch(`${seller.url}/report`);
      const required = decodeX402Header(unpaid.headers.get(PAYMENT_REQUIRED_HEADER)) as { accepts: PaymentRequirements[]; resource: never };
      const payload = await createStellarPayment({
        requirements: required.accepts[0]!,
        signer: stock.buyer,
        rpc: h.rpc,
        ledgerTime: h.ledgerTime,
        resource: required.resource,
      });
      let paid: Response | undefined;
      let ownResult: Awaited<ReturnType<typeof settleOffer>> | undefined;
      let own: Awaited<ReturnType<typeof paidRequest>> | undefined;
      // One seller after the other: each brings the RPC back at its own retry, so one seller's
      // retry must not heal the RPC while the other's first settle is still waiting (on a loaded
      // machine that let the stock seller's first settle succeed without the retry under test).
      const sent = await transactionsBy(
        submitters.map((a) => a.publicKey),
        async () => {
          try {
            h.devnet.faults.set('getTransaction', { kind: 'rpcError' });
            paid = await fetch(`${seller.url}/report`, { headers: { [PAYMENT_SIGNATURE_HEADER]: encodeX402Header(payload) } });
            own = await paidRequest({ maxTimeoutSeconds: 4 });
            h.devnet.faults.set('getTransaction', { kind: 'rpcError' });
            ownResult = await settleOffer(ownOffer, own.payload, own.req);
          } finally {
            h.devnet.faults.clear();
          }
        },
      );
      // The SDK retried exactly once (it does so only for a settlement_pending carrying the hash).
      expect([stockCalls, ownCalls]).toEqual([4, 2]);
      expect(seller.settlements).toEqual([expect.objectContaining({ success: true })]);
      expect(paid!.status).toBe(200);
      expect(await paid!.json()).toEqual({ report: 'ok' });
      const receipt = decodeX402Header(paid!.headers.get(PAYMENT_RESPONSE_HEADER)) as { success: boolean; transaction: string };
      expect(ownResult).toMatchObject({ ok: true });
      expect(sent).toBe(2);
      for (const transaction of [receipt.transaction, (ownResult as { receipt: { transaction: string } }).receipt.transaction]) {
        const record = await f.journal.store.getByTransaction(transaction);
        expect(record!.history.map((x) => x.state)).toEqual(['submitted', 'unknown', 'settled']);
      }
      expect(h.devnet.balances(stock.seller.publicKey()).usdc).toBe(100_000n);
      expect(h.devnet.balances(own!.seller.publicKey()).usdc).toBe(100_000n);
      // The outcome was told once: the same request again is a replay, and nothing more is sent.
      const copy = await f.settle(own!.payload, own!.req);
      expect(copy.body).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_simulation_failed' });
    } finally {
      await seller.close();
      await f.close();
    }
  });
});

describe('settlement_pending across instances sharing Postgres', () => {
  it('the retry reaching another instance gets the outcome from the shared record, once; one transaction', async () => {
    const url = await freshDatabase();
    const submitter = await h.devnet.createAccount({ usdcTrustline: false });
    const a = await journaledFacilitator(h, {
      store: await PostgresJournalStore.open(url),
      submitterSecret: submitter.secret,
      ...PENDING_SOON,
    });
    const b = await journaledFacilitator(h, {
      store: await PostgresJournalStore.open(url),
      submitterSecret: submitter.secret,
      ...PENDING_SOON,
    });
    try {
      const p = await paidRequest({ maxTimeoutSeconds: 3 });
      const sent = await transactionsBy(submitter.publicKey, async () => {
        const first = await settleUnconfirmed(h, a, p);
        // The stock SDK's retry: the same request, no key, here reaching the other instance.
        expect((await b.settle(p.payload, p.req)).body).toMatchObject({ success: true, transaction: first.body.transaction });
        expect((await a.settle(p.payload, p.req)).body.errorReason).toBe('invalid_exact_stellar_payload_simulation_failed');
      });
      expect(sent).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
