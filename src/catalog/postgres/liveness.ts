/**
 * Liveness records on PostgreSQL (../liveness.ts explains the columns and runs their statements).
 * Several instances share the catalog: a claim takes due rows with `FOR UPDATE SKIP LOCKED` and
 * moves their basis to the claim's time in the same statement, so a listing is probed by one
 * instance, and the others find it not due.
 */
import { livenessListingOf, livenessPort, type LivenessListing, type LivenessStorePort } from '../liveness.ts';
import { runAsync } from '../statements.ts';
import { postgresSql, type Db } from './queries.ts';
export { settledLivenessSql } from '../liveness.ts';

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

/**
 * The store's LivenessStorePort over `db`, each call after `ready` (the catalog's schema).
 * `restore` puts a listing that passed its check back in the search index if a lifecycle pass took
 * it out (lifecycle.ts), right after the check's write.
 */
export function livenessStore(
  db: Db,
  ready: () => Promise<unknown>,
  restore: (id: string) => Promise<void> = async () => {},
): LivenessStorePort {
  return livenessPort(
    async (_write, engine) => (await ready(), runAsync(engine({ sql: postgresSql(db), restore }))),
    async (now, dueBefore, limit) => (await ready(), claimDue(db, now, dueBefore, limit)),
  );
}
