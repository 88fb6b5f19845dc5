/**
 * The list endpoint's price index (openapi.yaml `asset` + `maxAmount`, docs/CATALOG.md "Price
 * filters"), kept in the write transaction like list-index.ts:
 *
 * - `listing_prices`: per (listing, index key) the smallest amount of the listing's accepted entries
 *   in that asset, or in that asset on that network, under that scheme, or under that scheme on
 *   that network (the index key: ../price.ts priceIndexKey; migrations 13 and 14), with the
 *   listing's lastUpdated and its type (http or mcp, fixed for a listing: it is part of its
 *   identity); accepts only grow, so it only falls. A listing matches `asset` A with `maxAmount` M
 *   exactly when its row for A is at most M, and with `network` N and/or `scheme` S too when its
 *   row for (N, A), (S, A) or (S, N, A) is: one accepted entry is then on N, under S, in A and at
 *   most M. Two covering indexes: by time (a page in list order, skipping rows above M: dense
 *   matches) and by price (every match, sorted: sparse matches), and the same two with the type
 *   after the asset, so `type` with the price filter is one index range instead of a key lookup
 *   per match;
 * - `price_counts`: per (index key, smallest amount, type) how many listings, and `price_buckets`
 *   the same per (index key, bucket, type): a price key's first PRICE_BUCKET characters (its digit count
 *   and three leading digits, at most 900 buckets per digit count). The listings at most M are the
 *   buckets below M's bucket plus M's own bucket's price points at most M, of every type or of
 *   the one asked for: a sum over a few thousand rows at worst (prices spread evenly over a
 *   range), a handful in a real catalog; the total is that less the hidden matches;
 * - two more by-time indexes (migration 11) with the type and then a price key's digit count or its
 *   class before the time, for deep pages (price-classes.ts).
 *
 * Amounts are compared as price keys (../price.ts).
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import type { ListingKey } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import {
  PRICE_BUCKET,
  PRICE_CLASS,
  SQLITE_CLASS_COSTS,
  type PricePagePlan,
  inPriceRange,
  plainPricePlan,
  pricePlanPath,
  priceFilter,
  priceIndexKeys,
  priceKey,
  untypedRangeListings,
} from '../price.ts';
import { classPageSql, classPlan, type PriceRange, typeParams, typeSql } from './price-classes.ts';
import { heldFiltersSql, hiddenCount } from './list-index.ts';
import { acceptedEntrySql } from './queries.ts';
import { listed } from '../query-paths.ts';

function countPrice(db: DatabaseSync, asset: string, price: string, type: string, delta: number): void {
  const bucket = price.slice(0, PRICE_BUCKET);
  cachedStatement(
    db,
    'INSERT INTO price_counts (asset, price, type, n) VALUES (?, ?, ?, ?) ON CONFLICT (asset, price, type) DO UPDATE SET n = n + excluded.n',
  ).run(asset, price, type, delta);
  cachedStatement(
    db,
    'INSERT INTO price_buckets (asset, bucket, type, n) VALUES (?, ?, ?, ?) ON CONFLICT (asset, bucket, type) DO UPDATE SET n = n + excluded.n',
  ).run(asset, bucket, type, delta);
  if (delta < 0) {
    cachedStatement(db, 'DELETE FROM price_counts WHERE asset = ? AND price = ? AND type = ? AND n <= 0').run(asset, price, type);
    cachedStatement(db, 'DELETE FROM price_buckets WHERE asset = ? AND bucket = ? AND type = ? AND n <= 0').run(asset, bucket, type);
  }
}

/**
 * One write of a listing (inside its transaction): every price row moves to `lastUpdated`, and the
 * written terms lower the listing's smallest amount under each of their keys (their asset alone,
 * on their network, under their scheme and under both: priceIndexKeys) when they are cheaper.
 */
export function recordPrice(
  db: DatabaseSync,
  listing: { id: number; type: string },
  lastUpdated: string,
  terms: { asset: unknown; network: unknown; scheme: unknown; amount: unknown },
): void {
  const listingId = listing.id;
  cachedStatement(db, 'UPDATE listing_prices SET last_updated = ? WHERE listing_id = ? AND last_updated <> ?').run(
    lastUpdated,
    listingId,
    lastUpdated,
  );
  const price = priceKey(terms.amount);
  if (price === undefined) return;
  for (const key of priceIndexKeys(terms)) {
    const current = cachedStatement(db, 'SELECT price FROM listing_prices WHERE listing_id = ? AND asset = ?').get(listingId, key) as
      { price: string } | undefined;
    if (current && current.price <= price) continue;
    if (current) {
      cachedStatement(db, 'UPDATE listing_prices SET price = ? WHERE listing_id = ? AND asset = ?').run(price, listingId, key);
      countPrice(db, key, current.price, listing.type, -1);
    } else {
      cachedStatement(db, 'INSERT INTO listing_prices (listing_id, asset, type, price, last_updated) VALUES (?, ?, ?, ?, ?)').run(
        listingId,
        key,
        listing.type,
        price,
        lastUpdated,
      );
    }
    countPrice(db, key, price, listing.type, 1);
  }
}

/** A withdrawn listing leaves the index and its counts (withdraw.ts). */
export function removePrices(db: DatabaseSync, listingId: number): void {
  const rows = cachedStatement(db, 'SELECT asset, price, type FROM listing_prices WHERE listing_id = ?').all(listingId) as Array<{
    asset: string;
    price: string;
    type: string;
  }>;
  for (const row of rows) countPrice(db, row.asset, row.price, row.type, -1);
  cachedStatement(db, 'DELETE FROM listing_prices WHERE listing_id = ?').run(listingId);
}

/** The condition "listing `id` has an entry under price index key K at most M" (two parameters: K, M's price key). */
export const priceMatchSql = (id: string) =>
  `EXISTS (SELECT 1 FROM listing_prices p WHERE p.listing_id = ${id} AND p.asset = ? AND p.price <= ?)`;

/**
 * Listings of the range whose smallest amount is at most `max` (a price key): whole buckets below
 * max's, then its own bucket's points; of those, the ones below max's class (`belowClass`: every
 * match outside max's own class, classPageSql). With a type, also how many listings the range
 * holds at any price (its buckets' sum: the rows a walk by time passes over).
 */
export function priceMatches(
  db: DatabaseSync,
  range: PriceRange,
  max: string,
): { matches: number; belowClass: number; typedListings: number } {
  const bucket = max.slice(0, PRICE_BUCKET);
  const t = typeSql(range, 'type');
  const typed = range.type !== undefined;
  const row = cachedStatement(
    db,
    `SELECT (SELECT coalesce(sum(n), 0) FROM price_buckets WHERE asset = ? AND bucket < ?${t}) AS below,
            (SELECT coalesce(sum(n), 0) FROM price_buckets WHERE asset = ? AND bucket >= ? AND bucket < ?${t})
          + (SELECT coalesce(sum(n), 0) FROM price_counts WHERE asset = ? AND price >= ? AND price <= ?${t}) AS within,
            ${typed ? 'coalesce((SELECT sum(n) FROM price_buckets WHERE asset = ? AND type = ?), 0)' : '0'} AS listings`,
  ).get(
    range.asset,
    max.slice(0, PRICE_CLASS),
    ...typeParams(range),
    range.asset,
    max.slice(0, PRICE_CLASS),
    bucket,
    ...typeParams(range),
    range.asset,
    bucket,
    max,
    ...typeParams(range),
    ...(typed ? [range.asset, range.type!] : []),
  ) as { below: number; within: number; listings: number };
  const belowClass = Number(row.below);
  return { matches: belowClass + Number(row.within), belowClass, typedListings: Number(row.listings) };
}

/**
 * A list page of `asset` + `maxAmount`, with or without `type` (part of the index range), alone or
 * with other key filters (`others`, checked per row): the page's listing ids and the exact total.
 * The page is read by the plan that reads the fewest index entries by the counts (PricePagePlan):
 * by time, (offset + limit) × the range's listings / matches; by price, every match; by classes,
 * offset + limit merged rows and max's class's share (classPlan, only planned when the other two
 * read many more entries than the page holds). `plan` forces one (the tests hold every plan to
 * the same answers). With no other key filter the total is the price points' sum less the hidden
 * matches: those hidden by age are counted directly or as the range's aged entries at most M,
 * whichever is fewer (list-index.ts hiddenCount of the listed asset `listed` tells: at least the
 * range's aged entries), and those hidden by failures through their own partial index.
 */
export function listByPrice(
  db: DatabaseSync,
  query: PriceRange & { listed: string; max: string; matches: number; belowClass: number; rangeListings: number; others: ListingKey[] },
  page: { limit: number; offset: number },
  visibleSince: string | undefined,
  failing: string | undefined,
  plan?: PricePagePlan,
): { ids: number[]; total: number } {
  const { max, matches, others } = query;
  const typed = query.type !== undefined;
  const held = heldFiltersSql('p.listing_id', others, undefined, failing);
  const rest = {
    sql: (visibleSince === undefined ? '' : ' AND p.last_updated >= ?') + held.sql,
    params: [...(visibleSince === undefined ? [] : [visibleSince]), ...held.params],
  };
  const where = `p.asset = ?${typeSql(query, 'p.type')} AND p.price <= ?${rest.sql}`;
  const params = [query.asset, ...typeParams(query), max, ...rest.params];
  const prefix = typed ? 'listing_prices_typed' : 'listing_prices';
  let total: number;
  if (
    others.length > 0 ||
    (visibleSince !== undefined && hiddenCount(db, { kind: 'asset', value: query.listed }, visibleSince) > matches)
  ) {
    total = Number(
      (
        cachedStatement(db, `SELECT count(*) AS n FROM listing_prices p INDEXED BY ${prefix}_by_price WHERE ${where}`).get(...params) as {
          n: number;
        }
      ).n,
    );
  } else {
    total = matches - hiddenMatches(db, query, max, visibleSince, failing);
  }
  if (total === 0) return listed('price_empty', { ids: [], total });
  const reach = page.offset + page.limit;
  const plain = plainPricePlan({ reach, rangeListings: query.rangeListings, matches, classPlanCost: SQLITE_CLASS_COSTS.plan });
  const classes =
    plan?.startsWith('by-classes') || (plan === undefined && plain.tryClasses)
      ? classPlan(db, query, max, query, reach, plan === 'by-classes-max-by-price')
      : undefined;
  const chosen: PricePagePlan = plan ?? (classes && classes.cost < plain.cost ? 'by-classes' : plain.plan);
  listed(pricePlanPath(chosen));
  let rows: Array<{ id: number }>;
  if (chosen.startsWith('by-classes')) {
    const merged = classPageSql(classes!.arms, query.asset, max, rest);
    rows =
      classes!.arms.length === 0
        ? []
        : (cachedStatement(db, merged.sql).all(...merged.params, page.limit, page.offset) as Array<{ id: number }>);
  } else {
    rows = cachedStatement(
      db,
      `SELECT p.listing_id AS id FROM listing_prices p INDEXED BY ${prefix}_${chosen.replace('-', '_')} WHERE ${where}
       ORDER BY p.last_updated DESC, p.listing_id DESC LIMIT ? OFFSET ?`,
    ).all(...params, page.limit, page.offset) as Array<{ id: number }>;
  }
  return { ids: rows.map((r) => Number(r.id)), total };
}

/** Matches of the range at most `max` hidden by age (before visibleSince) or, if not, by failures (before `failing`). */
function hiddenMatches(
  db: DatabaseSync,
  range: PriceRange,
  max: string,
  visibleSince: string | undefined,
  failing: string | undefined,
): number {
  let n = 0;
  if (visibleSince !== undefined) {
    const index = range.type === undefined ? 'listing_prices_by_time' : 'listing_prices_typed_by_time';
    const aged = cachedStatement(
      db,
      `SELECT count(*) AS n FROM listing_prices INDEXED BY ${index} WHERE asset = ?${typeSql(range, 'type')} AND last_updated < ? AND price <= ?`,
    ).get(range.asset, ...typeParams(range), visibleSince, max) as { n: number };
    n += Number(aged.n);
  }
  if (failing !== undefined) {
    const row = cachedStatement(
      db,
      `SELECT count(*) AS n FROM listings h JOIN listing_prices p ON p.listing_id = h.id AND p.asset = ?${typeSql(range, 'p.type')}
       WHERE h.liveness_failing_since < ? AND p.price <= ?${visibleSince === undefined ? '' : ' AND p.last_updated >= ?'}`,
    ).get(range.asset, ...typeParams(range), failing, max, ...(visibleSince === undefined ? [] : [visibleSince])) as { n: number };
    n += Number(row.n);
  }
  return n;
}

/**
 * The accepted entry a list page's listing must hold (listing.ts needsAcceptsCondition), against
 * listing_keys `k`: asset + maxAmount, with or without network and scheme, is one price index lookup.
 */
export function acceptsCondition(filters: DiscoveryFilters): { condition: string; params: Array<string | number> } {
  const priced = priceFilter(filters);
  if (priced) return { condition: priceMatchSql('k.listing_id'), params: [priced.key, priced.max] };
  const { parts, params } = acceptedEntrySql(filters, 'k.listing_id');
  return { condition: `EXISTS (SELECT 1 FROM listing_accepts a WHERE ${parts.join(' AND ')})`, params };
}

/**
 * A list page driven by the price index (listByPrice), or undefined when the filters or the counts
 * say otherwise. `network`, `scheme` and `type` are part of the index range (the network's and
 * scheme's keys, the typed indexes and counts), so only the other key filters are checked per row.
 */
export function listPriced(
  db: DatabaseSync,
  filters: DiscoveryFilters,
  counted: Array<{ key: ListingKey; n: number }>,
  page: { limit: number; offset: number },
  visibleSince: string | undefined,
  failing: string | undefined,
  plan?: PricePagePlan,
): { ids: number[]; total: number } | undefined {
  const priced = priceFilter(filters);
  if (!priced) return undefined;
  const range = { asset: priced.key, type: filters.type };
  const { matches, belowClass, typedListings } = priceMatches(db, range, priced.max);
  const others = counted.filter((c) => !inPriceRange(c.key.kind));
  if (others.some((o) => o.n < matches)) return undefined;
  const rangeListings = range.type !== undefined ? typedListings : untypedRangeListings(counted);
  return listByPrice(
    db,
    { ...range, listed: priced.asset, max: priced.max, matches, belowClass, rangeListings, others: others.map((o) => o.key) },
    page,
    visibleSince,
    failing,
    plan,
  );
}
