/**
 * Deep `asset` + `maxAmount` list pages by price classes on PostgreSQL (sqlite/price-classes.ts
 * explains them): the same two by-time indexes per type (expression indexes on the price key's
 * digit count and class, with the price included so each range is read from the index alone),
 * the ranges found in one statement (a recursive hop over the buckets), and one UNION ALL ordered
 * by time, which the planner answers with a Merge Append of index scans, each stopped at
 * offset + limit rows.
 */
import { type ClassArm, POSTGRES_CLASS_COSTS, PRICE_CLASS, PRICE_DIGITS, classPageCost, maxClassRead } from '../price.ts';
import type { Db } from './queries.ts';

/** Catalog migration 11: the by-time indexes per type and digit count, and per type and class; indexes only. */
export const PRICE_CLASS_INDEXES_MIGRATION = `
  CREATE INDEX listing_prices_typed_digits_by_time
    ON listing_prices (asset, type, left(price, ${PRICE_DIGITS}), last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE INDEX listing_prices_typed_class_by_time
    ON listing_prices (asset, type, left(price, ${PRICE_CLASS}), last_updated DESC, listing_id DESC) INCLUDE (price);`;

/** The ranges of a by-classes page and its cost (sqlite/price-classes.ts classPlan), in one round trip. */
export async function classPlan(
  db: Db,
  range: { asset: string; type: string | undefined },
  max: string,
  counts: { matches: number; belowClass: number },
  reach: number,
  maxByPrice = false,
): Promise<{ arms: ClassArm[]; cost: number }> {
  const maxDigits = max.slice(0, PRICE_DIGITS);
  const maxClass = max.slice(0, PRICE_CLASS);
  const hop = (length: number, from: string, below: string, prev: string) =>
    `SELECT left(b.bucket, ${length}) FROM price_buckets b
     WHERE b.asset = $1 AND b.bucket >= ${from} AND b.bucket > ${prev} AND b.bucket < ${below} AND b.n > 0 AND ($4::text IS NULL OR b.type = $4)
     ORDER BY b.bucket LIMIT 1`;
  const { rows } = await db.query<{ kind: string; value: string }>(
    `WITH RECURSIVE
       digits(prefix) AS (
         SELECT (${hop(PRICE_DIGITS, "''", '$2', "''")})
         UNION ALL SELECT (${hop(PRICE_DIGITS, "''", '$2', "d.prefix || '~'")}) FROM digits d WHERE d.prefix IS NOT NULL),
       classes(prefix) AS (
         SELECT (${hop(PRICE_CLASS, '$2', '$3', "''")})
         UNION ALL SELECT (${hop(PRICE_CLASS, '$2', '$3', "c.prefix || '~'")}) FROM classes c WHERE c.prefix IS NOT NULL)
     SELECT 'digits' AS kind, prefix AS value FROM digits WHERE prefix IS NOT NULL
     UNION ALL SELECT 'class', prefix FROM classes WHERE prefix IS NOT NULL
     UNION ALL SELECT 'type', value FROM listing_counts WHERE kind = 'type' AND n > 0 AND $4::text IS NULL
     UNION ALL SELECT 'size', coalesce(sum(n), 0)::text FROM price_buckets
       WHERE asset = $1 AND bucket >= $3 AND bucket < $3 || '~' AND ($4::text IS NULL OR type = $4)`,
    [range.asset, maxDigits, maxClass, range.type ?? null],
  );
  const types = range.type !== undefined ? [range.type] : rows.filter((r) => r.kind === 'type').map((r) => r.value);
  const arms: ClassArm[] = [];
  for (const r of rows)
    if (r.kind === 'digits' || r.kind === 'class') for (const type of types) arms.push({ kind: r.kind, type, prefix: r.value });
  const size = Number(rows.find((r) => r.kind === 'size')?.value ?? 0);
  const maxRead = maxClassRead({ reach, matches: counts.matches, inClass: counts.matches - counts.belowClass, size, maxByPrice });
  if (maxRead) for (const type of types) arms.push({ kind: maxRead.kind, type, prefix: maxClass });
  return { arms, cost: classPageCost(reach, arms.length, maxRead?.cost ?? 0, POSTGRES_CLASS_COSTS) };
}

/** The condition of each kind of class range on `p` (parameters: asset, type, prefix; `max-…` also max). */
const ARM_SQL: Record<ClassArm['kind'], (p: (v: unknown) => string, arm: ClassArm, asset: string, max: string) => string> = {
  digits: (p, arm, asset) => `p.asset = ${p(asset)} AND p.type = ${p(arm.type)} AND left(p.price, ${PRICE_DIGITS}) = ${p(arm.prefix)}`,
  class: (p, arm, asset) => `p.asset = ${p(asset)} AND p.type = ${p(arm.type)} AND left(p.price, ${PRICE_CLASS}) = ${p(arm.prefix)}`,
  'max-by-time': (p, arm, asset, max) =>
    `p.asset = ${p(asset)} AND p.type = ${p(arm.type)} AND left(p.price, ${PRICE_CLASS}) = ${p(arm.prefix)} AND p.price <= ${p(max)}`,
  'max-by-price': (p, arm, asset, max) =>
    `p.asset = ${p(asset)} AND p.type = ${p(arm.type)} AND p.price >= ${p(arm.prefix)} AND p.price <= ${p(max)}`,
};

/**
 * A by-classes page's statement: each range ordered by time and cut at offset + limit (so the
 * planner reads each from its index in order), merged and paged. `rest(p)` is the page's other
 * conditions on `p`.
 */
export function classPageSql(
  arms: ClassArm[],
  asset: string,
  max: string,
  page: { limit: number; offset: number },
  rest: (p: (v: unknown) => string) => string,
  p: (v: unknown) => string,
): string {
  const reach = p(page.offset + page.limit);
  const ranges = arms
    .map(
      (arm) =>
        `(SELECT p.listing_id AS id, p.last_updated FROM listing_prices p WHERE ${ARM_SQL[arm.kind](p, arm, asset, max)}${rest(p)}
          ORDER BY p.last_updated DESC, p.listing_id DESC LIMIT ${reach})`,
    )
    .join(' UNION ALL ');
  return `SELECT m.id, m.last_updated FROM (${ranges}) m ORDER BY m.last_updated DESC, m.id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
}
