/**
 * The SQLite price index's migrations (catalog migrations 8, 9, 11, 13, 14 and 29; the index itself is
 * price-index.ts).
 */
import type { DatabaseSync } from 'node:sqlite';
import { PRICE_CLASS, PRICE_DIGITS, priceLevelRowsSql } from '../price.ts';

/** The same key in SQL, of a column holding amountKey's form (the migration's backfill). */
const PRICE_KEY_SQL = (column: string) => `printf('%09d', length(${column})) || ${column}`;

/**
 * Migration 8: the price index, per listing and asset its smallest amount (its counts: migration 29, which
 * drops the counts of a catalog that migrated before it).
 */
export function migrateToPriceIndex(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE listing_prices (
      listing_id INTEGER NOT NULL,
      asset TEXT NOT NULL,
      price TEXT NOT NULL,
      last_updated TEXT NOT NULL,
      PRIMARY KEY (listing_id, asset)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_prices_by_time ON listing_prices (asset, last_updated, listing_id, price);
    CREATE INDEX listing_prices_by_price ON listing_prices (asset, price, last_updated, listing_id);
    INSERT INTO listing_prices (listing_id, asset, price, last_updated)
      SELECT a.listing_id, a.asset, min(${PRICE_KEY_SQL('a.amount')}), l.last_updated
      FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
      WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL GROUP BY a.listing_id, a.asset;
  `);
}

/**
 * Migration 9: the price index keeps each listing's type (its rows from `listings`), indexed with it. The table is
 * rebuilt rather than altered, so `type` has no default a later write could fall back on.
 */
export function migrateToTypedPriceIndex(db: DatabaseSync): void {
  db.exec(`
    ALTER TABLE listing_prices RENAME TO listing_prices_untyped;
    DROP INDEX listing_prices_by_time;
    DROP INDEX listing_prices_by_price;
    CREATE TABLE listing_prices (
      listing_id INTEGER NOT NULL,
      asset TEXT NOT NULL,
      type TEXT NOT NULL,
      price TEXT NOT NULL,
      last_updated TEXT NOT NULL,
      PRIMARY KEY (listing_id, asset)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_prices_by_time ON listing_prices (asset, last_updated, listing_id, price);
    CREATE INDEX listing_prices_by_price ON listing_prices (asset, price, last_updated, listing_id);
    CREATE INDEX listing_prices_typed_by_time ON listing_prices (asset, type, last_updated, listing_id, price);
    CREATE INDEX listing_prices_typed_by_price ON listing_prices (asset, type, price, last_updated, listing_id);
    INSERT INTO listing_prices (listing_id, asset, type, price, last_updated)
      SELECT p.listing_id, p.asset, l.type, p.price, p.last_updated FROM listing_prices_untyped p JOIN listings l ON l.id = p.listing_id;
    DROP TABLE listing_prices_untyped;
  `);
}

/** A network's price index key in SQL (price.ts priceIndexKey), of listing_accepts `a`. */
const NETWORK_KEY_SQL = "char(1) || 'n' || length(a.network) || ':' || a.network || a.asset";

/**
 * Migration 13: each listing's smallest amount per asset on each network, under the network's key (price.ts
 * priceIndexKey), so `network` + `asset` + `maxAmount` is one index range. Rows only: the table and indexes stay. A
 * bare asset that starts with the key's marker (none is a real asset) is marked first, as priceIndexKey marks it.
 */
export function migrateToNetworkPriceKeys(db: DatabaseSync): void {
  db.exec(`
    UPDATE listing_prices SET asset = char(1) || 'a' || asset WHERE asset >= char(1) AND asset < char(2);
    INSERT INTO listing_prices (listing_id, asset, type, price, last_updated)
      SELECT a.listing_id, ${NETWORK_KEY_SQL}, l.type, min(${PRICE_KEY_SQL('a.amount')}), l.last_updated
      FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
      WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL AND a.network IS NOT NULL
      GROUP BY a.listing_id, a.network, a.asset;
  `);
}

/** A scheme's, and a scheme and network's, price index keys in SQL (price.ts priceIndexKey), of listing_accepts `a`. */
const SCHEME_KEY_SQL = "char(1) || 's' || length(a.scheme) || ':' || a.scheme || a.asset";
const SCHEME_NETWORK_KEY_SQL = "char(1) || 'p' || length(a.scheme) || ':' || a.scheme || length(a.network) || ':' || a.network || a.asset";

/**
 * Migration 14: each listing's smallest amount per asset under each scheme and under each scheme on each network,
 * under their keys (price.ts priceIndexKey), so `scheme` (with or without `network`) + `asset` + `maxAmount` is one
 * index range. Rows only, as migration 13.
 */
export function migrateToSchemePriceKeys(db: DatabaseSync): void {
  db.exec(`
    INSERT INTO listing_prices (listing_id, asset, type, price, last_updated)
      SELECT a.listing_id, ${SCHEME_KEY_SQL}, l.type, min(${PRICE_KEY_SQL('a.amount')}), l.last_updated
      FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
      WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL
      GROUP BY a.listing_id, a.scheme, a.asset;
    INSERT INTO listing_prices (listing_id, asset, type, price, last_updated)
      SELECT a.listing_id, ${SCHEME_NETWORK_KEY_SQL}, l.type, min(${PRICE_KEY_SQL('a.amount')}), l.last_updated
      FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
      WHERE a.asset IS NOT NULL AND a.amount IS NOT NULL
      GROUP BY a.listing_id, a.scheme, a.network, a.asset;
  `);
}

/**
 * Migration 11: by-time indexes of each type's digit counts and classes (a by-classes page's
 * ranges). Expression indexes, so the migration only builds them; each also holds the price, without
 * which SQLite reads the row to evaluate the expression and the walk is no longer covered.
 */
export function migrateToPriceClassIndexes(db: DatabaseSync): void {
  db.exec(`
    CREATE INDEX listing_prices_typed_digits_by_time
      ON listing_prices (asset, type, substr(price, 1, ${PRICE_DIGITS}), last_updated, listing_id, price);
    CREATE INDEX listing_prices_typed_class_by_time
      ON listing_prices (asset, type, substr(price, 1, ${PRICE_CLASS}), last_updated, listing_id, price);
  `);
}

/**
 * Migration 29: the counts, `price_counts` per level (../price.ts PRICE_LEVELS), built from the index; a catalog
 * migrated before it loses its counts per point and per bucket (migrations 8 to 14 built them then).
 */
export function migrateToPriceLevels(db: DatabaseSync): void {
  db.exec(`
    DROP TABLE IF EXISTS price_counts;
    DROP TABLE IF EXISTS price_buckets;
    CREATE TABLE price_counts (
      asset TEXT NOT NULL,
      level INTEGER NOT NULL,
      price TEXT NOT NULL,
      type TEXT NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (asset, level, price, type)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO price_counts (asset, level, price, type, n)
      SELECT asset, level, price, type, count(*) FROM (${priceLevelRowsSql('listing_prices')}) r GROUP BY asset, level, price, type;
  `);
}
