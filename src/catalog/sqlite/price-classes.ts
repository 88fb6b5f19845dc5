/**
 * Deep `asset` + `maxAmount` list pages by price classes (docs/CATALOG.md "Price filters"), beside
 * the price index (price-index.ts). A page in time order under a price bound M is two-dimensional:
 * the by-time walk skips every dearer entry before the offset, the by-price read takes every match
 * and sorts. But a price key's digit count and its class (digit count and leading digit,
 * ../price.ts) say, without the rest of the key, whether a listing is below M: every key of a
 * digit count below M's, or of a class below M's in its digit count, is. Migration 11 indexes
 * each type's rows by digit count and by class, then time, so each such range is already in page
 * order: SQLite merges them with M's own class's matches (a compound SELECT ordered by time: MERGE,
 * no sort) and stops after offset + limit rows. A page then reads about offset + limit merged rows
 * plus M's class's share, instead of offset ÷ the share of matches.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { type ClassArm, PRICE_CLASS, PRICE_DIGITS, SQLITE_CLASS_COSTS, classPageCost, maxClassRead } from '../price.ts';

/**
 * Migration 11: by-time indexes of each type's digit counts and classes (classPageSql). Expression
 * indexes, so the migration only builds them (no row is rewritten); each also holds the price
 * itself, without which SQLite reads the row to evaluate the expression and the walk is no longer
 * covered by the index.
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
 * A price filter's index range: the rows of its price index key (`asset`: the asset, or the asset
 * on a network, ../price.ts priceIndexKey), or those rows of one type (the list's `type` filter).
 */
export interface PriceRange {
  asset: string;
  type: string | undefined;
}

/** `AND type = ?` when the range has a type, and its parameter. */
export const typeSql = (range: PriceRange, column: string) => (range.type === undefined ? '' : ` AND ${column} = ?`);
export const typeParams = (range: PriceRange) => (range.type === undefined ? [] : [range.type]);

/** The next price key prefix of the same length ("000000005" → "000000006"). */
const nextPrefix = (prefix: string) => String(BigInt(prefix) + 1n).padStart(prefix.length, '0');

/**
 * The ranges of a by-classes page and its expected cost in index entries read: each digit count
 * below max's and each class below max's in its digit count, found by hopping over the buckets
 * (one seek per prefix, whatever the number of buckets), per type of the range; and max's own
 * class, read by time (skipping its dearer entries) or by price (its matches, sorted), whichever
 * the counts say reads less.
 */
export function classPlan(
  db: DatabaseSync,
  range: PriceRange,
  max: string,
  counts: { matches: number; belowClass: number },
  reach: number,
  maxByPrice = false,
): { arms: ClassArm[]; cost: number } {
  const maxDigits = max.slice(0, PRICE_DIGITS);
  const maxClass = max.slice(0, PRICE_CLASS);
  const types =
    range.type !== undefined
      ? [range.type]
      : (cachedStatement(db, "SELECT value FROM listing_counts WHERE kind = 'type' AND n > 0").all() as Array<{ value: string }>).map(
          (r) => r.value,
        );
  const first = cachedStatement(
    db,
    `SELECT bucket FROM price_buckets WHERE asset = ? AND bucket >= ? AND bucket < ?${typeSql(range, 'type')} AND n > 0
     ORDER BY bucket LIMIT 1`,
  );
  const prefixes = (from: string, below: string, length: number) => {
    const found: string[] = [];
    for (let at = from; ;) {
      const row = first.get(range.asset, at, below, ...typeParams(range)) as { bucket: string } | undefined;
      if (!row) return found;
      const prefix = row.bucket.slice(0, length);
      found.push(prefix);
      at = nextPrefix(prefix);
    }
  };
  const arms: ClassArm[] = [];
  for (const prefix of prefixes('', maxDigits, PRICE_DIGITS)) for (const type of types) arms.push({ kind: 'digits', type, prefix });
  for (const prefix of prefixes(maxDigits, maxClass, PRICE_CLASS)) for (const type of types) arms.push({ kind: 'class', type, prefix });
  const inClass = counts.matches - counts.belowClass;
  const size =
    inClass > 0
      ? Number(
          (
            cachedStatement(
              db,
              `SELECT coalesce(sum(n), 0) AS n FROM price_buckets WHERE asset = ? AND bucket >= ? AND bucket < ?${typeSql(range, 'type')}`,
            ).get(range.asset, maxClass, `${maxClass}~`, ...typeParams(range)) as { n: number }
          ).n,
        )
      : 0;
  const read = maxClassRead({ reach, matches: counts.matches, inClass, size, maxByPrice });
  if (read) for (const type of types) arms.push({ kind: read.kind, type, prefix: maxClass });
  return { arms, cost: classPageCost(reach, arms.length, read?.cost ?? 0, SQLITE_CLASS_COSTS) };
}

/** The index and condition of each kind of class range (three parameters: asset, type, prefix; `max-…` a fourth, max). */
const CLASS_ARM_SQL: Record<ClassArm['kind'], string> = {
  digits: `INDEXED BY listing_prices_typed_digits_by_time WHERE p.asset = ? AND p.type = ? AND substr(p.price, 1, ${PRICE_DIGITS}) = ?`,
  class: `INDEXED BY listing_prices_typed_class_by_time WHERE p.asset = ? AND p.type = ? AND substr(p.price, 1, ${PRICE_CLASS}) = ?`,
  'max-by-time': `INDEXED BY listing_prices_typed_class_by_time WHERE p.asset = ? AND p.type = ? AND substr(p.price, 1, ${PRICE_CLASS}) = ? AND p.price <= ?`,
  'max-by-price': 'INDEXED BY listing_prices_typed_by_price WHERE p.asset = ? AND p.type = ? AND p.price >= ? AND p.price <= ?',
};

/**
 * A by-classes page (docs/CATALOG.md "Price filters"): every listing of a digit count below max's,
 * or of a class below max's, is a match, and each such range of the by-time class indexes is
 * already in page order, so SQLite merges them (a compound SELECT ordered by time: MERGE, no
 * sort) with max's own class's matches, and stops after `offset + limit` rows. The cost is those
 * rows plus max's class's share instead of offset ÷ density. `rest` is the page's other
 * conditions (hidden listings, other key filters) on `p`, applied in every range.
 */
export function classPageSql(
  arms: ClassArm[],
  asset: string,
  max: string,
  rest: { sql: string; params: Array<string | number> },
): { sql: string; params: Array<string | number> } {
  const sql =
    arms
      .map((arm) => `SELECT p.listing_id AS id, p.last_updated AS last_updated FROM listing_prices p ${CLASS_ARM_SQL[arm.kind]}${rest.sql}`)
      .join(' UNION ALL ') + ' ORDER BY last_updated DESC, id DESC LIMIT ? OFFSET ?';
  const params = arms.flatMap((arm) => [asset, arm.type, arm.prefix, ...(arm.kind.startsWith('max') ? [max] : []), ...rest.params]);
  return { sql, params };
}
