/**
 * Inclusion bids on the devnet (docs/DEVNET.md "Ledger capacity and surge pricing"). A neighbour
 * bidding far above the minimum while ledgers are not full is charged the minimum, and svc bids
 * the base fee beside it and settles under the default ceiling. A burst of transactions bidding
 * above the minimum, beyond a ledger's capacity, fills ledgers: svc bids above their surge price
 * and still settles within its ceiling, or refuses with the ceiling's code, unsent, saying how
 * full the ledgers were, when the bid takes the fee above it; once ledgers are no longer full it
 * bids the base fee again (docs/SCHEME.md "Inclusion fee").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair, rpc, xdr } from '@stellar/stellar-sdk';
import { preparePayment, rawRpc } from '../../src/devnet/transfers.ts';
import { InclusionFeeEstimator } from '../../src/chains/stellar/inclusion-fee.ts';
import { SchemeHarness } from './harness.ts';

/** What the burst bids per operation, far above the 100-stroop minimum. */
const BURST_BID = 2_000;
/** Two Soroban transactions per ledger; the burst keeps more than that waiting. */
const CAPACITY = 2;
const BURST_ACCOUNTS = 6;
/** What the stock @x402/stellar 2.9.0 facilitator bids as inclusion fee: the client's whole fee. */
const NEIGHBOUR_BID = 25_835;

let h: SchemeHarness;
const stop = { done: false };
let burst: Promise<void>[] = [];

beforeAll(async () => {
  h = await SchemeHarness.start(300, { ledgerLimits: { transactions: CAPACITY } });
});
afterAll(async () => {
  stop.done = true;
  await Promise.all(burst);
  await h?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One account paying a sink again and again at `bid`, one transaction in flight at a time, until `until.done`. */
async function burstFrom(server: rpc.Server, account: Keypair, sink: string, bid = BURST_BID, until = stop): Promise<void> {
  while (!until.done) {
    try {
      const { tx } = await preparePayment(server, h.devnet.networkPassphrase, {
        contractId: h.devnet.usdc.contractId,
        from: account.publicKey(),
        to: sink,
        amount: 1n,
        source: account,
        payer: account,
        fee: String(bid),
      });
      const sent = await server.sendTransaction(tx);
      while (!until.done && (await server.getTransaction(sent.hash)).status === 'NOT_FOUND') await sleep(100);
    } catch {
      await sleep(100);
    }
  }
}

async function sorobanP90(): Promise<number> {
  const got = await rawRpc<{ sorobanInclusionFee: { p90: string } }>(h.devnet.rpcUrl, 'getFeeStats');
  return Number(got.result!.sorobanInclusionFee.p90);
}

/** The inclusion bid per operation of a settlement as submitted (its fee above the resource fee) and the fee charged. */
async function bidOf(hash: string): Promise<{ bid: number; charged: number }> {
  const got = await rawRpc<{ envelopeXdr: string; resultXdr: string }>(h.devnet.rpcUrl, 'getTransaction', { hash });
  const env = xdr.TransactionEnvelope.fromXdr(got.result!.envelopeXdr, 'base64');
  if (env.type !== 'envelopeTypeTx') throw new Error('expected a plain transaction');
  const { fee, ext } = env.v1.tx;
  if (ext.type !== 'sorobanData') throw new Error('expected a Soroban transaction');
  const charged = xdr.TransactionResult.fromXdr(got.result!.resultXdr, 'base64').feeCharged;
  return { bid: Number(BigInt(fee) - ext.sorobanData.resourceFee), charged: Number(charged) };
}

describe('an overbidding neighbour while ledgers are not full', () => {
  it('is charged the minimum; svc bids the base fee beside it and settles every payment under the default ceiling', async () => {
    const f = await h.facilitator({ scheme: { inclusionFee: new InclusionFeeEstimator(h.rpc, { ttlMs: 100 }) } });
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());
    const server = new rpc.Server(h.devnet.rpcUrl, { allowHttp: true });
    const sink = (await h.devnet.createAccount({})).publicKey;
    const account = Keypair.fromSecret((await h.devnet.createAccount({ usdc: 10_000_000n })).secret);
    // One neighbour transaction and one settlement in flight at most: within the two a ledger holds.
    const quiet = { done: false };
    const neighbour = burstFrom(server, account, sink, NEIGHBOUR_BID, quiet);
    try {
      const until = Date.now() + 30_000;
      while (h.devnet.ledger.sorobanFeeStats().fees.length === 0) {
        if (Date.now() > until) throw new Error('the neighbour landed nothing within 30 s');
        await sleep(100);
      }
      for (let i = 0; i < 8; i++) {
        const settled = await f.settle(await h.pay(req, buyer), req);
        expect(settled.body).toMatchObject({ success: true });
        expect((await bidOf(settled.body.transaction)).bid).toBe(100);
      }
    } finally {
      quiet.done = true;
      await neighbour;
    }
    // getFeeStats reports what was charged (as stellar-rpc does): the minimum, whatever was bid.
    expect(await sorobanP90()).toBe(100);
    // The neighbour's envelopes did bid 25,835 above their resource fee, in ledgers that were not full.
    const bids = h.devnet.ledger.ledgers.flatMap((l) => {
      const meta = xdr.LedgerCloseMeta.fromXdr(l.metadataXdr, 'base64');
      if (meta.type !== 'v2' || meta.v2.txSet.v1TxSet.phases[1]?.type !== 'parallelTxsComponent') return [];
      const phase = meta.v2.txSet.v1TxSet.phases[1].parallelTxsComponent;
      expect(phase.baseFee).toBe(100n);
      return phase.executionStages.flat(2).map((env) => (env.type === 'envelopeTypeTx' ? env.v1.tx : null));
    });
    expect(bids.some((tx) => tx?.ext.type === 'sorobanData' && tx.fee - Number(tx.ext.sorobanData.resourceFee) === NEIGHBOUR_BID)).toBe(
      true,
    );
  });
});

describe('a burst beyond ledger capacity', () => {
  it('raises the inclusion fee getFeeStats reports; svc bids above it within its ceiling, or refuses unsent beyond it', async () => {
    const inclusionFee = () => new InclusionFeeEstimator(h.rpc, { ttlMs: 100 });
    const f = await h.facilitator({ scheme: { inclusionFee: inclusionFee() } });
    // A ceiling just above an ordinary settlement's declared fee (about 25,700 stroops).
    const tight = await h.facilitator({ maxFee: 27_000, scheme: { inclusionFee: inclusionFee() } });
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());

    expect(await sorobanP90()).toBe(100);
    expect((await tight.verify(await h.pay(req, buyer), req)).body).toMatchObject({ isValid: true });

    const server = new rpc.Server(h.devnet.rpcUrl, { allowHttp: true });
    const sink = (await h.devnet.createAccount({})).publicKey;
    const accounts = await Promise.all(
      Array.from({ length: BURST_ACCOUNTS }, async () => Keypair.fromSecret((await h.devnet.createAccount({ usdc: 10_000_000n })).secret)),
    );
    burst = accounts.map((a) => burstFrom(server, a, sink));
    const deadline = Date.now() + 30_000;
    while ((await sorobanP90()) < BURST_BID) {
      if (Date.now() > deadline) throw new Error('the burst did not raise the inclusion fee within 30 s');
      await sleep(200);
    }

    // A transaction bidding the minimum, as svc did before, waits while the ledgers are full.
    const lowBidder = Keypair.fromSecret((await h.devnet.createAccount({ usdc: 1_000n })).secret);
    const low = await preparePayment(server, h.devnet.networkPassphrase, {
      contractId: h.devnet.usdc.contractId,
      from: lowBidder.publicKey(),
      to: sink,
      amount: 1n,
      source: lowBidder,
      payer: lowBidder,
    });
    const lowSent = await server.sendTransaction(low.tx);
    const seen = h.devnet.latestLedger().sequence;
    await h.devnet.waitForLedger(seen + 3);
    expect((await server.getTransaction(lowSent.hash)).status).toBe('NOT_FOUND');

    // svc bids one stroop above what full ledgers included, and settles within its ceiling.
    const settled = await f.settle(await h.pay(req, buyer), req);
    expect(settled.body).toMatchObject({ success: true });
    const { bid, charged } = await bidOf(settled.body.transaction);
    expect(bid).toBe(BURST_BID + 1);
    // /supported publishes the bid of the moment.
    const supported = await fetch(`${f.url}/supported`).then(
      (r) => r.json() as Promise<{ kinds: Array<{ extra: { inclusionFeeStroops: number } }> }>,
    );
    expect(supported.kinds[0]!.extra.inclusionFeeStroops).toBeGreaterThan(BURST_BID);
    expect(charged).toBeLessThanOrEqual(50_000);

    // Beyond the tight ceiling: refused with the ceiling's code, nothing submitted.
    const submitter = tight.submitters[0]!;
    const xlmBefore = h.devnet.balances(submitter).xlm;
    const refused = await tight.settle(await h.pay(req, buyer), req);
    expect(refused.body).toMatchObject({
      success: false,
      transaction: '',
      errorReason: 'invalid_exact_stellar_payload_fee_exceeds_maximum',
    });
    // The refusal says how full the ledgers were and what they charged.
    const asked = /inclusion fee (\d+) per operation: (\d+) of the last 10 ledgers (?:was|were) full, surge-priced at up to (\d+)/.exec(
      refused.body.errorMessage as string,
    );
    expect(asked, refused.body.errorMessage).not.toBeNull();
    expect(Number(asked![1])).toBe(Number(asked![3]) + 1);
    expect(Number(asked![2])).toBeGreaterThan(0);
    expect(Number(asked![3])).toBeGreaterThanOrEqual(BURST_BID);
    expect(h.devnet.balances(submitter).xlm).toBe(xlmBefore);

    // The burst ends; once the judged ledgers are no longer full, svc bids the base fee again.
    stop.done = true;
    await Promise.all(burst);
    await h.devnet.waitForLedger(h.devnet.latestLedger().sequence + 12);
    // The reading taken during the burst is kept 5 s (src/chains/stellar/inclusion-fee.ts): on a busy machine the 12
    // ledgers can close within it.
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    const calm = await f.settle(await h.pay(req, buyer), req);
    expect(calm.body).toMatchObject({ success: true });
    expect((await bidOf(calm.body.transaction)).bid).toBe(100);
  });
});
