/**
 * The payment policy and fee budget, judged on the attempt a scheme is about to submit
 * (docs/OPERATIONS.md). Refusals carry documented codes and happen before submission.
 */
import type { PolicyCode } from '../codes.ts';
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

export type Refusal = { code: PolicyCode; message: string };

/** What the policy judges of a payment: who pays whom, what and how much. */
export type JudgedPayment = Pick<SubmissionAttempt, 'payer' | 'payTo' | 'asset' | 'amount'>;

/** The rules that need no journal: self-payment and minimum amount. */
export function judgeAttempt(policy: PaymentPolicy, attempt: JudgedPayment): Refusal | null {
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

/**
 * /verify's policy check: the rules settle applies before submission (self-payment, minimum
 * amount), then today's budgets as the journal counts them (`spentSince`; undefined when the
 * journal cannot be read, which refuses nothing: settle then answers with its own code).
 */
export async function judgeForVerify(
  policy: PaymentPolicy,
  payment: JudgedPayment,
  now: number,
  spentSince: (payer: string, dayStart: number) => Promise<{ total: bigint; payer: bigint } | undefined>,
): Promise<Refusal | null> {
  const refusal = judgeAttempt(policy, payment);
  if (refusal || (policy.dailyFeeCapStroops === null && policy.payerDailyFeeCapStroops === null)) return refusal;
  const spent = await spentSince(payment.payer, feeCaps(policy, now).dayStart);
  return spent ? judgeBudget(policy, payment.payer, spent) : null;
}

/**
 * The fee budget as /verify sees it, before any fee is known: refused once nothing is left of the
 * daily or the payer's cap (`spent` counted from the journal). Settle refuses when the fee it is
 * about to pay would pass a cap, so a payment verify accepts may still be refused at settle with
 * the same code when the last stroops of a cap are smaller than its fee; never the other way.
 */
export function judgeBudget(policy: PaymentPolicy, payer: string, spent: { total: bigint; payer: bigint }): Refusal | null {
  if (policy.dailyFeeCapStroops !== null && spent.total >= policy.dailyFeeCapStroops)
    return {
      code: 'svc_fee_budget_daily_exhausted',
      message: `Sponsored fees today: ${spent.total} stroops; the daily cap (${policy.dailyFeeCapStroops}) is spent.`,
    };
  if (policy.payerDailyFeeCapStroops !== null && spent.payer >= policy.payerDailyFeeCapStroops)
    return {
      code: 'svc_fee_budget_payer_exhausted',
      message: `Sponsored fees today for ${payer}: ${spent.payer} stroops; the per-payer cap (${policy.payerDailyFeeCapStroops}) is spent.`,
    };
  return null;
}
