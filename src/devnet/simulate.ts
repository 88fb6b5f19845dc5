/**
 * simulateTransaction on the devnet: the invocation run against a discarded view of the
 * latest ledger, returning the footprint, resources, fee, auth and state changes a client
 * builds its transaction from (docs/DEVNET.md). Side-effect free.
 */
import { xdr } from '@stellar/stellar-sdk';
import { nonRefundableFee, refundableFee, rentFee, type NetworkTtls } from './fees.ts';
import type { AuthMode, Host } from './host.ts';
import {
  debugHostError,
  declaredResources,
  decodeEnvelope,
  estimateSignedSize,
  footprintOf,
  innerTx,
  ledgerEntry,
  muxedToG,
  refundablesOf,
} from './envelope.ts';
import type { LedgerRecord } from './records.ts';
import { StateView, type LedgerState, type StoredEntry } from './state.ts';
import { addressString, b64, keyId } from './xdr.ts';

export interface SimulateOptions {
  authMode?: AuthMode;
  useUpgradedAuth?: boolean;
}

/** What simulation uses of the ledger (a DevnetLedger): the latest ledger, its state and the host. */
export interface SimulateContext {
  readonly state: LedgerState;
  readonly host: Host;
  readonly randomNonce: () => bigint;
  readonly ttls: NetworkTtls;
  latest(): LedgerRecord;
}

export function simulateTransaction(ledger: SimulateContext, envelopeB64: string, opts: SimulateOptions = {}): Record<string, unknown> {
  const latest = ledger.latest();
  const envelope = decodeEnvelope(envelopeB64);
  const tx = innerTx(envelope);
  const fail = (error: string, events: string[] = []) => ({ error, events, latestLedger: latest.sequence });
  if (tx.operations.length !== 1)
    return fail(tx.operations.length === 0 ? 'Transaction contains no operations' : 'Transaction contains more than one operation');
  if (tx.memo.type !== 'memoNone') return fail('Transaction contains a memo, which is not supported for Soroban transactions');
  const op = tx.operations[0]!;
  if (op.body.type !== 'invokeHostFunction') return fail(`simulation of ${op.body.type} operations is not supported by the devnet`);
  const ihf = op.body.invokeHostFunctionOp;
  if (ihf.hostFunction.type !== 'hostFunctionTypeInvokeContract') return fail('only contract invocations are modelled by the devnet');
  const authMode: AuthMode = opts.authMode ?? (ihf.auth.length > 0 ? 'enforce' : 'record');
  if (authMode !== 'enforce' && ihf.auth.length > 0) return fail(`cannot set authMode to '${authMode}' with an auth footprint`);
  const source = muxedToG(op.sourceAccount ?? tx.sourceAccount);
  const seq = latest.sequence;
  const view = new StateView(ledger.state, seq);
  const call = ihf.hostFunction.invokeContract;
  const res = ledger.host.invoke(
    {
      view,
      ledgerSeq: seq,
      source,
      authMode,
      authEntries: ihf.auth,
      useUpgradedAuth: opts.useUpgradedAuth ?? false,
      randomNonce: ledger.randomNonce,
    },
    addressString(call.contractAddress),
    String(call.functionName),
    call.args,
  );
  const events = res.diagnostics.map(b64);
  if (!res.ok) return fail(debugHostError(res.error!, res), events);

  const footprint = footprintOf(view);
  // The declared instructions are calibrated to what stellar-rpc declares for a transfer on testnet
  // (its padding included; docs/DEVNET.md "Fee model"). Its other padding is applied below: the size the
  // fee is computed for by max(×1.1, +500 bytes) and the refundable fee by ×1.15, so a transaction
  // assembled from the answer still fits after small changes (another source account, ledger
  // bounds); the unused part is refunded.
  const resources = declaredResources(view, footprint);
  const sorobanData = (resourceFee: bigint) =>
    new xdr.SorobanTransactionData({
      ext: xdr.SorobanTransactionDataExt.v0(),
      resources: new xdr.SorobanResources({
        footprint,
        instructions: resources.instructions,
        diskReadBytes: resources.diskReadBytes,
        writeBytes: resources.writeBytes,
      }),
      resourceFee,
    });
  const auth = authMode === 'enforce' ? ihf.auth : res.recordedAuth;
  const signedSize = estimateSignedSize(envelope, tx, sorobanData(0n), auth);
  const txSize = Math.max(Math.ceil(signedSize * 1.1), signedSize + 500);
  const refundable = Math.ceil(refundableFee(refundablesOf(res, view), seq, ledger.ttls.rentWriteFeePer1KB) * 1.15);
  const resourceFee = BigInt(nonRefundableFee(resources, txSize) + refundable);
  const stateChanges = view.changed().map(([id, after]) => {
    const before = view.original(id);
    return {
      type: before ? (after ? 'updated' : 'deleted') : 'created',
      key: keyId(after?.key ?? before!.key),
      before: before ? b64(ledgerEntry(before)) : null,
      after: after ? b64(ledgerEntry(after)) : null,
    };
  });
  return {
    latestLedger: seq,
    minResourceFee: resourceFee.toString(),
    transactionData: b64(sorobanData(resourceFee)),
    events,
    results: [{ auth: authMode === 'enforce' ? [] : res.recordedAuth.map(b64), xdr: b64(res.retval) }],
    stateChanges,
    ...(view.archived.size > 0 ? { restorePreamble: restorePreamble([...view.archived.values()], seq, ledger.ttls) } : {}),
  };
}

/**
 * What restoring archived entries takes, as stellar-rpc answers it beside the invocation's own
 * simulation (computed as if they were restored): the SorobanTransactionData of a RestoreFootprint
 * transaction (the entries read-write) and its resource fee: each entry read from disk, written,
 * and its rent for the network's minimum persistent TTL.
 */
function restorePreamble(entries: StoredEntry[], seq: number, ttls: NetworkTtls): { minResourceFee: string; transactionData: string } {
  const sizes = entries.map((e) => ledgerEntry(e).toXdr().length);
  const bytes = sizes.reduce((a, b) => a + b, 0);
  const keys = entries.map((e) => e.key);
  const resources = { instructions: 0, diskReadEntries: keys.length, writeEntries: keys.length, diskReadBytes: bytes, writeBytes: bytes };
  // A RestoreFootprint envelope: about 300 bytes around its footprint, padded like any simulation.
  const txSize = 300 + keys.reduce((a, k) => a + k.toXdr().length, 0) + 500;
  const rent = rentFee(
    sizes.map((size) => ({ persistent: true, oldSize: 0, newSize: size, oldLiveUntil: 0, newLiveUntil: seq + ttls.minPersistentTtl - 1 })),
    seq,
    ttls.rentWriteFeePer1KB,
  );
  const fee = BigInt(nonRefundableFee(resources, txSize) + Math.ceil(rent * 1.15));
  const data = new xdr.SorobanTransactionData({
    ext: xdr.SorobanTransactionDataExt.v0(),
    resources: new xdr.SorobanResources({
      footprint: new xdr.LedgerFootprint({ readOnly: [], readWrite: keys }),
      instructions: 0,
      diskReadBytes: bytes,
      writeBytes: bytes,
    }),
    resourceFee: fee,
  });
  return { minResourceFee: fee.toString(), transactionData: b64(data) };
}
