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
 * Counts one settled payment for a listing (inside its write transaction): a handful of keyed
 * rows, plus at most PRUNE_BATCH expired rows of each table. A payment already counted (same id)
 * is not counted again.
 */
export function recordCall(db: DatabaseSync, listingId: number, day: number, payment: PaymentFacts): void {
  const run = (sql: string, ...params: Array<string | number>) => cachedStatement(db, sql).run(...params);
  if (payment.id !== undefined) {
    const inserted = run('INSERT OR IGNORE INTO listing_payments (payment_id, day) VALUES (?, ?)', payment.id, day);
    if (Number(inserted.changes) === 0) return;
  }
  run(
    `INSERT INTO listing_calls (listing_id, day, calls, payers) VALUES (?, ?, 1, 0)
     ON CONFLICT (listing_id, day) DO UPDATE SET calls = calls + 1`,
    listingId,
    day,
  );
  if (payment.payer !== undefined) {
    const previous = cachedStatement(db, 'SELECT last_day FROM listing_payers WHERE listing_id = ? AND payer = ?').get(
      listingId,
      payment.payer,
    ) as { last_day: number } | undefined;
    // A payment dated before the payer's last one (a clock set back) moves nothing.
    if (previous === undefined || Number(previous.last_day) < day) {
      run(
        `INSERT INTO listing_payers (listing_id, payer, last_day) VALUES (?, ?, ?)
         ON CONFLICT (listing_id, payer) DO UPDATE SET last_day = excluded.last_day`,
        listingId,
        payment.payer,
        day,
      );
      run('UPDATE listing_calls SET payers = payers + 1 WHERE listing_id = ? AND day = ?', listingId, day);
      if (previous !== undefined)
        run('UPDATE listing_calls SET payers = payers - 1 WHERE listing_id = ? AND day = ?', listingId, Number(previous.last_day));
    }
  }
  // Expired rows found through the day indexes, then deleted by key: a DELETE … IN (subquery) over a
  // row value scanned the whole table (5 ms a write at 100k listings).
  const expired = windowStartDay(day * 86_400_000);
  const rows = <T>(sql: string) => cachedStatement(db, sql).all(expired, PRUNE_BATCH) as T[];
  for (const r of rows<{ listing_id: number; day: number }>('SELECT listing_id, day FROM listing_calls WHERE day < ? LIMIT ?'))
    run('DELETE FROM listing_calls WHERE listing_id = ? AND day = ?', r.listing_id, r.day);
  for (const r of rows<{ listing_id: number; payer: string }>('SELECT listing_id, payer FROM listing_payers WHERE last_day < ? LIMIT ?'))
    run('DELETE FROM listing_payers WHERE listing_id = ? AND payer = ?', r.listing_id, r.payer);
  for (const r of rows<{ payment_id: string }>('SELECT payment_id FROM listing_payments WHERE day < ? LIMIT ?'))
    run('DELETE FROM listing_payments WHERE payment_id = ?', r.payment_id);
}

/** The window's calls and distinct payers of one listing: at most 30 keyed rows. */
export function windowSums(db: DatabaseSync, listingId: number, now: Date): { calls: number; payers: number } {
  const row = cachedStatement(
    db,
    'SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(payers), 0) AS payers FROM listing_calls WHERE listing_id = ? AND day >= ?',
  ).get(listingId, windowStartDay(now)) as { calls: number; payers: number };
  return { calls: Number(row.calls), payers: Number(row.payers) };
}
