/**
 * A search's filters as a set of listings read from the list index (docs/CATALOG.md "Search with filters"):
 * when one list key (list-index.ts) or the price index's range (price-index.ts) holds few listings, every
 * search path tests its term rows against that set (`t.listing_id IN (…)`, built once per statement from one
 * covering index range) before it reads a listing's row for the filters' exact conditions. The set only ever
 * holds more listings than match (keys and prices are the listings' current ones: accepts only grow, a
 * smallest price only falls, a type never changes), so the exact conditions still decide and the pages are
 * those of the text walk; a term row outside the set costs an in-memory lookup instead of a listing's row and
 * its accepted entries (FILTER_SET_CAP).
 */
import type { DatabaseSync } from 'node:sqlite';
import { COLUMN_FILTERS, filterKeys, type ListingKey } from '../listing.ts';
import { inPriceRange, priceFilter } from '../price.ts';
import type { DiscoveryFilters } from '../types.ts';
import { listingsWith, withUsdPriceAsAmount } from './list-index.ts';
import { priceMatches } from './price-index.ts';
import { filterSql, type TermRowFilter } from './queries.ts';
import { urlMatchesUpTo } from './url-probe.ts';
import { FILTER_DRIVER_LISTINGS, FILTER_SET_CAP } from '../search.ts';

/**
 * The set's condition on term rows (or revisions) `t`, its parameters and how many listings it holds; `members`, when
 * it is read as a set, the statement selecting its listing ids (with the same parameters).
 */
interface FilterSet {
  condition: string;
  params: Array<string | number>;
  listings: number;
  members?: string;
}

/** The filters' smallest set of listings, when it is a set: what a search may be driven from (search.ts, FILTER_DRIVER_LISTINGS). */
export interface DriverSet {
  members: string;
  params: Array<string | number>;
  listings: number;
}

/** A FilterSet read as a set, in the form both build: `t.listing_id IN (members)`. */
const asSet = (members: string, params: Array<string | number>, listings: number): FilterSet => ({
  condition: `t.listing_id IN (${members})`,
  params,
  listings,
  members,
});

/**
 * The listings whose resource URL holds `url`, as a set, when at most FILTER_DRIVER_LISTINGS hold it (read as a list
 * page reads them, url-probe.ts), so a set small enough to drive the search: exact at any snapshot, since a listing's
 * URL never changes. Without it each term row's listing is read to check `url`: a one-term walk under a substring
 * a thousand of 1M listings hold read about 20,000 rows for a page (200 ms), where its set is a thousand reads.
 */
function urlSet(db: DatabaseSync, url: string): FilterSet | undefined {
  const ids = urlMatchesUpTo(db, url, FILTER_DRIVER_LISTINGS);
  if (ids === undefined) return undefined;
  return asSet('SELECT value FROM json_each(?)', [JSON.stringify(ids)], ids.length);
}

/** The term rows of the `listings` listings that hold `key`: a set when they are at most FILTER_SET_CAP, else a key lookup per row. */
function keyCondition(key: ListingKey, listings: number): FilterSet {
  const params = [key.kind, key.value];
  if (listings <= FILTER_SET_CAP)
    return asSet('SELECT k.listing_id FROM listing_keys k WHERE k.kind = ? AND k.value = ?', params, listings);
  return {
    condition: 'EXISTS (SELECT 1 FROM listing_keys k WHERE k.kind = ? AND k.value = ? AND k.listing_id = t.listing_id)',
    params,
    listings,
  };
}

/** The term rows of the price index's range (`matches` listings, of `type` when given): a set, or a lookup per row as keyCondition. */
function priceCondition(priced: { key: string; max: string }, type: string | undefined, matches: number): FilterSet {
  const typed = type === undefined ? '' : ' AND p.type = ?';
  const params = [priced.key, ...(type === undefined ? [] : [type]), priced.max];
  if (matches <= FILTER_SET_CAP)
    return asSet(`SELECT p.listing_id FROM listing_prices p WHERE p.asset = ?${typed} AND p.price <= ?`, params, matches);
  return {
    condition: `EXISTS (SELECT 1 FROM listing_prices p WHERE p.listing_id = t.listing_id AND p.asset = ?${typed} AND p.price <= ?)`,
    params,
    listings: matches,
  };
}

/**
 * The smallest set of listings that holds every match of `filters` (the rarest of their list keys, the price
 * index's range for `asset` + `maxAmount`, `maxUsdPrice` read as one, or `url`'s set), when it holds at most
 * FILTER_SET_CAP listings; undefined otherwise, or when no filter narrows the catalog (then only the `all` key).
 */
function filterSet(db: DatabaseSync, filters: DiscoveryFilters, url: FilterSet | undefined): FilterSet | undefined {
  let best = url;
  for (const key of filterKeys(filters)) {
    if (key.kind === 'all') break;
    const listings = listingsWith(db, key);
    if (listings <= FILTER_SET_CAP && (!best || listings < best.listings)) best = keyCondition(key, listings);
  }
  const priced = priceFilter(withUsdPriceAsAmount(db, filters));
  if (priced) {
    const { matches } = priceMatches(db, { asset: priced.key, type: filters.type }, priced.max);
    if (matches <= FILTER_SET_CAP && (!best || matches < best.listings)) best = priceCondition(priced, filters.type, matches);
  }
  return best;
}

/**
 * A first page's filters as list keys and the price index only (they are then the filters' exact answer, as for a
 * list page): a key every listing holds is left out, a key or price range of at most FILTER_SET_CAP listings is a
 * set, any other one primary-key lookup per row. Undefined when a filter needs the listing's row (a column filter,
 * a `url` more than URL_INDEX_CAP listings hold: `url` is then undefined) or its accepted entries (`maxUsdPrice`
 * that several USD-pegged assets could meet).
 */
function keyedFilter(db: DatabaseSync, filters: DiscoveryFilters, url: FilterSet | undefined): TermRowFilter | undefined {
  if (COLUMN_FILTERS.some(([name]) => name !== 'type' && name !== 'payTo' && filters[name] !== undefined)) return undefined;
  if (filters.url !== undefined && !url) return undefined;
  const asked = withUsdPriceAsAmount(db, filters);
  const priced = priceFilter(asked);
  if (asked.maxUsdPrice !== undefined || (asked.maxAmount !== undefined && !priced)) return undefined;
  const everyListing = listingsWith(db, { kind: 'all', value: '' });
  const sets = url ? [url] : [];
  for (const key of filterKeys(asked)) {
    if (key.kind === 'all' || (priced && inPriceRange(key.kind))) continue;
    const listings = listingsWith(db, key);
    if (listings < everyListing) sets.push(keyCondition(key, listings));
  }
  if (priced) sets.push(priceCondition(priced, asked.type, priceMatches(db, { asset: priced.key, type: asked.type }, priced.max).matches));
  return {
    joinListings: '',
    conditions: sets.map((set) => set.condition).join(' AND ') || 'TRUE',
    params: sets.flatMap((set) => set.params),
  };
}

/**
 * A search's filters on its term rows `t` as of `asOf` (search.ts, every path). When `asOf` is the catalog's
 * sequence in this read transaction (a first page, or a later one with no write since), the list keys and the
 * price index answer them without a listing row where they can (keyedFilter); otherwise the exact conditions on
 * the listing as of `asOf` (queries.ts filterSql), behind a set when one is small (filterSet). `url`'s count in
 * the trigram index is read once for both. `driver`: the smallest set, whichever form the conditions take.
 */
export function searchFilter(
  db: DatabaseSync,
  filters: DiscoveryFilters,
  asOf: number,
  current: boolean,
): TermRowFilter & { driver?: DriverSet } {
  const exact = filterSql(filters, asOf);
  if (exact.conditions === 'TRUE') return { joinListings: '', ...exact };
  const url = filters.url === undefined ? undefined : urlSet(db, filters.url);
  const set = filterSet(db, filters, url);
  // The smallest set, which holds every match: a search may rank its members instead of walking the text (search.ts).
  const driver = set?.members === undefined ? undefined : { members: set.members, params: set.params, listings: set.listings };
  const keyed = current ? keyedFilter(db, filters, url) : undefined;
  if (keyed) return { ...keyed, driver };
  return {
    joinListings: 'JOIN listings l ON l.id = t.listing_id',
    conditions: set ? `${set.condition} AND ${exact.conditions}` : exact.conditions,
    params: set ? [...set.params, ...exact.params] : exact.params,
    driver,
  };
}
