/**
 * Both SDK generations parse every response the devnet emits: ours (@stellar/stellar-sdk
 * 17.2) and the one @x402/stellar 2.9.0 nests (14.6.1). Each method's answers, success and
 * failure shapes alike, go through each SDK's rpc.Server parser. Transactions here carry
 * legacy ADDRESS credentials: 14.x cannot decode CAP-71 ADDRESS_V2 XDR at all (on a real
 * protocol-27 network either), so envelopes signed with V2 are readable by SDK 17 only.
 */
import { createRequire } from 'node:module';
import * as sdk17 from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { buildTransfer, mutateTx, preparePayment, server } from './helpers.ts';

// The nested 14.6.1 copy, loaded by path (typed loosely: only rpc.Server and TransactionBuilder are used).
const sdk14 = createRequire(import.meta.url)('../../node_modules/@x402/stellar/node_modules/@stellar/stellar-sdk') as {
  rpc: {
    Server: new (url: string, opts: { allowHttp: boolean }) => any;
    Api: { isSimulationSuccess(x: unknown): boolean; isSimulationError(x: unknown): boolean };
  };
  TransactionBuilder: { fromXDR(x: string, p: string): any };
  xdr: { LedgerKey: { fromXDR(x: string, f: string): any } };
};

let devnet: Devnet;
let s17: sdk17.rpc.Server;
let s14: any;

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0 });
  s17 = server(devnet);
  s14 = new sdk14.rpc.Server(devnet.rpcUrl, { allowHttp: true });
  expect(createRequire(import.meta.url)('../../node_modules/@x402/stellar/node_modules/@stellar/stellar-sdk/package.json').version).toBe(
    '14.6.1',
  );
});
afterAll(async () => devnet?.stop());

const both = async (f: (srv: any, sdk: 'v17' | 'v14') => Promise<any>): Promise<[any, any]> => [await f(s17, 'v17'), await f(s14, 'v14')];
const as14 = (t: { toXDR(): string }) => sdk14.TransactionBuilder.fromXDR(t.toXDR(), devnet.networkPassphrase);

describe('every response parses in sdk 17.2 and 14.6.1', () => {
  it('getHealth, getNetwork, getFeeStats, getLatestLedger, getLedgers', async () => {
    await devnet.closeLedger();
    const [h17, h14] = await both((srv) => srv.getHealth());
    expect(h17.status).toBe('healthy');
    expect(h14.status).toBe('healthy');
    const [n17, n14] = await both((srv) => srv.getNetwork());
    expect(n17.passphrase).toBe(devnet.networkPassphrase);
    expect(n14.protocolVersion).toBe(n17.protocolVersion);
    const [f17, f14] = await both((srv) => srv.getFeeStats());
    expect(f14.sorobanInclusionFee.max).toBe(f17.sorobanInclusionFee.max);
    const [l17, l14] = await both((srv) => srv.getLatestLedger());
    expect(l14.sequence).toBe(l17.sequence);
    expect(l17.headerXdr.ledgerSeq).toBe(l17.sequence);
    const [g17, g14] = await both((srv) => srv.getLedgers({ startLedger: l17.sequence - 1, pagination: { limit: 2 } }));
    expect(g17.ledgers).toHaveLength(2);
    expect(g14.ledgers).toHaveLength(2);
    expect(g14.ledgers[1].sequence).toBe(l17.sequence);
    expect(Number(g17.cursor)).toBe(l17.sequence);
  });

  it('getLedgerEntries (account, trustline, contract data with liveUntil) and getAccount', async () => {
    const acct = await devnet.createAccount({ usdc: 5n });
    const [a17, a14] = await both((srv) => srv.getAccount(acct.publicKey));
    expect(a17.sequenceNumber()).toBe(a14.sequenceNumber());
    const instanceKey = sdk17.xdr.LedgerKey.contractData(
      new sdk17.xdr.LedgerKeyContractData({
        contract: new sdk17.Address(devnet.usdc.contractId).toScAddress(),
        key: sdk17.xdr.ScVal.scvLedgerKeyContractInstance(),
        durability: sdk17.xdr.ContractDataDurability.persistent,
      }),
    );
    const keyB64 = instanceKey.toXdr('base64');
    const [e17, e14] = await both((srv, v) =>
      srv.getLedgerEntries(v === 'v17' ? instanceKey : sdk14.xdr.LedgerKey.fromXDR(keyB64, 'base64')),
    );
    expect(e17.entries).toHaveLength(1);
    expect(e14.entries).toHaveLength(1);
    expect(e14.entries[0].liveUntilLedgerSeq).toBeGreaterThan(0);
    const [missing17] = await both((srv) => srv.getAccount(sdk17.Keypair.random().publicKey()).catch((e: Error) => e));
    expect(missing17).toBeInstanceOf(Error);
  });

  it('simulateTransaction success (record and enforce) and failure', async () => {
    const payer = await devnet.createAccount({ usdc: 100n });
    const payee = await devnet.createAccount();
    const sub = sdk17.Keypair.fromSecret((await devnet.createAccount()).secret);
    const tx = await buildTransfer(s17, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 10n,
      source: sub,
    });
    const [r17, r14] = await both((srv, v) => srv.simulateTransaction(v === 'v17' ? tx : as14(tx)));
    expect(sdk17.rpc.Api.isSimulationSuccess(r17)).toBe(true);
    expect(sdk14.rpc.Api.isSimulationSuccess(r14)).toBe(true);
    expect(r14.result.auth).toHaveLength(1);
    expect(r14.result.auth[0].credentials().switch().name).toBe('sorobanCredentialsAddress'); // 14.x: no useUpgradedAuth
    const big = await buildTransfer(s17, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 10_000n,
      source: sub,
    });
    const [x17, x14] = await both((srv, v) => srv.simulateTransaction(v === 'v17' ? big : as14(big)));
    expect(sdk17.rpc.Api.isSimulationError(x17)).toBe(true);
    expect(sdk14.rpc.Api.isSimulationError(x14)).toBe(true);
    expect(x14.error).toContain('Error(Contract, #10)');
    expect(x14.events.length).toBeGreaterThan(0);
  });

  it('sendTransaction (PENDING, DUPLICATE, TRY_AGAIN_LATER, ERROR) and getTransaction (NOT_FOUND, SUCCESS, FAILED, fee bump)', async () => {
    const payer = await devnet.createAccount({ usdc: 100n });
    const payee = await devnet.createAccount();
    const sub = sdk17.Keypair.fromSecret((await devnet.createAccount()).secret);
    const p = await preparePayment(s17, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 10n,
      source: sub,
      payer: sdk17.Keypair.fromSecret(payer.secret),
      legacyAuth: true,
    });
    const sent = await s17.sendTransaction(p.tx);
    expect(sent.status).toBe('PENDING');
    const dup = await s14.sendTransaction(as14(p.tx));
    expect(dup.status).toBe('DUPLICATE');
    const other = mutateTx(p.tx, devnet.networkPassphrase, (t) => ({ fee: t.fee + 1 }));
    other.sign(sub);
    const [t17, t14] = await both((srv, v) => srv.sendTransaction(v === 'v17' ? other : as14(other)));
    expect([t17.status, t14.status]).toEqual(['TRY_AGAIN_LATER', 'TRY_AGAIN_LATER']);
    const [nf17, nf14] = await both((srv) => srv.getTransaction(sent.hash));
    expect([nf17.status, nf14.status]).toEqual(['NOT_FOUND', 'NOT_FOUND']);
    await devnet.closeLedger();
    const [ok17, ok14] = await both((srv) => srv.getTransaction(sent.hash));
    expect([ok17.status, ok14.status]).toEqual(['SUCCESS', 'SUCCESS']);
    expect(ok14.resultXdr.feeCharged().toString()).toBe(ok17.resultXdr.feeCharged.toString());
    expect(ok14.resultMetaXdr.switch()).toBe(4);
    expect(ok14.envelopeXdr.switch().name).toBe('envelopeTypeTx');

    const [e17, e14] = await both((srv, v) => srv.sendTransaction(v === 'v17' ? p.tx : as14(p.tx))); // already applied → txBAD_SEQ
    expect([e17.status, e14.status]).toEqual(['ERROR', 'ERROR']);
    expect(e14.errorResult.result().switch().name).toBe('txBadSeq');

    // FAILED (replayed nonce) and a fee-bumped SUCCESS.
    const replay = mutateTx(p.tx, devnet.networkPassphrase, (t) => ({ seqNum: t.seqNum + 1n }));
    replay.sign(sub);
    const failed = await s17.sendTransaction(replay);
    await devnet.closeLedger();
    const [fl17, fl14] = await both((srv) => srv.getTransaction(failed.hash));
    expect([fl17.status, fl14.status]).toEqual(['FAILED', 'FAILED']);

    const p2 = await preparePayment(s17, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 1n,
      source: sub,
      payer: sdk17.Keypair.fromSecret(payer.secret),
      legacyAuth: true,
    });
    const bumper = sdk17.Keypair.fromSecret((await devnet.createAccount()).secret);
    const fb = sdk17.TransactionBuilder.buildFeeBumpTransaction(bumper, '100', p2.tx, devnet.networkPassphrase);
    fb.sign(bumper);
    const fbSent = await s14.sendTransaction(sdk14.TransactionBuilder.fromXDR(fb.toXDR(), devnet.networkPassphrase));
    expect(fbSent.status).toBe('PENDING');
    await devnet.closeLedger();
    const [fb17, fb14] = await both((srv) => srv.getTransaction(fbSent.hash));
    expect([fb17.status, fb14.status]).toEqual(['SUCCESS', 'SUCCESS']);
    expect(fb14.feeBump).toBe(true);
    const innerHash = Buffer.from(p2.tx.hash()).toString('hex');
    const [in17, in14] = await both((srv) => srv.getTransaction(innerHash));
    expect([in17.status, in14.status]).toEqual(['SUCCESS', 'SUCCESS']);
  });
});
