/**
 * The settle answers the journal gives from what it knows (docs/OPERATIONS.md): a record's
 * outcome, a refusal because the journal cannot record a payment (`svc_journal_unavailable`,
 * before submission) and a submitted payment whose outcome it could not record (unconfirmed).
 */
import { defaultMessage } from '../codes.ts';
import type { SettleResult } from '../scheme/types.ts';
import type { SettlementRecord } from './types.ts';

/** A failed settle answer about the payment a journal record stands for (no transaction of its own). */
export function failedResult(record: SettlementRecord, code: NonNullable<SettleResult['errorReason']>, message: string): SettleResult {
  return { success: false, transaction: '', network: record.network, payer: record.payer, errorReason: code, errorMessage: message };
}

/** The SettleResult a journal record stands for. */
export function resultOf(record: SettlementRecord): SettleResult {
  if (record.state === 'settled') return { success: true, transaction: record.transaction, network: record.network, payer: record.payer };
  if (record.state === 'failed') {
    const code = (record.errorCode ?? 'settle_exact_stellar_transaction_failed') as SettleResult['errorReason'] & string;
    return failedResult(record, code, record.errorMessage || defaultMessage(code));
  }
  return {
    success: false,
    transaction: '',
    network: record.network,
    payer: record.payer,
    errorReason: 'svc_settlement_outcome_unknown',
    errorMessage: `Transaction ${record.transaction} was submitted; its outcome is not confirmed yet. Retry later with the same Idempotency-Key.`,
    unconfirmed: true,
  };
}

/** A settle refused before submission because the journal cannot record it. */
export function unavailable(network: string, reason: string): SettleResult {
  return { success: false, transaction: '', network, errorReason: 'svc_journal_unavailable', errorMessage: unavailableMessage(reason) };
}

export function unavailableMessage(reason: string): string {
  return `The settlement journal cannot record this payment now: ${reason}. Nothing was submitted; retry later.`;
}

/** A submitted payment whose outcome the journal could not record: unconfirmed, like the record. */
export function unrecorded(network: string, payer: string | undefined, transaction: string, reason: string): SettleResult {
  return {
    success: false,
    transaction: '',
    network,
    ...(payer ? { payer } : {}),
    errorReason: 'svc_settlement_outcome_unknown',
    errorMessage: `Transaction ${transaction} was submitted; the journal could not record its outcome: ${reason}. Retry later with the same Idempotency-Key.`,
    unconfirmed: true,
  };
}
