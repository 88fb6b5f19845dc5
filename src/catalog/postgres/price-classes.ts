/**
 * Deep `asset` + `maxAmount` list pages by price classes on PostgreSQL (sqlite/price-classes.ts
 * explains them): the same two by-time indexes per type (expression indexes on the price key's
 * digit count and class, with the price included so each range is read from the index alone),
 * the ranges found by a recursive hop over the buckets (carried by a deep page's list counts
 * statement: postgres/price-counts.ts classRangesSql), and one UNION ALL ordered by time, which the planner answers with a
 * Merge Append of index scans, each stopped at offset + limit rows.
 */
import { type ClassArm, POSTGRES_CLASS_COSTS, PRICE_CLASS, PRICE_DIGITS, classPageCost, maxClassRead } from '../price.ts';
import { parameters, type Db } from './queries.ts';
import { classRangesSql, type ClassRanges } from './price-counts.ts';

/** Catalog migration 11: the by-time indexes per type and digit count, and per type and class; indexes only. */
export const PRICE_CLASS_INDEXES_MIGRATION = `
  CREATE INDEX listing_prices_typed_digits_by_time
    ON listing_prices (asset, type, left(price, ${PRICE_DIGITS}), last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE INDEX listing_prices_typed_class_by_time
    ON listing_prices (asset, type, left(price, ${PRICE_CLASS}), last_updated DESC, listing_id DESC) INCLUDE (price);`;

/** classRangesSql's rows read on their own: one round trip (a list page whose counts did not carry them). */
export async function readClassRanges(db: Db, range: { asset: string; type: string | undefined }, max: string): Promise<ClassRanges> {
  const { values, p } = parameters();
  return (await db.query<{ ranges: ClassRanges }>(`SELECT ${classRangesSql(p, range, max)} AS ranges`, values)).rows[0]!.ranges;
}

/** The ranges of a by-classes page and its cost (sqlite/price-classes.ts classPlan), from classRangesSql's rows. */
export function classPlan(
  ranges: ClassRanges,
  type: string | undefined,
  max: string,
  counts: { matches: number; belowClass: number },
  reach: number,
  maxByPrice = false,
): { arms: ClassArm[]; cost: number } {
  const maxClass = max.slice(0, PRICE_CLASS);
  const types = type !== undefined ? [type] : ranges.filter(([kind]) => kind === 'type').map(([, value]) => value);
  const arms: ClassArm[] = [];
  for (const [kind, prefix] of ranges)
    if (kind === 'digits' || kind === 'class') for (const t of types) arms.push({ kind, type: t, prefix });
  const size = Number(ranges.find(([kind]) => kind === 'size')?.[1] ?? 0);
  const maxRead = maxClassRead({ reach, matches: counts.matches, inClass: counts.matches - counts.belowClass, size, maxByPrice });
  if (maxRead) for (const t of types) arms.push({ kind: maxRead.kind, type: t, prefix: maxClass });
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
