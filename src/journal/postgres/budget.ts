/**
 * The fee budget's counts in the Postgres journal (BudgetUsage in ../types.ts; policy.ts judges them).
 */
import type pg from 'pg';
import { ON_CHAIN_FAILURE_CODE, type BudgetParties, type BudgetUsage, type BudgetWindow, type PayToSpending } from '../types.ts';

/** A pool or a client inside a transaction: what the journal's queries run on. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/**
 * What the budget counts for a payment (BudgetUsage in ../types.ts): reserve judges it inside its
 * transaction, /verify reads it through budgetUsage — the same queries as the SQLite store's.
 */
export async function usageOf(db: Queryable, { payer, payTo, network }: BudgetParties, window: BudgetWindow): Promise<BudgetUsage> {
  const sums = await db.query<Record<'total' | 'payer' | 'pay_to' | 'new_pay_tos', string | null>>(
    `SELECT SUM(budget_stroops) AS total, SUM(CASE WHEN payer = $1 THEN budget_stroops END) AS payer,
            SUM(CASE WHEN pay_to = $2 THEN budget_stroops END) AS pay_to, SUM(CASE WHEN new_pay_to THEN budget_stroops END) AS new_pay_tos
       FROM journal_settlements WHERE updated_at >= $3 AND network = $4`,
    [payer, payTo, window.dayStart, network],
  );
  const history = await db.query<{ payer: boolean; pay_to: boolean; failures: string }>(
    `SELECT EXISTS (SELECT 1 FROM journal_settlements WHERE payer = $1 AND updated_at < $3 AND state = 'settled' AND network = $6) AS payer,
            EXISTS (SELECT 1 FROM journal_settlements WHERE pay_to = $2 AND updated_at < $3 AND state = 'settled' AND network = $6) AS pay_to,
            (SELECT COUNT(*) FROM journal_settlements WHERE payer = $1 AND updated_at >= $4 AND state = 'failed' AND error_code = $5 AND network = $6) AS failures`,
    [payer, payTo, window.dayStart, window.failuresSince, ON_CHAIN_FAILURE_CODE, network],
  );
  const row = sums.rows[0]!;
  const known = history.rows[0]!;
  return {
    total: BigInt(row.total ?? 0),
    payer: BigInt(row.payer ?? 0),
    payTo: BigInt(row.pay_to ?? 0),
    newPayTos: BigInt(row.new_pay_tos ?? 0),
    payerHasHistory: known.payer,
    payToHasHistory: known.pay_to,
    payerFailures: Number(known.failures),
  };
}

/** PayToSpending (../types.ts): the same sums as usageOf's `pay_to`, for every payTo at once. */
export async function payToSpendingOf(
  db: Queryable,
  network: string,
  dayStart: number,
  bounds: { nearCap: bigint | null; cap: bigint | null },
): Promise<PayToSpending> {
  const { rows } = await db.query<Record<'pay_tos' | 'near_cap' | 'at_cap' | 'largest', string | null>>(
    `SELECT COUNT(*) AS pay_tos, COUNT(*) FILTER (WHERE spent >= $1::numeric) AS near_cap,
            COUNT(*) FILTER (WHERE spent >= $2::numeric) AS at_cap, MAX(spent) AS largest
       FROM (SELECT SUM(budget_stroops) AS spent FROM journal_settlements WHERE updated_at >= $3 AND network = $4
              GROUP BY pay_to HAVING SUM(budget_stroops) > 0) AS by_pay_to`,
    [bounds.nearCap?.toString() ?? null, bounds.cap?.toString() ?? null, dayStart, network],
  );
  const row = rows[0]!;
  return {
    payTos: Number(row.pay_tos ?? 0),
    nearCap: Number(row.near_cap ?? 0),
    atCap: Number(row.at_cap ?? 0),
    largest: BigInt(row.largest ?? 0),
  };
}
