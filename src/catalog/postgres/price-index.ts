/**
 * The list endpoint's price index on PostgreSQL (sqlite/price-index.ts explains it): per listing
 * and price index key (an asset, or an asset on a network, under a scheme or under both: price.ts
 * priceIndexKey) its smallest amount with lastUpdated and the listing's type (`listing_prices`), per
 * asset, price point and type a count (`price_counts`, per bucket `price_buckets` and per price
 * class `price_classes`), kept in the write transaction (a listing's writes are serialized by its advisory lock, store.ts) and on
 * withdrawal. A count that falls to zero is kept (concurrent writers of other listings may be
 * adding to it); it adds nothing to a sum.
 */
import {
  type ClassArm,
  PRICE_BUCKET,
  PRICE_CLASS,
  POSTGRES_CLASS_COSTS,
  type PricePagePlan,
  inPriceRange,
  plainPricePlan,
  pricePlanPath,
  priceFilter,
  priceIndexKeys,
  priceKey,
  untypedRangeListings,
} from '../price.ts';
import { classPageSql, classPlan, readClassRanges } from './price-classes.ts';
import type { PriceCounts } from './price-counts.ts';
import type { ListingKey, ListingRow } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import { heldFiltersSql, pageListingsStatement, parameters, readPage, type Db, type PageStatement } from './queries.ts';
import { listed } from '../query-paths.ts';

export const PRICE_INDEX_MIGRATION = `
  CREATE TABLE listing_prices (
    listing_id BIGINT NOT NULL,
    asset TEXT COLLATE "C" NOT NULL,
    price TEXT COLLATE "C" NOT NULL,
    last_updated TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (listing_id, asset)
  );
  CREATE INDEX listing_prices_by_time ON listing_prices (asset, last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE INDEX listing_prices_by_price ON listing_prices (asset, price) INCLUDE (last_updated, listing_id);
  CREATE TABLE price_counts (
    asset TEXT COLLATE "C" NOT NULL,
    price TEXT COLLATE "C" NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (asset, price)
  );
  INSERT INTO listing_prices (listing_id, asset, price, last_updated)
    SELECT a.listing_id, a.asset, min(lpad(length(a.amount)::text, 9, '0') || a.amount), l.last_updated
    FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
    WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL GROUP BY a.listing_id, a.asset, l.last_updated;
  INSERT INTO price_counts (asset, price, n) SELECT asset, price, count(*) FROM listing_prices GROUP BY asset, price;
  CREATE TABLE price_buckets (
    asset TEXT COLLATE "C" NOT NULL,
    bucket TEXT COLLATE "C" NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (asset, bucket)
  );
  INSERT INTO price_buckets (asset, bucket, n)
    SELECT asset, left(price, ${PRICE_BUCKET}), sum(n) FROM price_counts GROUP BY asset, left(price, ${PRICE_BUCKET});`;

/**
 * Catalog migration 10: the price index keeps each listing's type (from `listings`, fixed for a
 * listing), with the by-time and by-price indexes again with the type after the asset, and the
 * counts per type, so `type` beside the price filter is one index range (sqlite/price-index.ts
 * migrateToTypedPriceIndex). An svc predating it cannot write the index any more (its rows lack
 * the type, its counts' conflict target is gone): its catalog writes fail until it is upgraded.
 */
export const TYPED_PRICE_INDEX_MIGRATION = `
  ALTER TABLE listing_prices ADD COLUMN type TEXT COLLATE "C";
  UPDATE listing_prices p SET type = l.type FROM listings l WHERE l.id = p.listing_id;
  ALTER TABLE listing_prices ALTER COLUMN type SET NOT NULL;
  CREATE INDEX listing_prices_typed_by_time ON listing_prices (asset, type, last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE INDEX listing_prices_typed_by_price ON listing_prices (asset, type, price) INCLUDE (last_updated, listing_id);
  DROP TABLE price_counts;
  DROP TABLE price_buckets;
  CREATE TABLE price_counts (
    asset TEXT COLLATE "C" NOT NULL,
    price TEXT COLLATE "C" NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (asset, price, type)
  );
  CREATE TABLE price_buckets (
    asset TEXT COLLATE "C" NOT NULL,
    bucket TEXT COLLATE "C" NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (asset, bucket, type)
  );
  INSERT INTO price_counts (asset, price, type, n) SELECT asset, price, type, count(*) FROM listing_prices GROUP BY asset, price, type;
  INSERT INTO price_buckets (asset, bucket, type, n)
    SELECT asset, left(price, ${PRICE_BUCKET}), type, sum(n) FROM price_counts GROUP BY asset, left(price, ${PRICE_BUCKET}), type;`;

/**
 * The upserts that add each row of the CTE `deltas (asset, price, type, d)` (d: 1 for a listing more at that price, -1 for one
 * less) to its price's row of `price_counts`, its bucket's of `price_buckets` and its class's of `price_classes`, as the
 * last parts of one statement. Each table's deltas are summed per row first: one statement cannot update a row twice, and
 * a lowered price often stays in its bucket. Each row is a conflict-safe upsert, so concurrent writers of other listings
 * add to it.
 */
const COUNT_PRICE_DELTAS = `
  counted AS (
    INSERT INTO price_counts (asset, price, type, n) SELECT asset, price, type, sum(d) FROM deltas GROUP BY asset, price, type
    ON CONFLICT (asset, price, type) DO UPDATE SET n = price_counts.n + excluded.n),
  bucketed AS (
    INSERT INTO price_buckets (asset, bucket, type, n)
    SELECT asset, left(price, ${PRICE_BUCKET}), type, sum(d) FROM deltas GROUP BY asset, left(price, ${PRICE_BUCKET}), type
    ON CONFLICT (asset, bucket, type) DO UPDATE SET n = price_buckets.n + excluded.n)
  INSERT INTO price_classes (asset, class, type, n)
  SELECT asset, left(price, ${PRICE_CLASS}), type, sum(d) FROM deltas GROUP BY asset, left(price, ${PRICE_CLASS}), type
  ON CONFLICT (asset, class, type) DO UPDATE SET n = price_classes.n + excluded.n`;

/**
 * Catalog migration 13: each listing's smallest amount per asset on each network, under the
 * network's key (price.ts priceIndexKey), with its counts (sqlite/price-index.ts
 * migrateToNetworkPriceKeys). Rows only; a bare asset starting with the key's marker is marked first.
 */
export const NETWORK_PRICE_KEYS_MIGRATION = `
  UPDATE listing_prices SET asset = chr(1) || 'a' || asset WHERE asset >= chr(1) AND asset < chr(2);
  UPDATE price_counts SET asset = chr(1) || 'a' || asset WHERE asset >= chr(1) AND asset < chr(2);
  UPDATE price_buckets SET asset = chr(1) || 'a' || asset WHERE asset >= chr(1) AND asset < chr(2);
  INSERT INTO listing_prices (listing_id, asset, type, price, last_updated)
    SELECT a.listing_id, chr(1) || 'n' || char_length(a.network) || ':' || a.network || a.asset, l.type,
      min(lpad(length(a.amount)::text, 9, '0') || a.amount), l.last_updated
    FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
    WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL AND a.network IS NOT NULL
    GROUP BY a.listing_id, a.network, a.asset, l.type, l.last_updated;
  INSERT INTO price_counts (asset, price, type, n)
    SELECT asset, price, type, count(*) FROM listing_prices WHERE asset >= chr(1) || 'n' AND asset < chr(1) || 'o'
    GROUP BY asset, price, type;
  INSERT INTO price_buckets (asset, bucket, type, n)
    SELECT asset, left(price, ${PRICE_BUCKET}), type, sum(n) FROM price_counts WHERE asset >= chr(1) || 'n' AND asset < chr(1) || 'o'
    GROUP BY asset, left(price, ${PRICE_BUCKET}), type;`;

/**
 * Catalog migration 15: each listing's smallest amount per asset under each scheme and under each
 * scheme on each network, under their keys (price.ts priceIndexKey), with their counts
 * (sqlite/price-migrations.ts migrateToSchemePriceKeys). Rows only, as migration 13; no row had a
 * scheme's key before.
 */
export const SCHEME_PRICE_KEYS_MIGRATION = `
  INSERT INTO listing_prices (listing_id, asset, type, price, last_updated)
    SELECT a.listing_id, chr(1) || 's' || char_length(a.scheme) || ':' || a.scheme || a.asset, l.type,
      min(lpad(length(a.amount)::text, 9, '0') || a.amount), l.last_updated
    FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
    WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL
    GROUP BY a.listing_id, a.scheme, a.asset, l.type, l.last_updated;
  INSERT INTO listing_prices (listing_id, asset, type, price, last_updated)
    SELECT a.listing_id,
      chr(1) || 'p' || char_length(a.scheme) || ':' || a.scheme || char_length(a.network) || ':' || a.network || a.asset, l.type,
      min(lpad(length(a.amount)::text, 9, '0') || a.amount), l.last_updated
    FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
    WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL
    GROUP BY a.listing_id, a.scheme, a.network, a.asset, l.type, l.last_updated;
  INSERT INTO price_counts (asset, price, type, n)
    SELECT asset, price, type, count(*) FROM listing_prices
    WHERE (asset >= chr(1) || 's' AND asset < chr(1) || 't') OR (asset >= chr(1) || 'p' AND asset < chr(1) || 'q')
    GROUP BY asset, price, type;
  INSERT INTO price_buckets (asset, bucket, type, n)
    SELECT asset, left(price, ${PRICE_BUCKET}), type, sum(n) FROM price_counts
    WHERE (asset >= chr(1) || 's' AND asset < chr(1) || 't') OR (asset >= chr(1) || 'p' AND asset < chr(1) || 'q')
    GROUP BY asset, left(price, ${PRICE_BUCKET}), type;`;

/** The class counts (`price_classes`, empty) summed from the buckets: catalog migration 16, and a catalog loaded without them (bench/catalog/catalog-postgres.ts). */
export const PRICE_CLASSES_FROM_BUCKETS = `INSERT INTO price_classes (asset, class, type, n)
    SELECT asset, left(bucket, ${PRICE_CLASS}), type, sum(n) FROM price_buckets GROUP BY asset, left(bucket, ${PRICE_CLASS}), type;`;

/**
 * Catalog migration 16: per asset (price index key), price class (digit count and leading digit:
 * price.ts PRICE_CLASS) and type a count, kept with the buckets', so a price page's counts sum a
 * few class rows (at most nine per digit count) below `maxAmount`'s class instead of every bucket
 * there (up to 900 per digit count: docs/CATALOG.md "List"). Built from the buckets.
 */
export const PRICE_CLASS_COUNTS_MIGRATION = `
  CREATE TABLE price_classes (
    asset TEXT COLLATE "C" NOT NULL,
    class TEXT COLLATE "C" NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (asset, class, type)
  );
  ${PRICE_CLASSES_FROM_BUCKETS}`;

/**
 * One write of a listing (sqlite/price-index.ts recordPrice), in one statement: each of its price rows takes the write's
 * time, and under each of its terms' price index keys its price is the terms' amount when that is lower or new, with the
 * counts moved (COUNT_PRICE_DELTAS). The rows the write lowers or adds take the time from their upsert, the others from the
 * UPDATE: the parts of one statement read one snapshot, and must not write one row twice.
 */
export async function recordPrice(
  db: Db,
  listing: { id: number; type: string },
  lastUpdated: string,
  terms: { asset: unknown; network: unknown; scheme: unknown; amount: unknown },
): Promise<void> {
  const price = priceKey(terms.amount);
  await db.query(
    `WITH keyed AS (
       SELECT k.asset, p.price AS old FROM unnest($3::text[]) AS k(asset)
       LEFT JOIN listing_prices p ON p.listing_id = $1 AND p.asset = k.asset),
     changed AS (SELECT asset COLLATE "C" AS asset, old FROM keyed WHERE old IS NULL OR old > $4::text COLLATE "C"),
     stamped AS (
       UPDATE listing_prices SET last_updated = $5
       WHERE listing_id = $1 AND last_updated <> $5 AND asset NOT IN (SELECT asset FROM changed)),
     priced AS (
       INSERT INTO listing_prices (listing_id, asset, type, price, last_updated) SELECT $1, asset, $2, $4, $5 FROM changed
       ON CONFLICT (listing_id, asset) DO UPDATE SET price = excluded.price, last_updated = excluded.last_updated),
     deltas AS (
       SELECT asset, $4::text COLLATE "C" AS price, $2::text COLLATE "C" AS type, 1 AS d FROM changed
       UNION ALL SELECT asset, old, $2, -1 FROM changed WHERE old IS NOT NULL),
     ${COUNT_PRICE_DELTAS}`,
    [listing.id, listing.type, price === undefined ? [] : priceIndexKeys(terms), price ?? '', lastUpdated],
  );
}

/** A withdrawn listing leaves the index and its counts (withdraw.ts), in one statement. */
export async function removePrices(db: Db, listingId: string | number): Promise<void> {
  await db.query(
    `WITH removed AS (DELETE FROM listing_prices WHERE listing_id = $1 RETURNING asset, price, type),
     deltas AS (SELECT asset, price, type, -1 AS d FROM removed),
     ${COUNT_PRICE_DELTAS}`,
    [listingId],
  );
}

/** The condition "listing `id` has an entry under price index key K at most M" for the list query's other path. */
export const priceMatchSql = (id: string, p: (value: unknown) => string, priced: { key: string; max: string }) =>
  `EXISTS (SELECT 1 FROM listing_prices pr WHERE pr.listing_id = ${id} AND pr.asset = ${p(priced.key)} AND pr.price <= ${p(priced.max)})`;

/**
 * What a priced page's statement is made from beyond the page and the filters: its plan, whether listings failing their
 * liveness checks are left out by it, and a by-classes plan's ranges. listPriced returns it, so the store can send the
 * next page of the same filters with its counts (postgres/price-guess.ts).
 */
export interface PricedPageShape {
  plan: PricePagePlan;
  failing: string | undefined;
  arms: ClassArm[];
}

/**
 * A priced page's conditions on `listing_prices p` beyond the price range, for its statement and its count alike: listings hidden
 * by age (`visibleSince`), the other key filters (`others`), listings failing liveness since before `failing`. `p` adds a parameter.
 */
function beyondPriceRange(
  p: (value: unknown) => string,
  visibleSince: string | undefined,
  others: Array<{ key: ListingKey }>,
  failing: string | undefined,
): string {
  return (
    (visibleSince === undefined ? '' : ` AND p.last_updated >= ${p(visibleSince)}`) +
    heldFiltersSql(
      p,
      'p.listing_id',
      others.map((o) => o.key),
      undefined,
      failing,
    )
  );
}

/**
 * A priced page's conditions on `listing_prices p`, for its by-time and by-price statements and its count alike: the price
 * range (`filters`' index key, type and maxAmount) and what lies beyond it (beyondPriceRange). `p` adds a parameter.
 */
function priceRangeConditions(
  p: (value: unknown) => string,
  filters: DiscoveryFilters,
  visibleSince: string | undefined,
  others: Array<{ key: ListingKey }>,
  failing: string | undefined,
): string {
  const { key: asset, max } = priceFilter(filters)!;
  // Parameters in the order they appear in the text.
  const range = `p.asset = ${p(asset)}${filters.type === undefined ? '' : ` AND p.type = ${p(filters.type)}`} AND p.price <= ${p(max)}`;
  return range + beyondPriceRange(p, visibleSince, others, failing);
}

/**
 * The statement of a priced page (pageListingsStatement's) of `shape`, its other key filters `others`. Without them it is
 * run with its generic plan (queries.ts readPage): by time it reads the by-time index in page order, by price the
 * by-price index's range, by classes each range's by-time index, whatever the values (EXPLAIN ANALYZE on the 100k bench
 * database: the generic plans ran in the custom plans' time). Another key filter's EXISTS is planned with its values.
 */
export function pricedPageStatement(
  filters: DiscoveryFilters,
  shape: PricedPageShape,
  others: Array<{ key: ListingKey }>,
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
): PageStatement {
  const params = parameters();
  const { p } = params;
  const generic = others.length === 0;
  if (shape.plan.startsWith('by-classes')) {
    const { key: asset, max } = priceFilter(filters)!;
    // The page's conditions beyond the price range (each class range adds its parameters).
    const rest = (p: (value: unknown) => string) => beyondPriceRange(p, visibleSince, others, shape.failing);
    return { ...pageListingsStatement(classPageSql(shape.arms, asset, max, page, rest, p), params, now), generic };
  }
  const where = priceRangeConditions(p, filters, visibleSince, others, shape.failing);
  const order = `ORDER BY p.last_updated DESC, p.listing_id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
  // By price: every match read from the by-price index, then sorted; by time: the by-time index in page order.
  const sql =
    shape.plan === 'by-price'
      ? `WITH m AS MATERIALIZED (SELECT p.listing_id, p.last_updated FROM listing_prices p WHERE ${where})
         SELECT p.listing_id AS id, p.last_updated FROM m p ${order}`
      : `SELECT p.listing_id AS id, p.last_updated FROM listing_prices p WHERE ${where} ${order}`;
  return { ...pageListingsStatement(sql, params, now), generic };
}

/**
 * A list page driven by the price index (sqlite/price-index.ts listByPrice, the same choices;
 * `network`, `scheme` and `type` are part of the index range) with its listings read in the
 * statement that selects it (pricedPageStatement), or undefined when another key filter holds fewer listings than the price
 * matches. `counts` are priceCountsSql's, read with the same `visibleSince` and a failing cut (and
 * the page's reach, so a deep page's class ranges come with them). `guessed` is a page statement sent before the counts
 * were read (postgres/price-guess.ts): its rows are the page's when it is the very statement chosen here (same text,
 * same values, same snapshot), else they are left unread and the chosen statement is sent.
 */
export async function listPriced(
  db: Db,
  filters: DiscoveryFilters,
  counted: Array<{ key: ListingKey; n: number }>,
  counts: PriceCounts,
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
  failing: string | undefined,
  plan?: PricePagePlan,
  guessed?: { statement: PageStatement; rows: Promise<ListingRow[]> },
): Promise<{ rows: ListingRow[]; total: number; shape?: PricedPageShape } | undefined> {
  const priced = priceFilter(filters);
  if (!priced) return undefined;
  const { key: asset, max } = priced;
  const type = filters.type;
  const typed = type !== undefined;
  const others = counted.filter((c) => !inPriceRange(c.key.kind));
  const belowClass = Number(counts.below);
  const matches = belowClass + Number(counts.within);
  if (others.some((o) => o.n < matches)) return undefined;
  const rangeListings = typed ? Number(counts.listings) : untypedRangeListings(counted);
  let total: number;
  if (others.length > 0 || (visibleSince !== undefined && Number(counts.asset_aged) > matches)) {
    const { values, p } = parameters();
    const where = priceRangeConditions(p, filters, visibleSince, others, failing);
    total = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM listing_prices p WHERE ${where}`, values)).rows[0]!.n);
  } else {
    total = matches - Number(counts.aged_matches ?? 0) - (failing === undefined ? 0 : Number(counts.failing_matches ?? 0));
  }
  if (total === 0) return listed('price_empty', { rows: [], total });
  const reach = page.offset + page.limit;
  const plain = plainPricePlan({ reach, rangeListings, matches, classPlanCost: POSTGRES_CLASS_COSTS.plan });
  const ranges = async () => counts.class_ranges ?? (await readClassRanges(db, { asset, type }, max));
  const classes =
    plan?.startsWith('by-classes') || (plan === undefined && plain.tryClasses)
      ? classPlan(await ranges(), type, max, { matches, belowClass }, reach, plan === 'by-classes-max-by-price')
      : undefined;
  const chosen: PricePagePlan = plan ?? (classes && classes.cost < plain.cost ? 'by-classes' : plain.plan);
  listed(pricePlanPath(chosen));
  if (chosen.startsWith('by-classes') && classes!.arms.length === 0) return { rows: [], total };
  const shape: PricedPageShape = { plan: chosen, failing, arms: chosen.startsWith('by-classes') ? classes!.arms : [] };
  const statement = pricedPageStatement(filters, shape, others, page, now, visibleSince);
  const same =
    guessed && guessed.statement.text === statement.text && JSON.stringify(guessed.statement.values) === JSON.stringify(statement.values);
  return { rows: same ? await guessed.rows : await readPage(db, statement), total, shape };
}
