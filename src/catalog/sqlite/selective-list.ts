/**
 * The SQLite store's statements for the list engine (../list-engine.ts ListIndex): pages walked over a list key's
 * entries (keyedSql), the counts, the price index's page (price-index.ts), pages filtered by a filter that selects few
 * listings (`resource`, `toolName`: read from the listings' own columns), and by `url` alone: its trigram index when
 * at most URL_INDEX_CAP listings hold the substring, else a bounded walk in page order (../url-filter.ts,
 * docs/CATALOG.md "List"). A `url` page's other filters are read from the list keys (keyedFilter), so it reads no
 * listing's row but its page's.
 */
import type { DatabaseSync } from 'node:sqlite';
import { windowStartDay } from '../quality.ts';
import { byFewestListings, filterKeys, needsAcceptsCondition, toDiscoveryResource, type ListingRow } from '../listing.ts';
import type { DiscoveryFilters, ListPageRead, StoreListPage } from '../types.ts';
import { asciiLower, pageOf, urlPageIds, type UrlPageMatches, type UrlScale } from '../url-filter.ts';
import { heldFiltersSql, hiddenCount, listingsWith } from './list-index.ts';
import { LISTING_COLUMNS, acceptedEntrySql, filterSql, sqliteSql } from './queries.ts';
import type { SearchSource } from './search.ts';
import { urlMatchesCapped } from './url-probe.ts';
import { type KeyedRead, type ListIndex } from '../list-engine.ts';
import { runSync as runStatements } from '../statements.ts';
import { anyHiddenByFailures } from './liveness.ts';
import { listPriced } from './price-index.ts';

/** What these reads need of the store (store.ts): its cached statements and its rows by id. */
type ListSource = Pick<SearchSource, 'statement' | 'rowsById'> & { db: DatabaseSync };

/** A `url` page (../url-filter.ts urlPageIds): the index's matches (url-probe.ts), or a walk in page order (walkPageOrder). */
function listByUrl(store: ListSource, scale: UrlScale, read: ListPageRead, url: string): StoreListPage & { partialResults: boolean } {
  const { page, now } = read;
  let matched: number[] = [];
  const { ids, total, partialResults } = urlPageIds(
    {
      matches: ({ cap }) => (matched = urlMatchesCapped(store.db, url, cap + 1)).length,
      exact: () => pageOf(exactMatches(store, read, matched), page),
      walk: ({ budget, want }) => {
        const walked = walkPageOrder(store, read, url, budget, want);
        return { ...pageOf(walked.ids, page), beyond: walked.beyond };
      },
    },
    page,
    scale,
  ) as UrlPageMatches & { partialResults: boolean }; // its statements answer synchronously
  return { items: itemsOf(store, ids, now), total, partialResults };
}

/**
 * Of `ids` (every listing holding the page's `url`), those the other filters keep, each checked on its entry of the
 * other filters' rarest list key (a primary-key read of a few dozen bytes, where a listing's row holds its whole body)
 * and ordered by it.
 */
function exactMatches(store: ListSource, { filters, visibleSince, failing }: ListPageRead, ids: number[]): number[] {
  const keyed = keyedFilter(store.db, filters, visibleSince, failing);
  return (
    store
      .statement(
        `SELECT k.listing_id AS id FROM json_each(?) j CROSS JOIN listing_keys k WHERE k.listing_id = j.value AND ${keyed.sql}
         ORDER BY k.last_updated DESC, k.listing_id DESC`,
      )
      .all(JSON.stringify(ids), ...keyed.params) as Array<{ id: number }>
  ).map((r) => Number(r.id));
}

/**
 * The listings matching `url` and the other filters, in page order, walking the entries of the other filters' rarest
 * list key (byFewestListings; `all` without any) from the newest until `want` matches or `budget` listings are walked;
 * `beyond` when the key has more entries. The walk's last entry is read first, so the walk is one index range the page
 * statement stops in.
 */
function walkPageOrder(
  store: ListSource,
  { filters: others, visibleSince, failing }: ListPageRead,
  url: string,
  budget: number,
  want: number,
): { ids: number[]; beyond: boolean } {
  const counted = keysByListings(store.db, others);
  const { key } = counted[0]!;
  const order = 'ORDER BY k.last_updated DESC, k.listing_id DESC';
  // The walk's last entry (the budget-th of the key's entries not hidden by age), and whether another follows it.
  const ends = store
    .statement(
      `SELECT k.last_updated, k.listing_id FROM listing_keys k WHERE k.kind = ? AND k.value = ?${visibleSince === undefined ? '' : ' AND k.last_updated >= ?'}
       ${order} LIMIT 2 OFFSET ?`,
    )
    .all(key.kind, key.value, ...(visibleSince === undefined ? [] : [visibleSince]), budget - 1) as Array<{
    last_updated: string;
    listing_id: number;
  }>;
  const end = ends[0];
  // The walk's range starts at the newest entry and ends at `end`: its lastUpdated is the range's lower bound on the
  // index (it is at least visibleSince), so a walk that finds fewer than it wants stops there. With visibleSince as
  // that bound and `end` only a further check, such a walk would read every entry of the key.
  const keyed = keyedFilter(store.db, others, end ? end.last_updated : visibleSince, failing, counted);
  // Each walked URL is read from the trigram table's own copy (url-probe.ts), and the other filters from their list
  // keys' entries: a listing's row holds its whole body.
  const ids = (
    store
      .statement(
        `SELECT k.listing_id AS id FROM listing_keys k CROSS JOIN listing_urls_content u
         WHERE ${keyed.sql}${end ? ' AND (k.last_updated, k.listing_id) >= (?, ?)' : ''} AND u.id = k.listing_id AND instr(lower(u.c0), ?) > 0
         ${order} LIMIT ?`,
      )
      .all(...keyed.params, ...(end ? [end.last_updated, end.listing_id] : []), asciiLower(url), want) as Array<{ id: number }>
  ).map((r) => Number(r.id));
  return { ids, beyond: ends.length > 1 };
}

/** The filters' list keys with their listings, fewest first (listing.ts byFewestListings): read once per page. */
const keysByListings = (db: DatabaseSync, filters: DiscoveryFilters) =>
  byFewestListings(filterKeys(filters), (key) => listingsWith(db, key));

/** Which of `assets` some listing accepts (their list counts). */
const listedAssets = (db: DatabaseSync, assets: string[]) =>
  assets.filter((asset) => listingsWith(db, { kind: 'asset', value: asset }) > 0);

/**
 * The conditions of a keyed read (../list-engine.ts KeyedRead) on an entry `k` of `listing_keys`: the driving key's
 * entry not hidden by age, the other keys' entries, the accepted entries' terms (price), and the listings hidden by
 * failures left out.
 */
function keyedSql({ driver, others, accepts, visibleSince, failing }: KeyedRead): { sql: string; params: Array<string | number> } {
  const held = heldFiltersSql('k.listing_id', others, accepts && acceptedEntrySql(accepts, 'k.listing_id'), failing);
  const sql = 'k.kind = ? AND k.value = ?' + (visibleSince === undefined ? '' : ' AND k.last_updated >= ?') + held.sql;
  return { sql, params: [driver.kind, driver.value, ...(visibleSince === undefined ? [] : [visibleSince]), ...held.params] };
}

/**
 * The list index's read of a `url` page's other filters (maxUsdPrice already read as asset + maxAmount where it can
 * be): keyedSql with the filters' rarest key driving (`counted[0]`, byFewestListings). `counted`:
 * keysByListings(filters), passed in when the caller has read it.
 */
function keyedFilter(
  db: DatabaseSync,
  filters: DiscoveryFilters,
  visibleSince: string | undefined,
  failing: string | undefined,
  counted = keysByListings(db, filters),
): { sql: string; params: Array<string | number> } {
  const [driver, ...others] = counted.map((c) => c.key);
  return keyedSql({ driver: driver!, others, accepts: needsAcceptsCondition(filters) ? filters : undefined, visibleSince, failing });
}

/** The listings of `ids` in that order, as the list answers them. */
const itemsOf = (store: ListSource, ids: number[], now: Date) => {
  const byId = store.rowsById(ids, now);
  return ids.flatMap((id) => byId.get(id) ?? []).map((row) => toDiscoveryResource(row));
};

/**
 * The statements of a list page (../list-engine.ts listPage). A page of `resource`, `toolName` or `url` leaves out
 * listings failing their liveness checks only when some do (as the keyed pages' counts tell them): a `url` page reads
 * list entries, so only those still in the list index's range count (anyHiddenByFailures `indexed`), the others every one.
 */
export function sqliteListIndex(store: ListSource, scale: UrlScale, now: Date): ListIndex<undefined> {
  const { db } = store;
  const shown = (read: ListPageRead, indexed: boolean) => ({
    ...read,
    failing: anyHiddenByFailures(db, read.failing, indexed) ? read.failing : undefined,
  });
  return {
    listedAssets: (assets) => listedAssets(db, assets),
    counts: ({ keys, agedSince, failingBefore }) => ({
      listings: keys.map((key) => listingsWith(db, key)),
      failing: anyHiddenByFailures(db, failingBefore, true),
      aged: agedSince === undefined ? 0 : hiddenCount(db, keys[0]!, agedSince),
      price: undefined,
    }),
    keyPage(read, page, from) {
      const keyed = keyedSql(read);
      const bound = from ? ' AND (k.last_updated, k.listing_id) <= (?, ?)' : '';
      const ids = store
        .statement(
          `SELECT k.listing_id AS id FROM listing_keys k WHERE ${keyed.sql}${bound} ORDER BY k.last_updated DESC, k.listing_id DESC LIMIT ? OFFSET ?`,
        )
        .all(...keyed.params, ...(from ? [from.lastUpdated, from.listingId] : []), page.limit, page.offset) as Array<{ id: number }>;
      return itemsOf(
        store,
        ids.map((r) => Number(r.id)),
        now,
      );
    },
    countKeyed(read) {
      const keyed = keyedSql(read);
      return Number(
        (store.statement(`SELECT count(*) AS n FROM listing_keys k WHERE ${keyed.sql}`).get(...keyed.params) as { n: number }).n,
      );
    },
    sql: sqliteSql(db),
    statements: runStatements,
    priced({ filters, counted, page, visibleSince, failing }) {
      const byPrice = listPriced(db, filters, counted, page, visibleSince, failing);
      return byPrice && { items: itemsOf(store, byPrice.ids, now), total: byPrice.total };
    },
    columns(read) {
      const { visibleSince, failing } = shown(read, false);
      const { conditions, params } = filterSql(read.filters);
      params.push(...[visibleSince, failing].filter((value) => value !== undefined));
      const where =
        `WHERE ${conditions}` +
        (visibleSince === undefined ? '' : ' AND l.last_updated >= ?') +
        (failing === undefined ? '' : ' AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ?)');
      const since = windowStartDay(now);
      const rows = store
        .statement(`SELECT ${LISTING_COLUMNS} FROM listings l ${where} ORDER BY l.last_updated DESC, l.id DESC LIMIT ? OFFSET ?`)
        .all(since, since, ...params, read.page.limit, read.page.offset) as unknown as ListingRow[];
      const { n } = store.statement(`SELECT count(*) AS n FROM listings l ${where}`).get(...params) as { n: number };
      return { items: rows.map((row) => toDiscoveryResource(row)), total: Number(n) };
    },
    urlPage: (read, url) => listByUrl(store, scale, shown(read, true), url),
  };
}
