/**
 * How a `url` filter's listings are found on Postgres: a B-tree of every resource URL's suffixes (lowered as
 * asciiLower lowers, the first SUFFIX_LENGTH characters of each), so the listings holding a substring of at most that
 * length are the entries of one index range, read without a row of any table (suffixMatchesSql); a longer one's are those
 * holding its first characters, each checked on its URL. It costs a row a character of each URL (44M at 1M listings:
 * 2.5 GB of table and 2.1 GB of index there, docs/SCALING.md), and as many index entries written with each new listing.
 * Postgres' trigram index (pg_trgm) was slower for it: pg_trgm keeps only the trigrams of alphanumeric words, and
 * resource URLs share most of those (`exa`, `com`), so a substring's index read named most listings
 * (docs/BENCHMARKS.md "Filter combinations").
 */

import type pg from 'pg';
import { asciiLower, asciiLowerSql } from '../url-filter.ts';

/** How many characters of each suffix are kept: a longer `url` is found by its first ones, and each match checked. */
export const SUFFIX_LENGTH = 24;

/**
 * Catalog migration 34: the table of suffixes (its key the index), filled for every listing, kept by triggers on
 * listings (a new listing's suffixes written with it, a removed listing's deleted by their keys; a URL never changes),
 * and emptied with listings by TRUNCATE. Rebuilt whole when run again (the migration tests set versions back). Its
 * index is sorted once after the rows are written, with the memory a sort of 44M rows wants (1M listings: about 90 s).
 */
export const URL_SUFFIXES_MIGRATION = `
  CREATE OR REPLACE FUNCTION catalog_url_suffixes(url text) RETURNS SETOF text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT DISTINCT left(substr(u.lowered, i), ${SUFFIX_LENGTH}) COLLATE "C"
    FROM (SELECT ${asciiLowerSql('url')} AS lowered) u, generate_series(1, length(u.lowered)) i
  $$;
  DROP TABLE IF EXISTS listing_url_suffixes;
  CREATE TABLE listing_url_suffixes (suffix TEXT COLLATE "C" NOT NULL, listing_id BIGINT NOT NULL);
  INSERT INTO listing_url_suffixes (suffix, listing_id) SELECT s, l.id FROM listings l, catalog_url_suffixes(l.resource) s;
  SET LOCAL maintenance_work_mem = '256MB';
  ALTER TABLE listing_url_suffixes ADD PRIMARY KEY (suffix, listing_id);
  CREATE OR REPLACE FUNCTION catalog_suffix_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN
      DELETE FROM listing_url_suffixes WHERE suffix = ANY(ARRAY(SELECT catalog_url_suffixes(OLD.resource))) AND listing_id = OLD.id;
    ELSE
      INSERT INTO listing_url_suffixes (suffix, listing_id) SELECT s, NEW.id FROM catalog_url_suffixes(NEW.resource) s;
    END IF;
    RETURN NULL;
  END $$;
  CREATE OR REPLACE TRIGGER listings_suffix_url AFTER INSERT OR DELETE ON listings FOR EACH ROW EXECUTE FUNCTION catalog_suffix_listing_url();
  CREATE OR REPLACE FUNCTION catalog_clear_url_suffixes() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    TRUNCATE listing_url_suffixes;
    RETURN NULL;
  END $$;
  CREATE OR REPLACE TRIGGER listings_clear_url_suffixes AFTER TRUNCATE ON listings FOR EACH STATEMENT EXECUTE FUNCTION catalog_clear_url_suffixes();
  ANALYZE listing_url_suffixes;`;

/**
 * The index range holding `lowered`'s suffixes (`lowered`: a `url`, asciiLower'd): every key from `from` (its first
 * SUFFIX_LENGTH characters) to before `to` (`from` with its last character below the largest code point raised by
 * one, the characters after it dropped; undefined when there is none: the range runs to the index's end). `short`:
 * whether `from` is all of `lowered`, so every listing with a key in the range holds it. Lone surrogates are taken as
 * U+FFFD, as they reach Postgres.
 */
export function suffixRange(lowered: string): { from: string; to: string | undefined; short: boolean } {
  const chars = Array.from(lowered, (c) => (/^[\ud800-\udfff]$/.test(c) ? '\ufffd' : c));
  const kept = chars.slice(0, SUFFIX_LENGTH);
  const from = kept.join('');
  const short = chars.length <= SUFFIX_LENGTH;
  for (let i = kept.length - 1; i >= 0; i--) {
    const point = kept[i]!.codePointAt(0)!;
    if (point === 0x10ffff) continue;
    const next = point + 1 === 0xd800 ? 0xe000 : point + 1;
    return { from, to: kept.slice(0, i).join('') + String.fromCodePoint(next), short };
  }
  return { from, to: undefined, short };
}

/** The listings with an entry in `url`'s range (suffixRange): those holding it when it is short, else its first characters. */
export function suffixListingsSql(url: string, p: (value: unknown) => string): string {
  const { from, to } = suffixRange(asciiLower(url));
  return `SELECT s.listing_id FROM listing_url_suffixes s WHERE ${rangeSql(from, to, p)}`;
}

/** The condition that entry `s` is in the range from `from` to before `to` (suffixRange). */
const rangeSql = (from: string, to: string | undefined, p: (value: unknown) => string) =>
  `s.suffix >= ${p(from)} AND ${to === undefined ? `starts_with(s.suffix, ${p(from)})` : `s.suffix < ${p(to)}`}`;

/**
 * Vacuums the suffixes' table when none of its pages is marked visible, as catalog migration 34 leaves it (a migration
 * runs in a transaction, where VACUUM cannot): until then each entry a `url` page reads visits its row, and autovacuum
 * may take minutes to come (docs/SCALING.md). At 1M listings it took under 5 s, after the migration's 90.
 */
export async function markSuffixesVisible(pool: pg.Pool): Promise<void> {
  const table = await pool.query<{ due: boolean }>(
    "SELECT relpages > 0 AND relallvisible = 0 AS due FROM pg_class WHERE oid = 'listing_url_suffixes'::regclass",
  );
  if (table.rows[0]?.due) await pool.query('VACUUM (ANALYZE) listing_url_suffixes');
}

/**
 * How many of the suffixes' index entries are read first for each listing looked for (suffixMatchesSql): a URL holds
 * a substring once or a few times (`lolo` twice in `/lololo`), so four per listing find them unless many URLs hold it
 * many times (then more are read: list-index.ts listByUrl).
 */
export const SUFFIX_ROWS_PER_MATCH = 4;

/**
 * The tables `entries` and `found` of a statement reading the listings holding `url` (../url-filter.ts
 * UrlPageStatements.matches): the first `rows` entries of its range, and `found`'s row: `whole`, whether they are the
 * whole range, and `ids`, the listings they name (a long `url`'s: those whose URL holds it). When whole, `ids` are every
 * listing holding `url`; else, when more than the cap, the substring is common; else more entries are to be read (URLs
 * holding the substring many times, or a long `url` whose first characters many more hold).
 */
export function suffixMatchesSql(url: string, rows: number, p: (value: unknown) => string): string {
  const lowered = asciiLower(url);
  const { from, to, short } = suffixRange(lowered);
  return `entries AS MATERIALIZED (
       SELECT s.listing_id FROM listing_url_suffixes s WHERE ${rangeSql(from, to, p)} LIMIT ${p(rows)}
     ),
     found AS MATERIALIZED (
       SELECT (SELECT count(*) FROM entries) < ${p(rows)} AS whole, ARRAY(
         SELECT DISTINCT e.listing_id FROM entries e${
           short
             ? ''
             : ` WHERE strpos((SELECT ${asciiLowerSql('l.resource')} FROM listings l WHERE l.id = e.listing_id), ${p(lowered)}) > 0`
         }
       ) AS ids
     )`;
}
