/**
 * A listing withdrawn by its owner, on SQLite (CatalogStorePort.withdraw; docs/CATALOG.md
 * "Withdrawing a listing"): the engine (../withdraw.ts) in one write transaction, and the removal of
 * every row of a listing.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement, inWriteTransaction } from '../../db/sqlite.ts';
import type { ListingKey } from '../listing.ts';
import type { Withdrawal, WithdrawalOutcome } from '../types.ts';
import { runSync } from '../statements.ts';
import { withdrawListing as withdrawEngine } from '../withdraw.ts';
import { sqliteSql } from './queries.ts';
import { removeFromBlock } from './list-index.ts';
import { removePrices } from './price-index.ts';
import { nextSeq } from './revisions.ts';
import { removeQualitySignals } from './quality.ts';

/** The withdrawal (../withdraw.ts) in one write transaction. */
export const withdrawListing = (db: DatabaseSync, w: Withdrawal, now: Date): WithdrawalOutcome =>
  inWriteTransaction(db, () => runSync(withdrawEngine(sqliteSql(db), (id) => removeListing(db, Number(id)), w, now)));

/**
 * Every row of listing `id` goes, inside the caller's write transaction: its list keys (extension
 * keys among them; uncounted from their blocks), price index rows (uncounted),
 * quality signals, search revisions and terms, and the listing itself with its owner binding. A
 * withdrawal does this, and so does a takeover by the payTo the resource's origin names
 * (sqlite/claims.ts).
 */
export function removeListing(db: DatabaseSync, id: number): void {
  const run = (sql: string, ...params: Array<string | number>) => cachedStatement(db, sql).run(...params);
  // A write like any other: search cursors pinned before it keep their sequence.
  nextSeq(db);
  const keys = cachedStatement(db, 'SELECT kind, value, last_updated FROM listing_keys WHERE listing_id = ?').all(id) as unknown as Array<
    ListingKey & { last_updated: string }
  >;
  for (const key of keys) removeFromBlock(db, key, { lastUpdated: key.last_updated, listingId: id });
  run('DELETE FROM listing_keys WHERE listing_id = ?', id);
  removePrices(db, id);
  removeQualitySignals(db, id);
  // Every revision, not only the current one: SQLite may give the next new listing this id again.
  run('DELETE FROM search_terms WHERE rev IN (SELECT rev FROM search_revisions WHERE listing_id = ?)', id);
  run('DELETE FROM search_revisions WHERE listing_id = ?', id);
  run('DELETE FROM listing_urls WHERE rowid = ?', id);
  run('DELETE FROM listings WHERE id = ?', id);
}
