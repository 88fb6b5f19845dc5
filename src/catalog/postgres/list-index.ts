/**
 * The list index's counts on PostgreSQL (sqlite/list-index.ts does the same on SQLite): the entries
 * of one filter value hidden by age, and where a deep offset starts.
 */
import { parameters, type Db } from './queries.ts';

/** The entries of a filter value last updated before `since` (sqlite/list-index.ts hiddenCount). */
export async function hiddenCount(db: Db, key: { kind: string; value: string }, since: string): Promise<number> {
  const blocks = (
    await db.query<{ n: string; below_updated: string | null; below_id: string | null }>(
      `SELECT coalesce(sum(n), 0) AS n,
         (array_agg(start_updated ORDER BY start_updated DESC, start_id DESC))[1] AS below_updated,
         (array_agg(start_id ORDER BY start_updated DESC, start_id DESC))[1] AS below_id
       FROM listing_key_blocks WHERE kind = $1 AND value = $2 AND start_updated < $3`,
      [key.kind, key.value, since],
    )
  ).rows[0]!;
  const { values, p } = parameters();
  const lower =
    blocks.below_updated === null ? '' : ` AND (last_updated, listing_id) > (${p(blocks.below_updated)}, ${p(blocks.below_id)}::bigint)`;
  const partial = (
    await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM listing_keys WHERE kind = ${p(key.kind)} AND value = ${p(key.value)} AND last_updated < ${p(since)}${lower}`,
      values,
    )
  ).rows[0]!;
  return Number(blocks.n) + Number(partial.n);
}

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
