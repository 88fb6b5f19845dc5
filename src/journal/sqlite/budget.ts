/**
 * The fee budget's counts in the SQLite journal (BudgetUsage in ../types.ts; policy.ts judges them).
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { ON_CHAIN_FAILURE_CODE, type BudgetParties, type BudgetUsage, type BudgetWindow, type PayToSpending } from '../types.ts';

/**
 * What the budget counts for a payment (BudgetUsage in ../types.ts): reserve judges it inside its
 * write transaction, /verify reads it through budgetUsage — the same queries. Every valid /verify
 * runs them, so they are prepared once per connection (compiling them again was about 8 % of a
 * valid verify's CPU, docs/BENCHMARKS.md "Verify and cheap requests against their floors").
 */
export function usageOf(db: DatabaseSync, { payer, payTo, network }: BudgetParties, window: BudgetWindow): BudgetUsage {
  const sums = cachedStatement(
    db,
    `SELECT SUM(budget_stroops) AS total, SUM(CASE WHEN payer = ? THEN budget_stroops END) AS payer,
              SUM(CASE WHEN pay_to = ? THEN budget_stroops END) AS pay_to, SUM(CASE WHEN new_pay_to = 1 THEN budget_stroops END) AS new_pay_tos
         FROM journal_settlements WHERE updated_at >= ? AND network = ?`,
  ).get(payer, payTo, window.dayStart, network) as Record<'total' | 'payer' | 'pay_to' | 'new_pay_tos', number | bigint | null>;
  const settledBefore = (column: 'payer' | 'pay_to', address: string) =>
    cachedStatement(
      db,
      `SELECT 1 FROM journal_settlements WHERE ${column} = ? AND updated_at < ? AND state = 'settled' AND network = ? LIMIT 1`,
    ).get(address, window.dayStart, network) !== undefined;
  const failures = cachedStatement(
    db,
    "SELECT COUNT(*) AS n FROM journal_settlements WHERE payer = ? AND updated_at >= ? AND state = 'failed' AND error_code = ? AND network = ?",
  ).get(payer, window.failuresSince, ON_CHAIN_FAILURE_CODE, network) as { n: number };
  return {
    total: BigInt(sums.total ?? 0),
    payer: BigInt(sums.payer ?? 0),
    payTo: BigInt(sums.pay_to ?? 0),
    newPayTos: BigInt(sums.new_pay_tos ?? 0),
    payerHasHistory: settledBefore('payer', payer),
    payToHasHistory: settledBefore('pay_to', payTo),
    payerFailures: Number(failures.n),
  };
}

/** PayToSpending (../types.ts): the same sums as usageOf's `pay_to`, for every payTo at once. */
export function payToSpendingOf(
  db: DatabaseSync,
  network: string,
  dayStart: number,
  bounds: { nearCap: bigint | null; cap: bigint | null },
): PayToSpending {
  const row = cachedStatement(
    db,
    `SELECT COUNT(*) AS pay_tos, SUM(spent >= ?) AS near_cap, SUM(spent >= ?) AS at_cap, MAX(spent) AS largest
       FROM (SELECT SUM(budget_stroops) AS spent FROM journal_settlements WHERE updated_at >= ? AND network = ?
              GROUP BY pay_to HAVING SUM(budget_stroops) > 0)`,
  ).get(bounds.nearCap, bounds.cap, dayStart, network) as Record<'pay_tos' | 'near_cap' | 'at_cap' | 'largest', number | bigint | null>;
  return {
    payTos: Number(row.pay_tos ?? 0),
    nearCap: Number(row.near_cap ?? 0),
    atCap: Number(row.at_cap ?? 0),
    largest: BigInt(row.largest ?? 0),
  };
}
