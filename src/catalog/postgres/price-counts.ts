/**
 * An `asset` + `maxAmount` list page's counts on PostgreSQL (../price.ts PriceCounts), read by two server-side functions
 * (created with the schema, migrations.ts) rather than by SQL sent with every page: sent as text, the counts' several
 * subqueries cost more to plan than to run (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). A PL/pgSQL
 * function keeps the plans of its statements for the session (each pooled connection), and plans a statement only when
 * it first runs it, so:
 *
 * - the typed and untyped ranges are separate statements (no `type IS NULL OR …`), each cached;
 * - the matches hidden by age are counted only when some entry of the range's key is older than the cut (an index
 *   probe), and those hidden by liveness failures only when some listing fails: otherwise both are 0, which is what
 *   counting them would give. These counts are EXECUTEd, planned with their values each time: a kept plan read every
 *   match of a wide bound for some cuts.
 *
 * The sums and probes keep Postgres's own choice between a plan for the values at hand and a generic one
 * (plan_cache_mode auto): a forced generic plan is much slower for some prices.
 */
import { DEEP_OFFSET, filterKeys } from '../listing.ts';
import { PRICE_BUCKET, PRICE_CLASS, PRICE_DIGITS, inPriceRange, priceFilter, type ClassRanges, type PriceRange } from '../price.ts';
import type { DiscoveryFilters } from '../types.ts';
import { failingListingsSql } from './queries.ts';

/** The listings of key `p_key` at `level` whose prefix meets `condition`, of type `p_type` when `typed`. */
const levelSum = (level: number, condition: string, typed: boolean) =>
  `(SELECT coalesce(sum(c.n), 0) FROM price_counts c WHERE c.asset = p_key AND c.level = ${level} AND ${condition}${typed ? ' AND c.type = p_type' : ''})`;

/** A count EXECUTEd into `target`, planned with its values each time it runs. */
function planned(target: string, sql: string): string {
  const names = [...new Set(sql.match(/\bp_[a-z]+\b/g))];
  const text = names.reduce((out, name, i) => out.replace(new RegExp(`\\b${name}\\b`, 'g'), () => `$${i + 1}`), sql);
  return `EXECUTE '${text}' INTO ${target} USING ${names.join(', ')};`;
}

/** The hop to the next digit count or class holding entries, over the class counts (length, lower bound, upper bound, previous). */
const hop = (length: number, from: string, below: string, prev: string) =>
  `SELECT left(b.price, ${length}) FROM price_counts b
     WHERE b.asset = p_key AND b.level = ${PRICE_CLASS} AND b.price >= ${from} AND b.price > ${prev} AND b.price < ${below} AND b.n > 0
       AND (p_type IS NULL OR b.type = p_type)
     ORDER BY b.price LIMIT 1`;

/**
 * `catalog_price_counts`: the counts of a price range, `p_aged` / `p_failing` null when those counts are not wanted. And
 * `catalog_price_class_ranges`: a by-classes page's ranges (../price.ts ClassRanges) as a JSON array of [kind, value],
 * each digit count and class found by a recursive hop over the class counts.
 */
export const PRICE_COUNTS_FUNCTIONS = `
  CREATE OR REPLACE FUNCTION catalog_price_counts(p_key text, p_type text, p_class text, p_bucket text, p_max text,
    p_asset text, p_aged text, p_failing text, p_since text,
    OUT below numeric, OUT within numeric, OUT listings numeric, OUT asset_aged numeric, OUT aged_matches bigint,
    OUT failing_matches bigint)
  LANGUAGE plpgsql STABLE AS $$
  BEGIN
    IF p_type IS NULL THEN
      below := ${levelSum(PRICE_CLASS, 'c.price < p_class', false)};
      within := ${levelSum(PRICE_BUCKET, 'c.price >= p_class AND c.price < p_bucket', false)}
        + ${levelSum(0, 'c.price >= p_bucket AND c.price <= p_max', false)};
      listings := 0;
    ELSE
      below := ${levelSum(PRICE_CLASS, 'c.price < p_class', true)};
      within := ${levelSum(PRICE_BUCKET, 'c.price >= p_class AND c.price < p_bucket', true)}
        + ${levelSum(0, 'c.price >= p_bucket AND c.price <= p_max', true)};
      listings := ${levelSum(PRICE_CLASS, 'true', true)};
    END IF;
    IF p_aged IS NOT NULL THEN
      -- The asset's entries hidden by age (list-engine.ts hiddenByAgeSql, on the asset's key).
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
        ${planned(
          'aged_matches',
          'SELECT count(*) FROM listing_prices p WHERE p.asset = p_key AND (p_type IS NULL OR p.type = p_type) AND p.last_updated < p_aged AND p.price <= p_max',
        )}
      END IF;
    END IF;
    IF p_failing IS NOT NULL THEN
      failing_matches := 0;
      -- Only the failing listings still in the list index's range: a lifecycle pass moved the others' price rows out.
      IF EXISTS (${failingListingsSql('p_failing', '1', false, true)}) THEN
        ${planned(
          'failing_matches',
          `SELECT count(*) FROM listings h JOIN listing_prices p ON p.listing_id = h.id AND p.asset = p_key
            AND (p_type IS NULL OR p.type = p_type)
          WHERE h.liveness_failing_since < p_failing AND h.search_stash IS NULL AND p.price <= p_max
            AND (p_since IS NULL OR p.last_updated >= p_since)`,
        )}
      END IF;
    END IF;
  END $$;
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
      UNION ALL SELECT 'size', coalesce(sum(c.n), 0)::text FROM price_counts c
        WHERE c.asset = p_key AND c.level = ${PRICE_CLASS} AND c.price = p_class AND (p_type IS NULL OR c.type = p_type)) r);
  END $$;`;

/** catalog_price_class_ranges's call for a range (`p` names each parameter): an SQL expression. */
export const classRangesSql = (p: (value: unknown) => string, range: PriceRange): string =>
  `catalog_price_class_ranges(${p(range.key)}::text, ${p(range.max.slice(0, PRICE_DIGITS))}::text, ${p(range.max.slice(0, PRICE_CLASS))}::text, ${p(range.type ?? null)}::text)`;

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
 * One row of the price counts (PriceCounts) for `filters` (with a price filter), so the list's counts statement
 * (store.ts) carries them: each round trip to the database adds its own wait under load (docs/BENCHMARKS.md "Discovery
 * on Postgres beside SQLite"). Without other key filters than the range's (asset, network, scheme, type) the total is
 * the counts less the hidden matches, so the asset's entries hidden by age, the matches among them and the visible
 * matches hidden by liveness failures come with them. A page reaching DEEP_OFFSET (`reach`) or further also gets its
 * class ranges, the plan deep pages weigh, so that weighing costs no round trip of its own.
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
  const ranges = reach >= DEEP_OFFSET ? classRangesSql(p, { key, type: filters.type, max }) : 'NULL::json';
  return `SELECT f.*, ${ranges} AS class_ranges FROM catalog_price_counts(${args.map((v) => `${p(v)}::text`).join(', ')}) f`;
}
