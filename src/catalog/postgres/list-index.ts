/**
 * The list index's counts on PostgreSQL (sqlite/list-index.ts does the same on SQLite): the entries
 * of one filter value hidden by age, where a deep offset starts, and the few listings a resource or
 * toolName filter selects.
 */
import { filterConditions, parameters, type Db, type RawListingRow } from './queries.ts';
import { listingColumns } from './quality.ts';
import { toDiscoveryResource } from '../listing.ts';
import type { DiscoveryFilters, DiscoveryResource } from '../types.ts';

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

/** resource and toolName select a few listings through their own indexes (sqlite/store.ts listByColumns). */
export async function listByColumns(
  db: Db,
  filters: DiscoveryFilters,
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
  failing: string | undefined,
): Promise<{ items: DiscoveryResource[]; total: number }> {
  const { values, p } = parameters();
  const where =
    `WHERE ${filterConditions(filters, p)}${visibleSince === undefined ? '' : ` AND l.last_updated >= ${p(visibleSince)}`}` +
    (failing === undefined ? '' : ` AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ${p(failing)})`);
  const total = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM listings l ${where}`, values)).rows[0]!.n);
  const rows = await db.query<RawListingRow>(
    `SELECT ${listingColumns(now, p)} ${where}
     ORDER BY l.last_updated DESC, l.id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`,
    values,
  );
  return { items: rows.rows.map((r) => toDiscoveryResource({ ...r, id: Number(r.id) })), total };
}
