/**
 * A listing as both catalog stores keep it (docs/CATALOG.md "Store"): the row they read, the JSON body
 * they store, the write rules of a settlement (mergeListing), the searchable text, and the keys a
 * listing answers to in the list index. Backend-neutral: the SQLite store (sqlite/) and the
 * Postgres store (postgres/) both build on it, so they answer the same.
 */
import { createHash } from 'node:crypto';
import { MAX_ACCEPTS_PER_LISTING, type AcceptedTerms, type ListingDraft, type ListingMetadata } from './ingest/settlement.ts';
import { livenessOf, type LivenessColumns } from './liveness.ts';
import { qualityOf } from './quality.ts';
import type { SearchText } from './terms.ts';
import type { DiscoveryFilters, DiscoveryResource } from './types.ts';

/** At most this many expired revisions are pruned per write (bounded work). */
export const PRUNE_BATCH = 32;

export interface ListingRow extends LivenessColumns {
  id: number;
  resource: string;
  type: string;
  x402_version: number;
  last_updated: string;
  body: string;
  /** The quality window's sums (quality.ts), read with the row. */
  calls: number;
  payers: number;
}

/** What a listing's `body` column holds (everything but identity, version and time). */
export interface ListingBody extends ListingMetadata {
  accepts: AcceptedTerms[];
  extensions: Record<string, unknown>;
}

/** A DiscoveryResource (openapi.yaml) from a row. */
export function toDiscoveryResource(row: ListingRow): DiscoveryResource {
  const body = JSON.parse(row.body) as ListingBody;
  const { accepts, extensions, ...metadata } = body;
  return {
    resource: row.resource,
    type: row.type,
    x402Version: row.x402_version,
    // Stored from requirements that passed openapi.yaml's PaymentRequirements at /settle.
    accepts: accepts as DiscoveryResource['accepts'],
    lastUpdated: row.last_updated,
    ...metadata,
    extensions,
    // Every write is a settlement, so the listing's last settled payment is its last write.
    quality: qualityOf(Number(row.calls), Number(row.payers), row.last_updated),
    liveness: livenessOf(row),
  };
}

/** The item a draft becomes as a new listing written at `now` (POST /discovery/validate's `listing`). */
export function draftItem(draft: ListingDraft, now: Date): DiscoveryResource {
  const merged = mergeListing(undefined, draft)!;
  return toDiscoveryResource({
    id: 0,
    resource: draft.resource,
    type: draft.type,
    x402_version: draft.x402Version,
    last_updated: now.toISOString(),
    body: JSON.stringify(merged.body),
    // The settlement it would take to be listed is its first payment, by one payer.
    calls: 1,
    payers: 1,
  });
}

/** Stable JSON with sorted keys: the de-duplication key of accepted terms. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The write rules of a listing (docs/CATALOG.md "Ownership and refresh"), shared by both stores:
 * the stored body after this settlement, or null when the terms are new and the listing already
 * holds MAX_ACCEPTS_PER_LISTING of them. Latest settlement wins on metadata, a field absent this
 * time keeps its previous value, accepts gain the terms unless identical ones are there.
 */
export function mergeListing(previousBody: string | undefined, draft: ListingDraft): { body: ListingBody } | null {
  const previous: ListingBody = previousBody !== undefined ? (JSON.parse(previousBody) as ListingBody) : { accepts: [], extensions: {} };
  const termsKey = canonicalJson(draft.terms);
  const known = previous.accepts.some((t) => canonicalJson(t) === termsKey);
  if (!known && previous.accepts.length >= MAX_ACCEPTS_PER_LISTING) return null;
  const accepts = known ? previous.accepts : [...previous.accepts, draft.terms];
  const { accepts: _a, extensions: previousExtensions, ...previousMetadata } = previous;
  const metadata: ListingMetadata = { ...previousMetadata, ...draft.metadata };
  return { body: { ...metadata, accepts, extensions: { ...previousExtensions, bazaar: draft.bazaar } } };
}

/** The searchable text of a listing body (search.ts, the rank): its four weighted fields. */
export function searchTextOf(body: ListingBody, draft: ListingDraft): SearchText {
  return {
    serviceName: body.serviceName ?? '',
    tags: (body.tags ?? []).join(' '),
    description: body.description ?? '',
    params: draft.parameterText,
  };
}

/** A new search revision is written only when this changes. */
export function searchTextHash(text: SearchText): string {
  return createHash('sha256')
    .update(JSON.stringify([text.serviceName, text.tags, text.description, text.params]))
    .digest('hex');
}

/** Filters that compare one listings column for equality. payTo is the verified owner. */
export const COLUMN_FILTERS = [
  ['type', 'l.type'],
  ['payTo', 'l.owner'],
  ['resource', 'l.resource'],
  ['toolName', 'l.tool_name'],
] as const;

/**
 * Whether a list page needs the accepted-entry condition beyond its keys: maxAmount or maxUsdPrice
 * (ranges, not keys). One entry matching asset with scheme and/or network is a key of its own
 * (filterKeys).
 */
export const needsAcceptsCondition = (filters: DiscoveryFilters): boolean =>
  filters.maxAmount !== undefined || filters.maxUsdPrice !== undefined;

/** Whether a search's filters ask for an accepted entry: scheme, network, asset (maxAmount comes with it) or maxUsdPrice. */
export const needsAcceptedEntry = (filters: DiscoveryFilters): boolean =>
  filters.scheme !== undefined || filters.network !== undefined || filters.asset !== undefined || filters.maxUsdPrice !== undefined;

/**
 * The listing_keys a list filter selects ('all' when none). scheme with network is one pair key; with
 * asset, the asset and the scheme and/or network are one key of an accepted entry (`asset` alone,
 * `network+asset`, `scheme+asset`, `scheme+network+asset`), and `type` joins an `asset` or
 * `network+asset` key (`type+asset`, `type+network+asset`): a common combination is then one key,
 * its total one count and its page one index range.
 */
export function filterKeys(filters: DiscoveryFilters): ListingKey[] {
  const { type, scheme, network, asset } = filters;
  const entry = asset === undefined ? undefined : entryKey(scheme, network, asset);
  const typed = type !== undefined && (entry?.kind === 'asset' || entry?.kind === 'network+asset') ? withType(type, entry) : undefined;
  const keys: ListingKey[] = [];
  if (type !== undefined && !typed) keys.push({ kind: 'type', value: type });
  if (filters.payTo !== undefined) keys.push({ kind: 'payTo', value: filters.payTo });
  const alone = entry === undefined ? entryFilterKey(scheme, network, undefined) : undefined;
  if (alone !== undefined) keys.push(alone);
  if (filters.extensions !== undefined) keys.push({ kind: 'extensions', value: filters.extensions });
  if (entry !== undefined) keys.push(typed ?? entry);
  return keys.length > 0 ? keys : [{ kind: 'all', value: '' }];
}

/**
 * `keys` (filterKeys') with how many listings hold each (`held`, their list counts), fewest first, a tie in filterKeys'
 * order: a list page is driven by the first, and a `url` walk reads the first's entries (url-filter.ts).
 */
export function byFewestListings(keys: ListingKey[], held: (key: ListingKey) => number): Array<{ key: ListingKey; n: number }> {
  return keys.map((key) => ({ key, n: held(key) })).sort((x, y) => x.n - y.n);
}

/** An `asset` or `network+asset` key with the listing's type. */
const withType = (type: string, key: ListingKey): ListingKey => ({
  kind: `type+${key.kind}` as ListingKey['kind'],
  value: `${type}\n${key.value}`,
});

/**
 * The key of one accepted entry under `scheme`, on `network` and in `asset`, those given (undefined when none is):
 * a listing holds it when one of its entries matches them all (listingKeysOf).
 */
export function entryFilterKey(scheme: string | undefined, network: string | undefined, asset: string | undefined): ListingKey | undefined {
  if (asset !== undefined) return entryKey(scheme, network, asset);
  if (scheme !== undefined && network !== undefined) return { kind: 'scheme+network', value: pairValue(scheme, network) };
  if (scheme !== undefined) return { kind: 'scheme', value: scheme };
  if (network !== undefined) return { kind: 'network', value: network };
  return undefined;
}

/** The key of one accepted entry in `asset`, under `scheme` and/or on `network` when given. */
function entryKey(scheme: string | undefined, network: string | undefined, asset: string): ListingKey {
  if (scheme !== undefined && network !== undefined) return { kind: 'scheme+network+asset', value: `${scheme}\n${network}\n${asset}` };
  if (scheme !== undefined) return { kind: 'scheme+asset', value: `${scheme}\n${asset}` };
  if (network !== undefined) return { kind: 'network+asset', value: `${network}\n${asset}` };
  return { kind: 'asset', value: asset };
}

/**
 * The condition that listing `listing` (an SQL expression) holds list key `key` (its entry in `listing_keys`, by
 * primary key), in SQL both dialects run: `p` binds a value and returns its placeholder, in the order of the text;
 * `asOfSeq`: added by then (a search cursor's snapshot); `fence`: what ends the lookup (Postgres's ` OFFSET 0`: one
 * lookup per row, not a hash of the key's entries), or none.
 */
export const listKeyHeld = (
  p: (value: unknown) => string,
  key: { kind: string; value: string },
  listing: string,
  { asOfSeq, fence = '' }: { asOfSeq?: number | undefined; fence?: string } = {},
): string =>
  `EXISTS (SELECT 1 FROM listing_keys o WHERE o.kind = ${p(key.kind)} AND o.value = ${p(key.value)} AND o.listing_id = ${listing}${
    asOfSeq === undefined ? '' : ` AND o.added_seq <= ${p(asOfSeq)}`
  }${fence})`;

/**
 * The list index's block size (sqlite/list-index.ts, and the same index in Postgres,
 * postgres/migrations.ts): a deep page skips fewer than 2 × BLOCK_SIZE index entries.
 */
export const BLOCK_SIZE = 512;
/** From this offset a list page of one filter value starts from the block holding it (seekOffset). */
export const DEEP_OFFSET = 2 * BLOCK_SIZE;
/** The newest block's start: sorts above every ISO-8601 timestamp ('~' is above the digits and '+'). */
export const NEWEST_BLOCK = '~';
/** A list filter a listing answers to: kind is the filter name ('all' for no filter). */
export interface ListingKey {
  kind:
    | 'all'
    | 'type'
    | 'payTo'
    | 'scheme'
    | 'network'
    | 'scheme+network'
    | 'extensions'
    | 'asset'
    | 'network+asset'
    | 'scheme+asset'
    | 'scheme+network+asset'
    | 'type+asset'
    | 'type+network+asset';
  value: string;
}

/** The key of a scheme+network pair (one accepted entry must match both). */
const pairValue = (scheme: string, network: string) => `${scheme}\n${network}`;

/** Every key a listing answers to. */
export function listingKeysOf(
  type: string,
  owner: string,
  accepts: Array<{ scheme: string; network: string; asset?: unknown }>,
  extensionKeys: string[],
): ListingKey[] {
  const keys: ListingKey[] = [
    { kind: 'all', value: '' },
    { kind: 'type', value: type },
    { kind: 'payTo', value: owner },
  ];
  for (const a of accepts) {
    keys.push(
      { kind: 'scheme', value: a.scheme },
      { kind: 'network', value: a.network },
      { kind: 'scheme+network', value: pairValue(a.scheme, a.network) },
    );
    if (typeof a.asset === 'string') keys.push(...assetKeysOf(type, a.scheme, a.network, a.asset));
  }
  for (const key of extensionKeys) keys.push({ kind: 'extensions', value: key });
  return keys;
}

/** The keys of an accepted entry in `asset` (filterKeys): alone, with its network and/or scheme, and with the listing's type. */
export function assetKeysOf(type: string, scheme: string, network: string, asset: string): ListingKey[] {
  const alone = entryKey(undefined, undefined, asset);
  const onNetwork = entryKey(undefined, network, asset);
  return [
    alone,
    onNetwork,
    entryKey(scheme, undefined, asset),
    entryKey(scheme, network, asset),
    withType(type, alone),
    withType(type, onNetwork),
  ];
}
