/**
 * The payment policy and fee budget, judged on the attempt a scheme is about to submit
 * (docs/OPERATIONS.md). Refusals carry documented codes and happen before submission.
 */
import type { SettlementCode } from '../codes.ts';
import type { SubmissionAttempt } from '../scheme/types.ts';
import type { FeeCaps } from './types.ts';

export interface PaymentPolicy {
  /** Sponsored fees per UTC day, all payers (null = no cap). */
  dailyFeeCapStroops: bigint | null;
  /** Sponsored fees per UTC day for one payer (null = no cap). */
  payerDailyFeeCapStroops: bigint | null;
  /** Minimum amount (base units) for assets not listed in `minAmountByAsset`. */
  minAmount: bigint;
  minAmountByAsset: ReadonlyMap<string, bigint>;
  allowSelfPayment: boolean;
}

export const DEFAULT_POLICY: PaymentPolicy = {
  dailyFeeCapStroops: 100_000_000n,
  payerDailyFeeCapStroops: 10_000_000n,
  minAmount: 1n,
  minAmountByAsset: new Map(),
  allowSelfPayment: false,
};

export type Refusal = { code: SettlementCode; message: string };

/** The rules that need no journal: self-payment and minimum amount. */
export function judgeAttempt(policy: PaymentPolicy, attempt: SubmissionAttempt): Refusal | null {
  if (!policy.allowSelfPayment && attempt.payer === attempt.payTo) {
    return { code: 'svc_policy_self_payment', message: `The payer ${attempt.payer} is also payTo; self-payments are not settled.` };
  }
  const minimum = policy.minAmountByAsset.get(attempt.asset) ?? policy.minAmount;
  if (BigInt(attempt.amount) < minimum) {
    return {
      code: 'svc_policy_amount_below_minimum',
      message: `The amount ${attempt.amount} is below the minimum ${minimum} for asset ${attempt.asset}.`,
    };
  }
  return null;
}

const DAY_MS = 86_400_000;

export function feeCaps(policy: PaymentPolicy, now: number): FeeCaps {
  return {
    dailyStroops: policy.dailyFeeCapStroops,
    perPayerDailyStroops: policy.payerDailyFeeCapStroops,
    dayStart: Math.floor(now / DAY_MS) * DAY_MS,
  };
}
