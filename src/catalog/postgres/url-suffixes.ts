/**
 * How a `url` filter's listings are found on Postgres: a B-tree of every resource URL's suffixes (lowered as
 * asciiLower lowers, the first SUFFIX_LENGTH characters of each), so the listings holding a substring of at most that
 * length are the entries of one index range, read without a row of any table (suffixPageSql); a longer one's are those
 * holding its first characters, each checked on its URL. It costs a row per character of each URL (docs/CATALOG.md
 * "List"). Not pg_trgm: it keeps only the trigrams of alphanumeric words, which resource URLs mostly share (`exa`,
 * `com`), so a substring's index read names most listings (docs/BENCHMARKS.md "Filter combinations").
 */

import { asciiLower, asciiLowerSql, type UrlPageBounds } from '../url-filter.ts';
import type { ListingKey } from '../listing.ts';
import { heldFiltersSql, visibleAfter } from './queries.ts';
import { listingColumns } from './quality.ts';

/** How many characters of each suffix are kept: a longer `url` is found by its first ones, and each match checked. */
export const SUFFIX_LENGTH = 24;

/**
 * What keeps the suffixes' table (migrations.ts): a new listing's suffixes are written with it, a removed listing's
 * deleted by their keys (a URL never changes), and all of them emptied with listings by TRUNCATE.
 */
export const URL_SUFFIXES_FUNCTIONS = `
  CREATE OR REPLACE FUNCTION catalog_url_suffixes(url text) RETURNS SETOF text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT DISTINCT left(substr(u.lowered, i), ${SUFFIX_LENGTH}) COLLATE "C"
    FROM (SELECT ${asciiLowerSql('url')} AS lowered) u, generate_series(1, length(u.lowered)) i
  $$;
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
  CREATE OR REPLACE TRIGGER listings_clear_url_suffixes AFTER TRUNCATE ON listings FOR EACH STATEMENT EXECUTE FUNCTION catalog_clear_url_suffixes();`;

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

/** The condition that entry `s` is in the range from `from` to before `to` (suffixRange). */
const rangeSql = (from: string, to: string | undefined, p: (value: unknown) => string) =>
  `s.suffix >= ${p(from)} AND ${to === undefined ? `starts_with(s.suffix, ${p(from)})` : `s.suffix < ${p(to)}`}`;

/**
 * How many of the suffixes' index entries are read first for each listing looked for (suffixPageSql): a URL holds
 * a substring once or a few times (`lolo` twice in `/lololo`), so four per listing find them unless many URLs hold it
 * many times (then more are read: list-index.ts listByUrl).
 */
export const SUFFIX_ROWS_PER_MATCH = 4;

/** The entries a `url` walk checks on their listings' URLs first, before it may check the suffixes' listings instead (suffixPageSql). */
export const WALK_ROWS_SPELLED = 256;

/**
 * SPELLED_AT_MOST: how many times WALK_ROWS_SPELLED a walk may check on their URLs (suffixPageSql). SPELLED_COST: how
 * many entries of the suffixes' range read and hashed cost as much as one URL check (a listing's row read).
 */
const SPELLED_AT_MOST = 4;
const SPELLED_COST = 10;

/** What a `url` page's statement reads (suffixPageSql; list-index.ts listByUrl). */
export interface SuffixPageRead {
  url: string;
  /** How many entries of the range are read first. */
  rows: number;
  bounds: UrlPageBounds;
  page: { limit: number; offset: number };
  /** The other filters' list keys (listing.ts filterKeys: `all` without any). */
  keys: ListingKey[];
  /** The other filters' condition on list entry `k`'s accepted entries (queries.ts acceptedEntryExists), when they have one. */
  accepts: ((p: (value: unknown) => string) => string) | undefined;
  visibleSince: string | undefined;
  failing: string | undefined;
  now: Date;
  /** The walked entries checked on their URLs first (WALK_ROWS_SPELLED). */
  spelledRows: number;
}

/**
 * A `url` page in one statement (../url-filter.ts urlPageIds; docs/CATALOG.md "List", Postgres' statements), so only
 * the page's rows and counts come back: one row per listing of the page in page order (one row of null columns when
 * it has none), each with `whole` (the first `rows` entries of `url`'s range were all of it), `matched` (how many
 * listings they name), and the page's `total` and `beyond` (UrlPageStatements.walk). When whole, `matched` are every
 * match; else past the cap the substring is common; else more entries are to be read (`total` null).
 *
 * exact: of at most the cap's matches, those the other filters keep, in page order, by a fenced primary-key lookup
 * per match (unfenced, the planner hashes every entry of the key). The age is checked past the fence: inside it, the
 * generic plan reads every visible entry of the key per match. Without other keys (`all`) the ages come from one scan
 * of the listings' primary key.
 *
 * walk: the first `budget` entries of the other filters' rarest list key (listing.ts byFewestListings) in page order,
 * checked against the matches when the range was whole (hashed once); else the first WALK_ROWS_SPELLED (`spelledRows`)
 * on their listings' URLs and the rest against the listings the whole range names (hashed once, read only then), so a
 * substring the newest listings lack does not read a row per walked entry. Up to SPELLED_AT_MOST times as many are
 * checked on their URLs when the first ones' m matches say that costs less: the rest would read
 * (want - m) * spelledRows / m more rows, against a range of about m / spelledRows of the listings, each entry a
 * SPELLED_COST-th of a row read. `beyond` is read only when the walk found fewer than `want`: a walk that found them
 * is partial either way.
 */
export function suffixPageSql(read: SuffixPageRead, p: (value: unknown) => string): string {
  const { rows, bounds, page, keys, visibleSince, failing } = read;
  const lowered = asciiLower(read.url);
  const { from, to, short } = suffixRange(lowered);
  const spelled = (listing: string) => spelledSql(listing, lowered, p);
  const order = 'ORDER BY k.last_updated DESC, k.listing_id DESC';
  const visible = visibleAfter(p, visibleSince);
  const accepts = read.accepts?.(p);
  const cap = p(bounds.cap);
  const [first, ...rest] = keys;
  const matchesKey =
    first!.kind === 'all'
      ? 'SELECT l.id AS listing_id, l.last_updated FROM listings l WHERE l.id = ANY(f.ids) OFFSET 0'
      : `SELECT k.listing_id, k.last_updated FROM unnest(f.ids) AS j(id) CROSS JOIN LATERAL (
          SELECT k.listing_id, k.last_updated FROM listing_keys k
          WHERE k.kind = ${p(first!.kind)} AND k.value = ${p(first!.value)} AND k.listing_id = j.id OFFSET 0
        ) k`;
  // The walked key: the only one, else the rarest (its count summed from its blocks), a tie in filterKeys' order.
  const walkKey =
    keys.length === 1
      ? ''
      : `walk_key AS MATERIALIZED (
      SELECT k.kind, k.value FROM unnest(${p(keys.map((k) => k.kind))}::text[], ${p(keys.map((k) => k.value))}::text[]) WITH ORDINALITY AS k(kind, value, at)
      ORDER BY coalesce((SELECT c.n FROM listing_counts c WHERE c.kind = k.kind AND c.value = k.value), 0), k.at LIMIT 1
    ),`;
  const onWalkedKey =
    keys.length === 1
      ? `k.kind = ${p(first!.kind)} AND k.value = ${p(first!.value)}`
      : 'k.kind = (SELECT kind FROM walk_key) AND k.value = (SELECT value FROM walk_key)';
  const keyEntries = `listing_keys k WHERE ${onWalkedKey}${visible} ${order}`;
  // The walk's first entries, and the rest (numbered on from them) up to the budget.
  const firstRows = Math.min(read.spelledRows, bounds.budget);
  const known = 'k.listing_id IN (SELECT unnest(ids) FROM found)';
  const inRange = `k.listing_id IN (SELECT s.listing_id FROM listing_url_suffixes s WHERE ${rangeSql(from, to, p)})${short ? '' : ` AND ${spelled('k.listing_id')}`}`;
  // Where the other filters are one key, every walked entry holds it. The walk reads list entries, each at its listing's
  // time (a hidden listing's below every age cut), so it leaves out by their ids only the failing listings still listed;
  // the exact page reads each match's time from its row when no other filter has a key, so it leaves out every one.
  const others = heldFiltersSql(p, 'k.listing_id', keys.length === 1 ? [] : keys, { accepts, failing, fence: true });
  const want = p(bounds.want);
  return `WITH found AS MATERIALIZED (${suffixMatchesSql(read.url, rows, p)}),
    exact AS MATERIALIZED (
      SELECT CASE WHEN f.whole AND cardinality(f.ids) <= ${cap} THEN ARRAY(SELECT k.listing_id FROM (${matchesKey}) k
        WHERE TRUE${visible}${heldFiltersSql(p, 'k.listing_id', rest, { accepts, failing, fence: true, indexed: first!.kind !== 'all' })} ${order}) END AS ids
      FROM found f
    ),
    ${walkKey}
    early AS MATERIALIZED (
      SELECT k.listing_id, k.last_updated FROM (SELECT k.listing_id, k.last_updated FROM ${keyEntries} LIMIT ${p(firstRows)}) k
      WHERE CASE WHEN (SELECT whole FROM found) THEN ${known} ELSE ${spelled('k.listing_id')} END${others} ${order} LIMIT ${want}
    ),
    spelling AS MATERIALIZED (
      SELECT ${SPELLED_COST} * (${p(bounds.want)}::float8 - e.m) * ${firstRows * firstRows} < e.m * e.m * (
        SELECT coalesce(sum(c.n), 0) FROM listing_counts c WHERE c.kind = 'all' AND c.value = ''
      )::float8 AS spell
      FROM (SELECT count(*) AS m FROM early) e
    ),
    later AS MATERIALIZED (
      SELECT k.listing_id, k.last_updated FROM (SELECT k.listing_id, k.last_updated, ${firstRows} + row_number() OVER (${order}) AS n FROM (
        SELECT k.listing_id, k.last_updated FROM ${keyEntries} OFFSET ${p(firstRows)} LIMIT ${p(Math.max(0, bounds.budget - firstRows))}) k) k
      WHERE (SELECT count(*) FROM early) < ${want} AND CASE WHEN (SELECT whole FROM found) THEN ${known}
        WHEN k.n <= ${SPELLED_AT_MOST * firstRows} AND (SELECT spell FROM spelling) THEN ${spelled('k.listing_id')} ELSE ${inRange} END${others}
      ${order} LIMIT ${want} - (SELECT count(*) FROM early)
    ),
    walked AS MATERIALIZED (
      SELECT CASE WHEN cardinality(f.ids) > ${cap} THEN ARRAY(
        SELECT k.listing_id FROM (SELECT * FROM early UNION ALL SELECT * FROM later) k ${order}
      ) END AS ids
      FROM found f
    ),
    shown AS MATERIALIZED (
      SELECT coalesce(e.ids, w.ids) AS ids, CASE WHEN cardinality(w.ids) < ${want}::bigint
        THEN EXISTS (SELECT 1 FROM ${keyEntries} OFFSET ${p(bounds.budget)}) ELSE false END AS beyond
      FROM exact e CROSS JOIN walked w
    )
    SELECT f.whole, cardinality(f.ids) AS matched, cardinality(s.ids) AS total, s.beyond, x.*
    FROM found f CROSS JOIN shown s LEFT JOIN LATERAL (
      SELECT ${listingColumns(read.now, p)} WHERE l.id = ANY((s.ids)[${p(Math.min(page.offset + 1, INT_MAX))}::int:${p(
        Math.min(page.offset + page.limit, INT_MAX),
      )}::int])
    ) x ON true
    ORDER BY array_position(s.ids, x.id)`;
}

/** The condition that listing `listing`'s URL holds `lowered` (a `url`, asciiLower'd), read from its row. */
const spelledSql = (listing: string, lowered: string, p: (value: unknown) => string) =>
  `strpos((SELECT ${asciiLowerSql('l.resource')} FROM listings l WHERE l.id = ${listing}), ${p(lowered)}) > 0`;

/**
 * The listings holding `url` among those the first `rows` entries of its suffixes' range name: one row, `whole` (the
 * entries were all of the range, so `ids` are every match) and `ids`. One aggregate counts the entries read and
 * gathers their listings (cheaper than a count plus a hashed DISTINCT); a long `url`'s listings are then checked on
 * their URLs.
 */
export function suffixMatchesSql(url: string, rows: number, p: (value: unknown) => string): string {
  const lowered = asciiLower(url);
  const { from, to, short } = suffixRange(lowered);
  const n = p(rows);
  const range = `SELECT s.listing_id FROM listing_url_suffixes s WHERE ${rangeSql(from, to, p)} LIMIT ${n}`;
  return `SELECT a.whole, ${short ? 'a.ids' : `ARRAY(SELECT m.id FROM unnest(a.ids) AS m(id) WHERE ${spelledSql('m.id', lowered, p)})`} AS ids
    FROM (SELECT count(*) < ${n} AS whole, coalesce(array_agg(DISTINCT e.listing_id), '{}') AS ids FROM (${range}) e) a`;
}

/** The largest array subscript (an SQL int): a page starting past it is past every match (a walk keeps a few thousand). */
const INT_MAX = 2 ** 31 - 1;
