/**
 * Transaction-envelope helpers for the devnet: decoding and hashing envelopes (and parsing one
 * for submission into a ParsedTx), footprints and declared resources of a host run, the
 * signed-size estimate used for fees, and the simulation `error` string (Rust-Debug-like
 * HostError with its event log).
 */
import { StrKey, hash, xdr } from '@stellar/stellar-sdk';
import { TRANSFER_INSTRUCTIONS, type DeclaredResources, type Refundables, type RentChange } from './fees.ts';
import type { HostError, InvokeResult } from './host.ts';
import type { StateView } from './state.ts';
import { addressString, bytesOf, hex, i128Value, keyId } from './xdr.ts';

/** JSON-RPC level failure (bad params): the RPC layer maps it to an error object. */
export class RpcParamError extends Error {
  constructor(
    message: string,
    readonly code = -32602,
  ) {
    super(message);
  }
}

export function decodeEnvelope(envelopeB64: unknown): xdr.TransactionEnvelope {
  if (typeof envelopeB64 !== 'string' || envelopeB64.length === 0)
    throw new RpcParamError('invalid_xdr: transaction must be a base64 TransactionEnvelope');
  try {
    return xdr.TransactionEnvelope.fromXdr(envelopeB64, 'base64');
  } catch {
    throw new RpcParamError('invalid_xdr');
  }
}

/** A transaction as submission, validation and apply see it. */
export interface ParsedTx {
  envelope: xdr.TransactionEnvelope;
  hash: string;
  innerHash: string | null;
  /** Inner (or only) transaction. */
  tx: xdr.Transaction;
  innerSignatures: xdr.DecoratedSignature[];
  feeBump: xdr.FeeBumpTransaction | null;
  outerSignatures: xdr.DecoratedSignature[];
  source: string;
  feeSource: string;
  /** Full fee the fee source offers (outer fee for fee-bumps). */
  fee: bigint;
  numOps: number;
  innerEnvelopeSize: number;
}

/** A transaction envelope decoded for submission: hashes, sources, fee; throws RpcParamError on undecodable input. */
export function parseTransaction(networkId: Uint8Array, envelopeB64: string): ParsedTx {
  const envelope = decodeEnvelope(envelopeB64);
  if (envelope.type === 'envelopeTypeTxFeeBump') {
    const fb = envelope.feeBump.tx;
    const inner = fb.innerTx.v1;
    const innerEnv = xdr.TransactionEnvelope.envelopeTypeTx(inner);
    return {
      envelope,
      hash: hex(txHash(networkId, xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTxFeeBump(fb))),
      innerHash: hex(txHash(networkId, xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTx(inner.tx))),
      tx: inner.tx,
      innerSignatures: inner.signatures,
      feeBump: fb,
      outerSignatures: envelope.feeBump.signatures,
      source: muxedToG(inner.tx.sourceAccount),
      feeSource: muxedToG(fb.feeSource),
      fee: fb.fee,
      numOps: inner.tx.operations.length + 1,
      innerEnvelopeSize: innerEnv.toXdr().length,
    };
  }
  if (envelope.type !== 'envelopeTypeTx') throw new RpcParamError('invalid_xdr: v0 transaction envelopes are not supported');
  const tx = envelope.v1.tx;
  return {
    envelope,
    hash: hex(txHash(networkId, xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTx(tx))),
    innerHash: null,
    tx,
    innerSignatures: envelope.v1.signatures,
    feeBump: null,
    outerSignatures: [],
    source: muxedToG(tx.sourceAccount),
    feeSource: muxedToG(tx.sourceAccount),
    fee: BigInt(tx.fee),
    numOps: tx.operations.length,
    innerEnvelopeSize: envelope.toXdr().length,
  };
}

export function innerTx(envelope: xdr.TransactionEnvelope): xdr.Transaction {
  if (envelope.type === 'envelopeTypeTx') return envelope.v1.tx;
  if (envelope.type === 'envelopeTypeTxFeeBump') return envelope.feeBump.tx.innerTx.v1.tx;
  throw new RpcParamError('invalid_xdr: v0 transaction envelopes are not supported');
}

export function muxedToG(m: xdr.MuxedAccount): string {
  if (m.type === 'keyTypeEd25519') return StrKey.encodeEd25519PublicKey(bytesOf(m.ed25519));
  return StrKey.encodeEd25519PublicKey(bytesOf(m.med25519.ed25519));
}

export function txHash(networkId: Uint8Array, tagged: xdr.TransactionSignaturePayloadTaggedTransaction): Uint8Array {
  return hash(new xdr.TransactionSignaturePayload({ networkId, taggedTransaction: tagged }).toXdr());
}

export function ledgerEntry(e: { data: xdr.LedgerEntryData; lastModified: number }): xdr.LedgerEntry {
  return new xdr.LedgerEntry({ lastModifiedLedgerSeq: e.lastModified, data: e.data, ext: xdr.LedgerEntryExt.v0() });
}

export const isClassic = (k: xdr.LedgerKey) => k.type === 'account' || k.type === 'trustline';

/** Sorted footprint (by key XDR, as the host's BTreeMap orders it). */
export function footprintOf(view: StateView): xdr.LedgerFootprint {
  const ro: xdr.LedgerKey[] = [];
  const rw: xdr.LedgerKey[] = [];
  for (const acc of view.accesses.values()) (acc.write ? rw : ro).push(acc.key);
  const byXdr = (a: xdr.LedgerKey, b: xdr.LedgerKey) => Buffer.compare(Buffer.from(a.toXdr()), Buffer.from(b.toXdr()));
  return new xdr.LedgerFootprint({ readOnly: ro.sort(byXdr), readWrite: rw.sort(byXdr) });
}

export function declaredResources(view: StateView, fp: xdr.LedgerFootprint): DeclaredResources {
  const all = [...fp.readOnly, ...fp.readWrite];
  let diskReadBytes = 0;
  let writeBytes = 0;
  for (const k of all) {
    if (!isClassic(k)) continue;
    const e = view.original(keyId(k));
    if (e) diskReadBytes += ledgerEntry(e).toXdr().length;
  }
  for (const [, after] of view.changed()) if (after) writeBytes += ledgerEntry(after).toXdr().length;
  const writesAnything = fp.readWrite.length > 0;
  return {
    instructions: writesAnything ? TRANSFER_INSTRUCTIONS : Math.round(TRANSFER_INSTRUCTIONS / 4),
    diskReadEntries: all.filter(isClassic).length,
    writeEntries: fp.readWrite.length,
    diskReadBytes,
    writeBytes,
  };
}

export function declaredFromData(sd: xdr.SorobanTransactionData): DeclaredResources {
  const fp = sd.resources.footprint;
  return {
    instructions: sd.resources.instructions,
    diskReadEntries: [...fp.readOnly, ...fp.readWrite].filter(isClassic).length,
    writeEntries: fp.readWrite.length,
    diskReadBytes: sd.resources.diskReadBytes,
    writeBytes: sd.resources.writeBytes,
  };
}

/** What an invocation produced that is paid for by the refundable fee: its events and return value, and the rent of the contract data it created or extended. */
export function refundablesOf(res: InvokeResult, view: StateView): Refundables {
  const eventsBytes = res.contractEvents.reduce((s, e) => s + e.toXdr().length, 0) + res.retval.toXdr().length;
  const rentChanges: RentChange[] = [];
  for (const [id, after] of view.changed()) {
    if (!after || after.liveUntil === undefined || after.key.type !== 'contractData') continue;
    // An archived entry is paid for as if restored first (the restore preamble pays that).
    const before = view.archived.has(id) ? undefined : view.original(id);
    rentChanges.push({
      persistent: after.key.contractData.durability === xdr.ContractDataDurability.persistent,
      oldSize: before ? ledgerEntry(before).toXdr().length : 0,
      newSize: ledgerEntry(after).toXdr().length,
      oldLiveUntil: before?.liveUntil ?? 0,
      newLiveUntil: after.liveUntil,
    });
  }
  for (const [id, after] of view.extensions) {
    const before = view.original(id)!;
    const size = ledgerEntry(before).toXdr().length;
    rentChanges.push({
      persistent: after.key.type === 'contractData' && after.key.contractData.durability === xdr.ContractDataDurability.persistent,
      oldSize: size,
      newSize: size,
      oldLiveUntil: before.liveUntil ?? 0,
      newLiveUntil: after.liveUntil!,
    });
  }
  return { eventsBytes, rentChanges };
}

/** Size the final, signed envelope will have: recorded auth signed (one signature per address entry), soroban data attached, one envelope signature. */
export function estimateSignedSize(
  envelope: xdr.TransactionEnvelope,
  tx: xdr.Transaction,
  data: xdr.SorobanTransactionData,
  auth: xdr.SorobanAuthorizationEntry[],
): number {
  const SIG_SCVAL = xdr.ScVal.scvVec([
    xdr.ScVal.scvMap([
      new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('public_key'), val: xdr.ScVal.scvBytes(new Uint8Array(32)) }),
      new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('signature'), val: xdr.ScVal.scvBytes(new Uint8Array(64)) }),
    ]),
  ]);
  const signedAuth = auth.map((e) => {
    const c = e.credentials;
    const withSig = (a: xdr.SorobanAddressCredentials) =>
      new xdr.SorobanAddressCredentials({
        address: a.address,
        nonce: a.nonce,
        signatureExpirationLedger: a.signatureExpirationLedger,
        signature: a.signature.type === 'scvVoid' ? SIG_SCVAL : a.signature,
      });
    const creds =
      c.type === 'sorobanCredentialsAddress'
        ? xdr.SorobanCredentials.sorobanCredentialsAddress(withSig(c.address))
        : c.type === 'sorobanCredentialsAddressV2'
          ? xdr.SorobanCredentials.sorobanCredentialsAddressV2(withSig(c.addressV2))
          : c;
    return new xdr.SorobanAuthorizationEntry({ credentials: creds, rootInvocation: e.rootInvocation });
  });
  const op = tx.operations[0]!;
  const ihf = op.body.type === 'invokeHostFunction' ? op.body.invokeHostFunctionOp : null;
  const newOp = ihf
    ? new xdr.Operation({
        sourceAccount: op.sourceAccount,
        body: xdr.OperationBody.invokeHostFunction(new xdr.InvokeHostFunctionOp({ hostFunction: ihf.hostFunction, auth: signedAuth })),
      })
    : op;
  const newTx = new xdr.Transaction({
    sourceAccount: tx.sourceAccount,
    fee: tx.fee,
    seqNum: tx.seqNum,
    cond: tx.cond,
    memo: tx.memo,
    operations: [newOp],
    ext: xdr.TransactionExt.sorobanData(data),
  });
  const existingSigs =
    envelope.type === 'envelopeTypeTx'
      ? envelope.v1.signatures
      : envelope.type === 'envelopeTypeTxFeeBump'
        ? envelope.feeBump.tx.innerTx.v1.signatures
        : [];
  const sigs =
    existingSigs.length > 0 ? existingSigs : [new xdr.DecoratedSignature({ hint: new Uint8Array(4), signature: new Uint8Array(64) })];
  return xdr.TransactionEnvelope.envelopeTypeTx(new xdr.TransactionV1Envelope({ tx: newTx, signatures: sigs })).toXdr().length;
}

/** The RPC's `error` string for a failed simulation: Rust Debug of the HostError plus the event log. */
export function debugHostError(err: HostError, res: InvokeResult): string {
  const lines = res.diagnostics
    .slice()
    .reverse()
    .map((d, i) => `   ${i}: [Diagnostic Event] ${describeEvent(d.event)}`);
  return `HostError: ${err.message}\n\nEvent log (newest first):\n${lines.join('\n')}\n`;
}

export function describeEvent(e: xdr.ContractEvent): string {
  const body = e.body.v0;
  const topics = body.topics.map(describeScVal).join(', ');
  const cid = e.contractId ? StrKey.encodeContract(bytesOf(e.contractId)) : null;
  return `${cid ? `contract:${cid}, ` : ''}topics:[${topics}], data:${describeScVal(body.data)}`;
}

export function describeScVal(v: xdr.ScVal): string {
  switch (v.type) {
    case 'scvSymbol':
      return String(v.sym);
    case 'scvString':
      return JSON.stringify(String(v.str));
    case 'scvAddress':
      return addressString(v.address);
    case 'scvError':
      return v.error.type === 'sceContract'
        ? `Error(Contract, #${v.error.contractCode})`
        : `Error(${v.error.type.slice(3)}, ${v.error.code.name.slice(4)})`;
    case 'scvI128':
      return `${i128Value(v)}`;
    case 'scvU32':
      return `${v.u32}`;
    case 'scvVec':
      return `[${(v.vec ?? []).map(describeScVal).join(', ')}]`;
    case 'scvVoid':
      return 'Void';
    case 'scvBytes':
      return `Bytes(${hex(bytesOf(v.bytes))})`;
    default:
      return v.type;
  }
}
