/**
 * The list index's counts on PostgreSQL (sqlite/list-index.ts does the same on SQLite): the entries
 * of one filter value hidden by age, and where a deep offset starts.
 */
import type { Db } from './queries.ts';

/**
 * The entries of a filter value last updated before `since` (sqlite/list-index.ts hiddenCount):
 * the blocks that start before it, summed, and the entries of the block holding `since` counted
 * in the index. With no block below `since`, the lower bound ('', 0) is below every entry. An SQL
 * expression over `kind`, `value` and `since` (column references or parameters), so a statement
 * that already runs can carry it (store.ts reads it with the list counts: one round trip).
 */
export const hiddenCountSql = (kind: string, value: string, since: string): string =>
  `SELECT below.n + (
     SELECT count(*) FROM listing_keys x
     WHERE x.kind = ${kind} AND x.value = ${value} AND x.last_updated < ${since}
       AND (x.last_updated, x.listing_id) > (below.start_updated, below.start_id)
   ) AS n FROM (
     SELECT coalesce(sum(n), 0) AS n,
       coalesce((array_agg(start_updated ORDER BY start_updated DESC, start_id DESC))[1], '') AS start_updated,
       coalesce((array_agg(start_id ORDER BY start_updated DESC, start_id DESC))[1], 0) AS start_id
     FROM listing_key_blocks WHERE kind = ${kind} AND value = ${value} AND start_updated < ${since}
   ) below`;

/** Where the entry at `offset` of a filter value's page order is (sqlite/list-index.ts seekOffset); the server sums the blocks. */
export async function seekOffset(
  db: Db,
  key: { kind: string; value: string },
  offset: number,
): Promise<{ from?: { lastUpdated: string; listingId: number }; skip: number } | null> {
  const row = (
    await db.query<{ start_updated: string; start_id: string; n: number; upto: string }>(
      `SELECT start_updated, start_id, n, upto FROM (
         SELECT start_updated, start_id, n, sum(n) OVER (ORDER BY start_updated DESC, start_id DESC) AS upto
         FROM listing_key_blocks WHERE kind = $1 AND value = $2
       ) b WHERE upto > $3 ORDER BY start_updated DESC, start_id DESC LIMIT 1`,
      [key.kind, key.value, offset],
    )
  ).rows[0];
  if (!row) return null;
  const skip = offset - (Number(row.upto) - Number(row.n));
  return row.start_updated === '~' ? { skip } : { from: { lastUpdated: row.start_updated, listingId: Number(row.start_id) }, skip };
}
