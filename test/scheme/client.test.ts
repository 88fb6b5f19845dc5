/** The buyer-side builder against the devnet: payload shape, signed expiry, and its errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair, Networks, TransactionBuilder, inspectAuthEntry } from '@stellar/stellar-sdk';
import {
  MAX_CLIENT_EXPIRY_LEDGERS,
  NULL_ACCOUNT,
  StellarPaymentError,
  clientExpiration,
  createStellarPayment,
} from '../../src/chains/stellar/exact/buyer.ts';
import { SchemeHarness } from './harness.ts';
import { LedgerTimeEstimator } from '../../src/chains/stellar/ledger-time.ts';
import { recordingRpc } from './fixtures.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(250);
});
afterAll(() => h?.stop());

describe('clientExpiration', () => {
  it('signs within the window, and never beyond MAX_CLIENT_EXPIRY_LEDGERS however large maxTimeoutSeconds is', () => {
    expect(clientExpiration(1000, 60, 5)).toBe(1000 + Math.ceil((60 * 0.8) / 5));
    for (const huge of [1e9, 2 ** 53, Number.MAX_VALUE]) {
      const exp = clientExpiration(1000, huge, 5);
      expect(exp).toBe(1000 + MAX_CLIENT_EXPIRY_LEDGERS);
      expect(exp).toBeLessThanOrEqual(0xffffffff);
    }
  });
});

describe('a chain that has closed nothing yet', () => {
  it("does not pin the facilitator's expiry bound to the 5 s fallback: a buyer who measures after the first close is accepted", async () => {
    // Ledger closes only on request, close times from a clock the test moves.
    let clock = Date.now();
    const young = await SchemeHarness.start(0, { now: () => clock });
    try {
      // The facilitator's estimate is taken at genesis and kept (a frozen clock: its cache never
      // expires), as a real one is kept for a while after the first verification.
      const f = await young.facilitator({ scheme: { ledgerTime: new LedgerTimeEstimator(young.rpc, { now: () => 0 }) } });
      const { buyer, seller } = await young.parties();
      const req = young.requirements(seller.publicKey(), { maxTimeoutSeconds: 60 });
      const first = await createStellarPayment({ requirements: req, signer: buyer, rpc: young.rpc });
      expect((await f.verify(first, req)).body).toMatchObject({ isValid: true });

      clock += 1_000;
      await young.devnet.closeLedger();
      // A fresh buyer measures one close of 1 s (high end 2 s) and signs 24 ledgers ahead, which
      // the 5 s fallback's bound (12 + 2) refused.
      const second = await createStellarPayment({ requirements: req, signer: buyer, rpc: young.rpc });
      const latest = (await young.rpc.getLatestLedger()).sequence;
      const [entry] = (TransactionBuilder.fromXDR(second.payload!.transaction as string, Networks.TESTNET) as any).operations[0].auth;
      expect(inspectAuthEntry(entry).signatureExpirationLedger! - latest).toBeGreaterThan(14);
      expect((await f.verify(second, req)).body).toMatchObject({ isValid: true });
    } finally {
      await young.stop();
    }
  });
});

describe('createStellarPayment', () => {
  it('builds an unsigned envelope with the buyer-signed entry, an expiry inside the bound, and echoes resource/extensions', async () => {
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey(), { maxTimeoutSeconds: 10 });
    const resource = { url: 'https://seller.example/weather', description: 'weather' };
    const extensions = { bazaar: { info: {}, schema: {} } };
    const before = (await h.rpc.getLatestLedger()).sequence;
    // A frozen clock keeps the estimate the payment used in the cache, so the test can read it back.
    const ledgerTime = new LedgerTimeEstimator(h.rpc, { now: () => 0 });
    const payload = await createStellarPayment({ requirements: req, signer: buyer, rpc: h.rpc, resource, extensions, ledgerTime });
    const after = (await h.rpc.getLatestLedger()).sequence;
    expect(payload).toMatchObject({ x402Version: 2, accepted: req, resource, extensions });
    const tx = TransactionBuilder.fromXDR(payload.payload!.transaction as string, Networks.TESTNET) as any;
    expect(tx.source).toBe(NULL_ACCOUNT);
    expect(tx.signatures).toHaveLength(0);
    const [entry] = tx.operations[0].auth;
    const info = inspectAuthEntry(entry);
    expect(info).toMatchObject({ address: buyer.publicKey(), signed: true });
    // 80 % of 10 s at the estimate's high end (the chain closes every 250 ms; a young chain's
    // whole-second close times make the high end larger), counted from the ledger it signed at.
    const { high } = await ledgerTime.estimate();
    const ahead = Math.ceil((10 * 0.8) / high);
    expect(high).toBeGreaterThanOrEqual(0.25);
    expect(info.signatureExpirationLedger!).toBeGreaterThanOrEqual(before + ahead);
    expect(info.signatureExpirationLedger!).toBeLessThanOrEqual(after + ahead);
    expect(ahead).toBeGreaterThan(1);
  });

  it('signs the classic address arm on request (for pre-CAP-71 facilitators), and the scheme accepts both', async () => {
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());
    const f = await h.facilitator();
    const v2 = await createStellarPayment({ requirements: req, signer: buyer, rpc: h.rpc });
    const v1 = await createStellarPayment({ requirements: req, signer: buyer, rpc: h.rpc, credentials: 'address' });
    const arm = (p: typeof v1) =>
      (TransactionBuilder.fromXDR(p.payload!.transaction as string, Networks.TESTNET) as any).operations[0].auth[0].credentials.type;
    expect(arm(v2)).toBe('sorobanCredentialsAddressV2');
    expect(arm(v1)).toBe('sorobanCredentialsAddress');
    expect((await f.settle(v1, req)).body).toMatchObject({ success: true });
    expect((await f.settle(v2, req)).body).toMatchObject({ success: true });
  });

  it('rejects bad requirements before any RPC call', async () => {
    const rpc = recordingRpc();
    const seller = Keypair.random().publicKey();
    const bad = [
      h.requirements(seller, { network: 'stellar:futurenet' }),
      h.requirements(seller, { scheme: 'upto' }),
      h.requirements(seller, { amount: '-5' }),
      h.requirements(seller, { amount: '0' }),
      h.requirements(seller, { asset: 'USDC' }),
      h.requirements('not-an-address'),
      h.requirements(seller, { maxTimeoutSeconds: 0 }),
    ];
    for (const requirements of bad) {
      const err = await createStellarPayment({ requirements, signer: Keypair.random(), rpc }).catch((e) => e);
      expect(err).toBeInstanceOf(StellarPaymentError);
      expect(err.reason).toBe('invalid_requirements');
    }
    expect(rpc.calls).toEqual([]);
  });

  it('an unfunded buyer gets simulation_failed, a dead RPC rpc_error', async () => {
    const { seller } = await h.parties();
    const poor = await h.devnet.createAccount({});
    const req = h.requirements(seller.publicKey());
    const err = await createStellarPayment({ requirements: req, signer: Keypair.fromSecret(poor.secret), rpc: h.rpc }).catch((e) => e);
    expect(err).toMatchObject({ reason: 'simulation_failed' });
    expect(String(err.message)).not.toContain(poor.secret);
    const dead = await createStellarPayment({ requirements: req, signer: Keypair.fromSecret(poor.secret), rpc: recordingRpc() }).catch(
      (e) => e,
    );
    expect(dead).toMatchObject({ reason: 'rpc_error' });
  });
});
