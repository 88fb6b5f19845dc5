/**
 * Liveness records on SQLite (../liveness.ts explains the columns): the migration, claiming due
 * listings, writing a check's record, and what list and search leave out. The Postgres store does
 * the same in postgres/liveness.ts.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement, inWriteTransaction } from '../../db/sqlite.ts';
import { livenessListingOf, type LivenessListing, type LivenessRecord, type LivenessStorePort } from '../liveness.ts';

export function migrateToLiveness(db: DatabaseSync): void {
  db.exec(`
    ALTER TABLE listings ADD COLUMN liveness_status TEXT;
    ALTER TABLE listings ADD COLUMN liveness_checked_at TEXT;
    ALTER TABLE listings ADD COLUMN liveness_failing_since TEXT;
    ALTER TABLE listings ADD COLUMN liveness_basis_ms INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX listings_liveness_due ON listings (liveness_basis_ms, id);
    CREATE INDEX listings_liveness_failing ON listings (liveness_failing_since) WHERE liveness_failing_since IS NOT NULL;
  `);
}

/**
 * The SET clause a settlement adds to its listing's row: the next check counts from it, and a run
 * of failures ends, except a `terms_changed` one: the resource's own server no longer names the
 * owner, which a payment to the owner does not disprove (a squatter could keep its listing visible
 * by paying itself), so the record stays and the listing is checked again at once.
 */
export const SETTLED_LIVENESS_SQL = `liveness_basis_ms = CASE WHEN liveness_status = 'terms_changed' THEN 0 ELSE ? END,
  liveness_status = CASE WHEN liveness_failing_since IS NULL OR liveness_status = 'terms_changed' THEN liveness_status END,
  liveness_checked_at = CASE WHEN liveness_failing_since IS NULL OR liveness_status = 'terms_changed' THEN liveness_checked_at END,
  liveness_failing_since = CASE WHEN liveness_status = 'terms_changed' THEN liveness_failing_since END`;

/** Claims up to `limit` due listings (oldest basis first): their basis becomes `now`. */
export function claimDue(db: DatabaseSync, now: number, dueBefore: number, limit: number): LivenessListing[] {
  return inWriteTransaction(db, () => {
    const rows = cachedStatement(
      db,
      `SELECT id, resource, type, tool_name, owner, body, liveness_status, liveness_checked_at, liveness_failing_since
       FROM listings WHERE liveness_basis_ms <= ? ORDER BY liveness_basis_ms, id LIMIT ?`,
    ).all(dueBefore, limit) as Array<Parameters<typeof livenessListingOf>[0]>;
    const claim = cachedStatement(db, 'UPDATE listings SET liveness_basis_ms = ? WHERE id = ?');
    for (const row of rows) claim.run(now, row.id);
    return rows.map((row) => livenessListingOf(row));
  });
}

export function writeLiveness(db: DatabaseSync, key: string, record: LivenessRecord, claimedAt: number, basis = claimedAt): void {
  cachedStatement(
    db,
    `UPDATE listings SET liveness_status = ?, liveness_checked_at = ?, liveness_failing_since = ?, liveness_basis_ms = ?
     WHERE id = ? AND liveness_basis_ms = ?`,
  ).run(record.status, record.checkedAt, record.failingSince, basis, Number(key), claimedAt);
}

export function postponeLiveness(db: DatabaseSync, keys: string[], basis: number, claimedAt: number): void {
  inWriteTransaction(db, () => {
    const postpone = cachedStatement(db, 'UPDATE listings SET liveness_basis_ms = ? WHERE id = ? AND liveness_basis_ms = ?');
    for (const key of keys) postpone.run(basis, Number(key), claimedAt);
  });
}

/** Listings due (basis at or before `dueBefore`): a range count of the index claimDue walks. */
export function countDue(db: DatabaseSync, dueBefore: number): number {
  return Number((cachedStatement(db, 'SELECT count(*) AS n FROM listings WHERE liveness_basis_ms <= ?').get(dueBefore) as { n: number }).n);
}

/**
 * The store's LivenessStorePort over `db`; `writable` throws when the file cannot take writes.
 * `restore` puts a listing that passed its check back in the search index if a lifecycle pass
 * took it out (lifecycle.ts), in the check's write.
 */
export function livenessStore(db: DatabaseSync, writable: () => void, restore: (id: number) => void = () => {}): LivenessStorePort {
  return {
    claimDue: (now, dueBefore, limit) => (writable(), claimDue(db, now, dueBefore, limit)),
    writeLiveness: (key, record, claimedAt, basis) => {
      writable();
      inWriteTransaction(db, () => {
        writeLiveness(db, key, record, claimedAt, basis);
        if (record.failingSince === null) restore(Number(key));
      });
    },
    postponeLiveness: (keys, basis, claimedAt) => (writable(), postponeLiveness(db, keys, basis, claimedAt)),
    countDue: (dueBefore) => countDue(db, dueBefore),
  };
}

/** Whether any listing is hidden by its failures (one probe of the partial index). */
export function anyHiddenByFailures(db: DatabaseSync, before: string | undefined): boolean {
  if (before === undefined) return false;
  return cachedStatement(db, 'SELECT 1 FROM listings WHERE liveness_failing_since < ? LIMIT 1').get(before) !== undefined;
}

/** Listing ids hidden by their failures, as a subquery (one parameter: the cut). */
export const HIDDEN_IDS_SQL = '(SELECT id FROM listings WHERE liveness_failing_since < ?)';

/** Entries of one list key hidden by failures and not already hidden by age (sqlite/list-index.ts hiddenCount). */
export function hiddenByFailuresCount(
  db: DatabaseSync,
  key: { kind: string; value: string },
  before: string,
  visibleSince: string | undefined,
): number {
  const row = cachedStatement(
    db,
    `SELECT count(*) AS n FROM listings h JOIN listing_keys k ON k.kind = ? AND k.value = ? AND k.listing_id = h.id
     WHERE h.liveness_failing_since < ?${visibleSince === undefined ? '' : ' AND k.last_updated >= ?'}`,
  ).get(key.kind, key.value, before, ...(visibleSince === undefined ? [] : [visibleSince])) as { n: number };
  return Number(row.n);
}
