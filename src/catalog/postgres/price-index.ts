/**
 * The list endpoint's price index on PostgreSQL (sqlite/price-index.ts explains it): per listing
 * and asset its smallest amount with lastUpdated (`listing_prices`), per asset and price point a
 * count (`price_counts`), kept in the write transaction (a listing's writes are serialized by its
 * advisory lock, store.ts) and on withdrawal. A count that falls to zero is kept (concurrent
 * writers of other listings may be adding to it); it adds nothing to a sum.
 */
import { PRICE_BUCKET, priceFilter, priceKey } from '../price.ts';
import type { ListingKey } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import { hiddenCount } from './list-index.ts';
import { parameters, type Db } from './queries.ts';

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

async function countPrice(db: Db, asset: string, price: string, delta: number): Promise<void> {
  await db.query(
    `INSERT INTO price_counts (asset, price, n) VALUES ($1, $2, $3)
     ON CONFLICT (asset, price) DO UPDATE SET n = price_counts.n + excluded.n`,
    [asset, price, delta],
  );
  await db.query(
    `INSERT INTO price_buckets (asset, bucket, n) VALUES ($1, $2, $3)
     ON CONFLICT (asset, bucket) DO UPDATE SET n = price_buckets.n + excluded.n`,
    [asset, price.slice(0, PRICE_BUCKET), delta],
  );
}

/** One write of a listing (sqlite/price-index.ts recordPrice). */
export async function recordPrice(db: Db, listingId: number, lastUpdated: string, asset: unknown, amount: unknown): Promise<void> {
  await db.query('UPDATE listing_prices SET last_updated = $1 WHERE listing_id = $2 AND last_updated <> $1', [lastUpdated, listingId]);
  const price = priceKey(amount);
  if (typeof asset !== 'string' || price === undefined) return;
  const current = (
    await db.query<{ price: string }>('SELECT price FROM listing_prices WHERE listing_id = $1 AND asset = $2', [listingId, asset])
  ).rows[0];
  if (current && current.price <= price) return;
  if (current) {
    await db.query('UPDATE listing_prices SET price = $1 WHERE listing_id = $2 AND asset = $3', [price, listingId, asset]);
    await countPrice(db, asset, current.price, -1);
  } else {
    await db.query('INSERT INTO listing_prices (listing_id, asset, price, last_updated) VALUES ($1, $2, $3, $4)', [
      listingId,
      asset,
      price,
      lastUpdated,
    ]);
  }
  await countPrice(db, asset, price, 1);
}

/** A withdrawn listing leaves the index and its counts (withdraw.ts). */
export async function removePrices(db: Db, listingId: string | number): Promise<void> {
  const rows = await db.query<{ asset: string; price: string }>('DELETE FROM listing_prices WHERE listing_id = $1 RETURNING asset, price', [
    listingId,
  ]);
  for (const row of rows.rows) await countPrice(db, row.asset, row.price, -1);
}

/** The condition "listing `id` has an entry in asset A at most M" for the list query's other path. */
export const priceMatchSql = (id: string, p: (value: unknown) => string, priced: { asset: string; max: string }) =>
  `EXISTS (SELECT 1 FROM listing_prices pr WHERE pr.listing_id = ${id} AND pr.asset = ${p(priced.asset)} AND pr.price <= ${p(priced.max)})`;

/**
 * A list page driven by the price index (sqlite/price-index.ts listByPrice, the same choices), or
 * undefined when another key filter holds fewer listings than the price matches.
 */
export async function listPriced(
  db: Db,
  filters: DiscoveryFilters,
  counted: Array<{ key: ListingKey; n: number }>,
  page: { limit: number; offset: number },
  visibleSince: string | undefined,
  failing: string | undefined,
): Promise<{ ids: number[]; total: number } | undefined> {
  const priced = priceFilter(filters);
  if (!priced) return undefined;
  const { asset, max } = priced;
  const matches = Number(
    (
      await db.query<{ n: string }>(
        `SELECT (SELECT coalesce(sum(n), 0) FROM price_buckets WHERE asset = $1 AND bucket < $2)
              + (SELECT coalesce(sum(n), 0) FROM price_counts WHERE asset = $1 AND price >= $2 AND price <= $3) AS n`,
        [asset, max.slice(0, PRICE_BUCKET), max],
      )
    ).rows[0]!.n,
  );
  const others = counted.filter((c) => c.key.kind !== 'asset');
  if (others.some((o) => o.n < matches)) return undefined;
  const assetListings = counted.find((c) => c.key.kind === 'asset')?.n ?? 0;
  const { values, p } = parameters();
  const where =
    `p.asset = ${p(asset)} AND p.price <= ${p(max)}` +
    (visibleSince === undefined ? '' : ` AND p.last_updated >= ${p(visibleSince)}`) +
    others
      .map(
        (o) =>
          ` AND EXISTS (SELECT 1 FROM listing_keys o WHERE o.kind = ${p(o.key.kind)} AND o.value = ${p(o.key.value)} AND o.listing_id = p.listing_id)`,
      )
      .join('') +
    (failing === undefined ? '' : ` AND p.listing_id NOT IN (SELECT id FROM listings WHERE liveness_failing_since < ${p(failing)})`);
  let total: number;
  if (
    others.length > 0 ||
    (visibleSince !== undefined && (await hiddenCount(db, { kind: 'asset', value: asset }, visibleSince)) > matches)
  ) {
    total = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM listing_prices p WHERE ${where}`, values)).rows[0]!.n);
  } else {
    total = matches - (await hiddenMatches(db, asset, max, visibleSince, failing));
  }
  if (total === 0) return { ids: [], total };
  const order = `ORDER BY p.last_updated DESC, p.listing_id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
  const sparse = (page.offset + page.limit) * assetListings > matches * matches;
  // Sparse: every match read from the by-price index, then sorted; dense: the by-time index in page order.
  const sql = sparse
    ? `WITH m AS MATERIALIZED (SELECT p.listing_id, p.last_updated FROM listing_prices p WHERE ${where})
       SELECT p.listing_id AS id FROM m p ${order}`
    : `SELECT p.listing_id AS id FROM listing_prices p WHERE ${where} ${order}`;
  const ids = (await db.query<{ id: string }>(sql, values)).rows.map((r) => Number(r.id));
  return { ids, total };
}

async function hiddenMatches(
  db: Db,
  asset: string,
  max: string,
  visibleSince: string | undefined,
  failing: string | undefined,
): Promise<number> {
  let n = 0;
  if (visibleSince !== undefined) {
    const aged = await db.query<{ n: string }>(
      'SELECT count(*) AS n FROM listing_prices WHERE asset = $1 AND last_updated < $2 AND price <= $3',
      [asset, visibleSince, max],
    );
    n += Number(aged.rows[0]!.n);
  }
  if (failing !== undefined) {
    const row = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM listings h JOIN listing_prices p ON p.listing_id = h.id AND p.asset = $1
       WHERE h.liveness_failing_since < $2 AND p.price <= $3${visibleSince === undefined ? '' : ' AND p.last_updated >= $4'}`,
      [asset, failing, max, ...(visibleSince === undefined ? [] : [visibleSince])],
    );
    n += Number(row.rows[0]!.n);
  }
  return n;
}
