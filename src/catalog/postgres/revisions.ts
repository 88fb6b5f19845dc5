/**
 * Search revisions on PostgreSQL beside the store's write (store.ts): a term's score as the exact
 * integer `search_terms.units` holds, and the retention of superseded revisions.
 */
import { PRUNE_BATCH } from '../listing.ts';
import { SNAPSHOT_RETENTION_MS } from '../search.ts';
import { SCORE_UNITS } from './migrations.ts';
import type { Db } from './queries.ts';

/** score × 2^53 as an exact integer (migrations.ts): every score is a multiple of 2^-53. */
export function scoreUnits(score: number): string {
  const units = score * SCORE_UNITS; // times a power of two: exact
  if (!Number.isInteger(units) || units <= 0) throw new Error(`a term score below 0.5 cannot be stored exactly: ${score}`);
  return BigInt(units).toString();
}

/** Superseded revisions older than a cursor's lifetime go, at most PRUNE_BATCH per write (as sqlite/store.ts pruneRevisions). */
export async function pruneRevisions(db: Db, now: Date): Promise<void> {
  const horizon = new Date(now.getTime() - SNAPSHOT_RETENTION_MS).toISOString();
  await db.query(
    `WITH expired AS (
       SELECT rev FROM search_revisions WHERE to_seq IS NOT NULL AND superseded_at < $1 ORDER BY superseded_at LIMIT $2
     ), terms AS (
       DELETE FROM search_terms WHERE rev IN (SELECT rev FROM expired)
     )
     DELETE FROM search_revisions WHERE rev IN (SELECT rev FROM expired)`,
    [horizon, PRUNE_BATCH],
  );
}
