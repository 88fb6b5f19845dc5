/**
 * The discovery filters, defined once: the query parameters of GET /discovery/resources and
 * GET /discovery/search in openapi.yaml that narrow the listings. The HTTP handler parses these
 * names, the MCP search tool accepts them, the catalog store filters on them and the search
 * cursor binds to them, all from this list. The type checks below fail to compile when
 * openapi.yaml gains or loses a filter and this list does not follow.
 */
import type { operations } from './generated/openapi.ts';

/** Filters both discovery routes accept. */
export const FILTER_NAMES = ['type', 'payTo', 'scheme', 'network', 'extensions', 'asset', 'maxAmount', 'url', 'maxUsdPrice'] as const;
/** Exact-match identity filters only the list route declares (the tool server resolves ids with them). */
export const LIST_ONLY_FILTER_NAMES = ['resource', 'toolName'] as const;

export type FilterName = (typeof FILTER_NAMES)[number];
export type ListOnlyFilterName = (typeof LIST_ONLY_FILTER_NAMES)[number];

/** Every filter value is an exact, non-blank string. */
export type DiscoveryFilters = { [name in FilterName | ListOnlyFilterName]?: string };

/**
 * Whether a filter value holds U+0000: no stored value does (ingest refuses control characters where a filter could
 * match), so such a filter matches nothing, on both stores (PostgreSQL text cannot even hold it).
 */
export const holdsNul = (filters: DiscoveryFilters): boolean =>
  Object.values(filters).some((value) => typeof value === 'string' && value.includes('\u0000'));

/** The longest maxAmount accepted (openapi.yaml MaxAmountFilter): more digits than any i128. */
export const MAX_AMOUNT_DIGITS = 40;

/** `url`'s bounds (openapi.yaml UrlFilter): a trigram index needs 3 characters. */
export const URL_FILTER_MIN = 3;
export const URL_FILTER_MAX = 2048;
/** `maxUsdPrice`: a decimal string of dollars (openapi.yaml MaxUsdPriceFilter). */
export const USD_PRICE_PATTERN = '^[0-9]{1,15}(\\.[0-9]{1,18})?$';
const USD_PRICE = new RegExp(USD_PRICE_PATTERN);

/** An asset svc counts as one US dollar per unit, with its decimals (a base unit is 10^-decimals of it). */
export interface UsdAsset {
  asset: string;
  decimals: number;
}

/**
 * The USD-pegged assets by default: Circle's USDC contracts on Stellar testnet and pubnet, 7
 * decimals (the ids of src/chains/stellar/networks.ts, which the catalog may not import; a test
 * checks they agree).
 */
export const DEFAULT_USD_ASSETS: readonly UsdAsset[] = [
  { asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA', decimals: 7 },
  { asset: 'CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75', decimals: 7 },
];

export const USD_ASSETS_VARIABLE = 'USD_ASSETS';

/**
 * USD_ASSETS (`ASSET:DECIMALS,…`), or the defaults when unset; a description of what is wrong
 * when it cannot be read. Read by every catalog thread (the process environment), checked at start.
 */
export function parseUsdAssets(raw: string | undefined): UsdAsset[] | string {
  if (raw === undefined || raw.trim() === '') return [...DEFAULT_USD_ASSETS];
  const assets: UsdAsset[] = [];
  for (const entry of raw.split(',')) {
    const match = /^\s*([^:\s]+):([0-9]{1,2})\s*$/.exec(entry);
    if (!match || Number(match[2]) > 38)
      return `each entry must be ASSET:DECIMALS (decimals 0-38), got ${JSON.stringify(entry.slice(0, 80))}`;
    assets.push({ asset: match[1]!, decimals: Number(match[2]) });
  }
  return assets;
}

/** The USD-pegged assets of this process (USD_ASSETS, else the defaults). */
export function usdAssets(): UsdAsset[] {
  const parsed = parseUsdAssets(process.env[USD_ASSETS_VARIABLE]);
  return typeof parsed === 'string' ? [...DEFAULT_USD_ASSETS] : parsed;
}

/**
 * `maxUsdPrice` as a maxAmount per USD-pegged asset: the whole base units at most that many dollars
 * (fractions of a base unit dropped: an amount is whole). `filters.asset`, when given, keeps only its own.
 */
export function usdMaxAmounts(maxUsdPrice: string, assets: readonly UsdAsset[] = usdAssets()): Array<{ asset: string; maxAmount: string }> {
  const [whole = '0', fraction = ''] = maxUsdPrice.split('.');
  return assets.map(({ asset, decimals }) => ({
    asset,
    maxAmount: amountKey(whole + fraction.padEnd(decimals, '0').slice(0, decimals)) ?? '0',
  }));
}

/** A Stellar contract or account id (56 characters of base32, any case): `asset` compares these in upper case. */
const STRKEY_ANY_CASE = /^[A-Za-z2-7]{56}$/;

/**
 * The filters as the catalog compares them: an `asset` written as a Stellar id in lower or mixed
 * case is the upper-case id every stored entry holds (contract ids are upper-case strkeys); any
 * other value is kept as written.
 */
export function normalizeFilters(filters: DiscoveryFilters): DiscoveryFilters {
  const { asset } = filters;
  if (asset === undefined || !STRKEY_ANY_CASE.test(asset) || asset === asset.toUpperCase()) return filters;
  return { ...filters, asset: asset.toUpperCase() };
}

/**
 * Why a combination of filter values is refused (400 `svc_invalid_query_parameter`), or undefined.
 * Checked by every entry point (HTTP, the MCP search tool, the catalog itself).
 */
export function filterViolation(filters: DiscoveryFilters): string | undefined {
  const { maxAmount, asset, url, maxUsdPrice } = filters;
  if (url !== undefined && (url.length < URL_FILTER_MIN || url.length > URL_FILTER_MAX))
    return `url must be ${URL_FILTER_MIN} to ${URL_FILTER_MAX} characters (a substring of the resource URL), got ${url.length}.`;
  if (maxUsdPrice !== undefined && !USD_PRICE.test(maxUsdPrice))
    return `maxUsdPrice must be a decimal number of US dollars such as "0.01", got ${JSON.stringify(maxUsdPrice.slice(0, 64))}.`;
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
