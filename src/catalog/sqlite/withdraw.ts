/**
 * A listing withdrawn by its owner, on SQLite (CatalogStorePort.withdraw; docs/CATALOG.md
 * "Withdrawing a listing"): in one write transaction, the owner check, the replay check against
 * `listing_withdrawals` (the time of the last withdrawal accepted per listing identity, kept
 * WITHDRAWAL_MEMORY_MS), then every row of the listing goes: its list keys (uncounted from their
 * blocks, which hold their totals), price index rows (uncounted), quality signals,
 * search revisions and terms, and the listing itself with its owner binding. postgres/withdraw.ts
 * does the same.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement, inWriteTransaction } from '../../db/sqlite.ts';
import { PRUNE_BATCH, type ListingKey } from '../listing.ts';
import { WITHDRAWAL_MEMORY_MS, type Withdrawal, type WithdrawalOutcome } from '../types.ts';
import { removeFromBlock } from './list-index.ts';
import { removePrices } from './price-index.ts';
import { nextSeq } from './revisions.ts';
import { removeQualitySignals } from './quality.ts';

/**
 * Migration: the last accepted withdrawal's time per listing identity (the identity outlives the
 * listing), and a listing's search revisions found by listing (a withdrawal deletes them all).
 */
export function migrateToWithdrawals(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE listing_withdrawals (
      resource TEXT NOT NULL,
      type TEXT NOT NULL,
      tool_name TEXT NOT NULL,
      issued_at_ms INTEGER NOT NULL,
      PRIMARY KEY (resource, type, tool_name)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_withdrawals_by_time ON listing_withdrawals (issued_at_ms);
    CREATE INDEX search_revisions_by_listing ON search_revisions (listing_id);
  `);
}

export function withdrawListing(db: DatabaseSync, w: Withdrawal, now: Date): WithdrawalOutcome {
  const run = (sql: string, ...params: Array<string | number>) => cachedStatement(db, sql).run(...params);
  return inWriteTransaction(db, () => {
    const listing = cachedStatement(db, 'SELECT id, owner FROM listings WHERE resource = ? AND type = ? AND tool_name = ?').get(
      w.resource,
      w.type,
      w.toolName,
    ) as { id: number; owner: string } | undefined;
    if (!listing) return { status: 'unknown' } as const;
    if (listing.owner !== w.owner) return { status: 'not_owner', owner: listing.owner } as const;
    const last = cachedStatement(db, 'SELECT issued_at_ms FROM listing_withdrawals WHERE resource = ? AND type = ? AND tool_name = ?').get(
      w.resource,
      w.type,
      w.toolName,
    ) as { issued_at_ms: number } | undefined;
    if (last && Number(last.issued_at_ms) >= w.issuedAtMs)
      return { status: 'replayed', lastIssuedAtMs: Number(last.issued_at_ms) } as const;

    removeListing(db, Number(listing.id));
    run(
      `INSERT INTO listing_withdrawals (resource, type, tool_name, issued_at_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (resource, type, tool_name) DO UPDATE SET issued_at_ms = excluded.issued_at_ms`,
      w.resource,
      w.type,
      w.toolName,
      w.issuedAtMs,
    );
    const forgotten = cachedStatement(db, 'SELECT resource, type, tool_name FROM listing_withdrawals WHERE issued_at_ms < ? LIMIT ?').all(
      now.getTime() - WITHDRAWAL_MEMORY_MS,
      PRUNE_BATCH,
    ) as Array<{ resource: string; type: string; tool_name: string }>;
    for (const f of forgotten)
      run('DELETE FROM listing_withdrawals WHERE resource = ? AND type = ? AND tool_name = ?', f.resource, f.type, f.tool_name);
    return { status: 'delisted' } as const;
  });
}

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
