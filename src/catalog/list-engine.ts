/**
 * The list engine (openapi.yaml `GET /discovery/resources`, docs/CATALOG.md "List"), written once for both stores as
 * the search and price engines are (steps.ts): it decides which index drives a page (a selective filter's, the price
 * index's, or the filters' rarest list key's entries in page order), how a single key's total is counted (its blocks
 * less its hidden entries) and when a deep offset starts from the block holding it; each store answers a handful of
 * statements (ListIndex: sqlite/selective-list.ts, postgres/list-index.ts) over the list index
 * (sqlite/list-index.ts explains `listing_keys` and its blocks).
 */
import { DEEP_OFFSET, NEWEST_BLOCK, byFewestListings, filterKeys, needsAcceptsCondition, type ListingKey } from './listing.ts';
import { priceFilter, usdAssetsToCheck, usdPriceAsAmount, type PricedListAsk } from './price.ts';
import { listed } from './query-paths.ts';
import { hiddenByFailuresCount } from './liveness.ts';
import { stepsOf, type Steps } from './steps.ts';
import { withoutUrl } from './url-filter.ts';
import { rows, type Engine, type Sql } from './statements.ts';
import type { Awaitable, DiscoveryFilters, ListPageRead, StoreListPage } from './types.ts';

/** A position in a list key's page order (lastUpdated desc, listing desc). */
export interface SortKey {
  lastUpdated: string;
  listingId: number;
}

/** A page walked over the entries of one list key (`driver`), each checked against the rest of the filters. */
export interface KeyedRead {
  driver: ListingKey;
  /** The other keys: each looked up per entry. */
  others: ListingKey[];
  /** The filters, when one accepted entry must meet a price bound (needsAcceptsCondition): checked per entry. */
  accepts: DiscoveryFilters | undefined;
  visibleSince: string | undefined;
  /** Listings failing their liveness checks since before it are left out. */
  failing: string | undefined;
}

/** What the store reads before it reads a keyed page. */
export interface ListCountsAsk {
  filters: DiscoveryFilters;
  keys: ListingKey[];
  page: { limit: number; offset: number };
  /** A single key's entries hidden by age are counted (the key alone is the filter and some are hidden). */
  agedSince: string | undefined;
  visibleSince: string | undefined;
  failingBefore: string | undefined;
}

/** The counts of ListCountsAsk; `P`: what the store's priced page reads with them (the engine only hands it back). */
export interface ListCounts<P> {
  /** Each key's listings (its list count), in the order of `keys`. */
  listings: number[];
  /** Whether some listing is hidden by failing its liveness checks since before `failingBefore`. */
  failing: boolean;
  /** The single key's entries hidden by age (0 unless asked). */
  aged: number;
  price: P;
}

/** The statements a store answers for listPage; `P`: ListCounts's. */
export interface ListIndex<P = unknown> {
  /** Which of `assets` some listing accepts (their list counts). */
  listedAssets(assets: string[]): Awaitable<string[]>;
  counts(ask: ListCountsAsk): Awaitable<ListCounts<P>>;
  /** The page of a keyed read from `page.offset` in page order, from `from` when given (a block's start). */
  keyPage(read: KeyedRead, page: { limit: number; offset: number }, from?: SortKey): Awaitable<StoreListPage['items']>;
  /** How many entries a keyed read keeps. */
  countKeyed(read: KeyedRead): Awaitable<number>;
  /** The store's statements written once (statements.ts: seekOffset, liveness.ts hiddenByFailuresCount), and their runner. */
  sql: Sql;
  statements<T>(engine: Engine<T>): Awaitable<T>;
  /** The price index's page (price.ts pricePage), or undefined when another key holds fewer listings than its range. */
  priced(ask: PricedListAsk & { price: P }): Awaitable<{ items: StoreListPage['items']; total: number } | undefined>;
  /** `resource` or `toolName`: a page of the listings their own indexes select, and how many they are. */
  columns(read: ListPageRead): Awaitable<StoreListPage>;
  /** `url` without `resource` or `toolName` (url-filter.ts urlPageIds); `read.filters`: the others, as withUsdPriceAsAmount reads them. */
  urlPage(read: ListPageRead, url: string): Awaitable<StoreListPage & { partialResults: boolean }>;
}

/** Where a deep page starts: its block's start (none for the newest block) and how many entries to skip from there. */
export type Seek = { from?: SortKey; skip: number };

/**
 * Where the entry at `offset` of a list key's page order is (null past the last entry): the block whose running sum of
 * counts in page order first passes `offset`, summed by the store in one statement.
 */
export function* seekOffset(sql: Sql, key: ListingKey, offset: number): Engine<Seek | null> {
  type Block = { start_updated: string; start_id: number | string; n: number | string; upto: number | string };
  const [block] = yield* rows<Block>(
    sql,
    `SELECT start_updated, start_id, n, upto FROM (
       SELECT start_updated, start_id, n, sum(n) OVER (ORDER BY start_updated DESC, start_id DESC) AS upto
       FROM listing_key_blocks WHERE kind = ${sql.p(1)} AND value = ${sql.p(2)}
     ) b WHERE upto > ${sql.p(3)} ORDER BY start_updated DESC, start_id DESC LIMIT 1`,
    [key.kind, key.value, offset],
  );
  if (!block) return null;
  const skip = offset - (Number(block.upto) - Number(block.n));
  return block.start_updated === NEWEST_BLOCK
    ? { skip }
    : { from: { lastUpdated: block.start_updated, listingId: Number(block.start_id) }, skip };
}

/**
 * How many entries of a list key were last updated before `since` (hidden by LISTING_TTL_DAYS), as SQL both dialects
 * run over `kind`, `value` and `since` (column references or parameters), so a statement that already runs can carry
 * it (postgres/list-index.ts reads it with the list counts: one round trip). The blocks that start before `since` hold
 * only such entries and are summed; the block holding `since` holds fewer than 2 × BLOCK_SIZE, counted in the index
 * from the newest start below `since` (with none, from ('', 0), below every entry). So the count costs about the
 * number of old blocks, not of old entries.
 */
export const hiddenByAgeSql = (kind: string, value: string, since: string): string =>
  `SELECT below.n + (
     SELECT count(*) FROM listing_keys x
     WHERE x.kind = ${kind} AND x.value = ${value} AND x.last_updated < ${since}
       AND (x.last_updated, x.listing_id) > (coalesce(newest.start_updated, ''), coalesce(newest.start_id, 0))
   ) AS n
   FROM (SELECT coalesce(sum(n), 0) AS n FROM listing_key_blocks WHERE kind = ${kind} AND value = ${value} AND start_updated < ${since}) below
   LEFT JOIN (
     SELECT start_updated, start_id FROM listing_key_blocks WHERE kind = ${kind} AND value = ${value} AND start_updated < ${since}
     ORDER BY start_updated DESC, start_id DESC LIMIT 1
   ) newest ON true`;

/** `filters` with maxUsdPrice read as asset + maxAmount when one USD-pegged asset can match (price.ts usdPriceAsAmount). */
export function* withUsdPriceAsAmount(filters: DiscoveryFilters): Steps<Pick<ListIndex, 'listedAssets'>, DiscoveryFilters> {
  if (filters.maxUsdPrice === undefined) return filters;
  const usd = usdAssetsToCheck(filters);
  const listedAssets = usd.length === 0 ? [] : yield* stepsOf<Pick<ListIndex, 'listedAssets'>>().run((index) => index.listedAssets(usd));
  return usdPriceAsAmount(filters, new Set(listedAssets));
}

/** The age cut of a read given none: just above the hidden listings' entries (lifecycle.ts HIDDEN_LIST_TIME). */
const LISTED_SINCE = '0001-01-01T00:00:00.000Z';

/**
 * A list page: newest first (lastUpdated desc, then id desc), offset paging, exact total. `resource` and `toolName`
 * select a few listings through their own indexes, `url` alone its own page (url-filter.ts). Otherwise asset +
 * maxAmount's price index drives the page unless another key holds fewer listings; else the key with the fewest
 * listings drives a walk of its entries, any other filter a lookup per entry. One key and nothing else (single): its
 * count less its hidden entries is the total, and its blocks find a deep offset. Listings failing their liveness
 * checks past the grace period are left out (docs/CATALOG.md "Liveness"): those a lifecycle pass hid by their list
 * entries' time (lifecycle.ts HIDDEN_LIST_TIME), the others by their ids.
 */
export function* listPage<P>(q: Omit<ListPageRead, 'failing'> & { failingBefore: string | undefined }): Steps<ListIndex<P>, StoreListPage> {
  const { run, together } = stepsOf<ListIndex<P>>();
  const { page, now, failingBefore } = q;
  // Always an age cut: the entries of listings a lifecycle pass hid wait below every listing's time.
  const visibleSince = q.visibleSince ?? LISTED_SINCE;
  if (q.filters.resource !== undefined || q.filters.toolName !== undefined) {
    const read: ListPageRead = { filters: q.filters, page, now, visibleSince, failing: failingBefore };
    const columns = yield* run((index) => index.columns(read));
    return listed('columns', q.filters.url === undefined ? columns : { ...columns, partialResults: false });
  }
  if (q.filters.url !== undefined) {
    const others = yield* withUsdPriceAsAmount(withoutUrl(q.filters));
    return yield* run((index) => index.urlPage({ filters: others, page, now, visibleSince, failing: failingBefore }, q.filters.url!));
  }
  const filters = yield* withUsdPriceAsAmount(q.filters);
  const keys = filterKeys(filters);
  const single = keys.length === 1 && !needsAcceptsCondition(filters);
  const lone: KeyedRead = { driver: keys[0]!, others: [], accepts: undefined, visibleSince, failing: undefined };
  // One key's page above the deep offsets is the page unless a listing fails its liveness checks (the counts tell): it
  // goes with the counts (one round trip on Postgres) and is taken when none fails.
  const ask: ListCountsAsk = { filters, keys, page, agedSince: single ? visibleSince : undefined, visibleSince, failingBefore };
  const [counts, lonePage] = yield* together(
    (index) => index.counts(ask),
    (index) => (single && page.offset < DEEP_OFFSET ? index.keyPage(lone, page) : undefined),
  );
  const failing = counts.failing ? failingBefore : undefined;
  if (lonePage && failing === undefined) return listed('keys', { items: lonePage, total: counts.listings[0]! - counts.aged });
  const counted = byFewestListings(keys, (key) => counts.listings[keys.indexOf(key)]!);
  if (priceFilter(filters)) {
    const byPrice = yield* run((index) => index.priced({ filters, counted, price: counts.price, page, visibleSince, failing }));
    if (byPrice) return byPrice;
  }
  const [driver, ...others] = counted;
  const read: KeyedRead = {
    driver: driver!.key,
    others: others.map((o) => o.key),
    accepts: needsAcceptsCondition(filters) ? filters : undefined,
    visibleSince,
    failing,
  };
  if (!single) {
    listed('keys');
    const [total, items] = yield* together(
      (index) => index.countKeyed(read),
      (index) => index.keyPage(read, page),
    );
    return { items, total };
  }
  // The blocks count every entry: with listings hidden by failures among them, a deep page is a plain offset.
  if (failing !== undefined || page.offset < DEEP_OFFSET) {
    listed('keys');
    const [hidden, items] = yield* together(
      (index) => (failing === undefined ? 0 : index.statements(hiddenByFailuresCount(index.sql, driver!.key, failing, visibleSince))),
      (index) => index.keyPage(read, page),
    );
    return { items, total: driver!.n - counts.aged - hidden };
  }
  listed('keys_deep');
  const seek = yield* run((index) => index.statements(seekOffset(index.sql, driver!.key, page.offset)));
  const items = seek ? yield* run((index) => index.keyPage(read, { limit: page.limit, offset: seek.skip }, seek.from)) : [];
  return { items, total: driver!.n - counts.aged };
}
