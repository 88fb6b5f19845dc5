/**
 * The quality signals on SQLite (../quality.ts explains the tables): the migration, the bounded
 * update a settlement makes in the listing's write transaction, and the window sums a page reads.
 * The Postgres store does the same in postgres/quality.ts.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { windowStartDay, type PaymentFacts } from '../quality.ts';

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
 * Migration 30: a payer's last day is read from the payments kept (../quality.ts): each payment's row gets its listing
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
 * Counts one settled payment for a listing (inside its write transaction): a handful of keyed
 * rows, plus at most PRUNE_BATCH expired rows of each table. A payment already counted (same id)
 * is not counted again.
 */
export function recordCall(db: DatabaseSync, listingId: number, day: number, payment: PaymentFacts): void {
  const run = (sql: string, ...params: Array<string | number | null>) => cachedStatement(db, sql).run(...params);
  // The day of the payer's last payment for the listing, read before this one is kept.
  const previous =
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
  run(
    `INSERT INTO listing_calls (listing_id, day, calls, payers) VALUES (?, ?, 1, 0)
     ON CONFLICT (listing_id, day) DO UPDATE SET calls = calls + 1`,
    listingId,
    day,
  );
  // A payment dated before the payer's last one (a clock set back) moves nothing.
  if (payment.payer !== undefined && (previous === null || Number(previous) < day)) {
    run('UPDATE listing_calls SET payers = payers + 1 WHERE listing_id = ? AND day = ?', listingId, day);
    if (previous !== null)
      run('UPDATE listing_calls SET payers = payers - 1 WHERE listing_id = ? AND day = ?', listingId, Number(previous));
  }
  // Expired rows found through the day indexes, then deleted by key: a DELETE … IN (subquery) over a
  // row value scanned the whole table (5 ms a write at 100k listings).
  const expired = windowStartDay(day * 86_400_000);
  const rows = <T>(sql: string) => cachedStatement(db, sql).all(expired, PRUNE_BATCH) as T[];
  for (const r of rows<{ listing_id: number; day: number }>('SELECT listing_id, day FROM listing_calls WHERE day < ? LIMIT ?'))
    run('DELETE FROM listing_calls WHERE listing_id = ? AND day = ?', r.listing_id, r.day);
  for (const r of rows<{ rowid: number }>('SELECT rowid FROM listing_payments WHERE day < ? LIMIT ?'))
    run('DELETE FROM listing_payments WHERE rowid = ?', r.rowid);
}

/**
 * The quality signals of listing `id` go (inside the caller's write transaction: its withdrawal): its calls and its
 * payers' payments; the ids of its payments stay, with no listing (SQLite may give the next new listing this id again),
 * so a settlement hook run again for one of them does not count it twice.
 */
export function removeQualitySignals(db: DatabaseSync, id: number): void {
  cachedStatement(db, 'DELETE FROM listing_calls WHERE listing_id = ?').run(id);
  cachedStatement(db, 'DELETE FROM listing_payments WHERE listing_id = ? AND payment_id IS NULL').run(id);
  cachedStatement(db, 'UPDATE listing_payments SET listing_id = NULL, payer = NULL WHERE listing_id = ?').run(id);
}

/** The window's calls and distinct payers of one listing: at most 30 keyed rows. */
export function windowSums(db: DatabaseSync, listingId: number, now: Date): { calls: number; payers: number } {
  const row = cachedStatement(
    db,
    'SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(payers), 0) AS payers FROM listing_calls WHERE listing_id = ? AND day >= ?',
  ).get(listingId, windowStartDay(now)) as { calls: number; payers: number };
  return { calls: Number(row.calls), payers: Number(row.payers) };
}
