/**
 * An `asset` + `maxAmount` list page's counts on PostgreSQL (postgres/price-index.ts listPriced
 * uses them), read by two server-side functions (catalog migration 18) rather than by SQL sent with
 * every page. Postgres plans a statement each time it is sent, and the counts were one statement
 * of eight subqueries: about 0.55 ms of planning per page at 100k (0.25 ms more on a deep page with
 * its class ranges) for well under 0.3 ms of work (docs/BENCHMARKS.md "Discovery on Postgres beside
 * SQLite", 2026-11-26 05:40). A PL/pgSQL function keeps the plans of its statements for the
 * session (each pooled connection), and plans a statement only when it first runs it, so:
 *
 * - the typed and untyped ranges are separate statements (no `type IS NULL OR …`), each cached;
 * - the matches hidden by age are counted only when some entry of the range's key is older than
 *   the cut (an index probe), and the matches hidden by liveness failures only when some listing
 *   fails: otherwise both are 0, which is what counting them would give. A catalog with such rows
 *   pays for their counts, planned with their values each time (migration 20, hiddenCount), as before.
 *
 * The sums and probes keep Postgres's own choice between a plan for the values at hand and a generic
 * one (plan_cache_mode auto; forcing generic plans made the 900,000 price 7.7× slower). The hidden
 * matches' counts do not: left to that choice (migration 18), the plan it kept for the age count
 * read every match of a wide bound when only a few entries were older than the cut.
 *
 * Migration text is fixed once released: a change to these functions is a new migration (20).
 * CREATE OR REPLACE, so a database whose version was set back (the tests that
 * rebuild an older schema) runs it again.
 */
import { DEEP_OFFSET, filterKeys } from '../listing.ts';
import { PRICE_BUCKET, PRICE_CLASS, PRICE_DIGITS, inPriceRange, priceFilter } from '../price.ts';
import type { DiscoveryFilters } from '../types.ts';

/** The hop to the next digit count or class holding entries, over `price_buckets` (length, lower bound, upper bound, previous). */
const hop = (length: number, from: string, below: string, prev: string) =>
  `SELECT left(b.bucket, ${length}) FROM price_buckets b
     WHERE b.asset = p_key AND b.bucket >= ${from} AND b.bucket > ${prev} AND b.bucket < ${below} AND b.n > 0
       AND (p_type IS NULL OR b.type = p_type)
     ORDER BY b.bucket LIMIT 1`;

/**
 * Catalog migration 18. `catalog_price_counts`: the counts of a price range (PriceCounts without
 * the class ranges), `p_aged` / `p_failing` null when those counts are not wanted. And
 * `catalog_price_class_ranges`: the rows a by-classes page is planned from
 * (postgres/price-classes.ts classPlan): the digit counts and the classes below max's class that
 * hold entries (each found by a recursive hop over the buckets), the types with listings when no
 * type is asked, and the entries of max's class, as a JSON array of [kind, value].
 */
/**
 * A count of matches hidden by age or by failures, as `catalog_price_counts` runs it: `kept` (migration 18), a statement
 * whose plan the function keeps; `planned` (migration 20), an EXECUTE, planned with its values each time it runs. Kept,
 * the plan depended on the cuts seen before: on the 100k bench database, after cuts hiding half the entries, a cut hiding
 * 3% counted maxAmount 900,000's matches in 38.7 ms p50 against 6.4 planned per call (docs/BENCHMARKS.md "Discovery on
 * Postgres beside SQLite", 05:40). They run only when some entry is older than the cut or some listing fails, so their
 * planning is paid only then, as before migration 18.
 */
function hiddenCount(how: 'kept' | 'planned'): (target: string, sql: string) => string {
  return (target, sql) => {
    if (how === 'kept') return `${target} := (${sql});`;
    const names = [...new Set(sql.match(/\bp_[a-z]+\b/g))];
    const text = names.reduce((out, name, i) => out.replace(new RegExp(`\\b${name}\\b`, 'g'), () => `$${i + 1}`), sql);
    return `EXECUTE '${text}' INTO ${target} USING ${names.join(', ')};`;
  };
}

/** `catalog_price_counts`'s definition (PRICE_COUNTS_FUNCTIONS_MIGRATION), its hidden matches counted `how` (hiddenCount). */
function priceCountsFunction(how: 'kept' | 'planned'): string {
  const count = hiddenCount(how);
  return `
  CREATE OR REPLACE FUNCTION catalog_price_counts(p_key text, p_type text, p_class text, p_bucket text, p_max text,
    p_asset text, p_aged text, p_failing text, p_since text,
    OUT below numeric, OUT within numeric, OUT listings numeric, OUT asset_aged numeric, OUT aged_matches bigint,
    OUT failing_matches bigint)
  LANGUAGE plpgsql STABLE AS $$
  BEGIN
    IF p_type IS NULL THEN
      below := (SELECT coalesce(sum(c.n), 0) FROM price_classes c WHERE c.asset = p_key AND c.class < p_class);
      within := (SELECT coalesce(sum(b.n), 0) FROM price_buckets b WHERE b.asset = p_key AND b.bucket >= p_class AND b.bucket < p_bucket)
        + (SELECT coalesce(sum(c.n), 0) FROM price_counts c WHERE c.asset = p_key AND c.price >= p_bucket AND c.price <= p_max);
      listings := 0;
    ELSE
      below := (SELECT coalesce(sum(c.n), 0) FROM price_classes c WHERE c.asset = p_key AND c.class < p_class AND c.type = p_type);
      within := (SELECT coalesce(sum(b.n), 0) FROM price_buckets b
          WHERE b.asset = p_key AND b.bucket >= p_class AND b.bucket < p_bucket AND b.type = p_type)
        + (SELECT coalesce(sum(c.n), 0) FROM price_counts c
          WHERE c.asset = p_key AND c.price >= p_bucket AND c.price <= p_max AND c.type = p_type);
      listings := (SELECT coalesce(sum(c.n), 0) FROM price_classes c WHERE c.asset = p_key AND c.type = p_type);
    END IF;
    IF p_aged IS NOT NULL THEN
      -- The asset's entries hidden by age (postgres/list-index.ts hiddenCountSql, on the asset's key).
      asset_aged := (SELECT blocks.n + (
          SELECT count(*) FROM listing_keys x
          WHERE x.kind = 'asset' AND x.value = p_asset AND x.last_updated < p_aged
            AND (x.last_updated, x.listing_id) > (blocks.start_updated, blocks.start_id)
        ) FROM (
          SELECT coalesce(sum(k.n), 0) AS n,
            coalesce((array_agg(k.start_updated ORDER BY k.start_updated DESC, k.start_id DESC))[1], '') AS start_updated,
            coalesce((array_agg(k.start_id ORDER BY k.start_updated DESC, k.start_id DESC))[1], 0) AS start_id
          FROM listing_key_blocks k WHERE k.kind = 'asset' AND k.value = p_asset AND k.start_updated < p_aged
        ) blocks);
      aged_matches := 0;
      IF EXISTS (SELECT 1 FROM listing_prices p WHERE p.asset = p_key AND p.last_updated < p_aged) THEN
        IF p_type IS NULL THEN
          ${count('aged_matches', 'SELECT count(*) FROM listing_prices p WHERE p.asset = p_key AND p.last_updated < p_aged AND p.price <= p_max')}
        ELSE
          ${count(
            'aged_matches',
            `SELECT count(*) FROM listing_prices p
            WHERE p.asset = p_key AND p.type = p_type AND p.last_updated < p_aged AND p.price <= p_max`,
          )}
        END IF;
      END IF;
    END IF;
    IF p_failing IS NOT NULL THEN
      failing_matches := 0;
      IF EXISTS (SELECT 1 FROM listings h WHERE h.liveness_failing_since < p_failing) THEN
        IF p_type IS NULL THEN
          ${count(
            'failing_matches',
            `SELECT count(*) FROM listings h JOIN listing_prices p ON p.listing_id = h.id AND p.asset = p_key
            WHERE h.liveness_failing_since < p_failing AND p.price <= p_max AND (p_since IS NULL OR p.last_updated >= p_since)`,
          )}
        ELSE
          ${count(
            'failing_matches',
            `SELECT count(*) FROM listings h JOIN listing_prices p ON p.listing_id = h.id AND p.asset = p_key AND p.type = p_type
            WHERE h.liveness_failing_since < p_failing AND p.price <= p_max AND (p_since IS NULL OR p.last_updated >= p_since)`,
          )}
        END IF;
      END IF;
    END IF;
  END $$;`;
}

export const PRICE_COUNTS_FUNCTIONS_MIGRATION = `${priceCountsFunction('kept')}
  CREATE OR REPLACE FUNCTION catalog_price_class_ranges(p_key text, p_digits text, p_class text, p_type text) RETURNS json
  LANGUAGE plpgsql STABLE AS $$
  BEGIN
    RETURN (WITH RECURSIVE
      digits(prefix) AS (
        SELECT (${hop(PRICE_DIGITS, "''", 'p_digits', "''")})
        UNION ALL SELECT (${hop(PRICE_DIGITS, "''", 'p_digits', "d.prefix || '~'")}) FROM digits d WHERE d.prefix IS NOT NULL),
      classes(prefix) AS (
        SELECT (${hop(PRICE_CLASS, 'p_digits', 'p_class', "''")})
        UNION ALL SELECT (${hop(PRICE_CLASS, 'p_digits', 'p_class', "c.prefix || '~'")}) FROM classes c WHERE c.prefix IS NOT NULL)
    SELECT coalesce(json_agg(json_build_array(r.kind, r.value)), '[]') FROM (
      SELECT 'digits' AS kind, prefix AS value FROM digits WHERE prefix IS NOT NULL
      UNION ALL SELECT 'class', prefix FROM classes WHERE prefix IS NOT NULL
      UNION ALL SELECT 'type', t.value FROM listing_counts t WHERE t.kind = 'type' AND t.n > 0 AND p_type IS NULL
      UNION ALL SELECT 'size', coalesce(sum(c.n), 0)::text FROM price_classes c
        WHERE c.asset = p_key AND c.class = p_class AND (p_type IS NULL OR c.type = p_type)) r);
  END $$;`;

/** catalog_price_class_ranges's rows, as pg returns them. */
export type ClassRanges = Array<[kind: string, value: string]>;

/** catalog_price_class_ranges's call for a range and max (`p` names each parameter): an SQL expression. */
export const classRangesSql = (p: (value: unknown) => string, range: { asset: string; type: string | undefined }, max: string): string =>
  `catalog_price_class_ranges(${p(range.asset)}::text, ${p(max.slice(0, PRICE_DIGITS))}::text, ${p(max.slice(0, PRICE_CLASS))}::text, ${p(range.type ?? null)}::text)`;

/** The price index's counts of an `asset` + `maxAmount` list page (priceCountsSql), as pg returns them. */
export interface PriceCounts {
  below: string;
  within: string;
  listings: string;
  asset_aged: string | null;
  aged_matches: string | null;
  failing_matches: string | null;
  /** The rows a by-classes plan is made from (classRangesSql), carried for a deep page, else null. */
  class_ranges: ClassRanges | null;
}

/**
 * One row of the price counts (PriceCounts) for `filters` (with a price filter), so the list's
 * counts statement (store.ts) carries them: each round trip to the database adds its own wait
 * under load (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). Without other key filters
 * than the range's (asset, network, scheme, type) the total is the counts less the hidden matches,
 * so the asset's entries hidden by age (at least the range's), the matches among them and the
 * visible matches hidden by liveness failures (0 when no listing fails) come with them. A page reaching
 * DEEP_OFFSET (`reach`, offset + limit) or further also gets the rows its by-classes plan is made
 * from (classRangesSql), the plan deep pages weigh, so that weighing costs no round trip of its
 * own; a shallower page seldom weighs it (plainPricePlan) and reads them apart when it does
 * (listPriced).
 */
export function priceCountsSql(
  filters: DiscoveryFilters,
  p: (value: unknown) => string,
  visibleSince: string | undefined,
  failingBefore: string | undefined,
  reach: number,
): string {
  const { key, asset, max } = priceFilter(filters)!;
  const alone = filterKeys(filters).every((k) => inPriceRange(k.kind));
  const args = [
    key,
    filters.type ?? null,
    max.slice(0, PRICE_CLASS),
    max.slice(0, PRICE_BUCKET),
    max,
    asset,
    alone ? (visibleSince ?? null) : null,
    alone ? (failingBefore ?? null) : null,
    visibleSince ?? null,
  ];
  const ranges = reach >= DEEP_OFFSET ? classRangesSql(p, { asset: key, type: filters.type }, max) : 'NULL::json';
  return `SELECT f.*, ${ranges} AS class_ranges FROM catalog_price_counts(${args.map((v) => `${p(v)}::text`).join(', ')}) f`;
}

/**
 * Catalog migration 20: `catalog_price_counts` again, its matches hidden by age and by failures counted by statements
 * planned with their values each time they run (hiddenCount `planned`), as the list's counts statement counted them before
 * migration 18; the rest keeps its plans.
 */
export const PRICE_COUNTS_PLANNED_MIGRATION = priceCountsFunction('planned');
