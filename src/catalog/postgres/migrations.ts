/**
 * The catalog's PostgreSQL schema (DATABASE_URL, docs/CATALOG.md "Postgres"), as append-only
 * migrations applied by `migrate(pool, 'catalog', …)` (src/db/postgres.ts). The tables mirror the
 * SQLite schema at its newest version (sqlite/migrations.ts) so both stores give the same answers:
 *
 * - `listings`: the listings, their accepted terms in their bodies (each entry's keys in the list
 *   index, its amounts in the price index);
 * - `catalog_meta`: the cursor secret, the catalog's identifier and the global write sequence (row
 *   `seq`, revisions.ts nextSeq). Every write updates that row, so writes commit in sequence order on
 *   every instance, which is what lets a search cursor pin "the catalog as of N";
 * - `search_revisions`, `search_terms`: the searchable text as revisions valid over
 *   [from_seq, to_seq), one row per (term, revision) with the term's precomputed score;
 * - `listing_keys`, `listing_key_blocks`: the list index (sqlite/list-index.ts), its keys (extension
 *   keys among them) each remembering the write sequence that added it, maintained in the write
 *   transaction by `catalog_index_listing` (list-index.ts); the view `listing_counts` sums the blocks.
 *
 * Text that is ordered or compared is `COLLATE "C"` (byte order, as SQLite's BINARY), so order and
 * the '~' sentinel of the blocks do not depend on the database's locale.
 *
 * A term's score is stored as `units` = score × 2^53 (SCORE_UNITS), an exact integer: every score
 * is at least 0.5 (weight ≥ 1, tf/(tf+1) ≥ 1/2), so it is a multiple of 2^-53. The rank sums the
 * integer `milli` (search.ts), so both stores give every listing the same rank.
 */
import type { PostgresMigrations } from '../../db/postgres.ts';
import { CLAIMS_MIGRATION } from './claims.ts';
import { probeHostsTableSql } from '../probe-hosts.ts';
import { BLOCK_SIZE } from '../listing.ts';
import { MAX_TERM_LENGTH, URL_KEY_MILLI, URL_KEY_SCORE, urlKey, urlKeysSql } from '../terms.ts';
import { ACCEPTED_ASSETS_MIGRATION, PAYMENT_PAYERS_MIGRATION, QUALITY_DAYS_MIGRATION, QUALITY_MIGRATION } from './quality.ts';
import { LIVENESS_MIGRATION } from './liveness.ts';
import { PRICE_COUNTS_FUNCTIONS } from './price-counts.ts';
import { URL_SUFFIXES_MIGRATION } from './url-suffixes.ts';
import { WITHDRAWALS_MIGRATION } from './withdraw.ts';
import {
  NETWORK_PRICE_KEYS_MIGRATION,
  PRICE_CLASS_INDEXES_MIGRATION,
  PRICE_INDEX_MIGRATION,
  PRICE_LEVELS_MIGRATION,
  SCHEME_PRICE_KEYS_MIGRATION,
  TYPED_PRICE_INDEX_MIGRATION,
} from './price-index.ts';
import {
  ASSET_COMBINATION_KEYS_MIGRATION,
  FOLD_INTO_LIST_KEYS_MIGRATION,
  RETIRE_LISTING_ACCEPTS_MIGRATION,
  HIDDEN_LIST_ENTRIES_MIGRATION,
} from './list-index.ts';

export const SCORE_UNITS = 2 ** 53;

const C = 'COLLATE "C"';

/** A migration whose structure no page reads: a new catalog does not build it, and migration 36 or 38 removes it. */
const RETIRED = 'SELECT 1;';

export const CATALOG_MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   -- The search cursors' HMAC key: 32 bytes derived from the server's strong random source.
   INSERT INTO catalog_meta (key, value)
     VALUES ('cursor_secret', encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex'));
   CREATE TABLE catalog_seq (id INTEGER PRIMARY KEY CHECK (id = 1), seq BIGINT NOT NULL);
   INSERT INTO catalog_seq (id, seq) VALUES (1, 0);
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
     UNIQUE (resource, type, tool_name)
   );
   CREATE INDEX listings_by_tool_name ON listings (tool_name);
   CREATE TABLE listing_accepts (
     listing_id BIGINT NOT NULL,
     terms_key TEXT ${C} NOT NULL,
     scheme TEXT ${C} NOT NULL,
     network TEXT ${C} NOT NULL,
     added_seq BIGINT NOT NULL,
     PRIMARY KEY (listing_id, terms_key)
   );
   CREATE TABLE listing_extensions (
     listing_id BIGINT NOT NULL,
     key TEXT ${C} NOT NULL,
     added_seq BIGINT NOT NULL,
     PRIMARY KEY (listing_id, key)
   );
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
   CREATE TABLE search_terms (
     term TEXT ${C} NOT NULL,
     rev BIGINT NOT NULL,
     listing_id BIGINT NOT NULL,
     units BIGINT NOT NULL,
     milli INTEGER NOT NULL,
     from_seq BIGINT NOT NULL,
     to_seq BIGINT,
     PRIMARY KEY (term, rev)
   );
   CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC) INCLUDE (rev, from_seq, to_seq, units);
   CREATE INDEX search_terms_by_rev ON search_terms (rev);
   CREATE TABLE listing_keys (
     kind TEXT ${C} NOT NULL,
     value TEXT ${C} NOT NULL,
     listing_id BIGINT NOT NULL,
     last_updated TEXT ${C} NOT NULL,
     PRIMARY KEY (kind, value, listing_id)
   );
   CREATE INDEX listing_keys_page ON listing_keys (kind, value, last_updated DESC, listing_id DESC);
   CREATE INDEX listing_keys_by_listing ON listing_keys (listing_id);
   CREATE TABLE listing_counts (kind TEXT ${C} NOT NULL, value TEXT ${C} NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (kind, value));
   CREATE TABLE listing_key_blocks (
     kind TEXT ${C} NOT NULL,
     value TEXT ${C} NOT NULL,
     start_updated TEXT ${C} NOT NULL,
     start_id BIGINT NOT NULL,
     n INTEGER NOT NULL,
     PRIMARY KEY (kind, value, start_updated, start_id)
   );

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
   END $$;
   -- The write's function, catalog_index_listing, is migration 42's (postgres/list-index.ts).`,
  // 2–4: retired (the threshold walk and term signatures; migration 36 drops them from catalogs that hold them).
  RETIRED,
  RETIRED,
  RETIRED,
  // 5: the quality signals (postgres/quality.ts).
  QUALITY_MIGRATION,
  // 6: accepted entries' asset and amount, and the list index's asset keys (postgres/quality.ts).
  ACCEPTED_ASSETS_MIGRATION,
  // 7: the liveness records on `listings` (postgres/liveness.ts).
  LIVENESS_MIGRATION,
  // 8: the times of accepted withdrawals (postgres/withdraw.ts).
  WITHDRAWALS_MIGRATION,
  // 9: the price index (postgres/price-index.ts).
  PRICE_INDEX_MIGRATION,
  // 10: the price index keeps each listing's type (postgres/price-index.ts).
  TYPED_PRICE_INDEX_MIGRATION,
  // 11: by-time indexes per type and price class, for deep price pages (postgres/price-index.ts).
  PRICE_CLASS_INDEXES_MIGRATION,
  // 12: retired (the two-term walk).
  RETIRED,
  // 13: the price index keeps each listing's smallest amount per asset on each network too, so
  // `network` + `asset` + `maxAmount` is one index range (postgres/price-index.ts).
  NETWORK_PRICE_KEYS_MIGRATION,
  // 14: the term rows' primary key (term, rev) also carries their units, so a lookup of a
  // revision's row of a term can be answered from the index alone.
  `ALTER TABLE search_terms DROP CONSTRAINT search_terms_pkey,
     ADD CONSTRAINT search_terms_pkey PRIMARY KEY (term, rev) INCLUDE (units);`,
  // 15: the price index keeps each listing's smallest amount per asset under each scheme and under
  // each scheme on each network too, so `scheme` (with or without `network`) + `asset` +
  // `maxAmount` is one index range (postgres/price-index.ts).
  SCHEME_PRICE_KEYS_MIGRATION,
  // 16: retired (counts per price class: migration 41 counts them in `price_counts`).
  RETIRED,
  // 17: retired (revision share bounds).
  RETIRED,
  // 18: retired (the price counts' functions: migration 41 defines them on `price_counts`).
  RETIRED,
  // 19: retired (longer share bounds).
  RETIRED,
  // 20: retired (as 18).
  RETIRED,
  // 21–22: retired (chosen common terms and masks, term row sketches).
  RETIRED,
  RETIRED,
  // 23: the catalog's identifier, named in every withdrawal's signed text (docs/CATALOG.md
  // "Withdrawing a listing"), shared by every instance on this database.
  `INSERT INTO catalog_meta (key, value) VALUES ('catalog_id', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING;`,
  // 24: retired (a trigram index of the resource URLs; migration 40 drops it from catalogs that hold it).
  RETIRED,
  // 25: ownership claims: settlements waiting for the resource's own server to name their payTo,
  // and the failed checks remembered (postgres/claims.ts; docs/CATALOG.md "Ownership and refresh").
  // Existing listings keep their owners.
  CLAIMS_MIGRATION,
  // 26: retired (each listing's URL terms in a table of their own: 39 moves them into the postings).
  RETIRED,
  // 27: a hidden listing's search revision kept on its row while it is out of the search index,
  // and the partial indexes a lifecycle pass walks (postgres/lifecycle.ts; SQLite migration 22).
  `ALTER TABLE listings ADD COLUMN IF NOT EXISTS search_stash TEXT;
   CREATE INDEX IF NOT EXISTS listings_indexed_by_age ON listings (last_updated, id) WHERE search_stash IS NULL;
   CREATE INDEX IF NOT EXISTS listings_indexed_failing ON listings (liveness_failing_since, id)
     WHERE search_stash IS NULL AND liveness_failing_since IS NOT NULL;
   CREATE INDEX IF NOT EXISTS listings_stashed_by_age ON listings (last_updated, id) WHERE search_stash IS NOT NULL;`,
  // 28: a list key per accepted entry for its asset with its network and/or scheme, and with the listing's type
  // (postgres/list-index.ts; SQLite migration 23), so `asset` combined with them is one key.
  ASSET_COMBINATION_KEYS_MIGRATION,
  // 29–33: retired (a trigram index of the lowered resource URLs; the URLs spelled in letters, their trigram index,
  // page order and key bits; migration 40 drops them from catalogs that hold them).
  RETIRED,
  RETIRED,
  RETIRED,
  RETIRED,
  RETIRED,
  // 34: every URL's suffixes in a B-tree, where a `url` page finds the listings holding a substring in one index range
  // (postgres/url-suffixes.ts).
  URL_SUFFIXES_MIGRATION,
  // The time each host may next be asked by svc's checks, shared by every instance (../probe-hosts.ts).
  probeHostsTableSql('postgres'),
  // 36: the one search engine (../search-engine.ts) drops what it does not read, from catalogs that hold it: the walk's
  // functions, term signatures and sketches, revision share bounds, chosen common terms and masks. The term index is
  // rebuilt in its plain form.
  `DROP FUNCTION IF EXISTS catalog_walk(TEXT[], BIGINT, INTEGER, BIGINT, BIGINT, INTEGER, INTEGER[]);
   DROP FUNCTION IF EXISTS catalog_choose_common_terms();
   DROP FUNCTION IF EXISTS catalog_common_terms(bigint);
   DROP TABLE IF EXISTS search_common_terms;
   DROP INDEX IF EXISTS search_revisions_by_top;
   DROP INDEX IF EXISTS search_revisions_by_top_shares_5;
   DROP INDEX IF EXISTS search_revisions_by_top_shares_6;
   DROP INDEX IF EXISTS search_revisions_by_top_shares_7;
   DROP INDEX IF EXISTS search_revisions_by_common;
   ALTER TABLE search_revisions DROP COLUMN IF EXISTS top_shares, DROP COLUMN IF EXISTS top_shares_5,
     DROP COLUMN IF EXISTS top_shares_6, DROP COLUMN IF EXISTS top_shares_7, DROP COLUMN IF EXISTS sig,
     DROP COLUMN IF EXISTS sketch_a, DROP COLUMN IF EXISTS sketch_b, DROP COLUMN IF EXISTS common_mask,
     DROP COLUMN IF EXISTS common_milli;
   DROP INDEX IF EXISTS search_terms_top;
   ALTER TABLE search_terms DROP COLUMN IF EXISTS sig, DROP COLUMN IF EXISTS sketch_a, DROP COLUMN IF EXISTS sketch_b;
   CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC) INCLUDE (rev, from_seq, to_seq, units);
   DROP FUNCTION IF EXISTS catalog_term_bit(TEXT);`,
  // The stem rows (terms.ts withStemRows) of the revisions written before stems were indexed: SQL has no Porter
  // stemmer, so this marks them due and the store derives them from their term rows when it opens (revisions.ts).
  `INSERT INTO catalog_meta (key, value) VALUES ('stem_rows_due', '1') ON CONFLICT (key) DO NOTHING;`,
  // 38: the write sequence moves from its one-row table to row `seq` of `catalog_meta` (revisions.ts nextSeq), whose
  // lock a write holds as it held the table's row. Run again on a catalog set back to an earlier version: moved already.
  `DO $$ BEGIN
     IF to_regclass('catalog_seq') IS NOT NULL THEN
       INSERT INTO catalog_meta (key, value) SELECT 'seq', seq::text FROM catalog_seq WHERE id = 1
         ON CONFLICT (key) DO UPDATE SET value = excluded.value;
       DROP TABLE catalog_seq;
     END IF;
   END $$;`,
  // 39: each revision held gets its listing's URL keys (../url-search.ts withUrlKeys: the host labels and path segments,
  // split from an ASCII URL as urlTerms splits it, under '/'), with its validity, as a revision written now holds them;
  // the table that held them goes. Derived from the URLs, so a catalog set back to an earlier version migrates again.
  `DELETE FROM search_terms WHERE ${urlKeysSql('term')};
   INSERT INTO search_terms (term, rev, listing_id, units, milli, from_seq, to_seq)
     SELECT DISTINCT '${urlKey('')}' || t.term, r.rev, r.listing_id, ${URL_KEY_SCORE * SCORE_UNITS}, ${URL_KEY_MILLI}, r.from_seq, r.to_seq
     FROM search_revisions r JOIN listings l ON l.id = r.listing_id,
       regexp_split_to_table(lower(substr(l.resource, strpos(l.resource, '://') + 3)), '[^a-z0-9]+') AS t(term)
     WHERE length(t.term) BETWEEN 1 AND ${MAX_TERM_LENGTH};
   DROP TABLE IF EXISTS listing_url_terms;
   ANALYZE search_terms;`,
  // 40: one structure serves the `url` filter, the suffixes (url-suffixes.ts): the trigram indexes of the resource
  // URLs (24, 29) and the URLs spelled in letters (30–33) go, with their triggers and functions.
  `DROP INDEX IF EXISTS listings_resource_trigrams;
   DROP INDEX IF EXISTS listings_resource_lower_trigrams;
   DROP TRIGGER IF EXISTS listings_spell_url ON listings;
   DROP TRIGGER IF EXISTS listings_date_url ON listings;
   DROP TRIGGER IF EXISTS listing_keys_url_bits ON listing_keys;
   DROP TABLE IF EXISTS listing_url_letters;
   DROP FUNCTION IF EXISTS catalog_spell_listing_url();
   DROP FUNCTION IF EXISTS catalog_date_listing_url();
   DROP FUNCTION IF EXISTS catalog_key_listing_url();
   DROP FUNCTION IF EXISTS catalog_key_bits(text, text);
   DROP FUNCTION IF EXISTS catalog_url_letters(text);`,
  // 41: one counts table, `price_counts` per level (../price.ts PRICE_LEVELS): the counts per point, bucket and class go,
  // and a price page's counts and class ranges are read by two PL/pgSQL functions on it, whose statements keep their
  // plans per connection (postgres/price-counts.ts).
  PRICE_LEVELS_MIGRATION,
  // 42: the extension keys live in the list index only, with the sequence that added each key, and `listing_counts`
  // becomes the view of the blocks' sums (postgres/list-index.ts; SQLite migration 30).
  FOLD_INTO_LIST_KEYS_MIGRATION,
  // 43: a payer's last day is read from the payments kept, which name their listing and payer; `listing_payers` goes
  // (postgres/quality.ts; SQLite migration 31).
  PAYMENT_PAYERS_MIGRATION,
  // 44: a listing's calls and payers per day move onto its row; `listing_calls` goes (postgres/quality.ts; SQLite
  // migration 32).
  QUALITY_DAYS_MIGRATION,
  // 45: the accepted entries are read from the list keys and the price index; `listing_accepts` goes
  // (postgres/list-index.ts; SQLite migration 33).
  RETIRE_LISTING_ACCEPTS_MIGRATION,
  // 46: the price counts' functions again (postgres/price-counts.ts), their check whether a listing is hidden by
  // failures read from the failing listings' index under a generic plan too (queries.ts failingListingsSql).
  PRICE_COUNTS_FUNCTIONS,
  // 47: a hidden listing's list entries wait below every listing's time (../lifecycle.ts HIDDEN_LIST_TIME): those of the
  // listings already hidden move there (postgres/list-index.ts; SQLite migration 34), and the price counts leave out by
  // their ids only the failing listings still in the list index's range.
  HIDDEN_LIST_ENTRIES_MIGRATION + PRICE_COUNTS_FUNCTIONS,
];
