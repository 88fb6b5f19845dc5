/**
 * The quality signals on PostgreSQL, as sqlite/quality.ts keeps them on SQLite (../quality.ts
 * explains the tables). Every instance writes them in the listing's write transaction, under the
 * listing's advisory lock (store.ts), so concurrent settlements of one listing on several
 * instances are counted one after the other.
 */
import { PRUNE_BATCH } from '../listing.ts';
import { qualityDaysOf, windowStartDay, windowTotals, withPayment, type PaymentFacts } from '../quality.ts';
import type pg from 'pg';

/** A connection or a transaction's client (as queries.ts Db). */
type Db = Pick<pg.PoolClient, 'query'>;

/**
 * Counts one settled payment for a listing (sqlite/quality.ts recordCall), in its write transaction. The statements that do
 * not wait on one another's answers are sent together (the store's pool is pipelined: one round trip for each group).
 */
export async function recordCall(db: Db, listingId: number, day: number, payment: PaymentFacts): Promise<void> {
  // The day of the payer's last payment for the listing and the listing's days, sent before this payment is kept.
  const lastDay =
    payment.payer === undefined
      ? undefined
      : db.query<{ day: number | null }>('SELECT max(day) AS day FROM listing_payments WHERE listing_id = $1 AND payer = $2', [
          listingId,
          payment.payer,
        ]);
  const stored = db.query<{ quality_days: unknown }>('SELECT quality_days FROM listings WHERE id = $1', [listingId]);
  for (const read of [lastDay, stored]) read?.catch(() => undefined); // awaited below
  if (payment.id !== undefined || payment.payer !== undefined) {
    const kept = await db.query(
      'INSERT INTO listing_payments (payment_id, day, listing_id, payer) VALUES ($1, $2, $3, $4) ON CONFLICT (payment_id) DO NOTHING',
      [payment.id ?? null, day, listingId, payment.payer ?? null],
    );
    if (kept.rowCount === 0) return void (await Promise.all([lastDay, stored]));
  }
  const [lastRows, storedRows] = await Promise.all([lastDay, stored]);
  const lastPaid = lastRows?.rows[0]?.day ?? null;
  const days = withPayment(
    qualityDaysOf(storedRows.rows[0]?.quality_days),
    day,
    payment.payer === undefined ? undefined : { lastPaid: lastPaid === null ? null : Number(lastPaid) },
  );
  const expired = windowStartDay(day * 86_400_000);
  // Expired payments through the day index, deleted by their row (no scan of the whole table).
  await Promise.all([
    db.query('UPDATE listings SET quality_days = $2 WHERE id = $1', [listingId, JSON.stringify(days)]),
    db.query('DELETE FROM listing_payments WHERE ctid = ANY(ARRAY(SELECT ctid FROM listing_payments WHERE day < $1 LIMIT $2))', [
      expired,
      PRUNE_BATCH,
    ]),
  ]);
}

/** The listing columns with the quality window's sums as of `now`; `p` names the parameter. */
export const listingColumns = (now: Date, p: (value: unknown) => string): string => {
  const since = p(windowStartDay(now));
  return `l.id, l.resource, l.type, l.x402_version, l.last_updated, l.body, q.calls, q.payers,
    l.liveness_status, l.liveness_checked_at, l.liveness_failing_since
    FROM listings l CROSS JOIN LATERAL (
      SELECT coalesce(sum((d ->> 1)::bigint), 0)::int AS calls, coalesce(sum((d ->> 2)::bigint), 0)::int AS payers
      FROM jsonb_array_elements(coalesce(l.quality_days, '[]'::jsonb)) d WHERE (d ->> 0)::int >= ${since}
    ) q`;
};

/** The window's calls and distinct payers of one listing (sqlite/quality.ts windowSums). */
export async function windowSums(db: Db, listingId: number, now: Date): Promise<{ calls: number; payers: number }> {
  const row = (await db.query<{ quality_days: unknown }>('SELECT quality_days FROM listings WHERE id = $1', [listingId])).rows[0];
  return windowTotals(qualityDaysOf(row?.quality_days), now);
}

/** The payments of listing `id` go, in the caller's transaction, their ids kept (sqlite/quality.ts removeQualitySignals). */
export async function removeQualitySignals(db: Db, id: string | number): Promise<void> {
  await db.query('DELETE FROM listing_payments WHERE listing_id = $1 AND payment_id IS NULL', [id]);
  await db.query('UPDATE listing_payments SET listing_id = NULL, payer = NULL WHERE listing_id = $1', [id]);
}
