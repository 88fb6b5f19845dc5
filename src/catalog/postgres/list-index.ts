/**
 * The Postgres store's statements for the list engine (../list-engine.ts ListIndex; sqlite/selective-list.ts answers
 * the same on SQLite): the counts (one round trip with a priced page's counts and its guessed page), a page walked over
 * a list key's entries, and the pages of the filters that select few listings (`resource`, `toolName`, `url`); and the
 * list index's migrations.
 */
import {
  acceptedEntryExists,
  failingListingsSql,
  filterConditions,
  heldFiltersSql,
  pageListingsStatement,
  parameters,
  postgresSql,
  queryGeneric,
  readPage,
  visibleAfter,
  type Db,
  type RawListingRow,
} from './queries.ts';
import { listingColumns } from './quality.ts';
import { ASSET_COMBINATION_KINDS as KINDS, filterKeys, needsAcceptsCondition, toDiscoveryResource, type ListingRow } from '../listing.ts';
import { priceFilter } from '../price.ts';
import { urlPageIds, type UrlScale } from '../url-filter.ts';
import { SUFFIX_ROWS_PER_MATCH, WALK_ROWS_SPELLED, suffixPageSql } from './url-suffixes.ts';
import type { DiscoveryResource, ListPageRead } from '../types.ts';
import { bulkBlocksSql, hiddenByAgeSql, type KeyedRead, type ListIndex } from '../list-engine.ts';
import { runAsync as runStatements } from '../statements.ts';
import { HIDDEN_LIST_TIME } from '../lifecycle.ts';
import { priceCountsSql, type PriceCounts } from './price-counts.ts';
import type { PricedPageGuesses } from './price-guess.ts';
import { listPriced } from './price-index.ts';

/** Which of `assets` some listing accepts (their list counts). */
async function listedAssets(db: Db, assets: string[]): Promise<string[]> {
  const rows = await db.query<{ value: string }>(
    "SELECT value FROM listing_counts WHERE kind = 'asset' AND value = ANY($1::text[]) AND n > 0",
    [assets],
  );
  return rows.rows.map((r) => r.value);
}

/** What a priced page reads with the counts (price-counts.ts): their row, and its guessed statement (price-guess.ts). */
type PricedWithCounts = { row: PriceCounts; guessed: ReturnType<PricedPageGuesses['send']> };

/** The listings of a page's rows, as the list answers them. */
const itemsOf = (rows: ListingRow[]) => rows.map((row) => toDiscoveryResource(row));

/**
 * The statements of a list page (../list-engine.ts listPage) in one read snapshot. The pages of `resource`, `toolName`
 * and `url` check each listing's row, so the failing cut stands in their statements whether any listing fails or not.
 */
export function postgresListIndex(db: Db, now: Date, urlScale: UrlScale, guesses: PricedPageGuesses): ListIndex<PricedWithCounts> {
  /** A keyed read's entries `k` (the driving key's, not hidden by age, holding the rest of the filters), parameters through `p`. */
  const keyedFrom = (p: (value: unknown) => string, { driver, others, accepts, visibleSince, failing }: KeyedRead) =>
    `FROM listing_keys k WHERE k.kind = ${p(driver.kind)} AND k.value = ${p(driver.value)}${visibleAfter(p, visibleSince)}` +
    heldFiltersSql(p, 'k.listing_id', others, { accepts: accepts && acceptedEntryExists(accepts, p, 'k.listing_id'), failing });
  return {
    listedAssets: (assets) => listedAssets(db, assets),
    /**
     * The counts, whether any listing fails, a single key's entries hidden by age, a price filter's counts (a deep
     * page's class ranges too), in one round trip (inReadSnapshot sends BEGIN with it): each round trip to another
     * process adds its own wait under load (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). A priced page's
     * statement goes with them when the last page of its filters shows its shape (price-guess.ts).
     */
    async counts({ filters, keys, page, agedSince, visibleSince, failingBefore }) {
      const q = parameters();
      const [failingCut, agedCut] = [`${q.p(failingBefore ?? null)}::text`, `${q.p(agedSince ?? null)}::text`];
      const priced = priceFilter(filters) !== undefined;
      // Each key's count read by its primary key (a subquery): a generic plan would otherwise hash all of listing_counts.
      const text = `SELECT k.kind, k.value, coalesce((SELECT c.n FROM listing_counts c WHERE c.kind = k.kind AND c.value = k.value), 0) AS n, pc.*,
           ${failingCut} IS NOT NULL AND EXISTS (${failingListingsSql(failingCut, '1', false, true)}) AS failing,
           CASE WHEN ${agedCut} IS NOT NULL THEN (${hiddenByAgeSql('k.kind', 'k.value', agedCut)}) END AS aged
         FROM unnest(${q.p(keys.map((k) => k.kind))}::text[], ${q.p(keys.map((k) => k.value))}::text[]) AS k(kind, value)
         CROSS JOIN (${priced ? priceCountsSql(filters, q.p, visibleSince, failingBefore, page.offset + page.limit) : 'SELECT'}) pc`;
      // Run with its generic plan, planned once per connection rather than on every page; its hidden counts are
      // EXECUTEd, planned with their values whatever the setting (docs/BENCHMARKS.md "Filter combinations").
      type Counted = { kind: string; value: string; n: string; failing: boolean; aged: string | null } & PriceCounts;
      const counting = queryGeneric<Counted>(db, 'counts', text, q.values);
      const guessed = priced ? guesses.send(db, filters, page, now, visibleSince, failingBefore) : undefined;
      const { rows } = await counting;
      return {
        listings: keys.map((key) => Number(rows.find((r) => r.kind === key.kind && r.value === key.value)?.n ?? 0)),
        failing: rows[0]!.failing,
        aged: agedSince === undefined ? 0 : Number(rows[0]!.aged ?? 0),
        price: { row: rows[0]!, guessed },
      };
    },
    /**
     * One key alone, from an offset, is planned once per connection (queryGeneric): its shape fixes its plan, with the
     * failing listings left out too (their set hashed once: queries.ts failingListingsSql).
     */
    async keyPage(read, page, from) {
      const params = parameters();
      const { p } = params;
      const bound = from ? ` AND (k.last_updated, k.listing_id) <= (${p(from.lastUpdated)}, ${p(from.listingId)})` : '';
      const pageSql = `SELECT k.listing_id AS id, k.last_updated ${keyedFrom(p, read)}${bound}
        ORDER BY k.last_updated DESC, k.listing_id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
      const generic = read.others.length === 0 && !read.accepts && !from;
      return itemsOf(await readPage(db, { ...pageListingsStatement(pageSql, params, now), generic }));
    },
    async countKeyed(read) {
      const { values, p } = parameters();
      return Number((await db.query<{ n: string }>(`SELECT count(*) AS n ${keyedFrom(p, read)}`, values)).rows[0]!.n);
    },
    sql: postgresSql(db),
    statements: runStatements,
    async priced({ filters, counted, price, page, visibleSince, failing }) {
      const byPrice = await listPriced(db, filters, counted, price.row, page, now, visibleSince, failing, undefined, price.guessed);
      if (byPrice?.shape) guesses.remember(filters, page, visibleSince, byPrice.shape);
      return byPrice && { items: itemsOf(byPrice.rows), total: byPrice.total };
    },
    async columns({ filters, page, visibleSince, failing }) {
      const { values, p } = parameters();
      const where =
        `WHERE ${filterConditions(filters, p)}${visibleSince === undefined ? '' : ` AND l.last_updated >= ${p(visibleSince)}`}` +
        (failing === undefined ? '' : ` AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ${p(failing)})`);
      // Both statements go out together (the store's pipelined pool): one round trip.
      const [counted, rows] = await Promise.all([
        db.query<{ n: string }>(`SELECT count(*) AS n FROM listings l ${where}`, [...values]),
        db.query<RawListingRow>(
          `SELECT ${listingColumns(now, p)} ${where} ORDER BY l.last_updated DESC, l.id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`,
          values,
        ),
      ]);
      return { items: rows.rows.map((r) => toDiscoveryResource({ ...r, id: Number(r.id) })), total: Number(counted.rows[0]!.n) };
    },
    urlPage: (read, url) => listByUrl(db, read, url, urlScale),
  };
}

/** Migration: the list entries of the listings a lifecycle pass had already hidden move out of every list read's range. */
export const HIDDEN_LIST_ENTRIES_MIGRATION = `
  DO $$ DECLARE r RECORD; BEGIN
    FOR r IN SELECT id FROM listings WHERE search_stash IS NOT NULL LOOP
      PERFORM catalog_index_listing(r.id, '${HIDDEN_LIST_TIME}', '{}'::text[], '{}'::text[], 0);
    END LOOP;
  END $$;
  UPDATE listing_prices SET last_updated = '${HIDDEN_LIST_TIME}'
    WHERE listing_id IN (SELECT id FROM listings WHERE search_stash IS NOT NULL) AND last_updated <> '${HIDDEN_LIST_TIME}';`;

/**
 * Moves every list entry of listing `id` (its keys, with their blocks, and its price rows) to `lastUpdated`, inside the
 * caller's transaction: out of every list read's range when a lifecycle pass hides it (../lifecycle.ts
 * HIDDEN_LIST_TIME), back to its row's time when it is put back (sqlite/list-index.ts moveListEntries).
 */
export async function moveListEntries(db: Db, id: number | string, lastUpdated: string): Promise<void> {
  await Promise.all([
    db.query("SELECT catalog_index_listing($1, $2, '{}'::text[], '{}'::text[], 0)", [id, lastUpdated]),
    db.query('UPDATE listing_prices SET last_updated = $2 WHERE listing_id = $1 AND last_updated <> $2', [id, lastUpdated]),
  ]);
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
  const others = read.filters;
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
  ${bulkBlocksSql(`kind IN (${ASSET_COMBINATION_KINDS})`)};
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
