/**
 * The catalog's PostgreSQL schema (DATABASE_URL, docs/CATALOG.md "Postgres"). A new database is created whole from
 * this baseline by `migrate(pool, 'catalog', CATALOG_SCHEMA)` (src/db/postgres.ts); a later change of the schema
 * appends its migration to `since`, and a database older than the baseline is refused (docs/OPERATIONS.md "Upgrading
 * from an older schema"). The tables mirror the SQLite schema (sqlite/migrations.ts) so both stores give the same
 * answers:
 *
 * - `listings`: the listings, their accepted terms in their bodies (each entry's keys in the list index, its amounts
 *   in the price index), with their liveness records (../liveness.ts), the search revision of a listing hidden by a
 *   lifecycle pass (lifecycle.ts) and their calls and payers per day (../quality.ts);
 * - `catalog_meta`: the cursor secret, the catalog's identifier and the global write sequence (row `seq`, queries.ts
 *   nextSeq). Every write updates that row, so writes commit in sequence order on every instance, which is what lets
 *   a search cursor pin "the catalog as of N";
 * - `search_revisions`, `search_terms`: the searchable text as revisions valid over [from_seq, to_seq), one row per
 *   (term, revision) with the term's precomputed score;
 * - `listing_keys`, `listing_key_blocks`: the list index (sqlite/list-index.ts), each key remembering the write
 *   sequence that added it, maintained in the write transaction by `catalog_index_listing`; the view `listing_counts`
 *   sums the blocks;
 * - `listing_prices`, `price_counts`: the price index and its counts per level (price-index.ts), read by the
 *   functions of price-counts.ts;
 * - `listing_url_suffixes`: every resource URL's suffixes, where a `url` filter finds its listings (url-suffixes.ts),
 *   kept by triggers on `listings`;
 * - the payments kept for the quality signals (quality.ts), the times of accepted withdrawals (withdraw.ts), the
 *   ownership claims (claims.ts) and the time each host may next be asked (../probe-hosts.ts).
 *
 * Text that is ordered or compared is `COLLATE "C"` (byte order, as SQLite's BINARY), so order and the '~' sentinel
 * of the blocks do not depend on the database's locale.
 *
 * A term's score is stored as `units` = score × 2^53 (SCORE_UNITS), an exact integer: every score is at least 0.5
 * (weight ≥ 1, tf/(tf+1) ≥ 1/2), so it is a multiple of 2^-53. The rank sums the integer `milli` (search.ts), so both
 * stores give every listing the same rank.
 */
import type { Baseline } from '../../db/schema-versions.ts';
import { BLOCK_SIZE } from '../listing.ts';
import { claimsTableSql } from '../ownership.ts';
import { PRICE_CLASS, PRICE_DIGITS } from '../price.ts';
import { probeHostsTableSql } from '../probe-hosts.ts';
import { PRICE_COUNTS_FUNCTIONS } from './price-counts.ts';
import { URL_SUFFIXES_FUNCTIONS } from './url-suffixes.ts';

export const SCORE_UNITS = 2 ** 53;

const C = 'COLLATE "C"';

/** The tables with their indexes, and the rows of `catalog_meta` a new catalog starts with. */
const TABLES = `
  CREATE TABLE catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  -- The search cursors' HMAC key, 32 bytes derived from the server's strong random source; the catalog's identifier,
  -- named in every withdrawal's signed text and shared by every instance on this database; the write sequence.
  INSERT INTO catalog_meta (key, value) VALUES
    ('cursor_secret', encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')),
    ('catalog_id', gen_random_uuid()::text),
    ('seq', '0');

  CREATE TABLE listings (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource TEXT ${C} NOT NULL,
    type TEXT ${C} NOT NULL,
    tool_name TEXT ${C} NOT NULL,
    owner TEXT ${C} NOT NULL,
    x402_version INTEGER NOT NULL,
    created_seq BIGINT NOT NULL,
    last_updated TEXT ${C} NOT NULL,
    body TEXT NOT NULL,
    liveness_status TEXT ${C},
    liveness_checked_at TEXT ${C},
    liveness_failing_since TEXT ${C},
    liveness_basis_ms BIGINT NOT NULL DEFAULT 0,
    search_stash TEXT,
    quality_days JSONB,
    UNIQUE (resource, type, tool_name)
  );
  CREATE INDEX listings_by_tool_name ON listings (tool_name);
  CREATE INDEX listings_liveness_due ON listings (liveness_basis_ms, id);
  CREATE INDEX listings_liveness_failing ON listings (liveness_failing_since) WHERE liveness_failing_since IS NOT NULL;
  -- What a lifecycle pass walks: the listings in the search index by age and by failure, the hidden ones by age.
  CREATE INDEX listings_indexed_by_age ON listings (last_updated, id) WHERE search_stash IS NULL;
  CREATE INDEX listings_indexed_failing ON listings (liveness_failing_since, id)
    WHERE search_stash IS NULL AND liveness_failing_since IS NOT NULL;
  CREATE INDEX listings_stashed_by_age ON listings (last_updated, id) WHERE search_stash IS NOT NULL;

  CREATE TABLE search_revisions (
    rev BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    listing_id BIGINT NOT NULL,
    from_seq BIGINT NOT NULL,
    to_seq BIGINT,
    superseded_at TEXT ${C},
    text_hash TEXT NOT NULL
  );
  CREATE UNIQUE INDEX search_revisions_current ON search_revisions (listing_id) WHERE to_seq IS NULL;
  CREATE INDEX search_revisions_superseded ON search_revisions (superseded_at) WHERE to_seq IS NOT NULL;
  CREATE INDEX search_revisions_by_listing ON search_revisions (listing_id);
  -- The primary key carries the units, so a revision's row of a term is read from the index alone; a term's rows are
  -- walked by score from search_terms_top, which carries what a rank reads.
  CREATE TABLE search_terms (
    term TEXT ${C} NOT NULL,
    rev BIGINT NOT NULL,
    listing_id BIGINT NOT NULL,
    units BIGINT NOT NULL,
    milli INTEGER NOT NULL,
    from_seq BIGINT NOT NULL,
    to_seq BIGINT,
    PRIMARY KEY (term, rev) INCLUDE (units)
  );
  CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC) INCLUDE (rev, from_seq, to_seq, units);
  CREATE INDEX search_terms_by_rev ON search_terms (rev);

  CREATE TABLE listing_keys (
    kind TEXT ${C} NOT NULL,
    value TEXT ${C} NOT NULL,
    listing_id BIGINT NOT NULL,
    last_updated TEXT ${C} NOT NULL,
    added_seq BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, value, listing_id)
  );
  CREATE INDEX listing_keys_page ON listing_keys (kind, value, last_updated DESC, listing_id DESC);
  CREATE INDEX listing_keys_by_listing ON listing_keys (listing_id);
  CREATE TABLE listing_key_blocks (
    kind TEXT ${C} NOT NULL,
    value TEXT ${C} NOT NULL,
    start_updated TEXT ${C} NOT NULL,
    start_id BIGINT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (kind, value, start_updated, start_id)
  );
  CREATE VIEW listing_counts (kind, value, n) AS SELECT kind, value, sum(n)::bigint FROM listing_key_blocks GROUP BY kind, value;

  -- Per listing and price index key (../price.ts priceIndexKey) its smallest amount, with its time and the listing's
  -- type: a price filter, with or without \`type\`, reads one index range, by time or by price; by-classes pages read
  -- the ranges per type and digit count or class.
  CREATE TABLE listing_prices (
    listing_id BIGINT NOT NULL,
    asset TEXT ${C} NOT NULL,
    price TEXT ${C} NOT NULL,
    last_updated TEXT ${C} NOT NULL,
    type TEXT ${C} NOT NULL,
    PRIMARY KEY (listing_id, asset)
  );
  CREATE INDEX listing_prices_by_time ON listing_prices (asset, last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE INDEX listing_prices_by_price ON listing_prices (asset, price) INCLUDE (last_updated, listing_id);
  CREATE INDEX listing_prices_typed_by_time ON listing_prices (asset, type, last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE INDEX listing_prices_typed_by_price ON listing_prices (asset, type, price) INCLUDE (last_updated, listing_id);
  CREATE INDEX listing_prices_typed_digits_by_time
    ON listing_prices (asset, type, left(price, ${PRICE_DIGITS}), last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE INDEX listing_prices_typed_class_by_time
    ON listing_prices (asset, type, left(price, ${PRICE_CLASS}), last_updated DESC, listing_id DESC) INCLUDE (price);
  CREATE TABLE price_counts (
    asset TEXT ${C} NOT NULL,
    level INTEGER NOT NULL,
    price TEXT ${C} NOT NULL,
    type TEXT ${C} NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (asset, level, price, type)
  );

  -- A payment without an id is kept (id NULL) when it names a payer: a payer's last day is read from the payments.
  CREATE TABLE listing_payments (
    payment_id TEXT ${C} UNIQUE,
    day INTEGER NOT NULL,
    listing_id BIGINT,
    payer TEXT ${C}
  );
  CREATE INDEX listing_payments_by_day ON listing_payments (day);
  CREATE INDEX listing_payments_by_payer ON listing_payments (listing_id, payer, day) WHERE listing_id IS NOT NULL;

  CREATE TABLE listing_withdrawals (
    resource TEXT ${C} NOT NULL,
    type TEXT ${C} NOT NULL,
    tool_name TEXT ${C} NOT NULL,
    issued_at_ms BIGINT NOT NULL,
    PRIMARY KEY (resource, type, tool_name)
  );
  CREATE INDEX listing_withdrawals_by_time ON listing_withdrawals (issued_at_ms);
  ${claimsTableSql('postgres')}
  ${probeHostsTableSql('postgres')}

  -- Its key is the index a \`url\` filter reads (url-suffixes.ts).
  CREATE TABLE listing_url_suffixes (
    suffix TEXT ${C} NOT NULL,
    listing_id BIGINT NOT NULL,
    PRIMARY KEY (suffix, listing_id)
  );`;

/** The list index's blocks, counted as SQLite counts them (sqlite/list-index.ts). */
const BLOCK_FUNCTIONS = `
   -- The block holding a listing key's position (sqlite/list-index.ts blockOf): the smallest start at or above it.
   CREATE FUNCTION catalog_block_of(p_kind TEXT, p_value TEXT, p_updated TEXT, p_id BIGINT, OUT b_updated TEXT, OUT b_id BIGINT, OUT b_n INTEGER)
   LANGUAGE sql STABLE AS $$
     SELECT start_updated, start_id, n FROM listing_key_blocks
     WHERE kind = p_kind AND value = p_value AND (start_updated, start_id) >= (p_updated COLLATE "C", p_id)
     ORDER BY start_updated ASC, start_id ASC LIMIT 1
   $$;

   -- Counts an entry already written to listing_keys in its block, splitting a full one (sqlite/list-index.ts addToBlock).
   CREATE FUNCTION catalog_block_add(p_kind TEXT, p_value TEXT, p_updated TEXT, p_id BIGINT) RETURNS void LANGUAGE plpgsql AS $$
   DECLARE
     b RECORD;
     m RECORD;
   BEGIN
     SELECT * INTO b FROM catalog_block_of(p_kind, p_value, p_updated, p_id);
     IF b.b_updated IS NULL THEN
       INSERT INTO listing_key_blocks (kind, value, start_updated, start_id, n) VALUES (p_kind, p_value, '~', 0, 1);
       RETURN;
     END IF;
     IF b.b_n < ${2 * BLOCK_SIZE} THEN
       UPDATE listing_key_blocks SET n = n + 1
        WHERE kind = p_kind AND value = p_value AND start_updated = b.b_updated AND start_id = b.b_id;
       RETURN;
     END IF;
     SELECT last_updated, listing_id INTO m FROM listing_keys
      WHERE kind = p_kind AND value = p_value AND (last_updated, listing_id) <= (b.b_updated COLLATE "C", b.b_id)
      ORDER BY last_updated DESC, listing_id DESC LIMIT 1 OFFSET ${BLOCK_SIZE};
     UPDATE listing_key_blocks SET n = ${BLOCK_SIZE}
      WHERE kind = p_kind AND value = p_value AND start_updated = b.b_updated AND start_id = b.b_id;
     INSERT INTO listing_key_blocks (kind, value, start_updated, start_id, n)
       VALUES (p_kind, p_value, m.last_updated, m.listing_id, b.b_n + 1 - ${BLOCK_SIZE});
   END $$;

   -- Uncounts an entry (sqlite/list-index.ts removeFromBlock); an emptied block other than the newest is deleted.
   CREATE FUNCTION catalog_block_remove(p_kind TEXT, p_value TEXT, p_updated TEXT, p_id BIGINT) RETURNS void LANGUAGE plpgsql AS $$
   DECLARE
     b RECORD;
   BEGIN
     SELECT * INTO b FROM catalog_block_of(p_kind, p_value, p_updated, p_id);
     IF b.b_updated IS NULL THEN
       RETURN;
     END IF;
     IF b.b_n - 1 = 0 AND b.b_updated <> '~' THEN
       DELETE FROM listing_key_blocks WHERE kind = p_kind AND value = p_value AND start_updated = b.b_updated AND start_id = b.b_id;
     ELSE
       UPDATE listing_key_blocks SET n = b.b_n - 1
        WHERE kind = p_kind AND value = p_value AND start_updated = b.b_updated AND start_id = b.b_id;
     END IF;
   END $$;`;

/**
 * A write's list index in one server-side call (store.ts writeLocked); it also moves a hidden listing's entries
 * (list-index.ts moveListEntries).
 */
const INDEX_LISTING_FUNCTION = `
  -- One write's list index (sqlite/list-index.ts insertListingKeys, then countKeyChanges): the keys the listing answers
  -- to are added with the write's sequence, all its keys move to p_updated, the blocks follow.
  CREATE OR REPLACE FUNCTION catalog_index_listing(p_id BIGINT, p_updated TEXT, p_kinds TEXT[], p_values TEXT[], p_seq BIGINT)
  RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE
    moved_kinds TEXT[];
    moved_values TEXT[];
    moved_from TEXT[];
    added_kinds TEXT[] := '{}';
    added_values TEXT[] := '{}';
    i INTEGER;
  BEGIN
    SELECT coalesce(array_agg(kind), '{}'), coalesce(array_agg(value), '{}'), coalesce(array_agg(last_updated), '{}')
      INTO moved_kinds, moved_values, moved_from
      FROM listing_keys WHERE listing_id = p_id AND last_updated <> p_updated;
    UPDATE listing_keys SET last_updated = p_updated WHERE listing_id = p_id AND last_updated <> p_updated;
    FOR i IN 1 .. coalesce(array_length(p_kinds, 1), 0) LOOP
      INSERT INTO listing_keys (kind, value, listing_id, last_updated, added_seq) VALUES (p_kinds[i], p_values[i], p_id, p_updated, p_seq)
        ON CONFLICT DO NOTHING;
      IF FOUND THEN
        added_kinds := added_kinds || p_kinds[i];
        added_values := added_values || p_values[i];
      END IF;
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(moved_kinds, 1), 0) LOOP
      PERFORM catalog_block_remove(moved_kinds[i], moved_values[i], moved_from[i], p_id);
      PERFORM catalog_block_add(moved_kinds[i], moved_values[i], p_updated, p_id);
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(added_kinds, 1), 0) LOOP
      PERFORM catalog_block_add(added_kinds[i], added_values[i], p_updated, p_id);
    END LOOP;
  END $fn$;`;

/**
 * The schema, whole, as a new catalog gets it, at the version the migrations folded into it brought a catalog to; each
 * later change appends its migration to `since`.
 */
export const CATALOG_SCHEMA: Baseline<string> = {
  baseline: 47,
  create: [TABLES, BLOCK_FUNCTIONS, INDEX_LISTING_FUNCTION, PRICE_COUNTS_FUNCTIONS, URL_SUFFIXES_FUNCTIONS].join('\n'),
  since: [],
};
