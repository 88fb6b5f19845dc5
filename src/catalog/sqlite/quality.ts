/**
 * The quality signals on SQLite (../quality.ts explains the tables): the bounded
 * update a settlement makes in the listing's write transaction, and the window sums a page reads.
 * The Postgres store does the same in postgres/quality.ts.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { qualityDaysOf, windowStartDay, windowTotals, withPayment, type PaymentFacts } from '../quality.ts';

/**
 * Counts one settled payment for a listing (inside its write transaction): its row's days, a payment row, and at most
 * PRUNE_BATCH expired payments. A payment already counted (same id) is not counted again.
 */
export function recordCall(db: DatabaseSync, listingId: number, day: number, payment: PaymentFacts): void {
  const run = (sql: string, ...params: Array<string | number | null>) => cachedStatement(db, sql).run(...params);
  // The day of the payer's last payment for the listing, read before this one is kept.
  const lastPaid =
    payment.payer === undefined
      ? null
      : (
          cachedStatement(db, 'SELECT max(day) AS day FROM listing_payments WHERE listing_id = ? AND payer = ?').get(
            listingId,
            payment.payer,
          ) as { day: number | null }
        ).day;
  if (payment.id !== undefined || payment.payer !== undefined) {
    const kept = run(
      'INSERT OR IGNORE INTO listing_payments (payment_id, day, listing_id, payer) VALUES (?, ?, ?, ?)',
      payment.id ?? null,
      day,
      listingId,
      payment.payer ?? null,
    );
    if (Number(kept.changes) === 0) return;
  }
  const row = cachedStatement(db, 'SELECT quality_days FROM listings WHERE id = ?').get(listingId) as { quality_days: string | null };
  const days = withPayment(qualityDaysOf(row.quality_days), day, payment.payer === undefined ? undefined : { lastPaid });
  run('UPDATE listings SET quality_days = ? WHERE id = ?', JSON.stringify(days), listingId);
  // Expired rows found through the day index, then deleted by key: SQLite plans a DELETE … IN (subquery)
  // over a row value as a scan of the whole table.
  const expired = windowStartDay(day * 86_400_000);
  for (const r of cachedStatement(db, 'SELECT rowid FROM listing_payments WHERE day < ? LIMIT ?').all(expired, PRUNE_BATCH) as Array<{
    rowid: number;
  }>)
    run('DELETE FROM listing_payments WHERE rowid = ?', r.rowid);
}

/** The window's calls and distinct payers of one listing. */
export function windowSums(db: DatabaseSync, listingId: number, now: Date): { calls: number; payers: number } {
  const row = cachedStatement(db, 'SELECT quality_days FROM listings WHERE id = ?').get(listingId) as { quality_days: string | null };
  return windowTotals(qualityDaysOf(row.quality_days), now);
}

/**
 * The payments of listing `id` go (inside the caller's write transaction: its withdrawal, which deletes its row and
 * days): those without an id; the ids stay, with no listing (SQLite may give the next new listing this id again), so a
 * settlement hook run again for one of them does not count it twice.
 */
export function removeQualitySignals(db: DatabaseSync, id: number): void {
  cachedStatement(db, 'DELETE FROM listing_payments WHERE listing_id = ? AND payment_id IS NULL').run(id);
  cachedStatement(db, 'UPDATE listing_payments SET listing_id = NULL, payer = NULL WHERE listing_id = ?').run(id);
}
