/**
 * The exact scheme over HTTP on the devnet (250 ms ledgers): a valid payment end to end, replay,
 * every verify code a crafted payload can reach, the fee rule and fee-bump mode. Every response
 * goes through the openapi.yaml contract helper (harness → api()).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair, Networks, TransactionBuilder, xdr } from '@stellar/stellar-sdk';
import { buildTransfer } from '../../src/chains/stellar/exact/buyer.ts';
import { SchemeHarness, type Facilitator } from './harness.ts';
import { api } from '../helpers/contract.ts';
import { craftTransaction, signedEntry, sourceAccountEntry, transferArgs, transferInvocation, unsignedEntry } from './fixtures.ts';

let h: SchemeHarness;
let f: Facilitator;

beforeAll(async () => {
  h = await SchemeHarness.start(250);
  f = await h.facilitator();
});
afterAll(() => h?.stop());

const authOf = (payload: { payload?: Record<string, unknown> }): xdr.SorobanAuthorizationEntry[] =>
  ((TransactionBuilder.fromXDR(payload.payload!.transaction as string, Networks.TESTNET) as any).operations[0].auth ??
    []) as xdr.SorobanAuthorizationEntry[];
const asPayload = (transaction: string, req: object) => ({ x402Version: 2, accepted: req, payload: { transaction } });
const HEX64 = /^[0-9a-f]{64}$/;

describe('a valid payment', () => {
  it('verifies, settles, moves balances, resolves on the devnet, charges a fee within the ceiling; a replay fails', async () => {
    const { buyer, seller } = await h.parties(1_000_000n);
    const req = h.requirements(seller.publicKey());
    const payload = await h.pay(req, buyer);
    const submitterBefore = h.devnet.balances(f.submitters[0]!).xlm;

    const verified = await f.verify(payload, req);
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ isValid: true, payer: buyer.publicKey() });

    const settled = await f.settle(payload, req);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ success: true, network: 'stellar:testnet', payer: buyer.publicKey() });
    expect(settled.body.transaction).toMatch(HEX64);
    expect(h.devnet.balances(buyer.publicKey()).usdc).toBe(900_000n);
    expect(h.devnet.balances(seller.publicKey()).usdc).toBe(100_000n);
    const onChain = await h.rpc.getTransaction(settled.body.transaction);
    expect(onChain.status).toBe('SUCCESS');

    const charged = submitterBefore - h.devnet.balances(f.submitters[0]!).xlm;
    expect(charged).toBeGreaterThan(100n);
    expect(charged).toBeLessThanOrEqual(50_000n);
    expect(onChain.feeCharged).toBe(charged);

    // One log line per decision, with code, payer, amount and hash, and no secret.
    const success = f.logs.find((l) => l.code === 'success');
    expect(success).toMatchObject({ phase: 'settle', payer: buyer.publicKey(), amount: '100000', hash: settled.body.transaction });
    expect(JSON.stringify(f.logs)).not.toMatch(/"S[A-Z2-7]{55}"/);

    // Replay: the consumed nonce makes the re-simulation fail, on verify and on settle.
    const again = await f.verify(payload, req);
    expect(again.body).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_stellar_payload_simulation_failed' });
    const replay = await f.settle(payload, req);
    expect(replay.body).toMatchObject({ success: false, transaction: '', errorReason: 'invalid_exact_stellar_payload_simulation_failed' });
    expect(replay.body.errorMessage).toBeTruthy();
  });

  it('pays a plain SEP-41 token (3-topic events) and a muxed payTo (CAP-67 map data)', async () => {
    const { buyer, seller } = await h.parties();
    await h.devnet.mintCustomToken(buyer.publicKey(), 1_000_000n);
    // The seller already holds the token: a payment creating its balance entry would pay that
    // entry's rent, above the default ceiling (test/scheme/network-costs.test.ts).
    await h.devnet.mintCustomToken(seller.publicKey(), 1n);
    const custom = h.requirements(seller.publicKey(), { asset: h.devnet.customToken.contractId });
    const settled = await f.settle(await h.pay(custom, buyer), custom);
    expect(settled.body).toMatchObject({ success: true });
    expect(h.devnet.balances(seller.publicKey()).custom).toBe(100_001n);

    const { MuxedAccount, Account } = await import('@stellar/stellar-sdk');
    const muxed = new MuxedAccount(new Account(seller.publicKey(), '0'), '9').accountId();
    const req = h.requirements(muxed);
    expect((await f.settle(await h.pay(req, buyer), req)).body).toMatchObject({ success: true });
    expect(h.devnet.balances(seller.publicKey()).usdc).toBe(100_000n);
  });
});

describe('verify codes reached by crafted payloads over HTTP', () => {
  let buyer: Keypair;
  let seller: Keypair;
  let req: ReturnType<SchemeHarness['requirements']>;
  beforeAll(async () => {
    ({ buyer, seller } = await h.parties());
    req = h.requirements(seller.publicKey());
  });

  async function expectVerify(payload: unknown, code: string, requirements: object = req) {
    const res = await f.verify(payload, requirements);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ isValid: false, invalidReason: code });
    expect(typeof res.body.invalidMessage).toBe('string');
    return res;
  }

  it('protocol shape: unsupported_scheme and network_mismatch (accepted differs from requirements)', async () => {
    const payload = await h.pay(req, buyer);
    await expectVerify({ ...payload, accepted: { ...req, scheme: 'upto' } }, 'unsupported_scheme');
    await expectVerify({ ...payload, accepted: { ...req, network: 'stellar:pubnet' } }, 'network_mismatch');
  });

  it('decode and structure codes', async () => {
    const from = buyer.publicKey();
    const to = seller.publicKey();
    await expectVerify(asPayload('AAAA', req), 'invalid_exact_stellar_payload_malformed');
    await expectVerify({ x402Version: 2, accepted: req, payload: {} }, 'invalid_exact_stellar_payload_malformed');
    await expectVerify(asPayload(craftTransaction({ from, to, extraOps: 1 }), req), 'invalid_exact_stellar_payload_wrong_operation');
    await expectVerify(
      asPayload(craftTransaction({ contract: h.devnet.customToken.contractId, from, to }), req),
      'invalid_exact_stellar_payload_wrong_asset',
    );
    await expectVerify(
      asPayload(craftTransaction({ contract: req.asset, fn: 'approve', from, to }), req),
      'invalid_exact_stellar_payload_wrong_function_name',
    );
    await expectVerify(
      asPayload(craftTransaction({ contract: req.asset, from, to: Keypair.random().publicKey() }), req),
      'invalid_exact_stellar_payload_wrong_recipient',
    );
    await expectVerify(
      asPayload(craftTransaction({ contract: req.asset, from, to, amount: 1n }), req),
      'invalid_exact_stellar_payload_wrong_amount',
    );
  });

  it('facilitator safety codes; payer is never a facilitator address, on /verify and on /settle', async () => {
    const submitter = f.submitters[0]!;
    const to = seller.publicKey();
    const auth = authOf(await h.pay(req, buyer));
    const facilitatorEntry = unsignedEntry(submitter, transferInvocation(req.asset, transferArgs(submitter, to, 1n)));
    const cases: [string, unknown, string | undefined][] = [
      [
        'invalid_exact_stellar_payload_unsafe_tx_or_op_source',
        asPayload(craftTransaction({ contract: req.asset, from: buyer.publicKey(), to, source: submitter }), req),
        buyer.publicKey(),
      ],
      [
        'invalid_exact_stellar_payload_unsafe_tx_or_op_source',
        asPayload(craftTransaction({ contract: req.asset, from: submitter, to, source: submitter }), req),
        undefined,
      ],
      [
        'invalid_exact_stellar_payload_facilitator_is_payer',
        asPayload(craftTransaction({ contract: req.asset, from: submitter, to }), req),
        undefined,
      ],
      [
        'invalid_exact_stellar_payload_facilitator_in_auth',
        asPayload(buildTransfer(req, buyer.publicKey(), Networks.TESTNET, [...auth, facilitatorEntry]).toXDR(), req),
        buyer.publicKey(),
      ],
    ];
    for (const [code, payload, payer] of cases) {
      const verified = await expectVerify(payload, code);
      expect(verified.body.payer, code).toBe(payer);
      const settled = await f.settle(payload, req);
      expect(settled.body, code).toMatchObject({ success: false, errorReason: code });
      expect(settled.body.payer, code).toBe(payer);
      for (const body of [verified.body, settled.body]) expect(f.submitters).not.toContain(body.payer);
    }
  });

  it('simulation_failed: expired authorization and empty balance', async () => {
    const latest = (await h.rpc.getLatestLedger()).sequence;
    const expiring = await h.pay(req, buyer, { expirationLedger: latest + 1 });
    for (let i = 0; i < 3; i++) await h.devnet.closeLedger();
    const expired = await expectVerify(expiring, 'invalid_exact_stellar_payload_simulation_failed');
    expect(expired.body.payer).toBe(buyer.publicKey());

    const { buyer: poor, seller: s2 } = await h.parties(100_000n);
    const r2 = h.requirements(s2.publicKey());
    const first = await h.pay(r2, poor);
    const second = await h.pay(r2, poor);
    expect((await f.settle(first, r2)).body.success).toBe(true);
    await expectVerify(second, 'invalid_exact_stellar_payload_simulation_failed', r2);
  });

  it('authorization-entry codes (after a successful simulation)', async () => {
    const from = buyer.publicKey();
    const to = seller.publicKey();
    // Without auth entries the simulation records them, pricing the nonce's rent at the longest
    // TTL (as the network does), beyond the default ceiling: the missing entries are named first.
    const unsigned = asPayload(buildTransfer(req, from, Networks.TESTNET).toXDR(), req);
    await expectVerify(unsigned, 'invalid_exact_stellar_payload_no_auth_entries');
    const auth = authOf(await h.pay(req, buyer));
    const other = Keypair.random();
    const otherInvocation = transferInvocation(req.asset, transferArgs(other.publicKey(), to, 5n));
    await expectVerify(
      asPayload(buildTransfer(req, from, Networks.TESTNET, [...auth, sourceAccountEntry(otherInvocation)]).toXDR(), req),
      'invalid_exact_stellar_payload_unsupported_credential_type',
    );
    const latest = (await h.rpc.getLatestLedger()).sequence;
    const nested = transferInvocation(req.asset, transferArgs(other.publicKey(), to, 5n), [otherInvocation]);
    await expectVerify(
      asPayload(buildTransfer(req, from, Networks.TESTNET, [...auth, await signedEntry(other, nested, latest + 5)]).toXDR(), req),
      'invalid_exact_stellar_payload_has_subinvocations',
    );
    await expectVerify(
      asPayload(buildTransfer(req, from, Networks.TESTNET, [...auth, unsignedEntry(other.publicKey(), otherInvocation)]).toXDR(), req),
      'invalid_exact_stellar_payload_unexpected_pending_signatures',
    );
    await expectVerify(
      await h.pay(req, buyer, { expirationLedger: latest + 10_000 }),
      'invalid_exact_stellar_signature_expiration_too_far',
    );
    // The payer's own unsigned entry is caught by the enforcing simulation first (see docs/SCHEME.md).
    await expectVerify(
      asPayload(
        buildTransfer(req, from, Networks.TESTNET, [
          unsignedEntry(from, authOf(await h.pay(req, buyer))[0]!.rootInvocation, latest + 5),
        ]).toXDR(),
        req,
      ),
      'invalid_exact_stellar_payload_simulation_failed',
    );
  });

  it('unexpected_verify_error (RPC fault) on /verify; the same fault on /settle is verification_failed', async () => {
    const payload = await h.pay(req, buyer);
    h.devnet.faults.set('simulateTransaction', { kind: 'rpcError', code: -32603, message: 'internal' }, { times: 2 });
    try {
      await expectVerify(payload, 'unexpected_verify_error');
      const settled = await f.settle(payload, req);
      expect(settled.body).toMatchObject({ success: false, transaction: '', errorReason: 'verification_failed' });
    } finally {
      h.devnet.faults.clear();
    }
    expect((await f.verify(payload, req)).body.isValid).toBe(true);
  });
});

describe('fees', () => {
  it('a ceiling below the derived fee gives fee_exceeds_maximum in verify and settle', async () => {
    const low = await h.facilitator({ maxFee: 1_000 });
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());
    const payload = await h.pay(req, buyer);
    const verified = await low.verify(payload, req);
    expect(verified.body).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_stellar_payload_fee_exceeds_maximum',
      payer: buyer.publicKey(),
    });
    const settled = await low.settle(payload, req);
    expect(settled.body).toMatchObject({
      success: false,
      transaction: '',
      errorReason: 'invalid_exact_stellar_payload_fee_exceeds_maximum',
    });
    expect(h.devnet.balances(seller.publicKey()).usdc).toBe(0n);
  });

  it('fee-bump mode wraps the settlement and charges the fee-bump account, not the submitter', async () => {
    const bumped = await h.facilitator({ feeBump: true });
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());
    const submitterBefore = h.devnet.balances(bumped.submitters[0]!).xlm;
    const bumpBefore = h.devnet.balances(bumped.feeBump!).xlm;
    const settled = await bumped.settle(await h.pay(req, buyer), req);
    expect(settled.body).toMatchObject({ success: true, payer: buyer.publicKey() });
    const onChain = await h.rpc.getTransaction(settled.body.transaction);
    expect(onChain.status).toBe('SUCCESS');
    expect(onChain.resultCode).toBe('txFeeBumpInnerSuccess');
    expect(h.devnet.balances(bumped.submitters[0]!).xlm).toBe(submitterBefore);
    const charged = bumpBefore - h.devnet.balances(bumped.feeBump!).xlm;
    expect(charged).toBeGreaterThan(200n);
    expect(charged).toBeLessThanOrEqual(50_000n);
    expect(h.devnet.balances(seller.publicKey()).usdc).toBe(100_000n);

    // /supported advertises the kind (fees sponsored) and every address that sources settlements.
    const supported = await api(bumped.url).get('/supported');
    expect(supported.status).toBe(200);
    expect(supported.body.kinds).toEqual([
      {
        x402Version: 2,
        scheme: 'exact',
        network: 'stellar:testnet',
        extra: { areFeesSponsored: true, maxTransactionFeeStroops: 1_100_000, inclusionFeeStroops: 100 },
      },
    ]);
    expect(supported.body.signers['stellar:*']).toEqual([bumped.submitters[0], bumped.feeBump]);
  });
});
