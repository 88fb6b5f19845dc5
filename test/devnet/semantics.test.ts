/**
 * Host semantics observed through the JSON-RPC: authorization (signatures, weights and
 * thresholds, exact invocation match, expiry bounds, nonces, sub-invocations, source-account
 * credentials, CAP-71 V2), token errors with the host's contract codes, C-address balances,
 * the custom SEP-41 token's 3-topic event, CAP-67 muxed data, side-effect-free simulation.
 */
import {
  Address,
  Keypair,
  StrKey,
  authorizeEntry,
  buildAuthorizationEntryPreimage,
  hash,
  nativeToScVal,
  rpc,
  scValToNative,
  xdr,
  MuxedAccount,
  Account,
} from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { MAX_ENTRY_TTL } from '../../src/devnet/ledger.ts';
import { buildTransfer, preparePayment, rawRpc, rebuildWithAuth, server, simulateRaw, submitAndClose } from './helpers.ts';

let devnet: Devnet & { setSigners(g: string, t: [number, number, number, number], s: Array<{ publicKey: string; weight: number }>): void };
let s: rpc.Server;
let submitter: Keypair;

beforeAll(async () => {
  devnet = await startDevnet({ ledgerMs: 0 });
  s = server(devnet);
  submitter = Keypair.fromSecret((await devnet.createAccount()).secret);
});
afterAll(async () => devnet?.stop());

async function parties(usdc = 100_000_000n) {
  const payer = await devnet.createAccount({ usdc });
  const payee = await devnet.createAccount();
  return { payer, payerKp: Keypair.fromSecret(payer.secret), payee };
}

/** Record-mode auth for a transfer, signed with `signers` (several → multisig vector sorted by key). */
async function signedTransfer(opts: {
  from: string;
  to: string;
  amount: bigint;
  signers: Keypair[];
  exp?: number;
  contractId?: string;
  mutateEntry?: (e: xdr.SorobanAuthorizationEntry) => xdr.SorobanAuthorizationEntry;
}) {
  const contractId = opts.contractId ?? devnet.usdc.contractId;
  const tx = await buildTransfer(s, devnet.networkPassphrase, {
    contractId,
    from: opts.from,
    to: opts.to,
    amount: opts.amount,
    source: submitter,
  });
  const rec = await s.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(rec)) throw new Error(`record failed: ${(rec as { error: string }).error}`);
  const exp = opts.exp ?? devnet.latestLedger().sequence + 10;
  let entry = rec.result!.auth[0]!;
  if (opts.mutateEntry) entry = opts.mutateEntry(entry);
  let signed: xdr.SorobanAuthorizationEntry;
  if (opts.signers.length === 1) signed = await authorizeEntry(entry, opts.signers[0]!, exp, devnet.networkPassphrase);
  else {
    const payload = hash(buildAuthorizationEntryPreimage(entry, exp, devnet.networkPassphrase).toXdr());
    const sigs = opts.signers
      .map((k) => ({ pk: k.rawPublicKey(), sig: k.sign(payload) }))
      .sort((a, b) => Buffer.compare(Buffer.from(a.pk), Buffer.from(b.pk)))
      .map((x) =>
        nativeToScVal({ public_key: x.pk, signature: x.sig }, { type: { public_key: ['symbol', null], signature: ['symbol', null] } }),
      );
    const c = entry.credentials;
    if (c.type !== 'sorobanCredentialsAddressV2') throw new Error('expected V2 credentials');
    const creds = new xdr.SorobanAddressCredentials({
      address: c.addressV2.address,
      nonce: c.addressV2.nonce,
      signatureExpirationLedger: exp,
      signature: xdr.ScVal.scvVec(sigs),
    });
    signed = new xdr.SorobanAuthorizationEntry({
      credentials: xdr.SorobanCredentials.sorobanCredentialsAddressV2(creds),
      rootInvocation: entry.rootInvocation,
    });
  }
  return { tx, signed, withAuth: rebuildWithAuth(tx, [signed], devnet.networkPassphrase) };
}

const simError = async (t: Parameters<typeof s.simulateTransaction>[0]) => {
  const r = await s.simulateTransaction(t);
  expect(rpc.Api.isSimulationError(r)).toBe(true);
  expect('transactionData' in r).toBe(false);
  return (r as rpc.Api.SimulateTransactionErrorResponse).error;
};

describe('authorization', () => {
  it('a tampered signature fails enforce simulation with the host auth error', async () => {
    const { payer, payerKp, payee } = await parties();
    const { signed, tx } = await signedTransfer({ from: payer.publicKey, to: payee.publicKey, amount: 5n, signers: [payerKp] });
    const c = signed.credentials;
    if (c.type !== 'sorobanCredentialsAddressV2') throw new Error('expected V2');
    const sigMap = c.addressV2.signature.type === 'scvVec' ? c.addressV2.signature.vec![0]! : null;
    const native = scValToNative(sigMap!) as { public_key: Uint8Array; signature: Uint8Array };
    const bad = Uint8Array.from(native.signature);
    bad[0]! ^= 0xff;
    const tampered = new xdr.SorobanAuthorizationEntry({
      rootInvocation: signed.rootInvocation,
      credentials: xdr.SorobanCredentials.sorobanCredentialsAddressV2(
        new xdr.SorobanAddressCredentials({
          ...c.addressV2,
          signature: xdr.ScVal.scvVec([
            nativeToScVal(
              { public_key: native.public_key, signature: bad },
              { type: { public_key: ['symbol', null], signature: ['symbol', null] } },
            ),
          ]),
        }),
      ),
    });
    const err = await simError(rebuildWithAuth(tx, [tampered], devnet.networkPassphrase));
    expect(err).toContain('HostError: Error(Auth, InvalidAction)');
    expect(err).toContain('failed account authentication with error');
  });

  it('V2 credentials bind the address: a V2 entry re-labelled as legacy ADDRESS no longer verifies', async () => {
    const { payer, payerKp, payee } = await parties();
    const { signed, tx } = await signedTransfer({ from: payer.publicKey, to: payee.publicKey, amount: 5n, signers: [payerKp] });
    const c = signed.credentials;
    if (c.type !== 'sorobanCredentialsAddressV2') throw new Error('expected V2');
    const legacy = new xdr.SorobanAuthorizationEntry({
      rootInvocation: signed.rootInvocation,
      credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(c.addressV2),
    });
    expect(await simError(rebuildWithAuth(tx, [legacy], devnet.networkPassphrase))).toContain('Error(Auth, InvalidAction)');
  });

  it('without useUpgradedAuth recording returns legacy ADDRESS credentials', async () => {
    const { payer, payee } = await parties();
    const tx = await buildTransfer(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 1n,
      source: submitter,
    });
    const r = await simulateRaw(devnet, tx);
    const entry = xdr.SorobanAuthorizationEntry.fromXdr(r.results![0]!.auth[0]!, 'base64');
    expect(entry.credentials.type).toBe('sorobanCredentialsAddress');
  });

  it('expiry is inclusive at the expiration ledger; one past it fails; too-late bound enforced', async () => {
    const { payer, payerKp, payee } = await parties();
    const latest = devnet.latestLedger().sequence;
    // Simulation runs at the latest ledger: exp == latest is still valid there.
    const atEdge = await signedTransfer({ from: payer.publicKey, to: payee.publicKey, amount: 1n, signers: [payerKp], exp: latest });
    const ok = await s.simulateTransaction(atEdge.withAuth);
    expect(rpc.Api.isSimulationSuccess(ok)).toBe(true);
    // Applied in ledger latest+1, the same entry has expired.
    const assembled = rpc.assembleTransaction(atEdge.withAuth, ok).build();
    assembled.sign(submitter);
    const { got } = await submitAndClose(devnet, s, assembled);
    expect(got?.status).toBe('FAILED');
    const expired = await signedTransfer({
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 1n,
      signers: [payerKp],
      exp: devnet.latestLedger().sequence - 1,
    });
    const err = await simError(expired.withAuth);
    expect(err).toContain('Error(Auth, InvalidInput)');
    expect(err).toContain('signature has expired');
    const tooLate = await signedTransfer({
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 1n,
      signers: [payerKp],
      exp: devnet.latestLedger().sequence + MAX_ENTRY_TTL,
    });
    expect(await simError(tooLate.withAuth)).toContain('signature expiration is too late');
  });

  it('signer weights and the medium threshold are enforced (multisig)', async () => {
    const { payer, payerKp, payee } = await parties();
    const cosigner = Keypair.random();
    devnet.setSigners(payer.publicKey, [1, 0, 2, 2], [{ publicKey: cosigner.publicKey(), weight: 1 }]);
    const single = await signedTransfer({ from: payer.publicKey, to: payee.publicKey, amount: 3n, signers: [payerKp] });
    expect(await simError(single.withAuth)).toContain('Error(Auth, InvalidAction)');
    const both = await signedTransfer({ from: payer.publicKey, to: payee.publicKey, amount: 3n, signers: [payerKp, cosigner] });
    expect(rpc.Api.isSimulationSuccess(await s.simulateTransaction(both.withAuth))).toBe(true);
    const stranger = await signedTransfer({ from: payer.publicKey, to: payee.publicKey, amount: 3n, signers: [payerKp, Keypair.random()] });
    expect(await simError(stranger.withAuth)).toContain('Error(Auth, InvalidAction)');
  });

  it('the invocation must match exactly: auth for one amount does not cover another', async () => {
    const { payer, payerKp, payee } = await parties();
    const { signed } = await signedTransfer({ from: payer.publicKey, to: payee.publicKey, amount: 100n, signers: [payerKp] });
    const other = await buildTransfer(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 101n,
      source: submitter,
    });
    const err = await simError(rebuildWithAuth(other, [signed], devnet.networkPassphrase));
    expect(err).toContain('Error(Auth, InvalidAction)');
    expect(err).toContain('Unauthorized function call for address');
  });

  it('an entry that authorizes extra sub-invocations does not match', async () => {
    const { payer, payerKp, payee } = await parties();
    const { withAuth } = await signedTransfer({
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 7n,
      signers: [payerKp],
      mutateEntry: (e) =>
        new xdr.SorobanAuthorizationEntry({
          credentials: e.credentials,
          rootInvocation: new xdr.SorobanAuthorizedInvocation({ function: e.rootInvocation.function, subInvocations: [e.rootInvocation] }),
        }),
    });
    expect(await simError(withAuth)).toContain('Unauthorized function call for address');
  });

  it('source-account credentials: the payer as transaction source needs no auth signature', async () => {
    const { payer, payerKp, payee } = await parties();
    const tx = await buildTransfer(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 9n,
      source: payerKp,
    });
    const rec = await s.simulateTransaction(tx);
    if (!rpc.Api.isSimulationSuccess(rec)) throw new Error('record failed');
    expect(rec.result!.auth[0]!.credentials.type).toBe('sorobanCredentialsSourceAccount');
    const assembled = rpc.assembleTransaction(tx, rec).build();
    assembled.sign(payerKp);
    const { got } = await submitAndClose(devnet, s, assembled);
    expect(got?.status).toBe('SUCCESS');
    expect(devnet.balances(payee.publicKey).usdc).toBe(9n);
  });

  it('a consumed nonce fails re-submission on-chain (fee charged, sequence consumed)', async () => {
    const { payer, payerKp, payee } = await parties();
    const first = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 11n,
      source: submitter,
      payer: payerKp,
    });
    expect((await submitAndClose(devnet, s, first.tx)).got?.status).toBe('SUCCESS');
    // The consumed nonce is a temporary contract-data entry, readable through getLedgerEntries.
    const nonceKey = first.enforce.transactionData
      .build()
      .resources.footprint.readWrite.find(
        (k) => k.type === 'contractData' && k.contractData.durability === xdr.ContractDataDurability.temporary,
      )!;
    if (nonceKey.type !== 'contractData') throw new Error('unreachable');
    expect(nonceKey.contractData.key.type).toBe('scvLedgerKeyNonce');
    expect(Address.fromScAddress(nonceKey.contractData.contract).toString()).toBe(payer.publicKey);
    const nonceEntries = await s.getLedgerEntries(nonceKey);
    expect(nonceEntries.entries).toHaveLength(1);
    expect(nonceEntries.entries[0]!.liveUntilLedgerSeq).toBeGreaterThanOrEqual(devnet.latestLedger().sequence + 700); // testnet's minimum temporary TTL, 720
    const trustKey = first.enforce.transactionData.build().resources.footprint.readWrite.find((k) => k.type === 'trustline')!;
    const trust = await s.getLedgerEntries(trustKey);
    expect(trust.entries[0]!.val.type).toBe('trustline');
    // Replay the same signed auth in a new transaction, with the old (valid) footprint and fee.
    const replay = rebuildWithAuth(
      await buildTransfer(s, devnet.networkPassphrase, {
        contractId: devnet.usdc.contractId,
        from: payer.publicKey,
        to: payee.publicKey,
        amount: 11n,
        source: submitter,
      }),
      first.auth,
      devnet.networkPassphrase,
    );
    const assembled = rpc.assembleTransaction(replay, first.enforce).build();
    assembled.sign(submitter);
    const seqBefore = (await s.getAccount(submitter.publicKey())).sequenceNumber();
    const xlmBefore = devnet.balances(submitter.publicKey()).xlm;
    const { got } = await submitAndClose(devnet, s, assembled);
    expect(got?.status).toBe('FAILED');
    if (got?.status !== 'FAILED') throw new Error('unreachable');
    expect(got.resultXdr.result.type).toBe('txFailed');
    expect(BigInt((await s.getAccount(submitter.publicKey())).sequenceNumber())).toBe(BigInt(seqBefore) + 1n);
    expect(devnet.balances(submitter.publicKey()).xlm).toBe(xlmBefore - got.resultXdr.feeCharged);
    expect(devnet.balances(payee.publicKey).usdc).toBe(11n);
  });
});

describe('token semantics', () => {
  const simulateTransfer = async (from: string, to: string, amount: bigint, contractId = devnet.usdc.contractId) =>
    s.simulateTransaction(await buildTransfer(s, devnet.networkPassphrase, { contractId, from, to, amount, source: submitter }));

  it('negative amount → Error(Contract, #8); insufficient balance → #10; missing trustline → #13; deauthorized → #11', async () => {
    const { payer, payee } = await parties(50n);
    const neg = await simulateTransfer(payer.publicKey, payee.publicKey, -1n);
    expect((neg as rpc.Api.SimulateTransactionErrorResponse).error).toContain('HostError: Error(Contract, #8)');
    const insufficient = await simulateTransfer(payer.publicKey, payee.publicKey, 51n);
    expect((insufficient as rpc.Api.SimulateTransactionErrorResponse).error).toContain('HostError: Error(Contract, #10)');
    const noTrust = await devnet.createAccount({ usdcTrustline: false });
    const missing = await simulateTransfer(payer.publicKey, noTrust.publicKey, 1n);
    expect((missing as rpc.Api.SimulateTransactionErrorResponse).error).toContain('HostError: Error(Contract, #13)');
    devnet.setUsdcAuthorized(payee.publicKey, false);
    const deauth = await simulateTransfer(payer.publicKey, payee.publicKey, 1n);
    expect((deauth as rpc.Api.SimulateTransactionErrorResponse).error).toContain('HostError: Error(Contract, #11)');
    devnet.setUsdcAuthorized(payee.publicKey, true);
    const zero = await simulateTransfer(payer.publicKey, payee.publicKey, 0n);
    expect(rpc.Api.isSimulationSuccess(zero)).toBe(true);
  });

  it('simulation is side-effect free', async () => {
    const { payer, payee } = await parties(1000n);
    const before = [devnet.balances(payer.publicKey), devnet.balances(payee.publicKey)];
    const sim = await simulateTransfer(payer.publicKey, payee.publicKey, 10n);
    expect(rpc.Api.isSimulationSuccess(sim)).toBe(true);
    expect([devnet.balances(payer.publicKey), devnet.balances(payee.publicKey)]).toEqual(before);
    const nonceKey = (sim as rpc.Api.SimulateTransactionSuccessResponse).transactionData
      .build()
      .resources.footprint.readWrite.find(
        (k) => k.type === 'contractData' && k.contractData.durability === xdr.ContractDataDurability.temporary,
      )!;
    const entries = await rawRpc(devnet.rpcUrl, 'getLedgerEntries', { keys: [nonceKey.toXdr('base64')] });
    expect(entries.result.entries).toEqual([]);
  });

  it('the footprint is the real one: account + instance read-only; trustlines + nonce read-write', async () => {
    const { payer, payee } = await parties(1000n);
    const sim = (await simulateTransfer(payer.publicKey, payee.publicKey, 10n)) as rpc.Api.SimulateTransactionSuccessResponse;
    const fp = sim.transactionData.build().resources.footprint;
    expect(fp.readOnly.map((k) => k.type).sort()).toEqual(['account', 'contractData']);
    expect(fp.readWrite.map((k) => k.type).sort()).toEqual(['contractData', 'trustline', 'trustline']);
  });

  it('C-address (contract-held) USDC balances live in SAC contract data', async () => {
    const { payer, payerKp } = await parties(1_000n);
    const holder = StrKey.encodeContract(Buffer.alloc(32, 7));
    const { tx } = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: holder,
      amount: 400n,
      source: submitter,
      payer: payerKp,
    });
    expect((await submitAndClose(devnet, s, tx)).got?.status).toBe('SUCCESS');
    expect(devnet.balances(holder).usdc).toBe(400n);
    const key = xdr.LedgerKey.contractData(
      new xdr.LedgerKeyContractData({
        contract: new Address(devnet.usdc.contractId).toScAddress(),
        key: xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Balance'), new Address(holder).toScVal()]),
        durability: xdr.ContractDataDurability.persistent,
      }),
    );
    const entries = await s.getLedgerEntries(key);
    expect(entries.entries).toHaveLength(1);
    const val = entries.entries[0]!.val;
    if (val.type !== 'contractData') throw new Error('expected contract data');
    expect(scValToNative(val.contractData.val)).toEqual({ amount: 400n, authorized: true, clawback: false });
    expect(entries.entries[0]!.liveUntilLedgerSeq).toBeGreaterThan(devnet.latestLedger().sequence);
  });

  it('the custom SEP-41 token emits a 3-topic transfer event', async () => {
    const { payer, payerKp, payee } = await parties(0n);
    await devnet.mintCustomToken(payer.publicKey, 1_000n);
    const { enforce, tx } = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.customToken.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 250n,
      source: submitter,
      payer: payerKp,
    });
    const ev = enforce.events.map((e) => e.event).find((e) => e.type.name === 'contract')!;
    expect(ev.body.v0.topics.map((t) => scValToNative(t))).toEqual(['transfer', payer.publicKey, payee.publicKey]);
    expect(scValToNative(ev.body.v0.data)).toBe(250n);
    const { got } = await submitAndClose(devnet, s, tx);
    expect(got?.status).toBe('SUCCESS');
    expect(devnet.balances(payee.publicKey).custom).toBe(250n);
    if (got?.status !== 'SUCCESS') throw new Error('unreachable');
    const contractEvents = got.events?.contractEventsXdr?.[0] ?? [];
    expect(contractEvents).toHaveLength(1);
  });

  it('SAC transfer event: 4 topics with the asset name; CAP-67 map data when `to` is muxed', async () => {
    const { payer, payerKp, payee } = await parties(1_000n);
    const plain = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: payee.publicKey,
      amount: 5n,
      source: submitter,
      payer: payerKp,
    });
    const ev = plain.enforce.events.map((e) => e.event).find((e) => e.type.name === 'contract')!;
    expect(ev.body.v0.topics.map((t) => scValToNative(t))).toEqual([
      'transfer',
      payer.publicKey,
      payee.publicKey,
      `USDC:${devnet.usdc.issuer}`,
    ]);
    const muxed = new MuxedAccount(new Account(payee.publicKey, '0'), '42').accountId();
    const m = await preparePayment(s, devnet.networkPassphrase, {
      contractId: devnet.usdc.contractId,
      from: payer.publicKey,
      to: muxed,
      amount: 6n,
      source: submitter,
      payer: payerKp,
    });
    const mev = m.enforce.events.map((e) => e.event).find((e) => e.type.name === 'contract')!;
    expect(scValToNative(mev.body.v0.topics[2]!)).toBe(payee.publicKey); // mux id stripped from the topic
    expect(scValToNative(mev.body.v0.data)).toEqual({ amount: 6n, to_muxed_id: 42n });
    expect((await submitAndClose(devnet, s, m.tx)).got?.status).toBe('SUCCESS');
    expect(devnet.balances(payee.publicKey).usdc).toBe(6n);
  });
});
