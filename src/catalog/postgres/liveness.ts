/**
 * Liveness records on PostgreSQL, as sqlite/liveness.ts keeps them on SQLite (../liveness.ts
 * explains the columns). Several instances share the catalog: a claim takes due rows with
 * `FOR UPDATE SKIP LOCKED` and moves their basis to the claim's time in the same statement, so a
 * listing is probed by one instance, and the others find it not due.
 */
import { livenessListingOf, type LivenessListing, type LivenessRecord, type LivenessStorePort } from '../liveness.ts';
import type { Db } from './queries.ts';

export const LIVENESS_MIGRATION = `
  ALTER TABLE listings ADD COLUMN liveness_status TEXT COLLATE "C",
    ADD COLUMN liveness_checked_at TEXT COLLATE "C",
    ADD COLUMN liveness_failing_since TEXT COLLATE "C",
    ADD COLUMN liveness_basis_ms BIGINT NOT NULL DEFAULT 0;
  CREATE INDEX listings_liveness_due ON listings (liveness_basis_ms, id);
  CREATE INDEX listings_liveness_failing ON listings (liveness_failing_since) WHERE liveness_failing_since IS NOT NULL;`;

/** The SET clause a settlement adds to its listing's row (sqlite/liveness.ts SETTLED_LIVENESS_SQL); `basis` names the parameter. */
export const settledLivenessSql = (
  basis: string,
): string => `liveness_basis_ms = CASE WHEN liveness_status = 'terms_changed' THEN 0::bigint ELSE ${basis}::bigint END,
  liveness_status = CASE WHEN liveness_failing_since IS NULL OR liveness_status = 'terms_changed' THEN liveness_status END,
  liveness_checked_at = CASE WHEN liveness_failing_since IS NULL OR liveness_status = 'terms_changed' THEN liveness_checked_at END,
  liveness_failing_since = CASE WHEN liveness_status = 'terms_changed' THEN liveness_failing_since END`;

type ClaimedRow = Parameters<typeof livenessListingOf>[0] & { id: string };

export async function claimDue(db: Db, now: number, dueBefore: number, limit: number): Promise<LivenessListing[]> {
  const result = await db.query<ClaimedRow>(
    `WITH due AS (
       SELECT id FROM listings WHERE liveness_basis_ms <= $2 ORDER BY liveness_basis_ms, id LIMIT $3 FOR UPDATE SKIP LOCKED
     )
     UPDATE listings l SET liveness_basis_ms = $1 FROM due WHERE l.id = due.id
     RETURNING l.id, l.resource, l.type, l.tool_name, l.owner, l.body, l.liveness_status, l.liveness_checked_at,
       l.liveness_failing_since, l.liveness_basis_ms`,
    [now, dueBefore, limit],
  );
  return result.rows.sort((a, b) => Number(a.id) - Number(b.id)).map((row) => livenessListingOf(row));
}

export async function writeLiveness(db: Db, key: string, record: LivenessRecord, claimedAt: number, basis = claimedAt): Promise<void> {
  await db.query(
    `UPDATE listings SET liveness_status = $1, liveness_checked_at = $2, liveness_failing_since = $3, liveness_basis_ms = $6
     WHERE id = $4 AND liveness_basis_ms = $5`,
    [record.status, record.checkedAt, record.failingSince, key, claimedAt, basis],
  );
}

export async function postponeLiveness(db: Db, keys: string[], basis: number, claimedAt: number): Promise<void> {
  await db.query('UPDATE listings SET liveness_basis_ms = $1 WHERE id = ANY($2::bigint[]) AND liveness_basis_ms = $3', [
    basis,
    keys,
    claimedAt,
  ]);
}

/** Listings due (basis at or before `dueBefore`): a range count of the index claimDue walks. */
export async function countDue(db: Db, dueBefore: number): Promise<number> {
  const result = await db.query<{ n: string }>('SELECT count(*) AS n FROM listings WHERE liveness_basis_ms <= $1', [dueBefore]);
  return Number(result.rows[0]!.n);
}

/**
 * The store's LivenessStorePort over `db`, each call after `ready` (the catalog's migrations).
 * `restore` puts a listing that passed its check back in the search index if a lifecycle pass took
 * it out (lifecycle.ts), right after the check's write.
 */
export function livenessStore(
  db: Db,
  ready: () => Promise<unknown>,
  restore: (id: string) => Promise<void> = async () => {},
): LivenessStorePort {
  return {
    claimDue: async (now, dueBefore, limit) => (await ready(), claimDue(db, now, dueBefore, limit)),
    writeLiveness: async (key, record, claimedAt, basis) => {
      await ready();
      await writeLiveness(db, key, record, claimedAt, basis);
      if (record.failingSince === null) await restore(key);
    },
    postponeLiveness: async (keys, basis, claimedAt) => (await ready(), postponeLiveness(db, keys, basis, claimedAt)),
    countDue: async (dueBefore) => (await ready(), countDue(db, dueBefore)),
  };
}

/** Entries of one list key hidden by failures and not already hidden by age (sqlite/liveness.ts hiddenByFailuresCount). */
export async function hiddenByFailuresCount(
  db: Db,
  key: { kind: string; value: string },
  before: string,
  visibleSince: string | undefined,
): Promise<number> {
  const row = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM listings h JOIN listing_keys k ON k.kind = $1 AND k.value = $2 AND k.listing_id = h.id
     WHERE h.liveness_failing_since < $3${visibleSince === undefined ? '' : ' AND k.last_updated >= $4'}`,
    [key.kind, key.value, before, ...(visibleSince === undefined ? [] : [visibleSince])],
  );
  return Number(row.rows[0]!.n);
}
