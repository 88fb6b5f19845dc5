/**
 * Catalog migrations 17 and 19 on PostgreSQL: the search revisions' share bounds that the revision
 * scan (revision-scan.ts, docs/CATALOG.md "Search") reads in order, as SQLite's catalog migrations
 * 12 and 15; and migration 22, the revisions' sketches on their term rows (term-tiers.ts).
 */
import { LONG_QUERY_SHARE_SUMS, SHARE_CODE_QUANTUM, SHARE_CODE_TOP, TOP_SHARES, topSharesColumn, topSharesIndex } from '../terms.ts';

/** A revision's sketch of its shares by one MD5 byte's bucket (terms.ts termSignature), from its term rows `c`. */
const sketchOfRowsSql = (bucket: string) =>
  `(${Array.from({ length: 16 }, (_, k) => `(coalesce(max(c.code) FILTER (WHERE c.${bucket} = ${k}), 0) << ${4 * k})`).join(' | ')})`;

/**
 * Each revision's bounds from its term rows (rev, top_shares, sig, sketch_a, sketch_b), what the
 * write computes in JavaScript (revisions.ts reviseSearchText; test/catalog/postgres-differential.test.ts
 * compares them).
 */
export const REVISION_BOUNDS_OF_TERM_ROWS = `
    SELECT c.rev, bit_or(c.sig) AS sig, ${sketchOfRowsSql('bucket_a')} AS sketch_a, ${sketchOfRowsSql('bucket_b')} AS sketch_b,
      (SELECT sum(m) FROM unnest((array_agg(c.milli ORDER BY c.milli DESC))[1:${TOP_SHARES}]) AS m)::bigint AS top_shares
    FROM (
      SELECT t.rev, t.sig, t.milli, least(${SHARE_CODE_TOP}, greatest(0, ceil(t.milli / ${SHARE_CODE_QUANTUM}.0)))::bigint AS code,
        get_byte(t.d, 1) & 15 AS bucket_a, get_byte(t.d, 2) & 15 AS bucket_b
      FROM (SELECT rev, sig, milli, decode(md5(term), 'hex') AS d FROM search_terms) t
    ) c
    GROUP BY c.rev`;

/**
 * Every revision's bounds set from its term rows: migration 17's backfill, and what a bulk load that
 * copies the term rows runs after them (bench/catalog/catalog-postgres.ts).
 */
export const REVISION_BOUNDS_FROM_TERM_ROWS = `UPDATE search_revisions r SET top_shares = s.top_shares, sig = s.sig, sketch_a = s.sketch_a, sketch_b = s.sketch_b
  FROM (
    ${REVISION_BOUNDS_OF_TERM_ROWS}
  ) s
  WHERE r.rev = s.rev`;

/**
 * Catalog migration 17: each search revision carries `top_shares` (the sum of its TOP_SHARES
 * largest rounded shares: no query of n ≤ TOP_SHARES terms shares more, one of more terms at most
 * n / TOP_SHARES of it), its signature and its two share sketches (terms.ts termSignature), in an
 * index by that bound, as SQLite's migration 12. The existing revisions get theirs from their term
 * rows (the sketches' buckets from each term's MD5, as termSlots); a revision without rows keeps
 * 0, as the write gives it. Then the defaults become a bound above any share sum and every bit and
 * code, so a revision written by an svc that predates this migration (a rolling upgrade) is a
 * candidate of every scan, ranked exactly.
 */
export const REVISION_BOUNDS_MIGRATION = `
  ALTER TABLE search_revisions ADD COLUMN top_shares BIGINT NOT NULL DEFAULT 0, ADD COLUMN sig BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN sketch_a BIGINT NOT NULL DEFAULT 0, ADD COLUMN sketch_b BIGINT NOT NULL DEFAULT 0;
  ${REVISION_BOUNDS_FROM_TERM_ROWS};
  ALTER TABLE search_revisions ALTER COLUMN top_shares SET DEFAULT 1000000000000, ALTER COLUMN sig SET DEFAULT -1,
    ALTER COLUMN sketch_a SET DEFAULT -1, ALTER COLUMN sketch_b SET DEFAULT -1;
  CREATE INDEX search_revisions_by_top ON search_revisions (top_shares DESC, rev ASC)
    INCLUDE (listing_id, from_seq, to_seq, sig, sketch_a, sketch_b);
  ANALYZE search_revisions;`;

/** The deepest of the long queries' share sums: each revision's shares past it never count. */
const DEEPEST = Math.max(...LONG_QUERY_SHARE_SUMS);

/**
 * Each revision's sums of its 5, 6 and 7 largest rounded shares (rev, top_shares_5, …) from its
 * term rows, what the write computes in JavaScript (revisions.ts; test/catalog/postgres-differential.test.ts
 * compares them). A revision without rows has none (the migration leaves it 0, as the write gives it).
 */
export const LONG_QUERY_SHARE_SUMS_OF_TERM_ROWS = `
    SELECT g.rev, ${LONG_QUERY_SHARE_SUMS.map((n) => `(SELECT sum(m) FROM unnest(g.largest[1:${n}]) AS m)::bigint AS ${topSharesColumn(n)}`).join(', ')}
    FROM (SELECT rev, (array_agg(milli ORDER BY milli DESC))[1:${DEEPEST}] AS largest FROM search_terms GROUP BY rev) g`;

/** Every revision's 5-, 6- and 7-share sums set from its term rows: migration 19's backfill, and a bulk load's (as above). */
export const LONG_QUERY_SHARE_SUMS_FROM_TERM_ROWS = `UPDATE search_revisions r SET ${LONG_QUERY_SHARE_SUMS.map((n) => `${topSharesColumn(n)} = s.${topSharesColumn(n)}`).join(', ')}
  FROM (
    ${LONG_QUERY_SHARE_SUMS_OF_TERM_ROWS}
  ) s
  WHERE r.rev = s.rev`;

/**
 * Catalog migration 19: each search revision also carries the sums of its 5, 6 and 7 largest
 * rounded shares (terms.ts LONG_QUERY_SHARE_SUMS), each in an index as `top_shares` is, as SQLite's
 * migration 15, so a query of 5 to 7 common words reads the revisions by its own length's sum
 * (revision-scan.ts): scaled from 4 shares, the bound of 6 words reaches about a quarter of the
 * revisions. The existing revisions get theirs from their term rows in one aggregate; then the
 * default becomes a bound above any share sum, so a revision written by an svc that predates this
 * migration (a rolling upgrade) is a candidate of every scan, ranked exactly.
 */
export const LONG_QUERY_BOUNDS_MIGRATION = `
  ALTER TABLE search_revisions ${LONG_QUERY_SHARE_SUMS.map((n) => `ADD COLUMN ${topSharesColumn(n)} BIGINT NOT NULL DEFAULT 0`).join(', ')};
  ${LONG_QUERY_SHARE_SUMS_FROM_TERM_ROWS};
  ALTER TABLE search_revisions ${LONG_QUERY_SHARE_SUMS.map((n) => `ALTER COLUMN ${topSharesColumn(n)} SET DEFAULT 1000000000000`).join(', ')};
  ${LONG_QUERY_SHARE_SUMS.map(
    (n) => `CREATE INDEX ${topSharesIndex(n)} ON search_revisions (${topSharesColumn(n)} DESC, rev ASC)
    INCLUDE (listing_id, from_seq, to_seq, sig, sketch_a, sketch_b);`,
  ).join('\n  ')}
  ANALYZE search_revisions;`;

/**
 * Catalog migration 22: every term row carries its revision's two share sketches (terms.ts
 * termSignature, written by the settle write beside `sig`), in the covering index, so the tiers
 * above bound a revision's other terms from its drivers' rows alone. Read from the revision
 * (migration 17) by key for each of a natural sentence's 5,000 revisions, they cost 40-60 ms of
 * a page at 100k (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). The existing rows get
 * their revision's (about a minute per 100,000 listings, once, and the covering index rebuilt);
 * the default, -1 (every code the top one), bounds a term only by its largest share, so a row
 * written by an svc that predates this migration is still ranked right.
 */
export const TERM_ROW_SKETCHES_MIGRATION = `
  ALTER TABLE search_terms ADD COLUMN sketch_a BIGINT NOT NULL DEFAULT -1, ADD COLUMN sketch_b BIGINT NOT NULL DEFAULT -1;
  DROP INDEX search_terms_top;
  UPDATE search_terms t SET sketch_a = r.sketch_a, sketch_b = r.sketch_b FROM search_revisions r WHERE r.rev = t.rev;
  CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC)
    INCLUDE (rev, from_seq, to_seq, units, sig, sketch_a, sketch_b);
  ANALYZE search_terms;`;
