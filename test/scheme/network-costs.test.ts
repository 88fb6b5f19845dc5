/**
 * What the network charges, on the devnet that charges it (docs/DEVNET.md "Fee model"): an
 * ordinary settlement costs what was measured on testnet, a payment that creates the payee's
 * balance entry pays its rent (and is refused below the ceiling that rent needs), and an archived
 * payer balance is refused before anything is submitted (docs/SCHEME.md "Archived balances"),
 * and the first settlement after the token's instance fell under its TTL threshold pays the
 * instance's extension (docs/OPERATIONS.md "Real-network costs").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Address, Keypair, Operation, StrKey, TransactionBuilder, hash, rpc, xdr } from '@stellar/stellar-sdk';
import { rawRpc } from '../../src/devnet/transfers.ts';
import { FEE_SETTINGS, NETWORK_TTLS } from '../../src/devnet/fees.ts';
import { SchemeHarness, type Facilitator } from './harness.ts';
import { craftTransaction, transferArgs, transferInvocation } from './fixtures.ts';

/** The settlement cost measured on testnet for a G→G USDC transfer (docs/OPERATIONS.md "Real-network costs"). */
const MEASURED_TESTNET_SETTLEMENT = 22_973;
/** A first settlement of the day on testnet, 116,316 of it rent for a TTL extension (docs/OPERATIONS.md "Real-network costs"). */
const REPORTED_FIRST_OF_DAY = 151_550;
const RENT_PER_1KB = NETWORK_TTLS['stellar:testnet'].rentWriteFeePer1KB;

let h: SchemeHarness;
/** MAX_TRANSACTION_FEE_STROOPS lowered to 50,000 (what it was by default): below what rent costs. */
let f: Facilitator;
/** The default ceiling, which sponsors rent (docs/OPERATIONS.md "Real-network costs and the fee ceiling"). */
let generous: Facilitator;

beforeAll(async () => {
  h = await SchemeHarness.start(250);
  f = await h.facilitator({ maxFee: 50_000 });
  generous = await h.facilitator();
});
afterAll(() => h?.stop());

interface RawTransaction {
  status: string;
  resultXdr: string;
  resultMetaXdr: string;
}

/** The fee charged and the rent part of it, from the transaction's result and meta. */
async function charges(hash: string): Promise<{ charged: number; rent: number }> {
  const got = await rawRpc<RawTransaction>(h.devnet.rpcUrl, 'getTransaction', { hash });
  expect(got.result?.status).toBe('SUCCESS');
  const result = xdr.TransactionResult.fromXdr(got.result!.resultXdr, 'base64');
  const meta = xdr.TransactionMeta.fromXdr(got.result!.resultMetaXdr, 'base64');
  if (meta.type !== 'v4' || meta.v4.sorobanMeta?.ext.type !== 'v1') throw new Error('expected meta v4 with a fee breakdown');
  return { charged: Number(result.feeCharged), rent: Number(meta.v4.sorobanMeta.ext.v1.rentFeeCharged) };
}

/** A holder's balance entry of the plain token: its XDR size and live-until ledger. */
const balanceEntry = (holder: string) =>
  contractEntry(h.devnet.customToken.contractId, xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Balance'), new Address(holder).toScVal()]));

/** A contract's persistent entry under `key`, read over JSON-RPC: its XDR size and live-until ledger. */
async function contractEntry(contractId: string, keyVal: xdr.ScVal): Promise<{ size: number; liveUntil: number } | null> {
  const key = xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(contractId).toScAddress(),
      key: keyVal,
      durability: xdr.ContractDataDurability.persistent,
    }),
  );
  const got = await rawRpc<{ entries: Array<{ xdr: string; lastModifiedLedgerSeq: number; liveUntilLedgerSeq: number }> }>(
    h.devnet.rpcUrl,
    'getLedgerEntries',
    { keys: [key.toXdr('base64')] },
  );
  const entry = got.result?.entries[0];
  if (!entry) return null;
  const data = xdr.LedgerEntryData.fromXdr(entry.xdr, 'base64');
  const size = new xdr.LedgerEntry({ lastModifiedLedgerSeq: entry.lastModifiedLedgerSeq, data, ext: xdr.LedgerEntryExt.v0() }).toXdr()
    .length;
  return { size, liveUntil: entry.liveUntilLedgerSeq };
}

describe('the network fee schedule on the devnet', () => {
  it(`an ordinary settlement costs within 20 % of the ${MEASURED_TESTNET_SETTLEMENT} stroops measured on testnet`, async () => {
    const { buyer, seller } = await h.parties(1_000_000n);
    const req = h.requirements(seller.publicKey());
    const settled = await f.settle(await h.pay(req, buyer), req);
    expect(settled.body).toMatchObject({ success: true });
    const { charged, rent } = await charges(settled.body.transaction);
    expect(Math.abs(charged - MEASURED_TESTNET_SETTLEMENT) / MEASURED_TESTNET_SETTLEMENT).toBeLessThan(0.2);
    // Only the authorization nonce (a small temporary entry for testnet's 720 ledgers) pays rent.
    expect(rent).toBeGreaterThan(0);
    expect(rent).toBeLessThan(3_000);
  });

  it("a payment creating the payee's balance entry pays its rent; below the ceiling that needs, it is refused unsent", async () => {
    const { buyer, seller } = await h.parties(0n);
    await h.devnet.mintCustomToken(buyer.publicKey(), 1_000_000n);
    const req = h.requirements(seller.publicKey(), { asset: h.devnet.customToken.contractId });
    expect(await balanceEntry(seller.publicKey())).toBeNull();

    const submitter = f.submitters[0]!;
    const xlmBefore = h.devnet.balances(submitter).xlm;
    const refused = await f.settle(await h.pay(req, buyer), req);
    expect(refused.body).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_fee_exceeds_maximum' });
    expect(h.devnet.balances(submitter).xlm).toBe(xlmBefore);
    expect(await balanceEntry(seller.publicKey())).toBeNull();

    const settled = await generous.settle(await h.pay(req, buyer), req);
    expect(settled.body).toMatchObject({ success: true });
    const { charged, rent } = await charges(settled.body.transaction);
    const created = (await balanceEntry(seller.publicKey()))!;
    const ledger = (await rawRpc<{ ledger: number }>(h.devnet.rpcUrl, 'getTransaction', { hash: settled.body.transaction })).result!.ledger;
    // The published rent: size × rent write fee per KiB × ledgers / (1,024 × the persistent rate).
    const entryRent =
      (created.size * RENT_PER_1KB * (created.liveUntil - ledger + 1)) / (1024 * FEE_SETTINGS.persistentRentRateDenominator);
    expect(created.liveUntil - ledger).toBeGreaterThanOrEqual(30 * 17_280 - 1); // extended to 30 days, as the SAC does
    expect(rent).toBeGreaterThan(entryRent);
    expect(rent - entryRent).toBeLessThan(6_000); // the nonce's rent and the TTL entries written
    // The same operation on the network: the measured settlement plus the new entry's rent and its write.
    const published = MEASURED_TESTNET_SETTLEMENT + entryRent + FEE_SETTINGS.feeWriteLedgerEntry;
    expect(Math.abs(charged - published) / published).toBeLessThan(0.2);
    expect(h.devnet.balances(seller.publicKey()).custom).toBe(100_000n);
  });
});

describe('archived balances', () => {
  it('an archived payer balance is answered with a restore preamble, svc refuses it unsent, and it settles once the payer restored it', async () => {
    const buyer = Keypair.fromSecret((await h.devnet.createAccount({})).secret);
    const seller = Keypair.fromSecret((await h.devnet.createAccount({})).secret);
    await h.devnet.mintCustomToken(buyer.publicKey(), 1_000_000n);
    const req = h.requirements(seller.publicKey(), { asset: h.devnet.customToken.contractId, maxTimeoutSeconds: 300 });
    // Signed now, valid long enough to outlive the balance: only the archival can stop it.
    const latest = h.devnet.latestLedger().sequence;
    const payload = await h.pay(req, buyer, { expirationLedger: latest + 600_000 });
    const { liveUntil } = (await balanceEntry(buyer.publicKey()))!;

    await h.devnet.advanceLedgers(liveUntil - h.devnet.latestLedger().sequence + 1);
    // The seller's balance exists (no rent) and is live: only the payer's is archived.
    await h.devnet.mintCustomToken(seller.publicKey(), 1n);
    expect((await balanceEntry(buyer.publicKey()))!.liveUntil).toBeLessThan(h.devnet.latestLedger().sequence);
    const sim = await rawRpc<{ restorePreamble?: { transactionData: string; minResourceFee: string }; error?: string }>(
      h.devnet.rpcUrl,
      'simulateTransaction',
      { transaction: (payload.payload as { transaction: string }).transaction },
    );
    expect(sim.result?.error).toBeUndefined();
    const restore = xdr.SorobanTransactionData.fromXdr(sim.result!.restorePreamble!.transactionData, 'base64');
    expect(restore.resources.footprint.readWrite).toHaveLength(1);
    expect(Number(sim.result!.restorePreamble!.minResourceFee)).toBeGreaterThan(0);

    const submitter = f.submitters[0]!;
    const xlmBefore = h.devnet.balances(submitter).xlm;
    const verified = await f.verify(payload, req);
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: 'svc_policy_payer_balance_archived', payer: buyer.publicKey() });
    expect(verified.body.invalidMessage).toContain('archived');
    const settled = await f.settle(payload, req);
    expect(settled.body).toMatchObject({ success: false, transaction: '', errorReason: 'svc_policy_payer_balance_archived' });
    expect(h.devnet.balances(submitter).xlm).toBe(xlmBefore);
    expect(h.devnet.ledger.pendingCount()).toBe(0);

    // The payer restores its balance with the preamble (paying the restore itself); the same
    // payment then settles.
    const server = new rpc.Server(h.devnet.rpcUrl, { allowHttp: true });
    const preamble = sim.result!.restorePreamble!;
    const restoreTx = new TransactionBuilder(await server.getAccount(buyer.publicKey()), {
      fee: String(100 + Number(preamble.minResourceFee)),
      networkPassphrase: h.devnet.networkPassphrase,
    })
      .setSorobanData(preamble.transactionData)
      .addOperation(Operation.restoreFootprint({}))
      .setTimeout(60)
      .build();
    restoreTx.sign(buyer);
    const sent = await server.sendTransaction(restoreTx);
    expect(sent.status).toBe('PENDING');
    await h.devnet.closeLedger();
    expect((await server.getTransaction(sent.hash)).status).toBe('SUCCESS');
    expect((await balanceEntry(buyer.publicKey()))!.liveUntil).toBeGreaterThan(h.devnet.latestLedger().sequence);
    // A payment signed now (the first one's expiry is beyond what svc accepts) settles. On testnet
    // a restore gives 7 days, which the payment extends to 30: that rent needs more than 50,000.
    expect((await generous.settle(await h.pay(req, buyer), req)).body).toMatchObject({ success: true });
    expect(h.devnet.balances(seller.publicKey()).custom).toBe(100_001n);
  });
});

describe("the token instance's TTL", () => {
  it('the first settlement after the instance fell under its 6-day threshold pays its extension to 7 days, as reported on testnet; the next is ordinary', async () => {
    const { buyer, seller } = await h.parties(1_000_000n);
    const req = h.requirements(seller.publicKey());
    const usdc = h.devnet.usdc.contractId;
    const instance = () => contractEntry(usdc, xdr.ScVal.scvLedgerKeyContractInstance());
    // 4.2 days left: the extension (to 7 days) the reported rent implies at testnet's rent rate.
    const before = (await instance())!;
    await h.devnet.advanceLedgers(before.liveUntil - h.devnet.latestLedger().sequence - Math.round(4.2 * 17_280));

    const submitter = f.submitters[0]!;
    const xlmBefore = h.devnet.balances(submitter).xlm;
    const refused = await f.settle(await h.pay(req, buyer), req);
    expect(refused.body).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_fee_exceeds_maximum' });
    expect(h.devnet.balances(submitter).xlm).toBe(xlmBefore);
    expect((await instance())!.liveUntil).toBe(before.liveUntil);

    const settled = await generous.settle(await h.pay(req, buyer), req);
    expect(settled.body).toMatchObject({ success: true });
    const { charged, rent } = await charges(settled.body.transaction);
    const ledger = (await rawRpc<{ ledger: number }>(h.devnet.rpcUrl, 'getTransaction', { hash: settled.body.transaction })).result!.ledger;
    const extended = (await instance())!;
    expect(extended.liveUntil).toBe(ledger + 7 * 17_280);
    expect(extended.size).toBeGreaterThan(400); // a Stellar Asset Contract instance: admin, asset and metadata
    // The published rent of the extension: size × rent write fee per KiB × ledgers / (1,024 × the persistent rate).
    const extensionRent =
      (extended.size * RENT_PER_1KB * (extended.liveUntil - before.liveUntil)) / (1024 * FEE_SETTINGS.persistentRentRateDenominator);
    expect(rent).toBeGreaterThan(extensionRent);
    expect(rent - extensionRent).toBeLessThan(6_000); // the nonce's rent and the TTL entry written
    expect(Math.abs(charged - REPORTED_FIRST_OF_DAY) / REPORTED_FIRST_OF_DAY).toBeLessThan(0.2);

    // The instance now has 7 days: the next settlement extends nothing and fits even 50,000.
    const next = await f.settle(await h.pay(req, buyer), req);
    expect(next.body).toMatchObject({ success: true });
    const ordinary = await charges(next.body.transaction);
    expect(Math.abs(ordinary.charged - MEASURED_TESTNET_SETTLEMENT) / MEASURED_TESTNET_SETTLEMENT).toBeLessThan(0.2);
    expect((await instance())!.liveUntil).toBe(extended.liveUntil);
  });
});

describe('a smart-account (contract) payer', () => {
  it("is judged by the enforcing simulation, which runs its __check_auth: the devnet does not model that, so svc answers the simulation's failure and submits nothing", async () => {
    const seller = Keypair.fromSecret((await h.devnet.createAccount({})).secret);
    const account = StrKey.encodeContract(hash(Buffer.from(`a smart account ${seller.publicKey()}`)));
    await h.devnet.mintCustomToken(account, 1_000_000n);
    const req = h.requirements(seller.publicKey(), { asset: h.devnet.customToken.contractId });
    const invocation = transferInvocation(req.asset, transferArgs(account, seller.publicKey(), BigInt(req.amount)));
    // Address credentials carrying a signature in the shape smart accounts take.
    const entry = new xdr.SorobanAuthorizationEntry({
      credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(
        new xdr.SorobanAddressCredentials({
          address: new Address(account).toScAddress(),
          nonce: 7n,
          signatureExpirationLedger: h.devnet.latestLedger().sequence + 20,
          signature: xdr.ScVal.scvVec([xdr.ScVal.scvBytes(Buffer.alloc(64, 1))]),
        }),
      ),
      rootInvocation: invocation,
    });
    const transaction = craftTransaction({
      contract: req.asset,
      from: account,
      to: seller.publicKey(),
      amount: BigInt(req.amount),
      auth: [entry],
    });
    const payload = { x402Version: 2, accepted: req, payload: { transaction } };
    const verified = await f.verify(payload, req);
    expect(verified.body).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_stellar_payload_simulation_failed',
      payer: account,
    });
    const submitter = f.submitters[0]!;
    const xlmBefore = h.devnet.balances(submitter).xlm;
    const settled = await f.settle(payload, req);
    expect(settled.body).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_simulation_failed', transaction: '' });
    expect(h.devnet.balances(submitter).xlm).toBe(xlmBefore);
    expect(h.devnet.balances(account).custom).toBe(1_000_000n);
  });
});
