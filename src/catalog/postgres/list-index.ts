/**
 * The Postgres store's statements for the list engine (../list-engine.ts ListIndex; sqlite/selective-list.ts answers
 * the same on SQLite): the counts (one round trip with a priced page's counts and its guessed page), a page walked over
 * a list key's entries, and the pages of the filters that select few listings (`resource`, `toolName`, `url`); and the
 * list index's migrations.
 */
import {
  acceptedEntryExists,
  filterConditions,
  heldFiltersSql,
  pageListingsStatement,
  parameters,
  postgresSql,
  queryGeneric,
  readPage,
  type Db,
  type RawListingRow,
} from './queries.ts';
import { listingColumns } from './quality.ts';
import { ASSET_COMBINATION_KINDS as KINDS, filterKeys, needsAcceptsCondition, toDiscoveryResource, type ListingRow } from '../listing.ts';
import { priceFilter } from '../price.ts';
import { asciiLower, asciiLowerSql, urlPageIds, type UrlScale } from '../url-filter.ts';
import { SUFFIX_ROWS_PER_MATCH, suffixListingsSql, suffixMatchesSql, suffixRange } from './url-suffixes.ts';
import type { DiscoveryResource, ListPageRead } from '../types.ts';
import { bulkBlocksSql, hiddenByAgeSql, type KeyedRead, type ListIndex } from '../list-engine.ts';
import { runAsync as runStatements } from '../statements.ts';
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
    heldFiltersSql(p, 'k.listing_id', others, accepts && acceptedEntryExists(accepts, p, 'k.listing_id'), failing);
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
           ${failingCut} IS NOT NULL AND EXISTS (SELECT 1 FROM listings WHERE liveness_failing_since < ${failingCut}) AS failing,
           CASE WHEN ${agedCut} IS NOT NULL THEN (${hiddenByAgeSql('k.kind', 'k.value', agedCut)}) END AS aged
         FROM unnest(${q.p(keys.map((k) => k.kind))}::text[], ${q.p(keys.map((k) => k.value))}::text[]) AS k(kind, value)
         CROSS JOIN (${priced ? priceCountsSql(filters, q.p, visibleSince, failingBefore, page.offset + page.limit) : 'SELECT'}) pc`;
      // Run with its generic plan, planned once per connection (planned on every page, about 0.4 ms at 100k); its hidden
      // counts are EXECUTEd, planned with their values whatever the setting (docs/BENCHMARKS.md "Filter combinations").
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
    /** One key alone, from an offset, is planned once per connection (queryGeneric): its shape fixes its plan. */
    async keyPage(read, page, from) {
      const params = parameters();
      const { p } = params;
      const bound = from ? ` AND (k.last_updated, k.listing_id) <= (${p(from.lastUpdated)}, ${p(from.listingId)})` : '';
      const pageSql = `SELECT k.listing_id AS id, k.last_updated ${keyedFrom(p, read)}${bound}
        ORDER BY k.last_updated DESC, k.listing_id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
      const generic = read.others.length === 0 && !read.accepts && read.failing === undefined && !from;
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

/**
 * A `url` page (../url-filter.ts urlPageIds, as sqlite/selective-list.ts reads it): the listings the URL suffixes name
 * (url-suffixes.ts), each checked on its entries of the other filters' list keys and ordered by them (exact); or a walk
 * of the first entries of the other filters' rarest list key in page order, each checked against the suffixes' matches
 * when they named every one (no row read), else on its listing's URL. Each statement reads the page's listings along,
 * and the matches' statement the exact page when it finds few (one round trip for a page of a rare substring, two for
 * a common one's).
 */
async function listByUrl(
  db: Db,
  read: ListPageRead,
  url: string,
  scale: UrlScale,
): Promise<{ items: DiscoveryResource[]; total: number; partialResults: boolean }> {
  const { page, now, visibleSince, failing } = read;
  const others = read.filters;
  const keys = filterKeys(others);
  const accepts = (p: (value: unknown) => string) =>
    needsAcceptsCondition(others) ? acceptedEntryExists(others, p, 'k.listing_id', { fence: true }) : undefined;
  const order = 'ORDER BY k.last_updated DESC, k.listing_id DESC';
  // Of the matches `ids` (an SQL bigint[]), those the other filters keep, in page order: each match's entry of the first
  // key (a primary-key lookup per match, fenced: the planner would otherwise hash every entry of the key), its age, the
  // other keys', the price and the failing listings checked on it. The age is checked past the fence: inside, the generic
  // plan read each match from the key's page-order index, every visible entry of the key per match (610 ms for 248).
  const exactSql = (p: (value: unknown) => string, ids: string) => {
    const [first, ...rest] = keys;
    // Without other keys (`all`, every listing's) each match's age is its listing's, read in one scan of the listings'
    // primary key for all of them, where a lookup of each one's `all` entry took longer (docs/BENCHMARKS.md "Filter
    // combinations"). That key's primary key asked for all of them at once was read from its page-order index instead.
    const matchesKey =
      first!.kind === 'all'
        ? `SELECT l.id AS listing_id, l.last_updated FROM listings l WHERE l.id = ANY(${ids}) OFFSET 0`
        : `SELECT k.listing_id, k.last_updated FROM unnest(${ids}) AS j(id) CROSS JOIN LATERAL (
            SELECT k.listing_id, k.last_updated FROM listing_keys k
            WHERE k.kind = ${p(first!.kind)} AND k.value = ${p(first!.value)} AND k.listing_id = j.id OFFSET 0
          ) k`;
    return `ARRAY(SELECT k.listing_id FROM (${matchesKey}) k
      WHERE TRUE${visibleAfter(p, visibleSince)}${heldFiltersSql(p, 'k.listing_id', rest, accepts(p), failing, true)} ${order})`;
  };
  // The page's listings among `ids` (an SQL bigint[] in page order), a row each, or one row of nulls when there are none.
  const pageSql = (p: (value: unknown) => string, ids: string) =>
    `LEFT JOIN LATERAL (SELECT ${listingColumns(now, p)} WHERE l.id = ANY((${ids})[${p(Math.min(page.offset + 1, INT_MAX))}::int:${p(
      Math.min(page.offset + page.limit, INT_MAX),
    )}::int])) x ON true`;
  let pageRows: UrlPageRow[] = [];
  let exact: number[] | undefined;
  const { ids, partialResults } = await urlPageIds(
    {
      matches: async (cap) => {
        for (let rows = Math.max(1, (cap + 1) * (scale.urlSuffixRowsPerMatch ?? SUFFIX_ROWS_PER_MATCH)); ; rows *= 8) {
          const { values, p } = parameters();
          const found = await queryGeneric<UrlPageRow & { whole: boolean; matched: string[]; exact: string[] | null }>(
            db,
            'url',
            `WITH ${suffixMatchesSql(url, rows, p)},
               exact AS MATERIALIZED (SELECT CASE WHEN f.whole AND cardinality(f.ids) <= ${p(cap)} THEN ${exactSql(p, 'f.ids')} END AS ids FROM found f)
             SELECT f.whole, f.ids AS matched, e.ids AS exact, x.* FROM found f CROSS JOIN exact e ${pageSql(p, 'e.ids')}`,
            values,
          );
          const { whole, matched, exact: few } = found.rows[0]!;
          if (whole || matched.length > cap) {
            [pageRows, exact] = [found.rows, few?.map(Number)];
            return { ids: matched.map(Number), every: whole };
          }
        }
      },
      // Read with the matches: at most `cap` matches were the whole range, so the statement above found the exact page.
      exact: () => exact!,
      walk: async (budget, want, matched) => {
        const { values, p } = parameters();
        // The walked key: the other filters' rarest, a tie in filterKeys' order (listing.ts byFewestListings).
        const walkKey = `SELECT k.kind, k.value FROM unnest(${p(keys.map((k) => k.kind))}::text[], ${p(keys.map((k) => k.value))}::text[]) WITH ORDINALITY AS k(kind, value, at)
          ORDER BY coalesce((SELECT c.n FROM listing_counts c WHERE c.kind = k.kind AND c.value = k.value), 0), k.at LIMIT 1`;
        const entries = () =>
          `listing_keys k WHERE k.kind = (SELECT kind FROM walk_key) AND k.value = (SELECT value FROM walk_key)${visibleAfter(p, visibleSince)} ${order}`;
        const spelled = () =>
          `strpos((SELECT ${asciiLowerSql('l.resource')} FROM listings l WHERE l.id = k.listing_id), ${p(asciiLower(url))}) > 0`;
        // Past its first WALK_ROWS_SPELLED entries a walk that has not found its matches checks the rest against the
        // listings its suffixes' range names (hashed once, read only then), where it read each walked listing's row: a
        // substring the newest listings lack read the rows of every walked listing, the walk's whole budget.
        const holds = matched
          ? `k.listing_id = ANY(${p(matched)}::bigint[])`
          : `CASE WHEN k.n <= ${scale.urlWalkRowsSpelled ?? WALK_ROWS_SPELLED} THEN ${spelled()} ELSE k.listing_id IN (${suffixListingsSql(url, p)})${
              suffixRange(asciiLower(url)).short ? '' : ` AND ${spelled()}`
            } END`;
        // Where the other filters are one key, every walked entry holds it.
        const held = keys.length === 1 ? [] : keys;
        // Planned with its values where it checks the matches' ids, so their list is hashed (a generic plan compares each
        // entry with every id: a parameter is no constant; a semi-join to them hashed the key's entries: 140 ms); else once
        // per connection.
        type WalkRow = UrlPageRow & { walked: string[]; beyond: boolean };
        const query = (text: string, values: unknown[]) =>
          matched ? db.query<WalkRow>(text, values) : queryGeneric<WalkRow>(db, 'url', text, values);
        // Whether the key has entries past the budget is read (the budget's entries again) only when the walk found fewer
        // than `want`: a walk that found them is partial either way (docs/BENCHMARKS.md "Filter combinations").
        const found = await query(
          `WITH walk_key AS MATERIALIZED (${walkKey}),
             walked AS MATERIALIZED (SELECT ARRAY(
               SELECT k.listing_id FROM (SELECT k.listing_id, k.last_updated, row_number() OVER (${order}) AS n FROM (
                 SELECT k.listing_id, k.last_updated FROM ${entries()} LIMIT ${p(budget)}) k) k
               WHERE ${holds}${heldFiltersSql(p, 'k.listing_id', held, accepts(p), failing, true)} ${order} LIMIT ${p(want)}
             ) AS ids)
           SELECT w.ids AS walked, CASE WHEN cardinality(w.ids) < ${p(want)}::bigint THEN EXISTS (SELECT 1 FROM ${entries()} OFFSET ${p(budget)}) ELSE false END AS beyond, x.*
           FROM walked w ${pageSql(p, 'w.ids')}`,
          values,
        );
        pageRows = found.rows;
        return { ids: found.rows[0]!.walked.map(Number), beyond: found.rows[0]!.beyond };
      },
    },
    page,
    scale,
  );
  const byId = new Map(pageRows.filter((r) => r.id !== null).map((r) => [Number(r.id), r]));
  const items = ids.slice(page.offset, page.offset + page.limit).flatMap((id) => {
    const row = byId.get(id);
    return row ? [toDiscoveryResource({ ...row, id })] : [];
  });
  return { items, total: ids.length, partialResults };
}

/** The entries a `url` walk checks on their listings' URLs before it checks the suffixes' listings instead (listByUrl). */
const WALK_ROWS_SPELLED = 256;

/** The largest array subscript (an SQL int): a page starting past it is past every match (a walk keeps a few thousand). */
const INT_MAX = 2 ** 31 - 1;

/** A row of a `url` page's statement (listByUrl): one of the page's listings, or null columns when the page is empty. */
type UrlPageRow = RawListingRow | { [column in keyof RawListingRow]: null };

/** The condition (after ` AND`) that list entry `k` is not hidden by age. */
const visibleAfter = (p: (value: unknown) => string, visibleSince: string | undefined) =>
  visibleSince === undefined ? '' : ` AND k.last_updated >= ${p(visibleSince)}`;

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
