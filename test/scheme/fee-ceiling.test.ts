/**
 * The default fee ceilings (docs/OPERATIONS.md "Real-network costs and the fee ceiling"): on each
 * network the devnet plays, the dearest settlements its model of the network's costs produces
 * settle under svc's default MAX_TRANSACTION_FEE_STROOPS: the first settlement of the day after the
 * token's instance fell under its 6-day threshold, that extension at its longest together with a
 * payee's new balance entry, and a plain SEP-41 token's payment that extends the payer's balance
 * from its last ledger and creates the payee's; the fee budgets still bound what they cost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Address, Keypair, StrKey, hash, xdr } from '@stellar/stellar-sdk';
import { rawRpc } from '../../src/devnet/transfers.ts';
import { DEFAULT_MAX_TRANSACTION_FEE_STROOPS } from '../../src/chains/stellar/config.ts';
import { SchemeHarness, type Facilitator } from './harness.ts';
import { journaledFacilitator } from '../journal/harness.ts';

const NETWORKS = ['stellar:testnet', 'stellar:pubnet'] as const;

/** A contract's persistent entry under `key`: its live-until ledger. */
async function liveUntil(h: SchemeHarness, contractId: string, keyVal: xdr.ScVal): Promise<number> {
  const key = xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(contractId).toScAddress(),
      key: keyVal,
      durability: xdr.ContractDataDurability.persistent,
    }),
  );
  const got = await rawRpc<{ entries: Array<{ liveUntilLedgerSeq: number }> }>(h.devnet.rpcUrl, 'getLedgerEntries', {
    keys: [key.toXdr('base64')],
  });
  return got.result!.entries[0]!.liveUntilLedgerSeq;
}

const instanceOf = (h: SchemeHarness, contractId: string) => liveUntil(h, contractId, xdr.ScVal.scvLedgerKeyContractInstance());

/** The fee a settlement was charged and declared. */
async function feesOf(h: SchemeHarness, txHash: string): Promise<{ charged: number; declared: number }> {
  const got = await rawRpc<{ envelopeXdr: string; resultXdr: string }>(h.devnet.rpcUrl, 'getTransaction', { hash: txHash });
  const env = xdr.TransactionEnvelope.fromXdr(got.result!.envelopeXdr, 'base64');
  const declared = env.type === 'envelopeTypeTxFeeBump' ? Number(env.feeBump.tx.fee) : env.type === 'envelopeTypeTx' ? env.v1.tx.fee : 0;
  return { charged: Number(xdr.TransactionResult.fromXdr(got.result!.resultXdr, 'base64').feeCharged), declared };
}

describe.each(NETWORKS)('the default fee ceiling on %s', (network) => {
  let h: SchemeHarness;
  let f: Facilitator;
  const measured: Record<string, { charged: number; declared: number }> = {};

  beforeAll(async () => {
    h = await SchemeHarness.start(250, { network });
    f = await h.facilitator();
  });
  afterAll(async () => {
    console.log(`fee-ceiling ${network}: ${JSON.stringify(measured)}`);
    await h?.stop();
  });

  it('is published in GET /supported beside the inclusion bid', async () => {
    const supported = await fetch(`${f.url}/supported`).then((r) => r.json() as Promise<{ kinds: Array<{ extra: unknown }> }>);
    expect(supported.kinds[0]!.extra).toEqual({
      areFeesSponsored: true,
      maxTransactionFeeStroops: DEFAULT_MAX_TRANSACTION_FEE_STROOPS[network],
      inclusionFeeStroops: 100,
    });
  });

  it("admits a plain SEP-41 payment extending the payer's balance from its last ledger and creating the payee's", async () => {
    const token = h.devnet.customToken.contractId;
    const buyer = Keypair.fromSecret((await h.devnet.createAccount({})).secret);
    const seller = Keypair.fromSecret((await h.devnet.createAccount({})).secret);
    await h.devnet.mintCustomToken(buyer.publicKey(), 1_000_000n);
    const balance = xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Balance'), new Address(buyer.publicKey()).toScVal()]);
    await h.devnet.advanceLedgers((await liveUntil(h, token, balance)) - h.devnet.latestLedger().sequence - 5);
    const req = h.requirements(seller.publicKey(), { asset: token });
    const settled = await f.settle(await h.pay(req, buyer), req);
    expect(settled.body, settled.body.errorMessage).toMatchObject({ success: true });
    measured.payerExtendedPayeeNew = await feesOf(h, settled.body.transaction);
    expect(measured.payerExtendedPayeeNew.declared).toBeLessThanOrEqual(DEFAULT_MAX_TRANSACTION_FEE_STROOPS[network]);
  });
  it("admits the first settlement of the day (the instance fell to 4.2 days) and the longest extension with a payee's new balance", async () => {
    const usdc = h.devnet.usdc.contractId;
    const { buyer, seller } = await h.parties(1_000_000n);
    const req = h.requirements(seller.publicKey());
    let until = await instanceOf(h, usdc);
    await h.devnet.advanceLedgers(until - h.devnet.latestLedger().sequence - Math.round(4.2 * 17_280));
    const first = await f.settle(await h.pay(req, buyer), req);
    expect(first.body, first.body.errorMessage).toMatchObject({ success: true });
    measured.firstOfDay = await feesOf(h, first.body.transaction);

    // The instance a few ledgers from archival: the next transfer extends it by nearly 7 days,
    // and it pays a contract payee's first USDC (a new balance entry) too.
    until = await instanceOf(h, usdc);
    await h.devnet.advanceLedgers(until - h.devnet.latestLedger().sequence - 5);
    const payee = StrKey.encodeContract(hash(Buffer.from(`a contract payee on ${network}`)));
    const toContract = h.requirements(payee);
    const worst = await f.settle(await h.pay(toContract, buyer), toContract);
    expect(worst.body, worst.body.errorMessage).toMatchObject({ success: true });
    measured.instanceAndNewBalance = await feesOf(h, worst.body.transaction);
    // The dearest of the model's settlements, and more than half the ceiling: a ceiling far above
    // what the model costs would be no bound at all.
    expect(measured.instanceAndNewBalance.declared).toBeLessThanOrEqual(DEFAULT_MAX_TRANSACTION_FEE_STROOPS[network]);
    expect(measured.instanceAndNewBalance.declared).toBeGreaterThan(DEFAULT_MAX_TRANSACTION_FEE_STROOPS[network] / 2);
  });

  // On testnet two of the dearest pass a new payer's allowance (on pubnet about four fit in it).
  it.runIf(network === 'stellar:testnet')(
    "the fee budgets bound them: a payer without history is refused unsent once its day's 2,000,000 stroops would be passed",
    async () => {
      const journaled = await journaledFacilitator(h);
      try {
        const usdc = h.devnet.usdc.contractId;
        const { buyer } = await h.parties(1_000_000n);
        const codes: string[] = [];
        let charged = 0;
        for (let i = 0; i < 3 && !codes.includes('svc_fee_budget_payer_exhausted'); i++) {
          await h.devnet.advanceLedgers((await instanceOf(h, usdc)) - h.devnet.latestLedger().sequence - 5);
          const req = h.requirements(StrKey.encodeContract(hash(Buffer.from(`budget payee ${i} ${buyer.publicKey()}`))));
          const settled = await journaled.settle(await h.pay(req, buyer), req);
          codes.push(settled.body.success ? 'success' : settled.body.errorReason);
          if (settled.body.success) charged += (await feesOf(h, settled.body.transaction)).charged;
          else expect(settled.body.transaction).toBe('');
        }
        expect(codes[0]).toBe('success');
        expect(codes.at(-1)).toBe('svc_fee_budget_payer_exhausted');
        expect(charged).toBeLessThanOrEqual(2_000_000);
      } finally {
        await journaled.close();
      }
    },
  );
});
