/**
 * The price filters' keys and page plans, shared by both stores' price indexes (sqlite/price-index.ts explains the
 * index). A price key is the digit count zero-padded to nine digits, then the digits, so byte order is numeric order.
 */
import { amountKey, usdMaxAmounts } from '../filters.ts';
import type { Awaitable, DiscoveryFilters } from './types.ts';
import { listed } from './query-paths.ts';
import { entryFilterKey, listKeyHeld, type ListingKey } from './listing.ts';
import { stepsOf, type Steps } from './steps.ts';

/** Undefined when `amount` is not a canonical count of base units. */
export function priceKey(amount: unknown): string | undefined {
  const key = amountKey(amount);
  return key === undefined ? undefined : String(key.length).padStart(9, '0') + key;
}

/** A price key's bucket is its first this many characters: the digit count and three leading digits. */
export const PRICE_BUCKET = 12;

/**
 * A price key's first PRICE_DIGITS characters are its digit count, its first PRICE_CLASS its class
 * (the digit count and the leading digit). Every key of a shorter digit count than M's, or of a
 * lower class in M's digit count, is below M; a key of M's own class may be on either side.
 */
export const PRICE_DIGITS = 9;
export const PRICE_CLASS = 10;

/**
 * Marks a price index key that is not a bare asset (priceIndexKey). No real asset starts with it;
 * one that does is stored marked too, so a bare asset can never spell another key.
 */
const SCOPED = '\u0001';

/** As SQLite's length() and PostgreSQL's char_length() count. */
const codePoints = (s: string) => [...s].length;

/**
 * The price index's key (listing_prices' `asset` column) of an asset alone or scoped to a network and/or scheme, so
 * each of those combinations with `maxAmount` is one index range (docs/CATALOG.md "List"). Each scope value is
 * written with its length, so no two (scope, asset) pairs, and no bare asset, share a key.
 */
export function priceIndexKey(asset: string, network?: string, scheme?: string): string {
  const scoped = (value: string) => `${codePoints(value)}:${value}`;
  if (scheme !== undefined && network !== undefined) return `${SCOPED}p${scoped(scheme)}${scoped(network)}${asset}`;
  if (scheme !== undefined) return `${SCOPED}s${scoped(scheme)}${asset}`;
  if (network !== undefined) return `${SCOPED}n${scoped(network)}${asset}`;
  return asset.startsWith(SCOPED) ? `${SCOPED}a${asset}` : asset;
}

export function priceIndexKeys(terms: { asset: unknown; network: unknown; scheme: unknown }): string[] {
  const { asset, network, scheme } = terms;
  if (typeof asset !== 'string') return [];
  const keys = [priceIndexKey(asset)];
  if (typeof network === 'string') keys.push(priceIndexKey(asset, network));
  if (typeof scheme === 'string') keys.push(priceIndexKey(asset, undefined, scheme));
  if (typeof network === 'string' && typeof scheme === 'string') keys.push(priceIndexKey(asset, network, scheme));
  return keys;
}

/** asset + maxAmount (with or without network and scheme) as one price index range. */
export function priceFilter(filters: DiscoveryFilters): { key: string; asset: string; max: string } | undefined {
  // With maxUsdPrice too, one accepted entry must meet both bounds: the accepted-entry condition (acceptedEntryArms).
  if (filters.asset === undefined || filters.maxAmount === undefined || filters.maxUsdPrice !== undefined) return undefined;
  const max = priceKey(filters.maxAmount);
  return max === undefined ? undefined : { key: priceIndexKey(filters.asset, filters.network, filters.scheme), asset: filters.asset, max };
}

/**
 * One way a listing's accepted entries meet the filters' scheme, network, asset, maxAmount and maxUsdPrice: it holds
 * list key `key` (listing.ts entryFilterKey: one entry under that scheme, on that network, in that asset), and with
 * `price`, its smallest amount under the price index key `price.key` is at most `price.max` (a price key).
 */
export interface AcceptedEntryArm {
  key: ListingKey;
  price?: { key: string; max: string };
}

/**
 * The filters' accepted-entry condition (one entry must meet all of them) as arms, any of which is enough; none: no
 * listing matches. Exact: an entry matching scheme, network and asset with an amount at most every bound given exists
 * exactly when the smallest amount among the entries of that key (priceIndexKey) is at most the least bound, and an
 * entry without a whole amount or a string asset meets no bound, as it has no price index row. maxUsdPrice is one arm
 * per USD-pegged asset (`asset`, when given, keeps only its own), bounded by its price in that asset and by maxAmount.
 */
export function acceptedEntryArms(filters: DiscoveryFilters): AcceptedEntryArm[] {
  const { scheme, network, asset, maxAmount, maxUsdPrice } = filters;
  const bound = maxAmount === undefined ? undefined : priceKey(maxAmount);
  if (maxAmount !== undefined && (bound === undefined || asset === undefined)) return [];
  const arm = (entryAsset: string | undefined, max: string | undefined): AcceptedEntryArm[] => {
    const key = entryFilterKey(scheme, network, entryAsset);
    if (key === undefined) return [];
    return [
      max === undefined || entryAsset === undefined ? { key } : { key, price: { key: priceIndexKey(entryAsset, network, scheme), max } },
    ];
  };
  if (maxUsdPrice === undefined) return arm(asset, bound);
  return usdMaxAmounts(maxUsdPrice)
    .filter((usd) => asset === undefined || usd.asset === asset)
    .flatMap((usd) => {
      const max = priceKey(usd.maxAmount)!;
      return arm(usd.asset, bound !== undefined && bound < max ? bound : max);
    });
}

/**
 * The price index ranges (a key, a maximum price key) whose listings hold every listing meeting the filters' price
 * bounds: one per arm of acceptedEntryArms. Undefined when the filters bound no price (an arm without a bound passes
 * listings that have no price row); none when no listing can match.
 */
export function priceRanges(filters: DiscoveryFilters): Array<{ key: string; max: string }> | undefined {
  if (filters.maxAmount === undefined && filters.maxUsdPrice === undefined) return undefined;
  const arms = acceptedEntryArms(filters);
  return arms.every((arm) => arm.price !== undefined) ? arms.map((arm) => arm.price!) : undefined;
}

/**
 * The most price index entries a search reads to name the listings its price bounds let through (TextIndex
 * pricedListings): past it the bounds are checked on each ranked row alone. Reading the ranges costs about their
 * entries on either store, paid by every search with a price bound (docs/BENCHMARKS.md "Filter combinations").
 */
export const PRICED_LISTINGS_CAP = 2_000;

/** How a store's dialect writes acceptedEntryCondition: `p` binds a value and returns its placeholder. */
export interface AcceptedEntryDialect {
  p: (value: unknown) => string;
  /** The price column as compared (SQLite `+pr.price`: the row its primary key finds is checked, not a range read per listing). */
  price: string;
  /** What ends each lookup (Postgres's ` OFFSET 0`, one lookup per row: postgres/queries.ts heldFiltersSql), or ''. */
  fence: string;
}

/**
 * The condition that listing `listing` (an SQL expression) has one accepted entry meeting the filters, for both
 * stores: any arm of acceptedEntryArms, its list key and, with an amount, its price index row. As of a sequence number
 * (a search cursor's snapshot) the list key must have been added by then (listing_keys keeps the sequence that added
 * each key), and the amount is the listing's smallest now: an entry added since, cheaper than the others of its key,
 * can let a listing in (never out). Values are bound in the order they stand in the text.
 */
export function acceptedEntryCondition(
  filters: DiscoveryFilters,
  listing: string,
  dialect: AcceptedEntryDialect,
  asOfSeq?: number,
): string {
  const { p, price: priceColumn, fence } = dialect;
  const arms = acceptedEntryArms(filters).map(({ key, price }) => {
    const parts: string[] = [];
    if (price === undefined || asOfSeq !== undefined) parts.push(listKeyHeld(p, key, listing, { asOfSeq, fence }));
    if (price !== undefined)
      parts.push(
        `EXISTS (SELECT 1 FROM listing_prices pr WHERE pr.listing_id = ${listing} AND pr.asset = ${p(price.key)} AND ${priceColumn} <= ${p(price.max)}${fence})`,
      );
    return parts.join(' AND ');
  });
  return arms.length === 0 ? 'FALSE' : arms.length === 1 ? arms[0]! : `(${arms.join(' OR ')})`;
}

/**
 * The list keys (listing.ts filterKeys) a price filter's index range answers for itself: its
 * asset, its network, its scheme (alone or paired with the network) and its type; any other key
 * filter is checked per row.
 */
const RANGE_KINDS = new Set(['asset', 'network', 'scheme', 'scheme+network', 'network+asset', 'scheme+asset', 'scheme+network+asset']);
export const inPriceRange = (kind: string) =>
  RANGE_KINDS.has(kind) || kind === 'type' || kind === 'type+asset' || kind === 'type+network+asset';

/**
 * How many listings an untyped price range holds at any price, for planning (pricePage): at
 * most the fewest of its asset's, network's, scheme's and scheme+network pair's listings (their
 * list counts, `counted`).
 */
export const untypedRangeListings = (counted: Array<{ key: { kind: string }; n: number }>) =>
  Math.min(...counted.filter((c) => RANGE_KINDS.has(c.key.kind)).map((c) => c.n));

/**
 * The counts table (`price_counts`, one per store) counts the listings of each price index key and
 * type per price key prefix: `level` is the prefix's length, PRICE_CLASS or PRICE_BUCKET, or 0 for
 * the whole key (a price point). The listings at most M are the classes below M's class, M's class's
 * buckets below M's bucket and M's bucket's points at most M: a sum over at most a few hundred rows.
 */
export const PRICE_LEVELS = [0, PRICE_CLASS, PRICE_BUCKET] as const;

export const pricePrefix = (price: string, level: number) => (level === 0 ? price : price.slice(0, level));

/** The counts table's rows of `table` (any rows with `asset`, `price` and `type`), one per level, in SQL both stores run. */
export const priceLevelRowsSql = (table: string, extra = '') =>
  `SELECT p.asset AS asset, l.level AS level, CASE WHEN l.level = 0 THEN p.price ELSE substr(p.price, 1, l.level) END AS price,
     p.type AS type${extra} FROM (${PRICE_LEVELS.map((level) => `SELECT ${level} AS level`).join(' UNION ALL ')}) l CROSS JOIN ${table} p`;

/**
 * How a price page is read (docs/CATALOG.md "List", price filters): `by-time` walks the range in page order skipping
 * dearer entries, `by-price` sorts every match, `by-classes` merges the digit counts and classes below max (each
 * range already in page order, so no sort) with max's own class's matches. `by-classes-max-by-price` forces max's
 * class by price, which a small catalog's counts seldom choose (the tests use it).
 */
export type PricePagePlan = 'by-time' | 'by-price' | 'by-classes' | 'by-classes-max-by-price';

/** One range of a by-classes page, already in page order (or, `max-by-price`, max's class's matches to sort). */
export interface ClassArm {
  kind: 'digits' | 'class' | 'max-by-time' | 'max-by-price';
  type: string;
  /** The digit count or class (a price key prefix). */
  prefix: string;
}

/**
 * The plans' costs are counted in index entries walked; a match read by price and sorted costs this
 * many (measured: docs/BENCHMARKS.md "Catalog price filters").
 */
export const SORTED_MATCH_COST = 6;

/**
 * What merging costs per row and range, and planning per page and range, in walked entries. On
 * Postgres a by-classes page costs planning a union of ranges and, on a shallow page, one more round
 * trip for the class ranges, hence its large fixed cost (docs/BENCHMARKS.md "Catalog price filters").
 */
export interface ClassCosts {
  perRow: number;
  perRowPerRange: number;
  plan: number;
  planPerRange: number;
}
export const SQLITE_CLASS_COSTS: ClassCosts = { perRow: 1, perRowPerRange: 1 / 3, plan: 200, planPerRange: 0 };
export const POSTGRES_CLASS_COSTS: ClassCosts = { perRow: 1, perRowPerRange: 0, plan: 20_000, planPerRange: 1_000 };

export interface PriceRange {
  key: string;
  type: string | undefined;
  max: string;
}

/**
 * A by-classes page's ranges as a store reads them from its counts: each digit count below max's
 * and each class below max's in its digit count holding entries (`digits`, `class`), the types
 * with listings when the range has none (`type`), and how many entries max's class holds (`size`).
 */
export type ClassRanges = Array<[kind: string, value: string]>;

/** A price range's counts (the counts table's sums) and what a store reads with them. */
export interface PriceCounts {
  /** Matches below max's class, and within it at most max. */
  below: number;
  within: number;
  /** A typed range's listings at any price (an untyped one's: untypedRangeListings). */
  listings: number;
  /** The listed asset's entries hidden by age (at least the range's), when some are hidden by age and no other key filter is given. */
  assetAged?: number | undefined;
  /** The class ranges, when read with the counts (else `classRanges` reads them). */
  classRanges?: ClassRanges | undefined;
}

export interface PriceRead extends PriceRange {
  others: ListingKey[];
  visibleSince: string | undefined;
  failing: string | undefined;
}

export interface PricedPageShape {
  plan: PricePagePlan;
  failing: string | undefined;
  arms: ClassArm[];
}

/** The statements a store answers for pricePage; `R` is a page's row. */
export interface PriceIndex<R> {
  /** The matches of the range that pass the other filters and are not hidden: counted. */
  countMatches(read: PriceRead): Awaitable<number>;
  /** The range's matches hidden by age or by failures (Postgres reads them with its counts). */
  hiddenMatches(read: PriceRead): Awaitable<number>;
  /** The class ranges (when the counts did not carry them). */
  classRanges(range: PriceRange): Awaitable<ClassRanges>;
  page(read: PriceRead, shape: PricedPageShape, page: { limit: number; offset: number }): Awaitable<R[]>;
}

/** A by-classes page's ranges and expected cost in index entries read. */
export function classPlan(
  ranges: ClassRanges,
  range: PriceRange,
  counts: { matches: number; belowClass: number },
  reach: number,
  costs: ClassCosts,
  maxByPrice = false,
): { arms: ClassArm[]; cost: number } {
  const types = range.type !== undefined ? [range.type] : ranges.filter(([kind]) => kind === 'type').map(([, value]) => value);
  const arms: ClassArm[] = [];
  for (const [kind, prefix] of ranges)
    if (kind === 'digits' || kind === 'class') for (const type of types) arms.push({ kind, type, prefix });
  // Max's class by time: walked down to the page's depth and at least to its next match; by price: its matches sorted.
  const inClass = counts.matches - counts.belowClass;
  const size = Number(ranges.find(([kind]) => kind === 'size')?.[1] ?? 0);
  const byTime = Math.min(size, (reach * size) / counts.matches + size / inClass);
  const byPrice = SORTED_MATCH_COST * inClass;
  const read =
    inClass <= 0
      ? undefined
      : !maxByPrice && byTime <= byPrice
        ? { kind: 'max-by-time' as const, cost: byTime }
        : { kind: 'max-by-price' as const, cost: byPrice };
  if (read) for (const type of types) arms.push({ kind: read.kind, type, prefix: range.max.slice(0, PRICE_CLASS) });
  const cost =
    reach * (costs.perRow + arms.length * costs.perRowPerRange) + (read?.cost ?? 0) + costs.plan + arms.length * costs.planPerRange;
  return { arms, cost };
}

/** `counted`: the filters' list keys with their listings, fewest first. */
export interface PricedListAsk {
  filters: DiscoveryFilters;
  counted: Array<{ key: ListingKey; n: number }>;
  page: { limit: number; offset: number };
  visibleSince: string | undefined;
  failing: string | undefined;
}

/**
 * A list page of `asset` + `maxAmount` (priceFilter), with or without `type`, `network` and `scheme`
 * (part of the index range), alone or with other key filters (checked per row), or undefined when
 * another filter holds fewer listings than the price matches (the store's list keys drive the page).
 * The page is read by the plan that reads the fewest index entries by the counts (PricePagePlan): by
 * time, (offset + limit) × the range's listings / matches; by price, every match; by classes, offset
 * + limit merged rows and max's class's share, weighed only when the other two read many more
 * entries than the page holds. `plan` forces one (the tests hold every plan to the same answers).
 * With no other key filter the total is the counts less the hidden matches, unless more of the
 * asset's entries are hidden by age than the range matches: then, as with other key filters, a count.
 */
export function* pricePage<R>(
  q: PricedListAsk & {
    counts: PriceCounts;
    /** The store's (SQLITE_CLASS_COSTS, POSTGRES_CLASS_COSTS). */
    costs: ClassCosts;
    plan?: PricePagePlan | undefined;
  },
): Steps<PriceIndex<R>, { rows: R[]; total: number; shape?: PricedPageShape } | undefined> {
  const priced = priceFilter(q.filters);
  if (!priced) return undefined;
  const { run } = stepsOf<PriceIndex<R>>();
  const { counts, page, plan, costs } = q;
  const range: PriceRange = { key: priced.key, type: q.filters.type, max: priced.max };
  const belowClass = counts.below;
  const matches = belowClass + counts.within;
  const others = q.counted.filter((c) => !inPriceRange(c.key.kind));
  if (others.some((o) => o.n < matches)) return undefined;
  const read: PriceRead = { ...range, others: others.map((o) => o.key), visibleSince: q.visibleSince, failing: q.failing };
  const total =
    others.length > 0 || (q.visibleSince !== undefined && (counts.assetAged ?? 0) > matches)
      ? yield* run((index) => index.countMatches(read))
      : matches - (yield* run((index) => index.hiddenMatches(read)));
  if (total === 0) return listed('price_empty', { rows: [], total });
  const reach = page.offset + page.limit;
  const rangeListings = range.type !== undefined ? counts.listings : untypedRangeListings(q.counted);
  // Without by-classes: by time reads reach × the range's listings / matches entries; by price sorts every match.
  const byTime = matches === 0 ? Infinity : (reach * rangeListings) / matches;
  const byPrice = SORTED_MATCH_COST * matches;
  const plain = { plan: byTime > byPrice ? ('by-price' as const) : ('by-time' as const), cost: Math.min(byTime, byPrice) };
  // By classes only when both read many more entries than the page holds.
  const weighClasses = plan?.startsWith('by-classes') || (plan === undefined && plain.cost > 2 * reach + costs.plan);
  const classes = weighClasses
    ? classPlan(
        counts.classRanges ?? (yield* run((index) => index.classRanges(range))),
        range,
        { matches, belowClass },
        reach,
        costs,
        plan === 'by-classes-max-by-price',
      )
    : undefined;
  const chosen: PricePagePlan = plan ?? (classes && classes.cost < plain.cost ? 'by-classes' : plain.plan);
  listed(chosen === 'by-time' ? 'price_by_time' : chosen === 'by-price' ? 'price_by_price' : 'price_by_classes');
  const byClasses = chosen.startsWith('by-classes');
  if (byClasses && classes!.arms.length === 0) return { rows: [], total };
  const shape: PricedPageShape = { plan: chosen, failing: q.failing, arms: byClasses ? classes!.arms : [] };
  return { rows: yield* run((index) => index.page(read, shape, page)), total, shape };
}

/**
 * The USD-pegged assets a list page's `maxUsdPrice` would have to check for listings (those the store looks up in its
 * list counts for usdPriceAsAmount): none when `asset` is given or there is no `maxUsdPrice`.
 */
export const usdAssetsToCheck = (filters: DiscoveryFilters): string[] =>
  filters.maxUsdPrice === undefined || filters.asset !== undefined ? [] : usdMaxAmounts(filters.maxUsdPrice).map((a) => a.asset);

/**
 * `maxUsdPrice` as `asset` + `maxAmount` when one USD-pegged asset can match, so the page is a range of the price index
 * instead of a lookup in it per listing of a key and USD-pegged asset: the asset asked for, if USD-pegged, or else the one
 * USD-pegged asset that any listing accepts (`listed`, from the list counts). One entry must be in that asset at most the smaller of
 * `maxAmount` and the price in its base units, which is what `maxUsdPrice` asks then. Otherwise the filters unchanged.
 */
export function usdPriceAsAmount(filters: DiscoveryFilters, listed: ReadonlySet<string>): DiscoveryFilters {
  if (filters.maxUsdPrice === undefined) return filters;
  const arms = usdMaxAmounts(filters.maxUsdPrice).filter((a) =>
    filters.asset === undefined ? listed.has(a.asset) : a.asset === filters.asset,
  );
  if (arms.length !== 1) return filters;
  const { asset, maxAmount } = arms[0]!;
  const asked = filters.maxAmount === undefined ? undefined : amountKey(filters.maxAmount);
  if (filters.maxAmount !== undefined && asked === undefined) return filters;
  const smaller = asked !== undefined && priceKey(asked)! < priceKey(maxAmount)! ? asked : maxAmount;
  return { ...filters, asset, maxAmount: smaller, maxUsdPrice: undefined };
}
