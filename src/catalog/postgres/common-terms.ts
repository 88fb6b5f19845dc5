/**
 * The common-term masks on PostgreSQL (catalog migration 21; docs/CATALOG.md "Search" and
 * "Postgres"), as SQLite's migration 16 (sqlite/common-terms.ts; what both share is in
 * ../common-terms.ts): the catalog's 16 terms with most rows get a bit each, and every search
 * revision carries exactly which of them it holds and their shares' sum, which common-terms-scan.ts
 * reads.
 */
import { COMMON_TERMS, COMMON_TERMS_CHOSEN_AT } from '../common-terms.ts';

/**
 * Catalog migration 21. `catalog_choose_common_terms()` chooses the COMMON_TERMS terms with most
 * rows (ties by term, bytewise, as SQLite's) and sets every revision's mask and sum from its term
 * rows, in one pass over those terms' rows; `catalog_common_terms(at)` returns the chosen terms,
 * choosing them first when there are none and the catalog holds at least `at` revisions: the settle
 * write calls it (revisions.ts), after it took the catalog sequence's row lock, so writes on every
 * instance choose at most once and each sees the choice of the writes before it. The migration
 * chooses them on a catalog of COMMON_TERMS_CHOSEN_AT revisions or more. Then the defaults become a
 * mask the scan reads for every query (-1) and a sum above any, so a revision written by an svc
 * that predates this migration (a rolling upgrade) is a candidate of every mask scan, ranked exactly.
 * It runs again over itself unchanged (a database set back to an earlier version, as a test of an
 * earlier migration does, keeps what this one made).
 */
export const COMMON_TERMS_MIGRATION = `
  CREATE TABLE IF NOT EXISTS search_common_terms (term TEXT COLLATE "C" PRIMARY KEY, term_bit INTEGER NOT NULL);
  ALTER TABLE search_revisions ADD COLUMN IF NOT EXISTS common_mask INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS common_milli BIGINT NOT NULL DEFAULT 0;
  CREATE OR REPLACE FUNCTION catalog_choose_common_terms() RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM search_common_terms;
    UPDATE search_revisions SET common_mask = 0, common_milli = 0 WHERE common_mask <> 0 OR common_milli <> 0;
    INSERT INTO search_common_terms (term, term_bit)
      SELECT c.term, (row_number() OVER (ORDER BY c.n DESC, c.term ASC) - 1)::int
      FROM (SELECT term, count(*) AS n FROM search_terms GROUP BY term ORDER BY n DESC, term ASC LIMIT ${COMMON_TERMS}) c;
    UPDATE search_revisions r SET common_mask = s.mask, common_milli = s.milli
      FROM (
        SELECT t.rev, bit_or(1 << c.term_bit) AS mask, sum(t.milli) AS milli
        FROM search_common_terms c JOIN search_terms t ON t.term = c.term GROUP BY t.rev
      ) s
      WHERE r.rev = s.rev;
  END $$;
  CREATE OR REPLACE FUNCTION catalog_common_terms(p_at bigint) RETURNS TABLE (term text, term_bit integer) LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM search_common_terms)
       AND (SELECT coalesce(max(r.rev), 0) FROM search_revisions r) >= p_at THEN
      PERFORM catalog_choose_common_terms();
    END IF;
    RETURN QUERY SELECT c.term::text, c.term_bit FROM search_common_terms c;
  END $$;
  SELECT count(*) FROM catalog_common_terms(${COMMON_TERMS_CHOSEN_AT});
  ALTER TABLE search_revisions ALTER COLUMN common_mask SET DEFAULT -1, ALTER COLUMN common_milli SET DEFAULT 1000000000000;
  CREATE INDEX IF NOT EXISTS search_revisions_by_common ON search_revisions (common_mask, common_milli DESC, rev ASC)
    INCLUDE (listing_id, from_seq, to_seq, sketch_a, sketch_b);
  ANALYZE search_revisions;`;
