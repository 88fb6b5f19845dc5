/**
 * The catalog's PostgreSQL schema (DATABASE_URL, docs/CATALOG.md "Postgres"), as append-only
 * migrations applied by `migrate(pool, 'catalog', …)` (src/db/postgres.ts). The tables mirror the
 * SQLite schema at its newest version (sqlite/migrations.ts) so both stores give the same answers:
 *
 * - `listings`, `listing_accepts`, `listing_extensions`: the listings, their accepted terms and
 *   extension keys, each remembering the write sequence that added it (search snapshots);
 * - `catalog_seq`: the global write sequence. Every write updates its one row, so writes commit in
 *   sequence order on every instance, which is what lets a search cursor pin "the catalog as of N";
 * - `search_revisions`, `search_terms`: the searchable text as revisions valid over
 *   [from_seq, to_seq), one row per (term, revision) with the term's precomputed score and the
 *   revision's term signature (migration 4);
 * - `listing_keys`, `listing_counts`, `listing_key_blocks`: the list index (sqlite/list-index.ts),
 *   maintained in the write transaction by `catalog_index_listing` below.
 *
 * Text that is ordered or compared is `COLLATE "C"` (byte order, as SQLite's BINARY), so order and
 * the '~' sentinel of the blocks do not depend on the database's locale.
 *
 * A term's score is stored as `units` = score × 2^53, an exact integer: every score is at least
 * 0.5 (weight ≥ 1, tf/(tf+1) ≥ 1/2), so it is a multiple of 2^-53. Summing units is exact, and
 * `sum(units)::float8 / 2^53` is the exact sum rounded once to a double, which is what SQLite's
 * compensated sum() gives for these few positive terms; the rank then rounds as SQLite's round()
 * does (floor(x + 0.5)). So both stores give every listing the same rank.
 */
import type { PostgresMigrations } from '../../db/postgres.ts';
import { CLAIMS_MIGRATION } from './claims.ts';
import { probeHostsTableSql } from '../probe-hosts.ts';
import { BLOCK_SIZE } from '../listing.ts';
import { MAX_TERM_LENGTH } from '../terms.ts';
import { ACCEPTED_ASSETS_MIGRATION, QUALITY_MIGRATION } from './quality.ts';
import { LIVENESS_MIGRATION } from './liveness.ts';
import { URL_LETTERS_DATED_MIGRATION, URL_LETTERS_FUNCTION, URL_LETTERS_KEYED_MIGRATION, URL_LETTERS_PAGE_MIGRATION } from './url-probe.ts';
import { URL_SUFFIXES_MIGRATION } from './url-suffixes.ts';
import { WITHDRAWALS_MIGRATION } from './withdraw.ts';
import {
  NETWORK_PRICE_KEYS_MIGRATION,
  PRICE_CLASS_COUNTS_MIGRATION,
  PRICE_INDEX_MIGRATION,
  SCHEME_PRICE_KEYS_MIGRATION,
  TYPED_PRICE_INDEX_MIGRATION,
} from './price-index.ts';
import { PRICE_CLASS_INDEXES_MIGRATION } from './price-classes.ts';
import { LONG_QUERY_BOUNDS_MIGRATION, REVISION_BOUNDS_MIGRATION, TERM_ROW_SKETCHES_MIGRATION } from './revision-bounds.ts';
import { PRICE_COUNTS_FUNCTIONS_MIGRATION, PRICE_COUNTS_PLANNED_MIGRATION } from './price-counts.ts';
import { COMMON_TERMS_MIGRATION } from './common-terms.ts';
import { ASSET_COMBINATION_KEYS_MIGRATION } from './list-index.ts';

/** The scale of `search_terms.units` (see above). */
export const SCORE_UNITS = 2 ** 53;

/** The rounded milli-score of an exact sum of units (a numeric or bigint expression, parenthesized). */
const roundedMilliOfSql = (unitsSum: string) => `floor(${unitsSum}::float8 / ${SCORE_UNITS} * 1000 + 0.5)::bigint`;

/** The rounded milli-score of summed `units` rows, as SQLite computes `CAST(round(sum(score) * 1000) AS INTEGER)`. */
export const roundedMilliSql = (units: string) => roundedMilliOfSql(`sum(${units})`);

const C = 'COLLATE "C"';

/** The walk's loop over one chunk's rows (catalogWalkSql). */
const chunkLoop = (rows: string) => `         FOR r IN ${rows}
         LOOP
           got := got + 1;
           from_milli := coalesce(from_milli, r.milli);
           last_milli[i] := r.milli;
           last_id[i] := r.listing_id;
           IF r.rank >= floor_rank AND (p_after_rank IS NULL OR r.rank < p_after_rank OR (r.rank = p_after_rank AND r.listing_id > p_after_id)) THEN
             cand_ids := cand_ids || r.listing_id;
             cand_ranks := cand_ranks || r.rank;
           END IF;
         END LOOP;
`;

/**
 * The several-term threshold walk of sqlite/search.ts (thresholdWalk) as a server-side function, so a chunk
 * costs no round trip: the same reads, bound and stopping rule. `rows` is the query that reads the
 * next chunk of term i (after its last row: the rest of that row's score plateau, then the lower
 * scores) with each row's listing rank, or one such query for two-term queries and one for more;
 * `declarations` adds the function's own variables. Returns the page candidates in order, or
 * gave_up when the walk passed its cap (the caller then aggregates).
 */
const catalogWalkSql = (
  create: 'CREATE' | 'CREATE OR REPLACE',
  rows: string | { two: string; more: string },
  declarations = '',
) => `${create} FUNCTION catalog_walk(
     p_terms TEXT[], p_as_of BIGINT, p_want INTEGER, p_after_rank BIGINT, p_after_id BIGINT, p_cap INTEGER, p_chunks INTEGER[],
     OUT listing_ids BIGINT[], OUT ranks BIGINT[], OUT gave_up BOOLEAN)
   LANGUAGE plpgsql STABLE AS $$
   DECLARE
     n INTEGER := cardinality(p_terms);
     last_milli INTEGER[] := array_fill(NULL::INTEGER, ARRAY[n]);
     last_id BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
     done BOOLEAN[] := array_fill(false, ARRAY[n]);
     steps INTEGER[] := array_fill(0, ARRAY[n]);
     nread INTEGER[] := array_fill(0, ARRAY[n]);
     slope FLOAT8[] := array_fill(0::FLOAT8, ARRAY[n]);
     cand_ids BIGINT[];
     cand_ranks BIGINT[];
     total_read BIGINT := 0;
     cap BIGINT := p_cap;
     first BOOLEAN := true;
     floor_rank BIGINT;
     w INTEGER;
     w_from INTEGER;
     w_to INTEGER;
     chunk INTEGER;
     got INTEGER;
     from_milli INTEGER;
     lm INTEGER;
     li BIGINT;
     r RECORD;${declarations}
     bound BIGINT;
     any_open BOOLEAN;
   BEGIN
     listing_ids := '{}';
     ranks := '{}';
     gave_up := false;
     LOOP
       floor_rank := CASE WHEN cardinality(ranks) >= p_want THEN ranks[p_want] ELSE -1 END;
       -- The first step reads every term; later ones the open term whose score falls fastest per
       -- row, then the one that has read least, then the first.
       IF first THEN
         w_from := 1;
         w_to := n;
       ELSE
         w := NULL;
         FOR i IN 1 .. n LOOP
           IF NOT done[i] AND (w IS NULL OR slope[i] > slope[w] OR (slope[i] = slope[w] AND nread[i] < nread[w])) THEN
             w := i;
           END IF;
         END LOOP;
         w_from := w;
         w_to := w;
       END IF;
       cand_ids := '{}';
       cand_ranks := '{}';
       FOR i IN w_from .. w_to LOOP
         chunk := p_chunks[least(steps[i], cardinality(p_chunks) - 1) + 1];
         steps[i] := steps[i] + 1;
         got := 0;
         -- Before the first chunk: above every score (milli is far below 2^31).
         lm := coalesce(last_milli[i], 2147483647);
         li := coalesce(last_id[i], -1);
         from_milli := last_milli[i];
         -- The chunk after the term's last row (milli desc, listing asc) as two index ranges: the
         -- rest of the last row's score plateau, then the lower scores. One condition with an OR
         -- would scan the term's index from its top on every chunk.
${
  typeof rows === 'string'
    ? chunkLoop(rows)
    : `         IF n = 2 THEN
${chunkLoop(rows.two)}         ELSE
${chunkLoop(rows.more)}         END IF;
`
}         total_read := total_read + got;
         nread[i] := nread[i] + got;
         IF got < chunk THEN
           done[i] := true;
         END IF;
         IF got > 0 THEN
           slope[i] := (from_milli - last_milli[i])::FLOAT8 / got;
         END IF;
       END LOOP;
       IF total_read > cap THEN
         IF cap <> p_cap THEN
           gave_up := true;
           RETURN;
         END IF;
         cap := greatest(p_cap + 1, floor((SELECT sum((SELECT count(*) FROM search_terms s WHERE s.term = q)) FROM unnest(p_terms) AS q) / 3));
       END IF;
       -- The page so far: the best p_want of the kept and the new candidates (a listing seen again
       -- has the same rank, so it collapses).
       SELECT coalesce(array_agg(id ORDER BY rank DESC, id ASC), '{}'), coalesce(array_agg(rank ORDER BY rank DESC, id ASC), '{}')
         INTO listing_ids, ranks
         FROM (SELECT DISTINCT u.id, u.rank FROM unnest(listing_ids || cand_ids, ranks || cand_ranks) AS u(id, rank)
               ORDER BY u.rank DESC, u.id ASC LIMIT p_want) s;
       any_open := false;
       bound := n;
       FOR i IN 1 .. n LOOP
         IF NOT done[i] THEN
           any_open := true;
           bound := bound + 1000000 + last_milli[i];
         END IF;
       END LOOP;
       IF NOT any_open OR (cardinality(ranks) >= p_want AND ranks[p_want] > bound) THEN
         RETURN;
       END IF;
       first := false;
     END LOOP;
   END $$;`;

/**
 * The chunk of term i that migrations 3 and 4 read: the rows after its last one (the rest of its
 * score plateau, then the lower scores; see catalogWalkSql), with `columns` of each row.
 */
const chunkAfterLast = (columns: string[]) => {
  const of = (alias: string) => columns.map((column) => `${alias}.${column}`).join(', ');
  return `SELECT ${of('c')} FROM (
               (SELECT ${of('t')} FROM search_terms t
                WHERE t.term = p_terms[i] AND t.milli = lm AND t.listing_id > li
                  AND t.from_seq <= p_as_of AND (t.to_seq IS NULL OR t.to_seq > p_as_of)
                ORDER BY t.milli DESC, t.listing_id ASC LIMIT chunk)
               UNION ALL
               (SELECT ${of('t')} FROM search_terms t
                WHERE t.term = p_terms[i] AND t.milli < lm
                  AND t.from_seq <= p_as_of AND (t.to_seq IS NULL OR t.to_seq > p_as_of)
                ORDER BY t.milli DESC, t.listing_id ASC LIMIT chunk)
             ) c
             ORDER BY c.milli DESC, c.listing_id ASC
             LIMIT chunk`;
};

/**
 * The key of a lookup of `term` for chunk row k: NULL when the row's signature lacks the term's bit,
 * so the index scan finds nothing without descending the index.
 */
const lookupKey = (term: string, bit: string) => `(CASE WHEN (k.sig & ${bit}) <> 0 THEN ${term} END)`;

/** The walk's chunk rows for three terms or more (migration 4): a per-row sum over the other terms' lookups. */
const severalTermRows = `SELECT k.listing_id, k.milli,
             (1 + x.n) * 1000000 + ${roundedMilliOfSql('(k.units + coalesce(x.u, 0))')} AS rank
           FROM (${chunkAfterLast(['rev', 'listing_id', 'milli', 'units', 'sig'])}) k,
           LATERAL (SELECT count(*) AS n, sum(o.units) AS u
                    FROM unnest(p_terms[:i - 1] || p_terms[i + 1:], bits[:i - 1] || bits[i + 1:]) AS q(term, bit)
                    JOIN search_terms o ON o.term = ${lookupKey('q.term', 'q.bit')} AND o.rev = k.rev) x
           ORDER BY k.milli DESC, k.listing_id ASC`;

/** The walk's variable of the query terms' signature bits (catalog_term_bit), in query order. */
const termBitsDeclaration = `\n     bits BIGINT[] := ARRAY(SELECT catalog_term_bit(q) FROM unnest(p_terms) WITH ORDINALITY AS u(q, o) ORDER BY o);`;

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

   -- One write's list index (sqlite/list-index.ts insertListingKeys, then countKeyChanges): the keys the
   -- listing answers to are added and counted, all its keys move to p_updated, the blocks follow.
   CREATE FUNCTION catalog_index_listing(p_id BIGINT, p_updated TEXT, p_kinds TEXT[], p_values TEXT[]) RETURNS void LANGUAGE plpgsql AS $$
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
       INSERT INTO listing_keys (kind, value, listing_id, last_updated) VALUES (p_kinds[i], p_values[i], p_id, p_updated)
         ON CONFLICT DO NOTHING;
       IF FOUND THEN
         INSERT INTO listing_counts (kind, value, n) VALUES (p_kinds[i], p_values[i], 1)
           ON CONFLICT (kind, value) DO UPDATE SET n = listing_counts.n + 1;
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
   END $$;`,
  // 2: the several-term threshold walk (catalogWalkSql above), each row ranked by summing its
  // revision's rows of the query's terms. Unfiltered queries only (search.ts); the
  // differential test against the SQLite store is the oracle.
  catalogWalkSql(
    'CREATE',
    `SELECT k.listing_id, k.milli,
             (SELECT count(*) * 1000000 + ${roundedMilliSql('o.units')} FROM search_terms o WHERE o.term = ANY(p_terms) AND o.rev = k.rev) AS rank
           FROM (
             (SELECT t.rev, t.listing_id, t.milli FROM search_terms t
              WHERE t.term = p_terms[i] AND t.milli = lm AND t.listing_id > li
                AND t.from_seq <= p_as_of AND (t.to_seq IS NULL OR t.to_seq > p_as_of)
              ORDER BY t.milli DESC, t.listing_id ASC LIMIT chunk)
             UNION ALL
             (SELECT t.rev, t.listing_id, t.milli FROM search_terms t
              WHERE t.term = p_terms[i] AND t.milli < lm
                AND t.from_seq <= p_as_of AND (t.to_seq IS NULL OR t.to_seq > p_as_of)
              ORDER BY t.milli DESC, t.listing_id ASC LIMIT chunk)
           ) k
           ORDER BY k.milli DESC, k.listing_id ASC
           LIMIT chunk`,
  ),
  // 3: the same walk, each row ranked from its own units (read with it from the covering index)
  // and one key lookup per other term: the sum over every term's rows per row also fetched the
  // row's own term from the table again, and the walk cost about 1.5 times more.
  catalogWalkSql(
    'CREATE OR REPLACE',
    `SELECT k.listing_id, k.milli,
             (1 + x.n) * 1000000 + ${roundedMilliOfSql('(k.units + coalesce(x.u, 0))')} AS rank
           FROM (
             ${chunkAfterLast(['rev', 'listing_id', 'milli', 'units'])}
           ) k,
           LATERAL (SELECT count(*) AS n, sum(o.units) AS u
                    FROM unnest(array_remove(p_terms, p_terms[i])) AS q(term)
                    JOIN search_terms o ON o.term = q.term AND o.rev = k.rev) x
           ORDER BY k.milli DESC, k.listing_id ASC`,
  ),
  // 4: term signatures. Every term row carries its revision's signature (`sig`): the OR of
  // catalog_term_bit over the revision's terms, one of 64 bits per term (the first byte of the
  // term's MD5). A listing whose signature lacks a term's bit surely lacks the term, so the walk
  // skips that key lookup (about 30 % of absent terms still share a bit and are looked up). The
  // existing rows are filled here (about 45 s per 100,000 listings); the covering index is rebuilt
  // with the signature. The default, -1, has every bit: a row written by an svc that predates this
  // migration (an instance not yet upgraded, beside upgraded ones) is always looked up, so it is
  // ranked right, only without the saving. Two-term queries, the common several-term case, rank a
  // row with one left join instead of the per-row aggregate over the other terms
  // (docs/BENCHMARKS.md).
  `CREATE FUNCTION catalog_term_bit(p_term TEXT) RETURNS BIGINT LANGUAGE sql IMMUTABLE PARALLEL SAFE
     AS $$ SELECT 1::bigint << (get_byte(decode(md5(p_term), 'hex'), 0) & 63) $$;
   ALTER TABLE search_terms ADD COLUMN sig BIGINT NOT NULL DEFAULT -1;
   UPDATE search_terms t SET sig = s.sig
     FROM (SELECT rev, bit_or(catalog_term_bit(term)) AS sig FROM search_terms GROUP BY rev) s
     WHERE t.rev = s.rev;
   DROP INDEX search_terms_top;
   CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC) INCLUDE (rev, from_seq, to_seq, units, sig);
   ${catalogWalkSql(
     'CREATE OR REPLACE',
     {
       two: `SELECT k.listing_id, k.milli,
             (CASE WHEN o.units IS NULL THEN 1 ELSE 2 END) * 1000000 + ${roundedMilliOfSql('(k.units + coalesce(o.units, 0))')} AS rank
           FROM (${chunkAfterLast(['rev', 'listing_id', 'milli', 'units', 'sig'])}) k
             LEFT JOIN search_terms o ON o.term = ${lookupKey('p_terms[3 - i]', 'bits[3 - i]')} AND o.rev = k.rev
           ORDER BY k.milli DESC, k.listing_id ASC`,
       more: severalTermRows,
     },
     termBitsDeclaration,
   )}`,
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
  // 11: by-time indexes per type and price class, for deep price pages (postgres/price-classes.ts).
  PRICE_CLASS_INDEXES_MIGRATION,
  // 12: the two-term walk looks the other term up only when the row's signature has its bit. Under
  // migration 4 a row whose signature lacks it still ran the left join's index scan, with a NULL
  // key (answered without descending the index, but one rescan per row); the lookup is now a
  // subquery under CASE, which the server does not run at all when the bit is absent: the share
  // is then 0 and the term absent, exactly what the lookup would have found (docs/CATALOG.md
  // "Postgres"). OFFSET 0 keeps the subquery from being pulled up into the rank expression, where
  // its two uses would run the lookup twice. Longer queries keep migration 4's rows.
  catalogWalkSql(
    'CREATE OR REPLACE',
    {
      two: `SELECT k.listing_id, k.milli,
             (CASE WHEN k.other_units IS NULL THEN 1 ELSE 2 END) * 1000000 + ${roundedMilliOfSql('(k.units + coalesce(k.other_units, 0))')} AS rank
           FROM (SELECT m.listing_id, m.milli, m.units,
                   CASE WHEN (m.sig & bits[3 - i]) <> 0
                     THEN (SELECT o.units FROM search_terms o WHERE o.term = p_terms[3 - i] AND o.rev = m.rev) END AS other_units
                 FROM (${chunkAfterLast(['rev', 'listing_id', 'milli', 'units', 'sig'])}) m
                 OFFSET 0) k
           ORDER BY k.milli DESC, k.listing_id ASC`,
      more: severalTermRows,
    },
    termBitsDeclaration,
  ),
  // 13: the price index keeps each listing's smallest amount per asset on each network too, so
  // `network` + `asset` + `maxAmount` is one index range (postgres/price-index.ts).
  NETWORK_PRICE_KEYS_MIGRATION,
  // 14: a term row's key index carries its units, so the lookups of another term's share (the
  // walk's, the all-terms tier's and its rank's) are answered from the index without reading the
  // table row: under load each table read cost 5-20 µs, the most of a several-term search
  // (docs/CATALOG.md "Postgres"). The key is rebuilt in place (about 30 s per 100,000 listings).
  `ALTER TABLE search_terms DROP CONSTRAINT search_terms_pkey,
     ADD CONSTRAINT search_terms_pkey PRIMARY KEY (term, rev) INCLUDE (units);`,
  // 15: the price index keeps each listing's smallest amount per asset under each scheme and under
  // each scheme on each network too, so `scheme` (with or without `network`) + `asset` +
  // `maxAmount` is one index range (postgres/price-index.ts).
  SCHEME_PRICE_KEYS_MIGRATION,
  // 16: counts per price class beside the buckets', so a price page's counts read a few class rows
  // below `maxAmount`'s class instead of every bucket there (postgres/price-index.ts).
  PRICE_CLASS_COUNTS_MIGRATION,
  // 17: each search revision's share bound, signature and sketches, indexed by that bound, so the
  // all-terms tier of 3 to 5 common words reads the revisions that can reach the page first
  // (postgres/revision-bounds.ts, revision-scan.ts).
  REVISION_BOUNDS_MIGRATION,
  // 18: a price page's counts and class ranges from two PL/pgSQL functions, whose statements keep
  // their plans per connection instead of being planned with every page (postgres/price-counts.ts).
  PRICE_COUNTS_FUNCTIONS_MIGRATION,
  // 19: each search revision's sums of its 5, 6 and 7 largest shares, each indexed, so 5 to 7
  // common words read the revisions by their own length's bound (postgres/revision-bounds.ts).
  LONG_QUERY_BOUNDS_MIGRATION,
  // 20: the price counts' matches hidden by age and by failures planned with their values each
  // time they are counted: a kept plan read every match for some cuts (postgres/price-counts.ts).
  PRICE_COUNTS_PLANNED_MIGRATION,
  // 21: the catalog's 16 most common terms and each search revision's mask of them, so 7 or 8
  // common words read their all-terms tier by mask (postgres/common-terms.ts, common-terms-scan.ts).
  COMMON_TERMS_MIGRATION,
  // 22: each term row carries its revision's sketches, so a natural sentence's tiers bound the
  // other terms from the drivers' rows without a lookup per revision (postgres/term-tiers.ts).
  TERM_ROW_SKETCHES_MIGRATION,
  // 23: the catalog's identifier, named in every withdrawal's signed text (docs/CATALOG.md
  // "Withdrawing a listing"), shared by every instance on this database.
  `INSERT INTO catalog_meta (key, value) VALUES ('catalog_id', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING;`,
  // 24: a trigram index of each listing's resource URL, so the `url` filter (a case-insensitive
  // substring, openapi.yaml UrlFilter) is an index lookup, not a scan (postgres/queries.ts urlCondition).
  // pg_trgm ships with PostgreSQL and is a trusted extension: a database owner may create it.
  `CREATE EXTENSION IF NOT EXISTS pg_trgm;
   CREATE INDEX IF NOT EXISTS listings_resource_trigrams ON listings USING gin (resource gin_trgm_ops);`,
  // 25: ownership claims: settlements waiting for the resource's own server to name their payTo,
  // and the failed checks remembered (postgres/claims.ts; docs/CATALOG.md "Ownership and refresh").
  // Existing listings keep their owners.
  CLAIMS_MIGRATION,
  // 26: each listing's URL terms (host labels and path segments, ../url-search.ts urlTerms, which
  // splits an ASCII URL as this does), searched when the text finds nothing (postgres/url-search.ts).
  `CREATE TABLE IF NOT EXISTS listing_url_terms (
     term TEXT ${C} NOT NULL,
     listing_id BIGINT NOT NULL,
     PRIMARY KEY (term, listing_id)
   );
   CREATE INDEX IF NOT EXISTS listing_url_terms_by_listing ON listing_url_terms (listing_id);
   INSERT INTO listing_url_terms (term, listing_id)
     SELECT DISTINCT t.term, l.id
     FROM listings l,
       regexp_split_to_table(lower(substr(l.resource, strpos(l.resource, '://') + 3)), '[^a-z0-9]+') AS t(term)
     WHERE length(t.term) BETWEEN 1 AND ${MAX_TERM_LENGTH}
     ON CONFLICT DO NOTHING;`,
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
  // 29: the trigram index of the lowered resource URLs in place of 24's, so `url` is matched by `lower(resource)
  // LIKE`, several times cheaper per row than ILIKE (postgres/queries.ts urlCondition); ANALYZE gathers the
  // expression's statistics, without which the planner guesses how many URLs hold a substring.
  `CREATE INDEX IF NOT EXISTS listings_resource_lower_trigrams ON listings USING gin (lower(resource) gin_trgm_ops);
   DROP INDEX IF EXISTS listings_resource_trigrams;
   ANALYZE listings;`,
  // 30: each URL spelled in letters (postgres/url-probe.ts) in a table of its own with a trigram index: every 3
  // characters of a URL leave a trigram, so a `url` of common words joined by rarer punctuation (`3.example.com/v`)
  // names few listings. A table, because the index's rows are rechecked (spelling each again cost about 10 µs), and a
  // column on listings would rewrite it (its visibility map lost until a vacuum: index-only scans read every row).
  // Filled by a trigger on each new listing (a URL never changes) and here for the existing ones. 29's index stays
  // for the per-row `lower(resource) LIKE` of a filtered search.
  `${URL_LETTERS_FUNCTION}
   CREATE TABLE IF NOT EXISTS listing_url_letters (
     listing_id BIGINT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE,
     letters TEXT NOT NULL
   );
   CREATE OR REPLACE FUNCTION catalog_spell_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO listing_url_letters (listing_id, letters) VALUES (NEW.id, catalog_url_letters(NEW.resource));
     RETURN NULL;
   END $$;
   CREATE OR REPLACE TRIGGER listings_spell_url AFTER INSERT ON listings FOR EACH ROW EXECUTE FUNCTION catalog_spell_listing_url();
   INSERT INTO listing_url_letters (listing_id, letters) SELECT id, catalog_url_letters(resource) FROM listings ON CONFLICT DO NOTHING;
   CREATE INDEX IF NOT EXISTS listing_url_letters_trigrams ON listing_url_letters USING gin (letters gin_trgm_ops);
   ANALYZE listing_url_letters;`,
  // 31: each spelled URL carries its listing's lastUpdated (postgres/url-probe.ts), so a `url` page reads no listing row
  // but its page's.
  URL_LETTERS_DATED_MIGRATION,
  // 32: the spelled URLs in page order, walked by a `url` page without other filters (postgres/url-probe.ts).
  URL_LETTERS_PAGE_MIGRATION,
  // 33: each spelled URL carries its listing's list keys as bits, so a `url` page checks the other filters on the rows
  // its index read named before looking a key up (postgres/url-probe.ts).
  URL_LETTERS_KEYED_MIGRATION,
  // 34: every URL's suffixes in a B-tree, where a `url` page finds the listings holding a substring in one index range
  // (postgres/url-suffixes.ts).
  URL_SUFFIXES_MIGRATION,
  // The time each host may next be asked by svc's checks, shared by every instance (../probe-hosts.ts).
  probeHostsTableSql('postgres'),
];
