/**
 * The Postgres store's statements for the list engine (../list-engine.ts ListIndex; sqlite/selective-list.ts answers
 * the same on SQLite): the counts (one round trip with a priced page's counts and its guessed page), a page walked over
 * a list key's entries, and the pages of the filters that select few listings (`resource`, `toolName`, `url`).
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
import { filterKeys, needsAcceptsCondition, toDiscoveryResource, type ListingRow } from '../listing.ts';
import { priceFilter } from '../price.ts';
import { urlPageIds, type UrlScale } from '../url-filter.ts';
import { SUFFIX_ROWS_PER_MATCH, WALK_ROWS_SPELLED, suffixPageSql } from './url-suffixes.ts';
import type { DiscoveryResource, ListPageRead } from '../types.ts';
import { hiddenByAgeSql, type KeyedRead, type ListIndex } from '../list-engine.ts';
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
