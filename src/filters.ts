/**
 * The discovery filters, defined once: the query parameters of GET /discovery/resources and
 * GET /discovery/search in openapi.yaml that narrow the listings. The HTTP handler parses these
 * names, the MCP search tool accepts them, the catalog store filters on them and the search
 * cursor binds to them, all from this list. The type checks below fail to compile when
 * openapi.yaml gains or loses a filter and this list does not follow.
 */
import type { operations } from './generated/openapi.ts';

/** Filters both discovery routes accept. */
export const FILTER_NAMES = ['type', 'payTo', 'scheme', 'network', 'extensions', 'asset', 'maxAmount'] as const;
/** Exact-match identity filters only the list route declares (the tool server resolves ids with them). */
export const LIST_ONLY_FILTER_NAMES = ['resource', 'toolName'] as const;

export type FilterName = (typeof FILTER_NAMES)[number];
export type ListOnlyFilterName = (typeof LIST_ONLY_FILTER_NAMES)[number];

/** Every filter value is an exact, non-blank string. */
export type DiscoveryFilters = { [name in FilterName | ListOnlyFilterName]?: string };

/** The longest maxAmount accepted (openapi.yaml MaxAmountFilter): more digits than any i128. */
export const MAX_AMOUNT_DIGITS = 40;

/**
 * Why a combination of filter values is refused (400 `svc_invalid_query_parameter`), or undefined.
 * Checked by every entry point (HTTP, the MCP search tool, the catalog itself).
 */
export function filterViolation(filters: DiscoveryFilters): string | undefined {
  const { maxAmount, asset } = filters;
  if (maxAmount === undefined) return undefined;
  if (!new RegExp(`^[0-9]{1,${MAX_AMOUNT_DIGITS}}$`).test(maxAmount))
    return `maxAmount must be a whole number of base units (1 to ${MAX_AMOUNT_DIGITS} digits), got ${JSON.stringify(maxAmount.slice(0, 64))}.`;
  if (asset === undefined)
    return 'maxAmount requires asset: an amount in base units means nothing without the asset it counts; add asset=<the asset contract address>.';
  return undefined;
}

/** An amount in base units as compared: digits without leading zeros, or undefined when it is not a whole number. */
export function amountKey(amount: unknown): string | undefined {
  if (typeof amount !== 'string' || !/^[0-9]+$/.test(amount)) return undefined;
  return amount.replace(/^0+(?=[0-9])/, '');
}

type ListQuery = NonNullable<operations['listDiscoveryResources']['parameters']['query']>;
type SearchQuery = operations['searchDiscoveryResources']['parameters']['query'];
/** The parameters that page or carry the query rather than filter. */
type Paging = 'limit' | 'offset' | 'cursor' | 'query';

type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const searchFiltersMatch: Exactly<Exclude<keyof SearchQuery, Paging>, FilterName> = true;
const listFiltersMatch: Exactly<Exclude<keyof ListQuery, Paging>, FilterName | ListOnlyFilterName> = true;
void searchFiltersMatch;
void listFiltersMatch;
