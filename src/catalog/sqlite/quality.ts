/**
 * The quality signals on SQLite (../quality.ts explains the tables): the migration, the bounded
 * update a settlement makes in the listing's write transaction, and the window sums a page reads.
 * The Postgres store does the same in postgres/quality.ts.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { qualityDaysOf, windowStartDay, windowTotals, withPayment, type PaymentFacts } from '../quality.ts';

export function migrateToQualitySignals(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE listing_calls (
      listing_id INTEGER NOT NULL,
      day INTEGER NOT NULL,
      calls INTEGER NOT NULL,
      payers INTEGER NOT NULL,
      PRIMARY KEY (listing_id, day)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_calls_by_day ON listing_calls (day);
    CREATE TABLE listing_payers (
      listing_id INTEGER NOT NULL,
      payer TEXT NOT NULL,
      last_day INTEGER NOT NULL,
      PRIMARY KEY (listing_id, payer)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_payers_by_day ON listing_payers (last_day);
    CREATE TABLE listing_payments (payment_id TEXT PRIMARY KEY, day INTEGER NOT NULL) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_payments_by_day ON listing_payments (day);
  `);
}

/**
 * Migration 31: a payer's last day is read from the payments kept (../quality.ts): each payment's row gets its listing
 * and payer, and a payment without an id that names a payer is kept too (id NULL). Each `listing_payers` row becomes
 * such a row on its payer's last day, the ids kept stay (their listing unknown: they only keep a payment from counting
 * twice), and that table goes. Run again on a file set back to an earlier version: moved already.
 */
export function migrateToPaymentPayers(db: DatabaseSync): void {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'listing_payers'").get()) return;
  db.exec(`
    CREATE TABLE payments (payment_id TEXT UNIQUE, day INTEGER NOT NULL, listing_id INTEGER, payer TEXT) STRICT;
    INSERT INTO payments (payment_id, day) SELECT payment_id, day FROM listing_payments;
    INSERT INTO payments (day, listing_id, payer) SELECT last_day, listing_id, payer FROM listing_payers;
    DROP TABLE listing_payments;
    DROP TABLE listing_payers;
    ALTER TABLE payments RENAME TO listing_payments;
    CREATE INDEX listing_payments_by_day ON listing_payments (day);
    CREATE INDEX listing_payments_by_payer ON listing_payments (listing_id, payer, day) WHERE listing_id IS NOT NULL;
  `);
}

/**
 * Migration 32: a listing's calls and payers per day move from `listing_calls` onto its row, `quality_days`
 * (../quality.ts), and that table goes. Run again on a file set back to an earlier version: moved already.
 */
export function migrateToQualityDays(db: DatabaseSync): void {
  const columns = (db.prepare('PRAGMA table_info(listings)').all() as Array<{ name: string }>).map((c) => c.name);
  if (!columns.includes('quality_days')) db.exec('ALTER TABLE listings ADD COLUMN quality_days TEXT');
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'listing_calls'").get()) return;
  db.exec(`
    UPDATE listings SET quality_days = (
      SELECT json_group_array(json_array(c.day, c.calls, c.payers))
      FROM (SELECT day, calls, payers FROM listing_calls WHERE listing_id = listings.id ORDER BY day) c
    ) WHERE id IN (SELECT listing_id FROM listing_calls);
    DROP TABLE listing_calls;
  `);
}

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
