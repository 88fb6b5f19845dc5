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
import { COLUMN_FILTERS, filterKeys } from '../listing.ts';
import { priceFilter } from '../price.ts';
import type { DiscoveryFilters } from '../types.ts';
import { listingsWith, withUsdPriceAsAmount } from './list-index.ts';
import { priceMatches } from './price-index.ts';
import { filterSql, type TermRowFilter } from './queries.ts';

/**
 * The most listings a filter set may hold: building it reads one index entry per listing (about 0.25 µs of
 * CPU at 100k listings), where each term row it turns away saves a listing's row and its accepted entries
 * (about 2 µs warm, ten times that when the pages are cold). The tiers read every row of the searched terms
 * (up to the budget's 4,000), so a set of 12,000 costs at most about what it saves them; a one-term walk under
 * a filter of n listings among N reads about a page × N / n rows, which a filter this common fills soon.
 */
export const FILTER_SET_CAP = 12_000;

/** The set's condition on term rows (or revisions) `t`, its parameters and how many listings it holds. */
export interface FilterSet {
  condition: string;
  params: Array<string | number>;
  listings: number;
}

/**
 * The smallest set of listings that holds every match of `filters` (the rarest of their list keys, or the
 * price index's range for `asset` + `maxAmount`, `maxUsdPrice` read as one), when it holds at most `cap`
 * listings; undefined otherwise, or when no filter narrows the catalog (then only the `all` key).
 */
export function filterSet(db: DatabaseSync, filters: DiscoveryFilters, cap = FILTER_SET_CAP): FilterSet | undefined {
  let best: FilterSet | undefined;
  for (const key of filterKeys(filters)) {
    if (key.kind === 'all') return undefined;
    const listings = listingsWith(db, key);
    if (listings <= cap && (!best || listings < best.listings))
      best = {
        condition: 't.listing_id IN (SELECT k.listing_id FROM listing_keys k WHERE k.kind = ? AND k.value = ?)',
        params: [key.kind, key.value],
        listings,
      };
  }
  const priced = priceFilter(withUsdPriceAsAmount(db, filters));
  if (priced) {
    const typed = filters.type !== undefined;
    const { matches } = priceMatches(db, { asset: priced.key, type: filters.type }, priced.max);
    if (matches <= cap && (!best || matches < best.listings))
      best = {
        condition: `t.listing_id IN (SELECT p.listing_id FROM listing_prices p WHERE p.asset = ?${typed ? ' AND p.type = ?' : ''} AND p.price <= ?)`,
        params: [priced.key, ...(typed ? [filters.type!] : []), priced.max],
        listings: matches,
      };
  }
  return best;
}

/** The filters a list key answers exactly (listing.ts filterKeys): no amount, price, url or column filter beside them. */
const keyedOnly = (filters: DiscoveryFilters): boolean =>
  filters.maxAmount === undefined &&
  filters.maxUsdPrice === undefined &&
  filters.url === undefined &&
  COLUMN_FILTERS.every(([name]) => name === 'type' || name === 'payTo' || filters[name] === undefined);

/**
 * A search's filters on its term rows `t` as of `asOf` (search.ts, every path). When `asOf` is the catalog's
 * sequence in this read transaction (a first page) and the filters are list keys only, the keys are the
 * filters' exact answer then (the list pages rely on it): a key every listing holds is left out, a key of at
 * most FILTER_SET_CAP listings is a set, any other one key lookup per row, and no listing row is read.
 * Otherwise the exact conditions on the listing (queries.ts filterSql), after a set when one is small.
 */
export function searchFilter(db: DatabaseSync, filters: DiscoveryFilters, asOf: number, current: boolean): TermRowFilter {
  const exact = filterSql(filters, asOf);
  if (exact.conditions === 'TRUE') return { joinListings: '', ...exact };
  if (current && keyedOnly(filters)) {
    const everyListing = listingsWith(db, { kind: 'all', value: '' });
    const conditions: string[] = [];
    const params: Array<string | number> = [];
    for (const key of filterKeys(filters)) {
      const listings = listingsWith(db, key);
      if (listings >= everyListing) continue;
      conditions.push(
        listings <= FILTER_SET_CAP
          ? 't.listing_id IN (SELECT k.listing_id FROM listing_keys k WHERE k.kind = ? AND k.value = ?)'
          : 'EXISTS (SELECT 1 FROM listing_keys k WHERE k.kind = ? AND k.value = ? AND k.listing_id = t.listing_id)',
      );
      params.push(key.kind, key.value);
    }
    return { joinListings: '', conditions: conditions.join(' AND ') || 'TRUE', params };
  }
  const set = filterSet(db, filters);
  return {
    joinListings: 'JOIN listings l ON l.id = t.listing_id',
    conditions: set ? `${set.condition} AND ${exact.conditions}` : exact.conditions,
    params: set ? [...set.params, ...exact.params] : exact.params,
  };
}
