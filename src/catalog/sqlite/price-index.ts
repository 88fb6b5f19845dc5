/**
 * The list endpoint's price index on SQLite (openapi.yaml `asset` + `maxAmount`, docs/CATALOG.md
 * "List"), kept in the write transaction like list-index.ts; the pages are read by the
 * engine both stores share (../price.ts pricePage), from the statements here:
 *
 * - `listing_prices`: per (listing, price index key: ../price.ts priceIndexKey) the smallest amount
 *   of the listing's accepted entries under that key, with the listing's lastUpdated and its type
 *   (fixed for a listing); accepts only grow, so it only falls. Covering indexes by time (a page in
 *   list order, skipping rows above M) and by price (every match, sorted), the same two with the
 *   type after the key, and by-time indexes with the type and a price key's digit count or class
 *   before the time (a by-classes page's ranges);
 * - `price_counts`: per key, level (../price.ts PRICE_LEVELS), price key prefix and type how many
 *   listings; a row that falls to zero goes.
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
  PRICE_DIGITS,
  PRICE_LEVELS,
  SQLITE_CLASS_COSTS,
  type ClassArm,
  type ClassRanges,
  type PriceIndex,
  type PricePagePlan,
  type PriceRange,
  type PriceRead,
  inPriceRange,
  priceFilter,
  priceIndexKeys,
  priceKey,
  pricePage,
  pricePrefix,
} from '../price.ts';
import { runSync } from '../steps.ts';
import { heldFiltersSql, hiddenCount } from './list-index.ts';

/** Adds `delta` listings at `price` under key `asset` and `type`, at every level; rows at zero go. */
function countPrice(db: DatabaseSync, asset: string, price: string, type: string, delta: number): void {
  const levels = PRICE_LEVELS.flatMap((level) => [asset, level, pricePrefix(price, level), type, delta]);
  cachedStatement(
    db,
    `INSERT INTO price_counts (asset, level, price, type, n) VALUES ${PRICE_LEVELS.map(() => '(?, ?, ?, ?, ?)').join(', ')}
     ON CONFLICT (asset, level, price, type) DO UPDATE SET n = n + excluded.n`,
  ).run(...levels);
  if (delta < 0)
    cachedStatement(
      db,
      `DELETE FROM price_counts WHERE asset = ? AND type = ? AND n <= 0 AND (level, price) IN (VALUES ${PRICE_LEVELS.map(() => '(?, ?)').join(', ')})`,
    ).run(asset, type, ...PRICE_LEVELS.flatMap((level) => [level, pricePrefix(price, level)]));
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

const typeSql = (range: { type: string | undefined }, column: string) => (range.type === undefined ? '' : ` AND ${column} = ?`);
const typeParams = (range: { type: string | undefined }) => (range.type === undefined ? [] : [range.type]);

/** The range's listings counted at `level` with prefixes from `from` (inclusive) to `to` (inclusive when `upTo`). */
function levelSum(db: DatabaseSync, range: PriceRange, level: number, from: string, to: string, upTo = false): number {
  const row = cachedStatement(
    db,
    `SELECT coalesce(sum(n), 0) AS n FROM price_counts WHERE asset = ? AND level = ? AND price >= ? AND price ${upTo ? '<=' : '<'} ?${typeSql(range, 'type')}`,
  ).get(range.key, level, from, to, ...typeParams(range)) as { n: number };
  return Number(row.n);
}

/**
 * The counts of a price range (../price.ts PriceCounts): the classes below max's, its class's buckets
 * below max's bucket and that bucket's points at most max; a typed range's listings (its classes' sum).
 * With no other key filter and a cut by age, the listed asset's entries hidden by age (list-index.ts hiddenCount).
 */
export function priceCounts(db: DatabaseSync, range: PriceRange, listedAsset: string, alone: boolean, visibleSince: string | undefined) {
  const [maxClass, maxBucket] = [range.max.slice(0, PRICE_CLASS), range.max.slice(0, PRICE_BUCKET)];
  return {
    below: levelSum(db, range, PRICE_CLASS, '', maxClass),
    within: levelSum(db, range, PRICE_BUCKET, maxClass, maxBucket) + levelSum(db, range, 0, maxBucket, range.max, true),
    listings: range.type === undefined ? 0 : levelSum(db, range, PRICE_CLASS, '', '~'),
    assetAged: alone && visibleSince !== undefined ? hiddenCount(db, { kind: 'asset', value: listedAsset }, visibleSince) : undefined,
  };
}

/** A priced page's conditions on `listing_prices p` beyond its range: the hidden listings and the other key filters. */
function beyondRangeSql(read: PriceRead): { sql: string; params: Array<string | number> } {
  const held = heldFiltersSql('p.listing_id', read.others, undefined, read.failing);
  const since = read.visibleSince === undefined ? [] : [read.visibleSince];
  return { sql: (since.length ? ' AND p.last_updated >= ?' : '') + held.sql, params: [...since, ...held.params] };
}

/** A priced page's conditions on `listing_prices p`: its range, then beyondRangeSql. */
function rangeSql(read: PriceRead): { sql: string; params: Array<string | number> } {
  const rest = beyondRangeSql(read);
  return {
    sql: `p.asset = ?${typeSql(read, 'p.type')} AND p.price <= ?${rest.sql}`,
    params: [read.key, ...typeParams(read), read.max, ...rest.params],
  };
}

/** The index and condition of each kind of class range (three parameters: key, type, prefix; `max-…` a fourth, max). */
const CLASS_ARM_SQL: Record<ClassArm['kind'], string> = {
  digits: `INDEXED BY listing_prices_typed_digits_by_time WHERE p.asset = ? AND p.type = ? AND substr(p.price, 1, ${PRICE_DIGITS}) = ?`,
  class: `INDEXED BY listing_prices_typed_class_by_time WHERE p.asset = ? AND p.type = ? AND substr(p.price, 1, ${PRICE_CLASS}) = ?`,
  'max-by-time': `INDEXED BY listing_prices_typed_class_by_time WHERE p.asset = ? AND p.type = ? AND substr(p.price, 1, ${PRICE_CLASS}) = ? AND p.price <= ?`,
  'max-by-price': 'INDEXED BY listing_prices_typed_by_price WHERE p.asset = ? AND p.type = ? AND p.price >= ? AND p.price <= ?',
};

/**
 * A by-classes page's statement: the ranges in one compound SELECT ordered by time, which SQLite
 * answers by merging them (MERGE, no sort) and stops after offset + limit rows. Each range has the
 * page's conditions beyond the price range (hidden listings, other key filters).
 */
export function classPageSql(arms: ClassArm[], read: PriceRead): { sql: string; params: Array<string | number> } {
  const rest = beyondRangeSql(read);
  const sql =
    arms
      .map((arm) => `SELECT p.listing_id AS id, p.last_updated AS last_updated FROM listing_prices p ${CLASS_ARM_SQL[arm.kind]}${rest.sql}`)
      .join(' UNION ALL ') + ' ORDER BY last_updated DESC, id DESC LIMIT ? OFFSET ?';
  const params = arms.flatMap((arm) => [read.key, arm.type, arm.prefix, ...(arm.kind.startsWith('max') ? [read.max] : []), ...rest.params]);
  return { sql, params };
}

/** The next price key prefix of the same length ("000000005" → "000000006"). */
const nextPrefix = (prefix: string) => String(BigInt(prefix) + 1n).padStart(prefix.length, '0');

/** The price engine's statements on SQLite (../price.ts PriceIndex): a page's rows are listing ids. */
export function priceIndex(db: DatabaseSync): PriceIndex<number> {
  const byPriceIndex = (read: PriceRead) => (read.type === undefined ? 'listing_prices_by_price' : 'listing_prices_typed_by_price');
  return {
    countMatches(read) {
      const { sql, params } = rangeSql(read);
      return Number(
        (
          cachedStatement(db, `SELECT count(*) AS n FROM listing_prices p INDEXED BY ${byPriceIndex(read)} WHERE ${sql}`).get(
            ...params,
          ) as {
            n: number;
          }
        ).n,
      );
    },
    hiddenMatches(read) {
      let n = 0;
      if (read.visibleSince !== undefined) {
        const index = read.type === undefined ? 'listing_prices_by_time' : 'listing_prices_typed_by_time';
        const aged = cachedStatement(
          db,
          `SELECT count(*) AS n FROM listing_prices INDEXED BY ${index} WHERE asset = ?${typeSql(read, 'type')} AND last_updated < ? AND price <= ?`,
        ).get(read.key, ...typeParams(read), read.visibleSince, read.max) as { n: number };
        n += Number(aged.n);
      }
      if (read.failing !== undefined) {
        const since = read.visibleSince === undefined ? [] : [read.visibleSince];
        const row = cachedStatement(
          db,
          `SELECT count(*) AS n FROM listings h JOIN listing_prices p ON p.listing_id = h.id AND p.asset = ?${typeSql(read, 'p.type')}
           WHERE h.liveness_failing_since < ? AND h.search_stash IS NULL AND p.price <= ?${since.length ? ' AND p.last_updated >= ?' : ''}`,
        ).get(read.key, ...typeParams(read), read.failing, read.max, ...since) as { n: number };
        n += Number(row.n);
      }
      return n;
    },
    classRanges(range) {
      // Each digit count and class below max's holding entries, found by hopping over the class counts (one seek each).
      const first = cachedStatement(
        db,
        `SELECT price FROM price_counts WHERE asset = ? AND level = ${PRICE_CLASS} AND price >= ? AND price < ?${typeSql(range, 'type')}
         ORDER BY price LIMIT 1`,
      );
      const ranges: ClassRanges = [];
      const hop = (kind: string, from: string, below: string, length: number) => {
        for (let at = from; ;) {
          const row = first.get(range.key, at, below, ...typeParams(range)) as { price: string } | undefined;
          if (!row) return;
          const prefix = row.price.slice(0, length);
          ranges.push([kind, prefix]);
          at = nextPrefix(prefix);
        }
      };
      const [maxDigits, maxClass] = [range.max.slice(0, PRICE_DIGITS), range.max.slice(0, PRICE_CLASS)];
      hop('digits', '', maxDigits, PRICE_DIGITS);
      hop('class', maxDigits, maxClass, PRICE_CLASS);
      if (range.type === undefined)
        for (const { value } of cachedStatement(db, "SELECT value FROM listing_counts WHERE kind = 'type' AND n > 0").all() as Array<{
          value: string;
        }>)
          ranges.push(['type', value]);
      ranges.push(['size', String(levelSum(db, range, PRICE_CLASS, maxClass, maxClass, true))]);
      return ranges;
    },
    page(read, shape, page) {
      let rows: Array<{ id: number }>;
      if (shape.plan.startsWith('by-classes')) {
        const { sql, params } = classPageSql(shape.arms, read);
        rows = cachedStatement(db, sql).all(...params, page.limit, page.offset) as Array<{ id: number }>;
      } else {
        const { sql, params } = rangeSql(read);
        const index = `${read.type === undefined ? 'listing_prices' : 'listing_prices_typed'}_${shape.plan.replace('-', '_')}`;
        rows = cachedStatement(
          db,
          `SELECT p.listing_id AS id FROM listing_prices p INDEXED BY ${index} WHERE ${sql}
           ORDER BY p.last_updated DESC, p.listing_id DESC LIMIT ? OFFSET ?`,
        ).all(...params, page.limit, page.offset) as Array<{ id: number }>;
      }
      return rows.map((r) => Number(r.id));
    },
  };
}

/**
 * A list page driven by the price index (../price.ts pricePage): its listing ids and exact total,
 * or undefined when the filters or the counts say otherwise. `plan` forces one (the tests).
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
  const alone = counted.every((c) => inPriceRange(c.key.kind));
  const counts = priceCounts(db, { key: priced.key, type: filters.type, max: priced.max }, priced.asset, alone, visibleSince);
  const listed = runSync(
    priceIndex(db),
    pricePage<number>({ filters, counted, counts, page, visibleSince, failing, costs: SQLITE_CLASS_COSTS, plan }),
  );
  return listed && { ids: listed.rows, total: listed.total };
}
