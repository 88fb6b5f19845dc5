/**
 * svc never pays for a transaction it could have refused because the payment's authorization
 * expires (openapi.yaml PolicyCode, docs/SCHEME.md "Authorization expiry"): an authorization with
 * fewer than 2 ledgers left is refused by verify and settle before submission, and every settlement
 * transaction is bounded to the last ledger its authorizations are valid in, so one that would
 * arrive later is refused by the network without a fee. The devnet closes ledgers only when the
 * test says so, so "the latest ledger" holds still while a case runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Networks, TransactionBuilder, rpc } from '@stellar/stellar-sdk';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { SchemeHarness } from './harness.ts';

let h: SchemeHarness;
beforeAll(async () => {
  h = await SchemeHarness.start(0);
});
afterAll(() => h?.stop());

/** Closes a ledger every 100 ms while `work` runs. */
async function withLedgersClosing<T>(work: () => Promise<T>): Promise<T> {
  const closer = setInterval(() => void h.devnet.closeLedger(), 100);
  try {
    return await work();
  } finally {
    clearInterval(closer);
  }
}

/**
 * A facilitator whose ledgers start closing once its transaction was accepted (counted at the RPC
 * port, the boundary): the ledger cannot move on between its verification and its submission.
 */
async function closingAfterSubmission() {
  const port = createSdkRpc({ url: h.devnet.rpcUrl });
  let closer: ReturnType<typeof setInterval> | undefined;
  const f = await h.facilitator({
    scheme: {
      // This devnet has no history, so the scheme estimates the 5 s fallback ledger: the settle's
      // waits for the next close are cut to the closer's 100 ms (polling sooner only finds the outcome sooner).
      sleep: (ms) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 100))),
      rpc: {
        ...port,
        send: async (tx: Parameters<typeof port.send>[0]) => {
          const sent = await port.send(tx);
          closer ??= setInterval(() => void h.devnet.closeLedger(), 100);
          return sent;
        },
      },
    },
  });
  return { f, stop: () => clearInterval(closer) };
}

describe('authorization expiry', () => {
  it('latest+0 and latest+1: verify and settle refuse before submission, 0 stroops paid; latest+2 settles, bounded to its expiry', async () => {
    const { f, stop } = await closingAfterSubmission();
    const submitter = f.submitters[0]!;
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());
    const feesBefore = h.devnet.balances(submitter).xlm;
    for (const left of [0, 1]) {
      const latest = (await h.rpc.getLatestLedger()).sequence;
      const payload = await h.pay(req, buyer, { expirationLedger: latest + left });
      const verified = (await f.verify(payload, req)).body;
      const settled = (await f.settle(payload, req)).body;
      // An entry that expires at the latest ledger may already fail its simulation (the chain's
      // own answer); one with a ledger left passes it and is refused by the policy. Either way,
      // verify and settle give the same code and nothing is submitted.
      expect(verified.isValid, `latest+${left}`).toBe(false);
      expect(['svc_policy_authorization_expiring', 'invalid_exact_stellar_payload_simulation_failed']).toContain(verified.invalidReason);
      if (left === 1) expect(verified.invalidReason).toBe('svc_policy_authorization_expiring');
      expect(settled).toMatchObject({ success: false, transaction: '', errorReason: verified.invalidReason });
    }
    expect(h.devnet.balances(submitter).xlm).toBe(feesBefore);
    expect(h.devnet.balances(seller.publicKey()).usdc).toBe(0n);

    const latest = (await h.rpc.getLatestLedger()).sequence;
    const payload = await h.pay(req, buyer, { expirationLedger: latest + 2 });
    expect((await f.verify(payload, req)).body).toMatchObject({ isValid: true });
    const settled = (await f.settle(payload, req).finally(stop)).body;
    expect(settled, `latest ${latest}: ${JSON.stringify(settled)}`).toMatchObject({ success: true });
    const onChain = await new rpc.Server(h.devnet.rpcUrl, { allowHttp: true }).getTransaction(settled.transaction);
    if (onChain.status !== rpc.Api.GetTransactionStatus.SUCCESS) throw new Error(`not found: ${settled.transaction}`);
    const envelope = TransactionBuilder.fromXDR(onChain.envelopeXdr, Networks.TESTNET);
    const inner = 'innerTransaction' in envelope ? envelope.innerTransaction : envelope;
    expect(inner.ledgerBounds).toEqual({ minLedger: 0, maxLedger: latest + 3 });
    expect(h.devnet.balances(seller.publicKey()).usdc).toBe(BigInt(req.amount));
  });

  it('a transaction that would land after its authorization expired is refused by the network without a fee', async () => {
    const f = await h.facilitator();
    const submitter = f.submitters[0]!;
    const { buyer, seller } = await h.parties();
    const req = h.requirements(seller.publicKey());
    const latest = (await h.rpc.getLatestLedger()).sequence;
    const payload = await h.pay(req, buyer, { expirationLedger: latest + 2 });
    const feesBefore = h.devnet.balances(submitter).xlm;
    // Verified with 2 ledgers left; by the time it is submitted the authorization's last ledger
    // has closed (a slow journal write, a queue): without the ledger bound it would be applied in
    // the next ledger, fail its expired authorization and cost svc its fee.
    const result = await f.scheme.settle(payload, req, {
      beforeSubmit: async () => {
        await h.devnet.closeLedger();
        await h.devnet.closeLedger();
        return null;
      },
    });
    expect(result).toMatchObject({ success: false, errorReason: 'settle_exact_stellar_transaction_submission_failed' });
    expect(result.errorMessage).toMatch(/txTooLate|txTOO_LATE/i);
    await withLedgersClosing(() => new Promise((r) => setTimeout(r, 300)));
    expect(h.devnet.balances(submitter).xlm).toBe(feesBefore);
    expect(h.devnet.balances(buyer.publicKey()).usdc).toBe(10_000_000n);
  });
});
