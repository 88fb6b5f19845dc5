/**
 * sendTransaction / apply validation like stellar-core, each observed through the RPC:
 * txBAD_SEQ, txINSUFFICIENT_FEE (fee below the resource fee), txBAD_AUTH (source and fee-bump
 * source), txTOO_LATE, txMALFORMED, footprint enforcement, TRY_AGAIN_LATER, DUPLICATE,
 * fee charged and sequence consumed when the operation fails, insufficient balance on-chain.
 */
import { Asset, Keypair, Operation, TransactionBuilder, rpc, xdr, type Transaction } from '@stellar/stellar-sdk';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { mutateTx, preparePayment, rawRpc, server, submitAndClose, txErrorCode } from './helpers.ts';

let devnet: Devnet;
let s: rpc.Server;

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0 });
  s = server(devnet);
});
afterAll(async () => devnet?.stop());

async function payment(amount = 10n, usdc = 1_000n) {
  const payer = await devnet.createAccount({ usdc });
  const payee = await devnet.createAccount();
  const sub = Keypair.fromSecret((await devnet.createAccount()).secret);
  const p = await preparePayment(s, devnet.networkPassphrase, {
    contractId: devnet.usdc.contractId,
    from: payer.publicKey,
    to: payee.publicKey,
    amount,
    source: sub,
    payer: Keypair.fromSecret(payer.secret),
  });
  return { ...p, payer, payee, sub };
}

const resign = (t: Transaction, kp: Keypair) => {
  t.sign(kp);
  return t;
};

describe('sendTransaction validation', () => {
  it('wrong sequence → ERROR txBAD_SEQ (and re-submitting an applied tx too)', async () => {
    const { tx, sub } = await payment();
    const bad = resign(
      mutateTx(tx, devnet.networkPassphrase, (t) => ({ seqNum: t.seqNum + 5n })),
      sub,
    );
    const r = await s.sendTransaction(bad);
    expect(r.status).toBe('ERROR');
    expect(txErrorCode(r)).toBe('txBadSeq');
    expect((await submitAndClose(devnet, s, tx)).got?.status).toBe('SUCCESS');
    const again = await s.sendTransaction(tx);
    expect(again.status).toBe('ERROR');
    expect(txErrorCode(again)).toBe('txBadSeq');
  });

  it('fee below inclusion + resource fee → ERROR txINSUFFICIENT_FEE; declared resource fee too low → txINSUFFICIENT_FEE', async () => {
    const { tx, sub, enforce } = await payment();
    const resourceFee = Number(enforce.minResourceFee);
    const noInclusion = resign(
      mutateTx(tx, devnet.networkPassphrase, () => ({ fee: resourceFee })),
      sub,
    );
    const r = await s.sendTransaction(noInclusion);
    expect(r.status).toBe('ERROR');
    expect(txErrorCode(r)).toBe('txInsufficientFee');
    const lowResource = resign(
      mutateTx(tx, devnet.networkPassphrase, (t) => {
        if (t.ext.type !== 'sorobanData') throw new Error('expected soroban data');
        const sd = t.ext.sorobanData;
        return {
          ext: xdr.TransactionExt.sorobanData(new xdr.SorobanTransactionData({ ext: sd.ext, resources: sd.resources, resourceFee: 1000n })),
        };
      }),
      sub,
    );
    const r2 = await s.sendTransaction(lowResource);
    expect(txErrorCode(r2)).toBe('txInsufficientFee');
    const belowResource = resign(
      mutateTx(tx, devnet.networkPassphrase, () => ({ fee: resourceFee - 1 })),
      sub,
    );
    expect(txErrorCode(await s.sendTransaction(belowResource))).toBe('txSorobanInvalid');
  });

  it('missing or wrong envelope signature → txBAD_AUTH; fee-bump with a bad outer signature → txBAD_AUTH', async () => {
    const { tx, sub } = await payment();
    const unsigned = mutateTx(tx, devnet.networkPassphrase, () => ({}));
    expect(txErrorCode(await s.sendTransaction(unsigned))).toBe('txBadAuth');
    const wrong = resign(
      mutateTx(tx, devnet.networkPassphrase, () => ({})),
      Keypair.random(),
    );
    expect(txErrorCode(await s.sendTransaction(wrong))).toBe('txBadAuth');
    const bumper = Keypair.fromSecret((await devnet.createAccount()).secret);
    const fb = TransactionBuilder.buildFeeBumpTransaction(bumper, '100', tx, devnet.networkPassphrase);
    fb.sign(Keypair.random());
    const r = await s.sendTransaction(fb);
    expect(r.status).toBe('ERROR');
    expect(r.errorResult?.result.type).toBe('txBadAuth');
    void sub;
  });

  it('a fee bump pays for both operations: outer fee below resource fee + 200 → txINSUFFICIENT_FEE; exactly that is accepted', async () => {
    const { tx, enforce } = await payment();
    const bumper = Keypair.fromSecret((await devnet.createAccount()).secret);
    const resourceFee = BigInt(enforce.minResourceFee);
    const bumpWithFee = (fee: bigint) => {
      const built = TransactionBuilder.buildFeeBumpTransaction(bumper, '100', tx, devnet.networkPassphrase);
      const env = built.toEnvelope();
      if (env.type !== 'envelopeTypeTxFeeBump') throw new Error('expected a fee bump');
      const fb = env.feeBump.tx;
      const patched = xdr.TransactionEnvelope.envelopeTypeTxFeeBump(
        new xdr.FeeBumpTransactionEnvelope({
          tx: new xdr.FeeBumpTransaction({ feeSource: fb.feeSource, fee, innerTx: fb.innerTx, ext: fb.ext }),
          signatures: [],
        }),
      );
      const out = TransactionBuilder.fromXDR(patched.toXdr('base64'), devnet.networkPassphrase);
      out.sign(bumper);
      return out;
    };
    const low = await s.sendTransaction(bumpWithFee(resourceFee + 199n));
    expect(low.status).toBe('ERROR');
    expect(low.errorResult?.result.type).toBe('txInsufficientFee');
    const exact = await s.sendTransaction(bumpWithFee(resourceFee + 200n));
    expect(exact.status).toBe('PENDING');
    await devnet.closeLedger();
    const got = await s.getTransaction(exact.hash);
    expect(got.status).toBe('SUCCESS');
  });

  it('envelope signatures must reach the medium threshold of the source (multisig source)', async () => {
    const { tx, sub } = await payment();
    const cosigner = Keypair.random();
    (
      devnet as unknown as {
        setSigners(g: string, t: [number, number, number, number], s: Array<{ publicKey: string; weight: number }>): void;
      }
    ).setSigners(sub.publicKey(), [1, 1, 2, 2], [{ publicKey: cosigner.publicKey(), weight: 1 }]);
    expect(txErrorCode(await s.sendTransaction(tx))).toBe('txBadAuth'); // master alone: weight 1 < 2
    const both = mutateTx(tx, devnet.networkPassphrase, () => ({}));
    both.sign(sub, cosigner);
    expect((await s.sendTransaction(both)).status).toBe('PENDING');
    await devnet.closeLedger();
  });

  it('expired time bounds → txTOO_LATE', async () => {
    const { tx, sub } = await payment();
    const now = BigInt(Math.floor(Date.now() / 1000));
    const late = resign(
      mutateTx(tx, devnet.networkPassphrase, () => ({
        cond: xdr.Preconditions.precondTime(new xdr.TimeBounds({ minTime: 0n, maxTime: now - 100n })),
      })),
      sub,
    );
    expect(txErrorCode(await s.sendTransaction(late))).toBe('txTooLate');
  });

  it('two Soroban operations, or a Soroban op without soroban data → txMALFORMED', async () => {
    const { tx, sub } = await payment();
    const two = resign(
      mutateTx(tx, devnet.networkPassphrase, (t) => ({ operations: [t.operations[0]!, t.operations[0]!] })),
      sub,
    );
    expect(txErrorCode(await s.sendTransaction(two))).toBe('txMalformed');
    const noData = resign(
      mutateTx(tx, devnet.networkPassphrase, () => ({ ext: xdr.TransactionExt.v0() })),
      sub,
    );
    expect(txErrorCode(await s.sendTransaction(noData))).toBe('txMalformed');
  });

  it('a second transaction from the same source while one is pending → TRY_AGAIN_LATER; the same one → DUPLICATE', async () => {
    const { tx, sub } = await payment();
    expect((await s.sendTransaction(tx)).status).toBe('PENDING');
    expect((await s.sendTransaction(tx)).status).toBe('DUPLICATE');
    const other = resign(
      mutateTx(tx, devnet.networkPassphrase, (t) => ({ fee: t.fee + 1 })),
      sub,
    );
    expect((await s.sendTransaction(other)).status).toBe('TRY_AGAIN_LATER');
    await devnet.closeLedger();
    expect((await s.getTransaction(Buffer.from(tx.hash()).toString('hex'))).status).toBe('SUCCESS');
  });

  it('an entry outside the footprint traps on apply: FAILED, fee charged, sequence consumed', async () => {
    const { tx, sub, payee } = await payment();
    const trimmed = resign(
      mutateTx(tx, devnet.networkPassphrase, (t) => {
        if (t.ext.type !== 'sorobanData') throw new Error('expected soroban data');
        const sd = t.ext.sorobanData;
        const fp = sd.resources.footprint;
        const rw = fp.readWrite.filter(
          (k) =>
            k.type !== 'trustline' ||
            k.trustLine.accountId.toXdr('base64') !==
              xdr.PublicKey.publicKeyTypeEd25519(Keypair.fromPublicKey(payee.publicKey).rawPublicKey()).toXdr('base64'),
        );
        expect(rw.length).toBe(fp.readWrite.length - 1);
        const resources = new xdr.SorobanResources({
          footprint: new xdr.LedgerFootprint({ readOnly: fp.readOnly, readWrite: rw }),
          instructions: sd.resources.instructions,
          diskReadBytes: sd.resources.diskReadBytes,
          writeBytes: sd.resources.writeBytes,
        });
        return {
          ext: xdr.TransactionExt.sorobanData(new xdr.SorobanTransactionData({ ext: sd.ext, resources, resourceFee: sd.resourceFee })),
        };
      }),
      sub,
    );
    const xlm = devnet.balances(sub.publicKey()).xlm;
    const seq = BigInt((await s.getAccount(sub.publicKey())).sequenceNumber());
    const { got } = await submitAndClose(devnet, s, trimmed);
    expect(got?.status).toBe('FAILED');
    if (got?.status !== 'FAILED') throw new Error('unreachable');
    const r = got.resultXdr.result;
    expect(r.type).toBe('txFailed');
    expect(devnet.balances(sub.publicKey()).xlm).toBe(xlm - got.resultXdr.feeCharged);
    expect(got.resultXdr.feeCharged).toBeGreaterThan(100n);
    expect(BigInt((await s.getAccount(sub.publicKey())).sequenceNumber())).toBe(seq + 1n);
    expect(devnet.balances(payee.publicKey).usdc).toBe(0n);
  });

  it('insufficient balance at apply time → FAILED with the fee charged', async () => {
    const { tx, payer, sub } = await payment(900n, 1_000n);
    // Drain the payer between simulation and apply (the payer pays someone else first).
    const other = await devnet.createAccount();
    const drain = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: other.publicKey,
      amount: 500n,
      source: Keypair.fromSecret((await devnet.createAccount()).secret),
      payer: Keypair.fromSecret(payer.secret),
    });
    expect((await submitAndClose(devnet, s, drain.tx)).got?.status).toBe('SUCCESS');
    const xlm = devnet.balances(sub.publicKey()).xlm;
    const { got } = await submitAndClose(devnet, s, tx);
    expect(got?.status).toBe('FAILED');
    expect(devnet.balances(payer.publicKey).usdc).toBe(500n);
    expect(devnet.balances(sub.publicKey()).xlm).toBeLessThan(xlm);
  });

  it('a classic-only transaction → txNOT_SUPPORTED (classic operations are not modelled)', async () => {
    const src = Keypair.fromSecret((await devnet.createAccount()).secret);
    const dest = await devnet.createAccount();
    const account = await s.getAccount(src.publicKey());
    const payment = new TransactionBuilder(account, { fee: '100', networkPassphrase: devnet.networkPassphrase })
      .addOperation(Operation.payment({ destination: dest.publicKey, asset: Asset.native(), amount: '1' }))
      .setTimeout(60)
      .build();
    payment.sign(src);
    const r = await s.sendTransaction(payment);
    expect(r.status).toBe('ERROR');
    expect(txErrorCode(r)).toBe('txNotSupported');
  });

  it('getLedgers pages with a cursor; batches and HTTP framing errors are answered', async () => {
    for (let i = 0; i < 4; i++) await devnet.closeLedger();
    const latest = devnet.latestLedger().sequence;
    const first = await s.getLedgers({ startLedger: latest - 3, pagination: { limit: 2 } });
    expect(first.ledgers.map((l) => l.sequence)).toEqual([latest - 3, latest - 2]);
    const next = await s.getLedgers({ pagination: { cursor: first.cursor, limit: 2 } });
    expect(next.ledgers.map((l) => l.sequence)).toEqual([latest - 1, latest]);
    const batch = await fetch(devnet.rpcUrl, {
      method: 'POST',
      body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'getHealth' }, { jsonrpc: '2.0', id: 2, method: 'nope' }, { id: 3 }]),
    });
    const answers = (await batch.json()) as Array<{ id: number | null; result?: unknown; error?: { code: number } }>;
    expect(answers.map((a) => a.error?.code ?? 'ok')).toEqual(['ok', -32601, -32600]);
    expect((await fetch(`${devnet.rpcUrl}/elsewhere`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(devnet.rpcUrl)).status).toBe(405);
    const huge = await fetch(devnet.rpcUrl, { method: 'POST', body: 'x'.repeat(11 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it('junk params to every method get a JSON-RPC answer, never a crash', async () => {
    const methods = [
      'getHealth',
      'getNetwork',
      'getLatestLedger',
      'getLedgers',
      'getLedgerEntries',
      'getFeeStats',
      'simulateTransaction',
      'sendTransaction',
      'getTransaction',
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...methods), fc.anything({ maxDepth: 2 }), async (method, params) => {
        const r = await rawRpc(devnet.rpcUrl, method, params);
        expect(r.result !== undefined || (r.error !== undefined && [-32602, -32600].includes(r.error.code))).toBe(true);
      }),
      { numRuns: 150 },
    );
    const junkXdr = ['AAAA', 'AAAAAgAAAAA=', Buffer.alloc(200, 0xff).toString('base64'), '////', ''];
    for (const j of junkXdr) {
      for (const m of ['simulateTransaction', 'sendTransaction']) {
        expect((await rawRpc(devnet.rpcUrl, m, { transaction: j })).error?.code).toBe(-32602);
      }
    }
    expect((await s.getHealth()).status).toBe('healthy');
  });

  it('history is bounded by the retention window: old ledgers and transactions are forgotten', async () => {
    const small = await startDevnet({ ledgerMs: 0, retentionLedgers: 10 });
    try {
      const ss = server(small);
      const payer = await small.createAccount({ usdc: 100n });
      const payee = await small.createAccount();
      const sub = Keypair.fromSecret((await small.createAccount()).secret);
      const { tx } = await preparePayment(ss, small.networkPassphrase, {
        contractId: small.usdc.contractId,
        from: payer.publicKey,
        to: payee.publicKey,
        amount: 1n,
        source: sub,
        payer: Keypair.fromSecret(payer.secret),
      });
      const sent = await ss.sendTransaction(tx);
      await small.closeLedger();
      expect((await ss.getTransaction(sent.hash)).status).toBe('SUCCESS');
      for (let i = 0; i < 25; i++) await small.closeLedger();
      const health = await ss.getHealth();
      expect(health.latestLedger - health.oldestLedger).toBe(9);
      expect(health.ledgerRetentionWindow).toBe(10);
      expect((await ss.getTransaction(sent.hash)).status).toBe('NOT_FOUND');
      expect((await rawRpc(small.rpcUrl, 'getLedgers', { startLedger: health.oldestLedger - 1 })).error?.code).toBe(-32602);
    } finally {
      await small.stop();
    }
  });

  it('bad params answer JSON-RPC errors like the real server', async () => {
    expect((await rawRpc(devnet.rpcUrl, 'sendTransaction', { transaction: 'not-xdr' })).error?.code).toBe(-32602);
    expect((await rawRpc(devnet.rpcUrl, 'simulateTransaction', {})).error?.code).toBe(-32602);
    expect((await rawRpc(devnet.rpcUrl, 'getLedgerEntries', { keys: ['AAAA'] })).error?.code).toBe(-32602);
    expect((await rawRpc(devnet.rpcUrl, 'getLedgers', { startLedger: 1 })).error?.code).toBe(-32602);
    expect((await rawRpc(devnet.rpcUrl, 'nope')).error).toEqual({ code: -32601, message: 'method not found: nope' });
    const res = await fetch(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
});
