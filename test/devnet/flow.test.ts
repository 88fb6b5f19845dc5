/**
 * Stage-1 end to end: a USDC SAC payment over the devnet's JSON-RPC with our SDK 17, exactly
 * as a buyer (auth signer) and a facilitator (separate submitter) would do it.
 */
import { Keypair, rpc, scValToNative, xdr } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { preparePayment, rawRpc, server } from './helpers.ts';

let devnet: Devnet;
let s: rpc.Server;

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0 });
  s = server(devnet);
});
afterAll(async () => devnet?.stop());

describe('devnet: USDC payment over JSON-RPC (SDK 17)', () => {
  it('settles a signed transfer: NOT_FOUND until the ledger closes, then SUCCESS; balances, fee, nonce', async () => {
    const payer = await devnet.createAccount({ usdc: 50_000_000n });
    const payee = await devnet.createAccount();
    const submitter = await devnet.createAccount();
    const payerKp = Keypair.fromSecret(payer.secret);
    const submitterKp = Keypair.fromSecret(submitter.secret);
    const amount = 12_345n;

    const { tx, record, enforce, auth } = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount,
      source: submitterKp,
      payer: payerKp,
    });
    // Record mode: one address credential (CAP-71 V2: SDK 17 sends useUpgradedAuth), random nonce, exp 0, void signature.
    const recorded = record.result!.auth[0]!;
    expect(record.result!.auth).toHaveLength(1);
    expect(recorded.credentials.type).toBe('sorobanCredentialsAddressV2');
    if (recorded.credentials.type !== 'sorobanCredentialsAddressV2') throw new Error('unreachable');
    expect(recorded.credentials.addressV2.signatureExpirationLedger).toBe(0);
    expect(recorded.credentials.addressV2.signature.type).toBe('scvVoid');
    // Enforce mode: resourceFee == minResourceFee; events fn_call, transfer, fn_return.
    expect(enforce.transactionData.build().resourceFee.toString()).toBe(enforce.minResourceFee);
    const evTypes = enforce.events.map((e) => `${e.event.type.name}:${scValToNative(e.event.body.v0.topics[0]!)}`);
    expect(evTypes).toEqual(['diagnostic:fn_call', 'contract:transfer', 'diagnostic:fn_return']);
    const [call, transfer, ret] = enforce.events.map((e) => e.event);
    expect(call!.contractId).toBeNull(); // called from the top level: no calling contract
    expect(scValToNative(call!.body.v0.topics[2]!)).toBe('transfer');
    expect(scValToNative(call!.body.v0.data)).toEqual([payer.publicKey, payee.publicKey, amount]);
    expect(transfer!.body.v0.topics).toHaveLength(4);
    expect(scValToNative(transfer!.body.v0.data)).toBe(amount);
    expect(ret!.body.v0.topics.map((t) => scValToNative(t))).toEqual(['fn_return', 'transfer']);
    expect(ret!.body.v0.data.type).toBe('scvVoid');
    expect(enforce.events.every((e) => e.inSuccessfulContractCall)).toBe(true);

    const before = {
      payer: devnet.balances(payer.publicKey),
      payee: devnet.balances(payee.publicKey),
      sub: devnet.balances(submitter.publicKey),
    };
    const sent = await s.sendTransaction(tx);
    expect(sent.status).toBe('PENDING');
    const pendingLookup = await s.getTransaction(sent.hash);
    expect(pendingLookup.status).toBe('NOT_FOUND');
    expect(devnet.balances(payer.publicKey).usdc).toBe(before.payer.usdc); // nothing moves before the close

    await devnet.closeLedger();
    const got = await s.getTransaction(sent.hash);
    expect(got.status).toBe('SUCCESS');
    if (got.status !== 'SUCCESS') throw new Error('unreachable');
    expect(got.resultXdr.result.type).toBe('txSuccess');
    const charged = got.resultXdr.feeCharged;
    // Meta carries the same events: contract event in the op meta, diagnostics alongside.
    if (got.resultMetaXdr.type !== 'v4') throw new Error('expected meta v4');
    const opEvents = got.resultMetaXdr.v4.operations[0]!.events;
    expect(opEvents.map((e) => scValToNative(e.body.v0.topics[0]!))).toEqual(['transfer']);
    expect(got.diagnosticEventsXdr?.map((d) => scValToNative(d.event.body.v0.topics[0]!))).toEqual(['fn_call', 'transfer', 'fn_return']);
    expect(got.events?.contractEventsXdr?.[0]).toHaveLength(1);
    expect(got.events?.transactionEventsXdr?.map((e) => scValToNative(e.event.body.v0.topics[0]!))).toEqual(['fee', 'fee']);

    expect(devnet.balances(payer.publicKey).usdc).toBe(before.payer.usdc! - amount);
    expect(devnet.balances(payee.publicKey).usdc).toBe(before.payee.usdc! + amount);
    expect(devnet.balances(submitter.publicKey).xlm).toBe(before.sub.xlm - charged);
    expect(devnet.balances(payer.publicKey).xlm).toBe(before.payer.xlm); // the payer pays no XLM
    expect(charged).toBeGreaterThan(100n);
    expect(charged).toBeLessThanOrEqual(BigInt(tx.fee));

    // The nonce is consumed: the same signed auth fails re-simulation.
    const again = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount,
      source: submitterKp,
      payer: payerKp,
    }).catch((e: Error) => e);
    expect(again).not.toBeInstanceOf(Error); // a fresh nonce works
    const { rebuildWithAuth, buildTransfer } = await import('./helpers.ts');
    const replay = rebuildWithAuth(
      await buildTransfer(s, devnet.networkPassphrase, {
        contractId: devnet.usdc.contractId,
        from: payer.publicKey,
        to: payee.publicKey,
        amount,
        source: submitterKp,
      }),
      auth,
      devnet.networkPassphrase,
    );
    const replaySim = await s.simulateTransaction(replay);
    expect(rpc.Api.isSimulationError(replaySim)).toBe(true);
    expect((replaySim as rpc.Api.SimulateTransactionErrorResponse).error).toContain('Error(Auth, ExistingValue)');
  });

  it('serves getLatestLedger / getLedgers / getHealth / getNetwork / getFeeStats / getLedgerEntries', async () => {
    const l1 = await devnet.closeLedger();
    const latest = await s.getLatestLedger();
    expect(latest.sequence).toBe(l1.sequence);
    expect(latest.headerXdr).toBeInstanceOf(xdr.LedgerHeader);
    const ledgers = await s.getLedgers({ startLedger: l1.sequence - 1, pagination: { limit: 2 } });
    expect(ledgers.ledgers.map((l) => l.sequence)).toEqual([l1.sequence - 1, l1.sequence]);
    expect(Number(ledgers.ledgers[1]!.ledgerCloseTime)).toBe(l1.closeTime);
    const health = await s.getHealth();
    expect(health.status).toBe('healthy');
    expect(health.latestLedger).toBe(l1.sequence);
    const net = await s.getNetwork();
    expect(net.passphrase).toBe(devnet.networkPassphrase);
    const fees = await s.getFeeStats();
    expect(fees.sorobanInclusionFee.p50).toBe('100');
    const acct = await devnet.createAccount();
    const a = await s.getAccount(acct.publicKey);
    expect(a.accountId()).toBe(acct.publicKey);
    const unknown = await rawRpc(devnet.rpcUrl, 'getSomethingElse');
    expect(unknown.error?.code).toBe(-32601);
    const bad = await rawRpc(devnet.rpcUrl, 'getTransaction', { hash: 'abc' });
    expect(bad.error).toEqual({ code: -32602, message: 'unexpected hash length (3)' });
  });

  it('closes ledgers on a timer', async () => {
    const timed = await startDevnet({ ledgerMs: 100 });
    try {
      const start = timed.latestLedger().sequence;
      const waitable = timed as unknown as { waitForLedger(n: number, t?: number): Promise<{ sequence: number }> };
      const reached = await waitable.waitForLedger(start + 3, 5000);
      expect(reached.sequence).toBeGreaterThanOrEqual(start + 3);
    } finally {
      await timed.stop();
    }
  });
});

describe('determinism', () => {
  it('with an injected random source and clock, two devnets produce identical keys, nonces, fees and ledger hashes', async () => {
    const base = Date.now(); // near the real clock: transactions carry real-time time bounds
    const run = async () => {
      let counter = 0;
      const random = () => {
        const b = new Uint8Array(32);
        new DataView(b.buffer).setUint32(0, ++counter);
        return b;
      };
      let t = base;
      const d = await startDevnet({ ledgerMs: 0, random, now: () => (t += 1000) });
      try {
        const srv = server(d);
        const payer = await d.createAccount({ usdc: 1_000n });
        const payee = await d.createAccount();
        const sub = await d.createAccount();
        await d.closeLedger();
        const ledger = (await srv.getLatestLedger()).id;
        const { tx, record } = await preparePayment(srv, d.networkPassphrase, {
          contractId: d.usdc.contractId,
          from: payer.publicKey,
          to: payee.publicKey,
          amount: 5n,
          source: Keypair.fromSecret(sub.secret),
          payer: Keypair.fromSecret(payer.secret),
        });
        const sent = await srv.sendTransaction(tx);
        await d.closeLedger();
        const got = await srv.getTransaction(sent.hash);
        return {
          keys: [payer.publicKey, payee.publicKey, sub.publicKey],
          auth: record.result!.auth[0]!.toXdr('base64'),
          fee: record.minResourceFee,
          status: got.status,
          ledger,
        };
      } finally {
        await d.stop();
      }
    };
    const [a, b] = [await run(), await run()];
    expect(a.status).toBe('SUCCESS');
    expect(b).toEqual(a);
  });
});
