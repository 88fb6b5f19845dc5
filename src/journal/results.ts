/**
 * The settle answers the journal gives from what it knows (docs/OPERATIONS.md): a record's
 * outcome, a refusal because the journal cannot record a payment (`svc_journal_unavailable`,
 * before submission), a submitted payment whose outcome is not known yet (`settlement_pending`)
 * and a key reused for another request (`svc_idempotency_key_conflict`).
 */
import { defaultMessage } from '../codes.ts';
import type { SettlementCode } from '../codes.ts';
import type { SettleResult } from '../scheme/types.ts';
import { ON_CHAIN_FAILURE_CODE, type RequestKey, type ReserveResult, type SettlementRecord } from './types.ts';

/** A failed settle answer about the payment a journal record stands for (no transaction of its own). */
export function failedResult(record: SettlementRecord, code: NonNullable<SettleResult['errorReason']>, message: string): SettleResult {
  return { success: false, transaction: '', network: record.network, payer: record.payer, errorReason: code, errorMessage: message };
}

/**
 * A submitted payment whose outcome svc cannot tell yet, in the x402 SDKs' retry language:
 * `settlement_pending` with the broadcast transaction's hash. The stock resource server retries
 * once with the same payload; the journal answers that retry from the record, never submitting again.
 */
export function pendingResult(network: string, payer: string | undefined, transaction: string, detail: string): SettleResult {
  return {
    success: false,
    transaction,
    network,
    ...(payer ? { payer } : {}),
    errorReason: 'settlement_pending',
    errorMessage: `Transaction ${transaction} was submitted; ${detail}. Send the same request again to get its outcome; it is never submitted twice.`,
    unconfirmed: true,
  };
}

/** A key (Idempotency-Key or payment-identifier id) reused for another payment or another request (HTTP 409). */
export function keyConflict(network: string, keys: ReadonlyArray<{ kind: string }>): SettleResult {
  const names = keys.map((k) => (k.kind === 'header' ? 'Idempotency-Key' : 'payment-identifier id')).join(' or ');
  return {
    success: false,
    transaction: '',
    network,
    errorReason: 'svc_idempotency_key_conflict',
    errorMessage: `This ${names || 'key'} was already used with another payment or other requirements; nothing was submitted. Use a new key for a new request.`,
  };
}

/** The SettleResult a journal record stands for. */
export function resultOf(record: SettlementRecord): SettleResult {
  if (record.state === 'settled') return { success: true, transaction: record.transaction, network: record.network, payer: record.payer };
  if (record.state === 'failed') {
    const code = (record.errorCode ?? ON_CHAIN_FAILURE_CODE) as SettleResult['errorReason'] & string;
    return failedResult(record, code, record.errorMessage || defaultMessage(code));
  }
  return pendingResult(record.network, record.payer, record.transaction, 'its outcome is not confirmed yet');
}

/** A settle refused before submission because the journal cannot record it. */
export function unavailable(network: string, reason: string): SettleResult {
  return { success: false, transaction: '', network, errorReason: 'svc_journal_unavailable', errorMessage: unavailableMessage(reason) };
}

export function unavailableMessage(reason: string): string {
  return `The settlement journal cannot record this payment now: ${reason}. Nothing was submitted; retry later.`;
}

/** Why the store did not reserve an attempt, as the refusal the scheme answers (nothing is submitted). */
export function reserveRefusal(
  outcome: Exclude<ReserveResult, { ok: true }>,
  network: string,
  keys: readonly RequestKey[],
): { code: SettlementCode; message: string } {
  if (outcome.reason === 'key_conflict') return { code: 'svc_idempotency_key_conflict', message: keyConflict(network, keys).errorMessage! };
  if (outcome.reason === 'refused') return outcome.refusal;
  // Another process submitted this payment first (the primary key held).
  return {
    code: 'svc_settlement_outcome_unknown',
    message: 'This payment is being settled by another request; retry with its Idempotency-Key.',
  };
}

/** The final state and detail reconciliation records for a chain status (settled, failed or expired). */
export function finalOf(
  status: 'settled' | 'failed' | 'expired',
  transaction: string,
): { state: 'settled' | 'failed'; detail: { errorCode?: string; errorMessage?: string; note: string } } {
  if (status === 'settled') return { state: 'settled', detail: { note: 'found on chain by reconciliation' } };
  const detail =
    status === 'failed'
      ? { errorMessage: `Transaction ${transaction} failed on-chain.`, note: 'failed on chain (reconciliation)' }
      : {
          errorMessage: `Transaction ${transaction} was never included and its time bound has passed.`,
          note: 'never included before its time bound (reconciliation)',
        };
  return { state: 'failed', detail: { errorCode: ON_CHAIN_FAILURE_CODE, ...detail } };
}
