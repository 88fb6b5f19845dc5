/**
 * Submission-time and close-time validation of a devnet transaction, as stellar-core's
 * `checkValid` does it: structure, time and ledger bounds, sequence, fees, balances and
 * signatures (docs/DEVNET.md). Returns the error TransactionResult, or null when valid.
 */
import { StrKey, xdr } from '@stellar/stellar-sdk';
import { readAccount } from './accounts.ts';
import { nonRefundableFee, BASE_FEE } from './fees.ts';
import { isCreateAccountTransaction } from './classic.ts';
import { declaredFromData, type ParsedTx } from './envelope.ts';
import type { LedgerState } from './state.ts';
import { bytesOf, keyId, verifyEd25519 } from './xdr.ts';

export type TxCode = Exclude<
  xdr.TransactionResultResult['type'],
  'txSuccess' | 'txFailed' | 'txFeeBumpInnerSuccess' | 'txFeeBumpInnerFailed'
>;

/** stellar-core `checkValid`: returns the error TransactionResult, or null when valid. */
export function validateTransaction(state: LedgerState, p: ParsedTx, closeTime: number, ledgerSeq: number): xdr.TransactionResult | null {
  const minFee = BigInt(BASE_FEE * p.numOps);
  const fail = (code: TxCode, inner = false) => errorResult(p, code, inner, minFee);
  const tx = p.tx;
  // Fee-bump outer checks.
  if (p.feeBump) {
    const feeSource = readAccount(state, p.feeSource);
    if (!feeSource) return fail('txNoAccount');
    if (!signaturesOk(state, p.outerSignatures, p.feeSource, p.hash, 'low')) return fail('txBadAuth');
  }
  if (tx.operations.length === 0) return fail('txMissingOperation', true);
  const sorobanOps = tx.operations.filter((o) => ['invokeHostFunction', 'extendFootprintTtl', 'restoreFootprint'].includes(o.body.type));
  if (sorobanOps.length > 0 && (tx.operations.length !== 1 || tx.ext.type !== 'sorobanData')) return fail('txMalformed', true);
  if (sorobanOps.length === 0 && tx.ext.type === 'sorobanData') return fail('txMalformed', true);
  const op = tx.operations[0]!;
  // Not modelled: classic operations other than createAccount, and TTL extension
  // (documented in docs/DEVNET.md).
  if (op.body.type !== 'invokeHostFunction' && op.body.type !== 'restoreFootprint' && !isCreateAccountTransaction(tx))
    return fail('txNotSupported', true);
  if (
    op.body.type === 'invokeHostFunction' &&
    (tx.memo.type !== 'memoNone' ||
      tx.sourceAccount.type !== 'keyTypeEd25519' ||
      (op.sourceAccount && op.sourceAccount.type !== 'keyTypeEd25519'))
  ) {
    return fail('txSorobanInvalid', true);
  }
  // Time bounds.
  const tb = tx.cond.type === 'precondTime' ? tx.cond.timeBounds : tx.cond.type === 'precondV2' ? tx.cond.v2.timeBounds : null;
  if (tb) {
    if (tb.maxTime !== 0n && tb.maxTime < BigInt(closeTime)) return fail('txTooLate', true);
    if (tb.minTime > BigInt(closeTime)) return fail('txTooEarly', true);
  }
  if (tx.cond.type === 'precondV2' && tx.cond.v2.ledgerBounds) {
    const lb = tx.cond.v2.ledgerBounds;
    if (lb.maxLedger !== 0 && lb.maxLedger <= ledgerSeq) return fail('txTooLate', true);
    if (lb.minLedger > ledgerSeq) return fail('txTooEarly', true);
  }
  // Source account and sequence.
  const source = readAccount(state, p.source);
  if (!source) return fail('txNoAccount', true);
  if (tx.seqNum !== source.seqNum + 1n) return fail('txBadSeq', true);
  // Fees.
  const resourceFee = tx.ext.type === 'sorobanData' ? tx.ext.sorobanData.resourceFee : 0n;
  if (resourceFee < 0n) return fail('txMalformed', true);
  const innerFee = BigInt(tx.fee);
  if (p.feeBump) {
    // The outer fee pays: core validates the inner transaction without charging its fee.
    if (resourceFee > p.fee) return fail('txSorobanInvalid', true);
    if (p.fee - resourceFee < minFee) return fail('txInsufficientFee');
  } else {
    if (resourceFee > innerFee) return fail('txSorobanInvalid', true);
    if (innerFee - resourceFee < minFee) return fail('txInsufficientFee', true);
  }
  if (tx.ext.type === 'sorobanData') {
    const sd = tx.ext.sorobanData;
    const fp = sd.resources.footprint;
    const ids = [...fp.readOnly, ...fp.readWrite].map(keyId);
    if (new Set(ids).size !== ids.length) return fail('txSorobanInvalid', true);
    if ([...fp.readOnly, ...fp.readWrite].some((k) => k.type === 'ttl')) return fail('txSorobanInvalid', true);
    const declared = declaredFromData(sd);
    if (resourceFee < BigInt(nonRefundableFee(declared, p.innerEnvelopeSize))) return fail('txInsufficientFee', true);
  }
  const feePayer = readAccount(state, p.feeSource);
  if (!feePayer || feePayer.balance < (p.feeBump ? p.fee : innerFee)) return fail('txInsufficientBalance', !p.feeBump);
  // Envelope signatures of the (inner) source.
  if (!signaturesOk(state, p.innerSignatures, p.source, p.innerHash ?? p.hash, 'medium')) return fail('txBadAuth', true);
  return null;
}

/**
 * Signatures reach the account's threshold (at least weight 1) and none is unknown or bad.
 * Level: medium for invokeHostFunction sources, low for a fee-bump's fee source (as in core).
 */
function signaturesOk(state: LedgerState, sigs: xdr.DecoratedSignature[], g: string, txHashHex: string, level: 'low' | 'medium'): boolean {
  const a = readAccount(state, g);
  if (!a) return false;
  const payload = Buffer.from(txHashHex, 'hex');
  const thresholds = bytesOf(a.thresholds);
  const candidates: Array<{ pk: Uint8Array; weight: number }> = [
    { pk: StrKey.decodeEd25519PublicKey(g), weight: thresholds[0] ?? 0 },
    ...a.signers
      .filter((s) => s.key.type === 'signerKeyTypeEd25519')
      .map((s) => ({ pk: bytesOf((s.key as xdr.SignerKey & { ed25519: Uint8Array }).ed25519), weight: s.weight })),
  ];
  let weight = 0;
  const usedSigners = new Set<number>();
  for (const sig of sigs) {
    const hint = bytesOf(sig.hint);
    const idx = candidates.findIndex(
      (c, i) =>
        !usedSigners.has(i) &&
        Buffer.from(c.pk.subarray(28)).equals(Buffer.from(hint)) &&
        verifyEd25519(c.pk, payload, bytesOf(sig.signature)),
    );
    if (idx < 0) return false; // unknown or bad signature (txBAD_AUTH / txBAD_AUTH_EXTRA)
    usedSigners.add(idx);
    weight += candidates[idx]!.weight;
  }
  return weight >= Math.max(1, thresholds[level === 'low' ? 1 : 2] ?? 0);
}

export function errorResult(p: ParsedTx, code: TxCode, inner: boolean, feeCharged: bigint): xdr.TransactionResult {
  const mk = (c: TxCode) => (xdr.TransactionResultResult[c] as () => xdr.TransactionResultResult)();
  if (p.feeBump && inner) {
    const innerRes = new xdr.InnerTransactionResult({
      feeCharged: 0n,
      result: (
        xdr.InnerTransactionResultResult[code as keyof typeof xdr.InnerTransactionResultResult] as () => xdr.InnerTransactionResultResult
      )(),
      ext: xdr.InnerTransactionResultExt.v0(),
    });
    return new xdr.TransactionResult({
      feeCharged,
      result: xdr.TransactionResultResult.txFeeBumpInnerFailed(
        new xdr.InnerTransactionResultPair({ transactionHash: Buffer.from(p.innerHash!, 'hex'), result: innerRes }),
      ),
      ext: xdr.TransactionResultExt.v0(),
    });
  }
  return new xdr.TransactionResult({ feeCharged, result: mk(code), ext: xdr.TransactionResultExt.v0() });
}
