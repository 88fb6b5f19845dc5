/**
 * Third-party fidelity: the stock @x402/stellar 2.9.0 client (with its own nested
 * stellar-sdk 14.6.1) builds and signs a payment against the devnet over https, and the
 * stock facilitator verifies and settles it.
 *
 * Certificate trust: the devnet's self-signed certificate is added to this process's
 * default CA list with Node 24's `tls.setDefaultCACertificates` (axios in sdk 14 uses the
 * default https agent, so it picks it up). Child processes can use NODE_EXTRA_CA_CERTS.
 * Network boundary: x402 asks Horizon testnet for the ledger close time; this test makes
 * every non-loopback DNS lookup fail at once (named boundary: the https global agent's
 * `lookup`), so the stock code falls back to its 5 s default without touching the internet.
 */
import { Keypair, rpc, xdr } from '@stellar/stellar-sdk';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as ExactClient } from '@x402/stellar/exact/client';
import { ExactStellarScheme as ExactFacilitator } from '@x402/stellar/exact/facilitator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { expectConsole } from '../helpers/console.ts';
import { trustCertAndBlockDns, type OfflineHttps } from '../helpers/offline-https.ts';

/** What the stock facilitator prints (console.error) when the RPC's simulation refuses a payment. */
const SIMULATION_ERROR = /^Simulation error: /;

let devnet: Devnet;
let offline: OfflineHttps;

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 200, https: true });
  offline = trustCertAndBlockDns(devnet.caCertPem!);
});
afterAll(async () => {
  offline?.restore();
  await devnet?.stop();
});

/** The payload's transaction with one byte of the payer's auth-entry signature flipped. */
function flipAuthSignatureByte(envelopeB64: string): string {
  const env = xdr.TransactionEnvelope.fromXdr(envelopeB64, 'base64');
  if (env.type !== 'envelopeTypeTx') throw new Error('expected a v1 envelope');
  const op = env.v1.tx.operations[0]!;
  if (op.body.type !== 'invokeHostFunction') throw new Error('expected invokeHostFunction');
  const entry = op.body.invokeHostFunctionOp.auth[0]!;
  if (entry.credentials.type !== 'sorobanCredentialsAddress') throw new Error('expected legacy address credentials from sdk 14');
  const c = entry.credentials.address;
  const sigMap = c.signature.type === 'scvVec' ? c.signature.vec![0]! : null;
  if (!sigMap || sigMap.type !== 'scvMap') throw new Error('expected a signature map');
  const flipped = sigMap.map!.map((e) => {
    if (e.key.type === 'scvSymbol' && String(e.key.sym) === 'signature' && e.val.type === 'scvBytes') {
      const b = Uint8Array.from(e.val.bytes.toBytes());
      b[10]! ^= 0x01;
      return new xdr.ScMapEntry({ key: e.key, val: xdr.ScVal.scvBytes(b) });
    }
    return e;
  });
  const creds = new xdr.SorobanAddressCredentials({
    address: c.address,
    nonce: c.nonce,
    signatureExpirationLedger: c.signatureExpirationLedger,
    signature: xdr.ScVal.scvVec([xdr.ScVal.scvMap(flipped)]),
  });
  const newEntry = new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(creds),
    rootInvocation: entry.rootInvocation,
  });
  const newOp = new xdr.Operation({
    sourceAccount: op.sourceAccount,
    body: xdr.OperationBody.invokeHostFunction(
      new xdr.InvokeHostFunctionOp({ hostFunction: op.body.invokeHostFunctionOp.hostFunction, auth: [newEntry] }),
    ),
  });
  const t = env.v1.tx;
  const tx = new xdr.Transaction({
    sourceAccount: t.sourceAccount,
    fee: t.fee,
    seqNum: t.seqNum,
    cond: t.cond,
    memo: t.memo,
    operations: [newOp],
    ext: t.ext,
  });
  return xdr.TransactionEnvelope.envelopeTypeTx(new xdr.TransactionV1Envelope({ tx, signatures: env.v1.signatures })).toXdr('base64');
}

function requirements(payTo: string, amount: string) {
  return {
    scheme: 'exact',
    network: 'stellar:testnet' as const,
    asset: devnet.usdc.contractId,
    amount,
    payTo,
    maxTimeoutSeconds: 30,
    extra: { areFeesSponsored: true },
  };
}

describe('@x402/stellar 2.9.0 against the devnet (https)', () => {
  it('stock client signs, stock facilitator verifies and settles; a replay fails', async () => {
    const payer = await devnet.createAccount({ usdc: 100_000_000n });
    const payee = await devnet.createAccount();
    const facilitatorAcct = await devnet.createAccount();
    const rpcConfig = { url: devnet.httpsRpcUrl! };

    const client = new ExactClient(createEd25519Signer(payer.secret, 'stellar:testnet'), rpcConfig);
    const req = requirements(payee.publicKey, '2500000');
    const started = Date.now();
    const partial = await client.createPaymentPayload(2, req);
    expect(Date.now() - started).toBeLessThan(10_000); // the Horizon fallback does not hang
    expect(offline.blockedLookups).toContain('horizon-testnet.stellar.org'); // it tried, and was refused offline
    const payload = {
      ...partial,
      accepted: req,
      resource: { url: 'https://example.test/paid', description: 'test', mimeType: 'text/plain' },
    };

    const facilitator = new ExactFacilitator([createEd25519Signer(facilitatorAcct.secret, 'stellar:testnet')], {
      rpcConfig,
      areFeesSponsored: true,
    });
    const verified = await facilitator.verify(payload, req);
    expect(verified).toMatchObject({ isValid: true, payer: payer.publicKey });

    const before = {
      payer: devnet.balances(payer.publicKey),
      payee: devnet.balances(payee.publicKey),
      fac: devnet.balances(facilitatorAcct.publicKey),
    };
    const settled = await facilitator.settle(payload, req);
    expect(settled).toMatchObject({ success: true, network: 'stellar:testnet', payer: payer.publicKey });
    expect(settled.transaction).toMatch(/^[0-9a-f]{64}$/);

    expect(devnet.balances(payer.publicKey).usdc).toBe(before.payer.usdc! - 2_500_000n);
    expect(devnet.balances(payee.publicKey).usdc).toBe(before.payee.usdc! + 2_500_000n);
    const s = new rpc.Server(devnet.rpcUrl, { allowHttp: true });
    const tx = await s.getTransaction(settled.transaction);
    expect(tx.status).toBe('SUCCESS');
    if (tx.status !== 'SUCCESS') throw new Error('unreachable');
    expect(devnet.balances(facilitatorAcct.publicKey).xlm).toBe(before.fac.xlm - tx.resultXdr.feeCharged);
    // The network's fee schedule applied to this settlement: 94 stroops above the 22,973 measured on
    // testnet for the same transfer (docs/DEVNET.md "Fee model").
    expect(tx.resultXdr.feeCharged).toBe(23_067n);

    // A tampered payload (amount changed after signing) is rejected by the stock facilitator.
    const tamperedReq = { ...req, amount: '2500001' };
    const tamperedVerify = await facilitator.verify({ ...payload, accepted: tamperedReq }, tamperedReq);
    expect(tamperedVerify.isValid).toBe(false);
    // A flipped signature byte: the devnet's enforce simulation fails, so the facilitator refuses
    // (and logs the devnet's host error to the console, as it does against a real RPC).
    const badSig = { ...payload, payload: { transaction: flipAuthSignatureByte(payload.payload.transaction as string) } };
    const badSigVerify = await expectConsole('error', SIMULATION_ERROR, () => facilitator.verify(badSig, req));
    expect(badSigVerify.result).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_stellar_payload_simulation_failed' });
    expect(badSigVerify.lines).toEqual([
      expect.stringMatching(/HostError: Error\(Auth, InvalidAction\)[\s\S]*failed account authentication/),
    ]);

    // Once settled, the authorization is spent: settling or verifying it again fails in simulation.
    const replay = await expectConsole('error', SIMULATION_ERROR, () => facilitator.settle(payload, req));
    expect(replay.result.success).toBe(false);
    const reverify = await expectConsole('error', SIMULATION_ERROR, () => facilitator.verify(payload, req));
    expect(reverify.result.isValid).toBe(false);
    expect(reverify.result.invalidReason).toBe('invalid_exact_stellar_payload_simulation_failed');
    for (const { lines } of [replay, reverify]) expect(lines).toEqual([expect.stringMatching(/HostError: Error\(Auth, /)]);
  });

  it('settles through a fee-bump account: both hashes resolve; 23052 stroops charged (23,073 measured)', async () => {
    const payer = await devnet.createAccount({ usdc: 100_000_000n });
    const payee = await devnet.createAccount();
    const fac = await devnet.createAccount();
    const bumper = await devnet.createAccount();
    const rpcConfig = { url: devnet.httpsRpcUrl! };
    const client = new ExactClient(createEd25519Signer(payer.secret, 'stellar:testnet'), rpcConfig);
    const req = requirements(payee.publicKey, '1000');
    const payload = { ...(await client.createPaymentPayload(2, req)), accepted: req };
    const facilitator = new ExactFacilitator([createEd25519Signer(fac.secret, 'stellar:testnet')], {
      rpcConfig,
      areFeesSponsored: true,
      feeBumpSigner: createEd25519Signer(bumper.secret, 'stellar:testnet'),
    });
    const before = devnet.balances(bumper.publicKey).xlm;
    const settled = await facilitator.settle(payload, req);
    expect(settled.success).toBe(true);
    const s = new rpc.Server(devnet.rpcUrl, { allowHttp: true });
    const outer = await s.getTransaction(settled.transaction);
    expect(outer.status).toBe('SUCCESS');
    if (outer.status !== 'SUCCESS') throw new Error('unreachable');
    expect(outer.feeBump).toBe(true);
    expect(outer.resultXdr.feeCharged).toBe(23_167n);
    expect(devnet.balances(bumper.publicKey).xlm).toBe(before - 23_167n);
    expect(devnet.balances(fac.publicKey).xlm).toBe(10_000n * 10_000_000n); // the inner source pays nothing
    const innerHash =
      outer.resultXdr.result.type === 'txFeeBumpInnerSuccess'
        ? Buffer.from(outer.resultXdr.result.innerResultPair.transactionHash.toBytes()).toString('hex')
        : '';
    const inner = await s.getTransaction(innerHash);
    expect(inner.status).toBe('SUCCESS');
    void Keypair;
  });
});
