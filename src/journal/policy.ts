/**
 * The payment policy and fee budget, judged on the attempt a scheme is about to submit
 * (docs/OPERATIONS.md). Refusals carry documented codes and happen before submission.
 */
import type { SubmissionAttempt } from '../scheme/types.ts';
import type { BudgetParties, BudgetRefusal, BudgetRule, BudgetUsage, BudgetWindow } from './types.ts';

export interface PaymentPolicy {
  /** Sponsored fees per UTC day, all payers (null = no cap). */
  dailyFeeCapStroops: bigint | null;
  /** Sponsored fees per UTC day for one payer (null = no cap). */
  payerDailyFeeCapStroops: bigint | null;
  /** Sponsored fees per UTC day for payments to one payTo address, so one sink cannot spend everyone's budget (null = no cap). */
  payToDailyFeeCapStroops: bigint | null;
  /**
   * The per-payer and per-payTo cap of an address without history (no settled payment in that
   * role before today): a smaller allowance, so fresh accounts are cheap to make but cheap to bound.
   */
  newAddressDailyFeeCapStroops: bigint | null;
  /** Sponsored fees per UTC day for payments to all payTo addresses without history together. */
  newPayTosDailyFeeCapStroops: bigint | null;
  /** A payer with this many settlements failed on chain within `payerFailureWindowMs` is refused (0 = off). */
  payerFailureLimit: number;
  payerFailureWindowMs: number;
  /** Minimum amount (base units) for assets not listed in `minAmountByAsset`. */
  minAmount: bigint;
  minAmountByAsset: ReadonlyMap<string, bigint>;
  allowSelfPayment: boolean;
}

export const DEFAULT_POLICY: PaymentPolicy = {
  dailyFeeCapStroops: 100_000_000n,
  payerDailyFeeCapStroops: 10_000_000n,
  payToDailyFeeCapStroops: 10_000_000n,
  newAddressDailyFeeCapStroops: 2_000_000n,
  newPayTosDailyFeeCapStroops: 40_000_000n,
  payerFailureLimit: 3,
  payerFailureWindowMs: 900_000,
  minAmount: 1n,
  minAmountByAsset: new Map(),
  allowSelfPayment: false,
};

/** A policy or budget refusal: the journal's store carries the same shape out of its reserve. */
export type Refusal = BudgetRefusal;

/** What the policy judges of a payment: who pays whom, what and how much. */
export type JudgedPayment = Pick<SubmissionAttempt, 'payer' | 'payTo' | 'asset' | 'amount'>;

/** A payment the budget judges: its parties on its network. */
export type BudgetedPayment = JudgedPayment & BudgetParties;

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

/** Where the budget counts from at `now`: the UTC day, and the payer-failure window. */
export function budgetWindow(policy: PaymentPolicy, now: number): BudgetWindow {
  return { dayStart: Math.floor(now / DAY_MS) * DAY_MS, failuresSince: now - policy.payerFailureWindowMs };
}

/** The smaller of two caps (null = no cap). */
const tighter = (a: bigint | null, b: bigint | null): bigint | null => (a === null ? b : b === null ? a : a < b ? a : b);

/**
 * The fee budget and the payer's failure record, judged on what the journal counts (`usage`).
 * `fee` is the fee settle is about to pay (or, for /verify, the fee its verification derived from
 * the same simulation): a cap refuses when it would be passed. Without a fee (null: a scheme that
 * derives none) a cap refuses once nothing of it is left. The most specific refusal is named first
 * (docs/OPERATIONS.md "Sponsorship").
 */
export function judgeBudget(policy: PaymentPolicy, parties: BudgetParties, usage: BudgetUsage, fee: bigint | null): Refusal | null {
  const passed = (spent: bigint, cap: bigint | null) => cap !== null && (fee === null ? spent >= cap : spent + fee > cap);
  const ofThis = fee === null ? '' : ` with this settlement (${fee})`;
  if (policy.payerFailureLimit > 0 && usage.payerFailures >= policy.payerFailureLimit) {
    const minutes = Math.round(policy.payerFailureWindowMs / 60_000);
    return {
      code: 'svc_policy_payer_cooling_down',
      message: `${usage.payerFailures} settlements from ${parties.payer} failed on chain in the last ${minutes} minutes; its payments are refused until fewer than ${policy.payerFailureLimit} did.`,
    };
  }
  // One rule for both parties: the role's cap, or the smaller allowance of an address without history.
  const roles = [
    {
      role: 'payer',
      code: 'svc_fee_budget_payer_exhausted',
      spent: usage.payer,
      cap: policy.payerDailyFeeCapStroops,
      history: usage.payerHasHistory,
      what: parties.payer,
    },
    {
      role: 'payTo',
      code: 'svc_fee_budget_payto_exhausted',
      spent: usage.payTo,
      cap: policy.payToDailyFeeCapStroops,
      history: usage.payToHasHistory,
      what: `payments to ${parties.payTo}`,
    },
  ] as const;
  for (const { role, code, spent, cap, history, what } of roles) {
    const applied = history ? cap : tighter(cap, policy.newAddressDailyFeeCapStroops);
    if (passed(spent, applied))
      return {
        code,
        message: `Sponsored fees today for ${what}: ${spent} stroops; the per-${role} cap (${applied}${history ? '' : `, a ${role} without history`}) would be passed${ofThis}.`,
      };
  }
  if (!usage.payToHasHistory && passed(usage.newPayTos, policy.newPayTosDailyFeeCapStroops))
    return {
      code: 'svc_fee_budget_new_paytos_exhausted',
      message: `Sponsored fees today for payments to payTo addresses without history: ${usage.newPayTos} stroops; their shared cap (${policy.newPayTosDailyFeeCapStroops}) would be passed${ofThis}. Addresses paid before today are not affected.`,
    };
  if (passed(usage.total, policy.dailyFeeCapStroops))
    return {
      code: 'svc_fee_budget_daily_exhausted',
      message: `Sponsored fees today: ${usage.total} stroops; the daily cap (${policy.dailyFeeCapStroops}) would be passed${ofThis}.`,
    };
  return null;
}

/** The budget rule reserve applies to an attempt about to pay `fee` (judged in the reserve's transaction). */
export function reserveRule(policy: PaymentPolicy, parties: BudgetParties, fee: bigint, now: number): BudgetRule {
  return { window: budgetWindow(policy, now), judge: (usage) => judgeBudget(policy, parties, usage, fee) };
}

/**
 * /verify's policy check: the rules settle applies before submission (self-payment, minimum
 * amount), then the budget as the journal counts it now (`usage`; undefined when the journal
 * cannot be read, which refuses nothing: settle then answers with its own code), with the fee the
 * scheme's verification derived (null when it has none).
 */
export async function judgeForVerify(
  policy: PaymentPolicy,
  payment: BudgetedPayment,
  fee: bigint | null,
  now: number,
  usage: (parties: BudgetParties, window: BudgetWindow) => Promise<BudgetUsage | undefined>,
): Promise<Refusal | null> {
  const refusal = judgeAttempt(policy, payment);
  if (refusal) return refusal;
  // Every cap off and no failure rationing: nothing to count, so /verify reads no journal.
  const caps = [
    policy.dailyFeeCapStroops,
    policy.payerDailyFeeCapStroops,
    policy.payToDailyFeeCapStroops,
    policy.newAddressDailyFeeCapStroops,
    policy.newPayTosDailyFeeCapStroops,
  ];
  if (caps.every((cap) => cap === null) && policy.payerFailureLimit === 0) return null;
  const counted = await usage(payment, budgetWindow(policy, now));
  return counted ? judgeBudget(policy, payment, counted, fee) : null;
}
