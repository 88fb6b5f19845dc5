/**
 * The price filters' keys, shared by both stores' price indexes (sqlite/price-index.ts explains
 * the index, postgres/price-index.ts keeps the same): amounts compared as price keys, the digit
 * count zero-padded to nine digits then the digits (amountKey's canonical form), so byte order is
 * numeric order.
 */
import { amountKey, usdMaxAmounts } from '../filters.ts';
import type { DiscoveryFilters } from './types.ts';
import type { ListPath } from './query-paths.ts';

/** The price key of an amount (undefined when it is not a canonical count of base units). */
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

/** A string's length in code points, as SQLite's length() and PostgreSQL's char_length() count it. */
const codePoints = (s: string) => [...s].length;

/**
 * The price index's key (listing_prices' `asset` column) of an asset alone, or of an asset on one
 * network, under one scheme, or under one scheme on one network: a listing's row under a scoped key
 * holds its smallest amount among its accepted entries in that asset with that network and/or
 * scheme, so `network` and/or `scheme` + `asset` + `maxAmount` (one accepted entry must match them
 * all) is one index range, as `asset` + `maxAmount` is (docs/CATALOG.md "List"). A scoped key is the
 * marker, a letter for its scope ('n' network, 's' scheme, 'p' scheme and network), each scope
 * value as its length in code points, ':', the value (the scheme before the network), then the
 * asset: no two (scope, asset) pairs, and no bare asset, share a key. The catalog migrations that
 * add the scoped keys build the same strings in SQL (sqlite/price-migrations.ts, and
 * postgres/price-index.ts NETWORK_PRICE_KEYS_MIGRATION and SCHEME_PRICE_KEYS_MIGRATION).
 */
export function priceIndexKey(asset: string, network?: string, scheme?: string): string {
  const scoped = (value: string) => `${codePoints(value)}:${value}`;
  if (scheme !== undefined && network !== undefined) return `${SCOPED}p${scoped(scheme)}${scoped(network)}${asset}`;
  if (scheme !== undefined) return `${SCOPED}s${scoped(scheme)}${asset}`;
  if (network !== undefined) return `${SCOPED}n${scoped(network)}${asset}`;
  return asset.startsWith(SCOPED) ? `${SCOPED}a${asset}` : asset;
}

/**
 * The price index keys one accepted entry is counted under: its asset alone, on its network, under
 * its scheme, and under its scheme on its network.
 */
export function priceIndexKeys(terms: { asset: unknown; network: unknown; scheme: unknown }): string[] {
  const { asset, network, scheme } = terms;
  if (typeof asset !== 'string') return [];
  const keys = [priceIndexKey(asset)];
  if (typeof network === 'string') keys.push(priceIndexKey(asset, network));
  if (typeof scheme === 'string') keys.push(priceIndexKey(asset, undefined, scheme));
  if (typeof network === 'string' && typeof scheme === 'string') keys.push(priceIndexKey(asset, network, scheme));
  return keys;
}

/**
 * asset + maxAmount, with or without network and scheme: the price index key, the asset and
 * maxAmount's price key.
 */
export function priceFilter(filters: DiscoveryFilters): { key: string; asset: string; max: string } | undefined {
  // With maxUsdPrice too, one accepted entry must meet both bounds: the accepted-entry condition, not the index.
  if (filters.asset === undefined || filters.maxAmount === undefined || filters.maxUsdPrice !== undefined) return undefined;
  const max = priceKey(filters.maxAmount);
  return max === undefined ? undefined : { key: priceIndexKey(filters.asset, filters.network, filters.scheme), asset: filters.asset, max };
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
 * How many listings an untyped price range holds at any price, for planning (plainPricePlan): at
 * most the fewest of its asset's, network's, scheme's and scheme+network pair's listings (their
 * list counts, `counted`).
 */
export const untypedRangeListings = (counted: Array<{ key: { kind: string }; n: number }>) =>
  Math.min(...counted.filter((c) => RANGE_KINDS.has(c.key.kind)).map((c) => c.n));

/**
 * How a price page is read: `by-time` walks the range's by-time index skipping the dearer entries,
 * `by-price` reads every match from the by-price index and sorts them, `by-classes` merges the
 * digit counts and classes below max with max's own class's matches (sqlite/price-classes.ts), read by time
 * or by price as the counts say; `by-classes-max-by-price` is by-classes with max's class read by
 * price whatever the counts say (a small catalog's counts seldom choose it; the tests force it).
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
 * The plans' costs are counted in index entries walked. Measured on SQLite with the 100,000-listing
 * benchmark corpus (docs/BENCHMARKS.md "Catalog price filters"): a match read by price and sorted costs
 * about six walked entries; a by-classes page's costs are ClassCosts.
 */
export const SORTED_MATCH_COST = 6;

/**
 * How max's own class is read in a by-classes page, and its cost: by time the class is walked down
 * to the page's depth and at least to its next match; by price its matches are read and sorted.
 * Undefined when the class holds no match (no range).
 */
export function maxClassRead(c: {
  reach: number;
  matches: number;
  inClass: number;
  size: number;
  maxByPrice: boolean;
}): { kind: 'max-by-time' | 'max-by-price'; cost: number } | undefined {
  if (c.inClass <= 0) return undefined;
  const byTime = Math.min(c.size, (c.reach * c.size) / c.matches + c.size / c.inClass);
  const byPrice = SORTED_MATCH_COST * c.inClass;
  return !c.maxByPrice && byTime <= byPrice ? { kind: 'max-by-time', cost: byTime } : { kind: 'max-by-price', cost: byPrice };
}

/**
 * What merging costs per row and range, and planning per page and range, on each store. SQLite:
 * a merged row about one walked entry plus a third per range, planning a few seeks per class.
 * Postgres (measured on the same corpus through its store, docs/BENCHMARKS.md "Catalog price
 * filters"): merged rows cost about what walked entries do, but the page costs planning a union
 * of ranges and, above offset + limit 1,024, one more round trip (the ranges' statement, which a
 * deeper page's counts carry: postgres/price-index.ts priceCountsSql), about 3 ms there, as much as
 * walking some 25,000 entries.
 */
export interface ClassCosts {
  perRow: number;
  perRowPerRange: number;
  plan: number;
  planPerRange: number;
}
export const SQLITE_CLASS_COSTS: ClassCosts = { perRow: 1, perRowPerRange: 1 / 3, plan: 200, planPerRange: 0 };
export const POSTGRES_CLASS_COSTS: ClassCosts = { perRow: 1, perRowPerRange: 0, plan: 20_000, planPerRange: 1_000 };

/** A by-classes page's cost: its rows merged from `ranges` ranges, max's class's read and the planning. */
export const classPageCost = (reach: number, ranges: number, maxCost: number, costs: ClassCosts) =>
  reach * (costs.perRow + ranges * costs.perRowPerRange) + maxCost + costs.plan + ranges * costs.planPerRange;

/**
 * A price page's plan without by-classes, and whether by-classes is worth planning (only when both
 * read many more entries than the page holds): by time, (offset + limit) × the range's listings /
 * matches entries; by price, every match sorted.
 */
export function plainPricePlan(c: { reach: number; rangeListings: number; matches: number; classPlanCost: number }): {
  plan: 'by-time' | 'by-price';
  cost: number;
  tryClasses: boolean;
} {
  const byTime = c.matches === 0 ? Infinity : (c.reach * c.rangeListings) / c.matches;
  const byPrice = SORTED_MATCH_COST * c.matches;
  const cost = Math.min(byTime, byPrice);
  return { plan: byTime > byPrice ? 'by-price' : 'by-time', cost, tryClasses: cost > 2 * c.reach + c.classPlanCost };
}

/**
 * The USD-pegged assets a list page's `maxUsdPrice` would have to check for listings (those the store looks up in its
 * list counts for usdPriceAsAmount): none when `asset` is given or there is no `maxUsdPrice`.
 */
export const usdAssetsToCheck = (filters: DiscoveryFilters): string[] =>
  filters.maxUsdPrice === undefined || filters.asset !== undefined ? [] : usdMaxAmounts(filters.maxUsdPrice).map((a) => a.asset);

/**
 * `maxUsdPrice` as `asset` + `maxAmount` when one USD-pegged asset can match, so the page reads the price index instead
 * of checking every listing's accepted entries: the asset asked for, if USD-pegged, or else the one USD-pegged asset
 * that any listing accepts (`listed`, from the list counts). One entry must be in that asset at most the smaller of
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

/** The list path of a priced page's plan (price.ts PricePagePlan; both by-classes plans read the classes). */
export const pricePlanPath = (plan: PricePagePlan): ListPath =>
  plan === 'by-time' ? 'price_by_time' : plan === 'by-price' ? 'price_by_price' : 'price_by_classes';
