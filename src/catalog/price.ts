/**
 * The price filters' keys, shared by both stores' price indexes (sqlite/price-index.ts explains
 * the index, postgres/price-index.ts keeps the same): amounts compared as price keys, the digit
 * count zero-padded to nine digits then the digits (amountKey's canonical form), so byte order is
 * numeric order.
 */
import { amountKey } from '../filters.ts';
import type { DiscoveryFilters } from './types.ts';

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
 * asset + maxAmount without scheme or network (those need one accepted entry matching all, which
 * listing_accepts answers): the asset and maxAmount's price key.
 */
export function priceFilter(filters: DiscoveryFilters): { asset: string; max: string } | undefined {
  if (filters.asset === undefined || filters.maxAmount === undefined || filters.scheme !== undefined || filters.network !== undefined)
    return undefined;
  const max = priceKey(filters.maxAmount);
  return max === undefined ? undefined : { asset: filters.asset, max };
}
