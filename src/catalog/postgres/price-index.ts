/**
 * The list endpoint's price index on PostgreSQL (sqlite/price-index.ts explains it; the pages are read
 * by the engine both stores share, ../price.ts pricePage, from the statements here): per listing and
 * price index key its smallest amount with lastUpdated and the listing's type (`listing_prices`), and
 * per key, level, price key prefix and type a count (`price_counts`), kept in the write transaction (a
 * listing's writes are serialized by its advisory lock, store.ts) and on withdrawal. A count that falls
 * to zero is kept (concurrent writers of other listings may be adding to it); it adds nothing to a sum.
 */
import {
  PRICE_CLASS,
  PRICE_DIGITS,
  POSTGRES_CLASS_COSTS,
  type ClassArm,
  type ClassRanges,
  type PriceIndex,
  type PricePagePlan,
  type PriceRead,
  type PricedPageShape,
  priceFilter,
  priceIndexKeys,
  priceKey,
  priceLevelRowsSql,
  pricePage,
} from '../price.ts';
import { classRangesSql, type PriceCounts } from './price-counts.ts';
import type { ListingKey, ListingRow } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import { runAsync } from '../steps.ts';
import { heldFiltersSql, pageListingsStatement, parameters, readPage, type Db, type PageStatement } from './queries.ts';

/**
 * The upsert that adds each row of the CTE `deltas (asset, price, type, d)` (d: 1 for a listing more at that price, -1 for
 * one less) to its rows of `price_counts`, one per level, as the last part of one statement. Summed per row first: one
 * statement cannot update a row twice, and a lowered price often stays in its bucket. Conflict-safe, so concurrent
 * writers of other listings add to it.
 */
const COUNT_PRICE_DELTAS = `
  INSERT INTO price_counts (asset, level, price, type, n)
  SELECT asset, level, price, type, sum(d) FROM (${priceLevelRowsSql('deltas', ', p.d AS d')}) r GROUP BY asset, level, price, type
  ON CONFLICT (asset, level, price, type) DO UPDATE SET n = price_counts.n + excluded.n`;

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
       UNION ALL SELECT asset, old, $2, -1 FROM changed WHERE old IS NOT NULL)
     ${COUNT_PRICE_DELTAS}`,
    [listing.id, listing.type, price === undefined ? [] : priceIndexKeys(terms), price ?? '', lastUpdated],
  );
}

/** A withdrawn listing leaves the index and its counts (withdraw.ts), in one statement. */
export async function removePrices(db: Db, listingId: string | number): Promise<void> {
  await db.query(
    `WITH removed AS (DELETE FROM listing_prices WHERE listing_id = $1 RETURNING asset, price, type),
     deltas AS (SELECT asset, price, type, -1 AS d FROM removed)
     ${COUNT_PRICE_DELTAS}`,
    [listingId],
  );
}

/**
 * A priced page's conditions on `listing_prices p` beyond the price range, for its statement and its count alike: listings
 * hidden by age, the other key filters, listings failing liveness. `p` adds a parameter.
 */
const beyondRangeSql = (p: (value: unknown) => string, read: PriceRead) =>
  (read.visibleSince === undefined ? '' : ` AND p.last_updated >= ${p(read.visibleSince)}`) +
  heldFiltersSql(p, 'p.listing_id', read.others, { failing: read.failing });

/** A priced page's conditions on `listing_prices p`: the price range, then beyondRangeSql (parameters in text order). */
const rangeSql = (p: (value: unknown) => string, read: PriceRead) =>
  `p.asset = ${p(read.key)}${read.type === undefined ? '' : ` AND p.type = ${p(read.type)}`} AND p.price <= ${p(read.max)}` +
  beyondRangeSql(p, read);

/** The condition of each kind of class range on `p` (parameters: key, type, prefix; `max-…` also max). */
const ARM_SQL: Record<ClassArm['kind'], (p: (v: unknown) => string, arm: ClassArm, read: PriceRead) => string> = {
  digits: (p, arm, read) => `p.asset = ${p(read.key)} AND p.type = ${p(arm.type)} AND left(p.price, ${PRICE_DIGITS}) = ${p(arm.prefix)}`,
  class: (p, arm, read) => `p.asset = ${p(read.key)} AND p.type = ${p(arm.type)} AND left(p.price, ${PRICE_CLASS}) = ${p(arm.prefix)}`,
  'max-by-time': (p, arm, read) =>
    `p.asset = ${p(read.key)} AND p.type = ${p(arm.type)} AND left(p.price, ${PRICE_CLASS}) = ${p(arm.prefix)} AND p.price <= ${p(read.max)}`,
  'max-by-price': (p, arm, read) =>
    `p.asset = ${p(read.key)} AND p.type = ${p(arm.type)} AND p.price >= ${p(arm.prefix)} AND p.price <= ${p(read.max)}`,
};

/** A priced page's read of `filters` (its other key filters `others`), as pricePage reads it. */
const priceRead = (
  filters: DiscoveryFilters,
  others: ListingKey[],
  visibleSince: string | undefined,
  failing: string | undefined,
): PriceRead => {
  const { key, max } = priceFilter(filters)!;
  return { key, type: filters.type, max, others, visibleSince, failing };
};

/**
 * The statement of a priced page (pageListingsStatement's) of `shape`. Without other key filters it is run with its
 * generic plan (queries.ts readPage), since its shape fixes the plan: by time it reads the by-time index in page order,
 * by price the by-price index's range, by classes each range's by-time index cut at offset + limit (a Merge Append of
 * index scans), whatever the values. Another key filter's EXISTS is planned with its values.
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
  const read = priceRead(
    filters,
    others.map((o) => o.key),
    visibleSince,
    shape.failing,
  );
  const order = (t: string) => `ORDER BY ${t}.last_updated DESC, ${t}.${t === 'p' ? 'listing_id' : 'id'} DESC`;
  const paged = `LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
  let sql: string;
  if (shape.plan.startsWith('by-classes')) {
    const reach = p(page.offset + page.limit);
    const ranges = shape.arms.map(
      (arm) =>
        `(SELECT p.listing_id AS id, p.last_updated FROM listing_prices p WHERE ${ARM_SQL[arm.kind](p, arm, read)}${beyondRangeSql(p, read)}
          ${order('p')} LIMIT ${reach})`,
    );
    sql = `SELECT m.id, m.last_updated FROM (${ranges.join(' UNION ALL ')}) m ${order('m')} ${paged}`;
  } else if (shape.plan === 'by-price') {
    sql = `WITH m AS MATERIALIZED (SELECT p.listing_id, p.last_updated FROM listing_prices p WHERE ${rangeSql(p, read)})
      SELECT p.listing_id AS id, p.last_updated FROM m p ${order('p')} ${paged}`;
  } else {
    sql = `SELECT p.listing_id AS id, p.last_updated FROM listing_prices p WHERE ${rangeSql(p, read)} ${order('p')} ${paged}`;
  }
  return { ...pageListingsStatement(sql, params, now), generic: others.length === 0 };
}

/**
 * A list page driven by the price index (../price.ts pricePage) with its listings read in the statement that selects it
 * (pricedPageStatement), or undefined when another key filter holds fewer listings than the price matches. `counts` are
 * price-counts.ts priceCountsSql's, read with the list's counts (a deep page's class ranges with them). `guessed` is a
 * page statement sent before the counts were read (price-guess.ts): its rows are the page's when it is the very statement
 * chosen here (same text, same values, same snapshot), else they are left unread and the chosen statement is sent.
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
  const index: PriceIndex<ListingRow> = {
    async countMatches(read) {
      const { values, p } = parameters();
      return Number(
        (await db.query<{ n: string }>(`SELECT count(*) AS n FROM listing_prices p WHERE ${rangeSql(p, read)}`, values)).rows[0]!.n,
      );
    },
    hiddenMatches: () => Number(counts.aged_matches ?? 0) + (failing === undefined ? 0 : Number(counts.failing_matches ?? 0)),
    async classRanges(range) {
      const { values, p } = parameters();
      return (await db.query<{ ranges: ClassRanges }>(`SELECT ${classRangesSql(p, range)} AS ranges`, values)).rows[0]!.ranges;
    },
    async page(read, shape, page) {
      const statement = pricedPageStatement(
        filters,
        shape,
        read.others.map((key) => ({ key })),
        page,
        now,
        read.visibleSince,
      );
      const same =
        guessed &&
        guessed.statement.text === statement.text &&
        JSON.stringify(guessed.statement.values) === JSON.stringify(statement.values);
      return same ? await guessed.rows : await readPage(db, statement);
    },
  };
  const found = {
    below: Number(counts.below),
    within: Number(counts.within),
    listings: Number(counts.listings),
    assetAged: counts.asset_aged === null ? undefined : Number(counts.asset_aged),
    classRanges: counts.class_ranges ?? undefined,
  };
  return runAsync(
    index,
    pricePage<ListingRow>({ filters, counted, counts: found, page, visibleSince, failing, costs: POSTGRES_CLASS_COSTS, plan }),
  );
}
