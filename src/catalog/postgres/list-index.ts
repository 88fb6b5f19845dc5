/**
 * The list index's counts on PostgreSQL (sqlite/list-index.ts does the same on SQLite): the entries
 * of one filter value hidden by age, where a deep offset starts, and the few listings a resource or
 * toolName filter selects.
 */
import {
  acceptedEntryExists,
  filterConditions,
  pageListingsStatement,
  parameters,
  queryGeneric,
  readPage,
  type Db,
  type RawListingRow,
} from './queries.ts';
import { listingColumns } from './quality.ts';
import {
  ASSET_COMBINATION_KINDS as KINDS,
  BLOCK_SIZE,
  filterKeys,
  needsAcceptsCondition,
  toDiscoveryResource,
  type ListingRow,
} from '../listing.ts';
import { usdAssetsToCheck, usdPriceAsAmount } from '../price.ts';
import { urlPageIds, withoutUrl, type UrlScale } from '../url-filter.ts';
import { SUFFIX_ROWS_PER_MATCH, WALK_ROWS_SPELLED, suffixPageSql } from './url-suffixes.ts';
import type { DiscoveryFilters, DiscoveryResource, ListPageRead } from '../types.ts';
import { listed } from '../query-paths.ts';

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

/** The page of one list key's entries from `page.offset` (the list's statement for a single key without failing listings). */
export function singleKeyPage(
  db: Db,
  key: { kind: string; value: string },
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
): Promise<ListingRow[]> {
  const params = parameters();
  const { p } = params;
  const visible = visibleSince === undefined ? '' : ` AND k.last_updated >= ${p(visibleSince)}`;
  const pageSql = `SELECT k.listing_id AS id, k.last_updated FROM listing_keys k WHERE k.kind = ${p(key.kind)} AND k.value = ${p(key.value)}${visible}
    ORDER BY k.last_updated DESC, k.listing_id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
  return readPage(db, { ...pageListingsStatement(pageSql, params, now), generic: true });
}

/** Which of `assets` some listing accepts (their list counts). */
export async function listedAssets(db: Db, assets: string[]): Promise<string[]> {
  const rows = await db.query<{ value: string }>(
    "SELECT value FROM listing_counts WHERE kind = 'asset' AND value = ANY($1::text[]) AND n > 0",
    [assets],
  );
  return rows.rows.map((r) => r.value);
}

/** A list page's filters with maxUsdPrice read as asset + maxAmount when one USD-pegged asset can match (price.ts usdPriceAsAmount). */
export async function withUsdPriceAsAmount(db: Db, filters: DiscoveryFilters): Promise<DiscoveryFilters> {
  if (filters.maxUsdPrice === undefined) return filters;
  const usd = usdAssetsToCheck(filters);
  return usdPriceAsAmount(filters, new Set(usd.length === 0 ? [] : await listedAssets(db, usd)));
}

/**
 * The conditions on listings `l` that leave out those hidden by age (before `visibleSince`) or by failing liveness
 * checks (since before `failing`), their values added through `p` in that order.
 */
function shown(p: (value: unknown) => string, visibleSince: string | undefined, failing: string | undefined): string {
  return (
    (visibleSince === undefined ? '' : ` AND l.last_updated >= ${p(visibleSince)}`) +
    (failing === undefined ? '' : ` AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ${p(failing)})`)
  );
}

/** resource and toolName select a few listings through their own indexes (as sqlite/selective-list.ts listByColumns). */
async function listByColumns(
  db: Db,
  { filters, page, now, visibleSince, failing }: ListPageRead,
): Promise<{ items: DiscoveryResource[]; total: number }> {
  listed('columns');
  const { values, p } = parameters();
  const where = `WHERE ${filterConditions(filters, p)}${shown(p, visibleSince, failing)}`;
  // Both statements go out together (the store's pipelined pool): one round trip.
  const [counted, rows] = await Promise.all([
    db.query<{ n: string }>(`SELECT count(*) AS n FROM listings l ${where}`, [...values]),
    db.query<RawListingRow>(
      `SELECT ${listingColumns(now, p)} ${where} ORDER BY l.last_updated DESC, l.id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`,
      values,
    ),
  ]);
  const total = Number(counted.rows[0]!.n);
  return { items: rows.rows.map((r) => toDiscoveryResource({ ...r, id: Number(r.id) })), total };
}

/**
 * A list page filtered by `resource` or `toolName` (they select a few listings), or by `url` alone: its
 * suffixes' index when few listings hold it, else a bounded walk in page order (../url-filter.ts).
 */
export async function listBySelectiveFilter(
  db: Db,
  read: ListPageRead,
  urlScale: UrlScale,
): Promise<{ items: DiscoveryResource[]; total: number; partialResults?: boolean }> {
  const { resource, toolName, url } = read.filters;
  if (resource === undefined && toolName === undefined && url !== undefined) return listByUrl(db, read, url, urlScale);
  const columns = await listByColumns(db, read);
  return url === undefined ? columns : { ...columns, partialResults: false };
}

/**
 * A `url` page (../url-filter.ts urlPageIds, as sqlite/selective-list.ts reads it) in one statement (url-suffixes.ts
 * suffixPageSql): the listings the URL suffixes name, and the page's listings by whichever way urlPageIds takes; read
 * again with more of the suffixes' entries while those read name too few to tell.
 */
async function listByUrl(
  db: Db,
  read: ListPageRead,
  url: string,
  scale: UrlScale,
): Promise<{ items: DiscoveryResource[]; total: number; partialResults: boolean }> {
  const { page, now, visibleSince, failing } = read;
  const others = await withUsdPriceAsAmount(db, withoutUrl(read.filters));
  const accepts = needsAcceptsCondition(others)
    ? (p: (value: unknown) => string) => acceptedEntryExists(others, p, 'k.listing_id', { fence: true })
    : undefined;
  type Row = UrlPageRow & { whole: boolean; matched: number; total: number | null; beyond: boolean | null };
  let rows: Row[] = [];
  const shown = () => ({
    total: rows[0]!.total!,
    ids: rows.flatMap((row) => (row.id === null ? [] : [Number(row.id)])),
    beyond: rows[0]!.beyond!,
  });
  const { ids, total, partialResults } = await urlPageIds(
    {
      matches: async (bounds) => {
        for (let n = Math.max(1, (bounds.cap + 1) * (scale.urlSuffixRowsPerMatch ?? SUFFIX_ROWS_PER_MATCH)); ; n *= 8) {
          const { values, p } = parameters();
          const spelledRows = scale.urlWalkRowsSpelled ?? WALK_ROWS_SPELLED;
          const text = suffixPageSql(
            { url, rows: n, bounds, page, keys: filterKeys(others), accepts, visibleSince, failing, now, spelledRows },
            p,
          );
          rows = (await queryGeneric<Row>(db, 'url', text, values)).rows;
          if (rows[0]!.whole || rows[0]!.matched > bounds.cap) return rows[0]!.matched;
        }
      },
      // Read with the matches (suffixPageSql).
      exact: shown,
      walk: shown,
    },
    page,
    scale,
  );
  const byId = new Map(rows.filter((r) => r.id !== null).map((r) => [Number(r.id), r]));
  const items = ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [toDiscoveryResource({ ...row, id })] : [];
  });
  return { items, total, partialResults };
}

/** A row of a `url` page's statement (listByUrl): one of the page's listings, or null columns when the page is empty. */
type UrlPageRow = RawListingRow | { [column in keyof RawListingRow]: null };

const ASSET_COMBINATION_KINDS = KINDS.map((kind) => `'${kind}'`).join(', ');

/** `sql` run while `listing_counts` is a table (migration 42 made it the view of the blocks' sums). */
const whileCountsTable = (sql: string) =>
  `DO $$ BEGIN IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('listing_counts')) = 'r' THEN ${sql} END IF; END $$;`;

/**
 * Catalog migration 28: every listing's keys of asset combinations (listing.ts assetKeysOf, sqlite/list-index.ts
 * migrateToAssetCombinationKeys), their counts, and their blocks cut as buildBlocks cuts them (the newest block starts
 * at the sentinel; every block but the oldest holds BLOCK_SIZE entries), in bulk.
 */
export const ASSET_COMBINATION_KEYS_MIGRATION = `
  DELETE FROM listing_keys WHERE kind IN (${ASSET_COMBINATION_KINDS});
  ${whileCountsTable(`DELETE FROM listing_counts WHERE kind IN (${ASSET_COMBINATION_KINDS});`)}
  DELETE FROM listing_key_blocks WHERE kind IN (${ASSET_COMBINATION_KINDS});
  INSERT INTO listing_keys (kind, value, listing_id, last_updated)
    SELECT k.kind, k.value, a.listing_id, l.last_updated
    FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
    CROSS JOIN LATERAL (VALUES
      ('network+asset', a.network || E'\n' || a.asset),
      ('scheme+asset', a.scheme || E'\n' || a.asset),
      ('scheme+network+asset', a.scheme || E'\n' || a.network || E'\n' || a.asset),
      ('type+asset', l.type || E'\n' || a.asset),
      ('type+network+asset', l.type || E'\n' || a.network || E'\n' || a.asset)
    ) AS k(kind, value)
    WHERE a.asset IS NOT NULL
    ON CONFLICT DO NOTHING;
  ${whileCountsTable(`INSERT INTO listing_counts (kind, value, n)
    SELECT kind, value, count(*) FROM listing_keys WHERE kind IN (${ASSET_COMBINATION_KINDS}) GROUP BY kind, value;`)}
  INSERT INTO listing_key_blocks (kind, value, start_updated, start_id, n)
    SELECT kind, value, CASE WHEN b = 0 THEN '~' ELSE (starts)[1] END, CASE WHEN b = 0 THEN 0 ELSE (ids)[1] END, n
    FROM (
      SELECT kind, value, b, count(*) AS n,
        array_agg(last_updated ORDER BY last_updated DESC, listing_id DESC) AS starts,
        array_agg(listing_id ORDER BY last_updated DESC, listing_id DESC) AS ids
      FROM (
        SELECT kind, value, last_updated, listing_id,
          (row_number() OVER (PARTITION BY kind, value ORDER BY last_updated DESC, listing_id DESC) - 1) / ${BLOCK_SIZE} AS b
        FROM listing_keys WHERE kind IN (${ASSET_COMBINATION_KINDS})
      ) numbered
      GROUP BY kind, value, b
    ) blocks;
  ANALYZE listing_keys, listing_key_blocks;`;

/**
 * Catalog migration 45 (SQLite migration 33): `listing_accepts` duplicated the list keys (each entry's scheme, network,
 * their pair, its asset and their combinations) and the price index (its amounts), which the accepted-entry filters
 * read instead (queries.ts acceptedEntryExists). A key written before migration 42 kept no sequence: it takes that of
 * the first entry that gave it (a search cursor reads it as of its snapshot), and the table goes. Run again on a
 * catalog set back to an earlier version: gone already.
 */
export const RETIRE_LISTING_ACCEPTS_MIGRATION = `
  DO $$ BEGIN
    IF to_regclass('listing_accepts') IS NOT NULL THEN
      UPDATE listing_keys k SET added_seq = f.seq FROM (
        SELECT a.listing_id, e.kind, e.value, min(a.added_seq) AS seq
        FROM listing_accepts a CROSS JOIN LATERAL (VALUES
          ('scheme', a.scheme),
          ('network', a.network),
          ('scheme+network', a.scheme || E'\n' || a.network),
          ('asset', a.asset),
          ('network+asset', a.network || E'\n' || a.asset),
          ('scheme+asset', a.scheme || E'\n' || a.asset),
          ('scheme+network+asset', a.scheme || E'\n' || a.network || E'\n' || a.asset)
        ) AS e(kind, value)
        WHERE e.value IS NOT NULL
        GROUP BY a.listing_id, e.kind, e.value
      ) f
      WHERE k.added_seq = 0 AND k.kind = f.kind AND k.value = f.value AND k.listing_id = f.listing_id;
      DROP TABLE listing_accepts;
    END IF;
  END $$;`;

/**
 * Catalog migration 42 (SQLite migration 30): `listing_extensions` duplicated the 'extensions' list keys, which take its
 * rows' sequences (a search cursor reads them as of its snapshot) before it goes; `listing_counts` duplicated the
 * blocks' counts and becomes their sum. The write's function adds a key with the sequence that added it and counts it
 * in its block only. Run again on a catalog set back to an earlier version: moved already.
 */
export const FOLD_INTO_LIST_KEYS_MIGRATION = `
  ALTER TABLE listing_keys ADD COLUMN IF NOT EXISTS added_seq BIGINT NOT NULL DEFAULT 0;
  DO $$ BEGIN
    IF to_regclass('listing_extensions') IS NOT NULL THEN
      UPDATE listing_keys k SET added_seq = e.added_seq FROM listing_extensions e
        WHERE k.kind = 'extensions' AND k.listing_id = e.listing_id AND k.value = e.key;
      DROP TABLE listing_extensions;
    END IF;
  END $$;
  ${whileCountsTable('DROP TABLE listing_counts;')}
  CREATE OR REPLACE VIEW listing_counts (kind, value, n) AS SELECT kind, value, sum(n)::bigint FROM listing_key_blocks GROUP BY kind, value;
  DROP FUNCTION IF EXISTS catalog_index_listing(BIGINT, TEXT, TEXT[], TEXT[]);
  -- One write's list index (sqlite/list-index.ts insertListingKeys, then countKeyChanges): the keys the listing answers
  -- to are added with the write's sequence, all its keys move to p_updated, the blocks follow.
  CREATE OR REPLACE FUNCTION catalog_index_listing(p_id BIGINT, p_updated TEXT, p_kinds TEXT[], p_values TEXT[], p_seq BIGINT)
  RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE
    moved_kinds TEXT[];
    moved_values TEXT[];
    moved_from TEXT[];
    added_kinds TEXT[] := '{}';
    added_values TEXT[] := '{}';
    i INTEGER;
  BEGIN
    SELECT coalesce(array_agg(kind), '{}'), coalesce(array_agg(value), '{}'), coalesce(array_agg(last_updated), '{}')
      INTO moved_kinds, moved_values, moved_from
      FROM listing_keys WHERE listing_id = p_id AND last_updated <> p_updated;
    UPDATE listing_keys SET last_updated = p_updated WHERE listing_id = p_id AND last_updated <> p_updated;
    FOR i IN 1 .. coalesce(array_length(p_kinds, 1), 0) LOOP
      INSERT INTO listing_keys (kind, value, listing_id, last_updated, added_seq) VALUES (p_kinds[i], p_values[i], p_id, p_updated, p_seq)
        ON CONFLICT DO NOTHING;
      IF FOUND THEN
        added_kinds := added_kinds || p_kinds[i];
        added_values := added_values || p_values[i];
      END IF;
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(moved_kinds, 1), 0) LOOP
      PERFORM catalog_block_remove(moved_kinds[i], moved_values[i], moved_from[i], p_id);
      PERFORM catalog_block_add(moved_kinds[i], moved_values[i], p_updated, p_id);
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(added_kinds, 1), 0) LOOP
      PERFORM catalog_block_add(added_kinds[i], added_values[i], p_updated, p_id);
    END LOOP;
  END $fn$;
  ANALYZE listing_keys;`;
