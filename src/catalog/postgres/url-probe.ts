/**
 * How the `url` filter reads the spelled URLs on Postgres (list-index.ts listByUrl). pg_trgm indexes only the trigrams
 * of alphanumeric words, and resource URLs share many (`com`, `api`, `exa`…): `3.example.com/v` has no trigram that
 * most URLs lack, though its `3.e` and `m/v` are rare. So the index is of each URL spelled in letters
 * (`listing_url_letters`, catalog migration 30: `.` `qa`, `/` `qb`, `:` `qc`, `-` `qe`, `_` `qf`, any other character
 * that is not a lowercase ASCII letter or digit `qh`, `q` itself `qq`), where every 3 characters of a URL leave a
 * trigram, and a substring spelled so is a substring of the URL spelled so (and rarely of a few more: where a
 * punctuation's spelling ends as the substring's begins, `.` spelled `qa` before `a…`). It is asked for the two windows
 * of the spelled substring that the fewest URLs of a random sample of the catalog hold (../url-filter.ts), and past
 * 128,000 listings up to two uncommon ones more (askedWindows), each a trigram that every match holds; one that many
 * sampled URLs hold is found by a scan (urlLettersRead), which stops at a bound where the index is asked instead
 * (SCAN_BOUND). The sample only chooses what is read: every match is found either way, and then checked (spelledHolds).
 * The URLs' suffixes (url-suffixes.ts) are read first, the trigram index only where they do not tell (spelledCte).
 */
import { parameters, type Db } from './queries.ts';
import {
  URL_INDEX_CAP,
  URL_SAMPLE_SIZE,
  UrlSample,
  asciiLower,
  asciiLowerSql,
  rarestWindows,
  urlWindows,
  type UrlScale,
} from '../url-filter.ts';
import { suffixRange } from './url-suffixes.ts';

/** How many of `url`'s rarest windows the index is asked for (rarestWindows; askedWindows may add more). */
const WINDOWS_ASKED = 2;
/** How many windows the index is asked for at most (askedWindows). */
const WINDOWS_ASKED_MOST = 4;
/** A window that at most this share of the sample holds is uncommon (askedWindows). */
const UNCOMMON_SHARE = 1 / 16;

/** How catalog_url_letters spells each character that is neither a lowercase ASCII letter nor a digit. */
const SPELLED: Record<string, string> = { q: 'qq', '.': 'qa', '/': 'qb', ':': 'qc', '-': 'qe', _: 'qf' };

/** Lowered character `c`'s spelling when no other character has it (SPELLED's, or a lowercase ASCII letter or digit
 * itself); else undefined (`qh`). */
const ownSpelling = (c: string): string | undefined => SPELLED[c] ?? (/^[0-9a-z]$/.test(c) ? c : undefined);

/** `url` spelled as catalog_url_letters spells a resource URL (ASCII letters lowered). */
export function urlLetters(url: string): string {
  let out = '';
  for (const c of asciiLower(url)) out += ownSpelling(c) ?? 'qh';
  return out;
}

/**
 * Catalog migration 30's function (SQL-language, IMMUTABLE, so an index may use it; ASCII letters lowered by
 * translate, which no locale changes). urlLetters is its twin: test/catalog/url-walk.test.ts checks they agree.
 */
export const URL_LETTERS_FUNCTION = `
  CREATE OR REPLACE FUNCTION catalog_url_letters(url text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT regexp_replace(
      replace(replace(replace(replace(replace(replace(
        ${asciiLowerSql('url')},
        'q', 'qq'), '.', 'qa'), '/', 'qb'), ':', 'qc'), '-', 'qe'), '_', 'qf'),
      '[^0-9a-z]', 'qh', 'g')
  $$;`;

/**
 * Catalog migration 31: each spelled URL carries its listing's lastUpdated (kept by a trigger on every write that moves
 * it), so a `url` page orders and ages its matches on the rows its index read names (list-index.ts listByUrl) without
 * reading each match's listing row. The table is rebuilt whole (compact, where adding the column would rewrite every
 * row in place) with its key, its trigram index and its triggers. The column's default is never stored: it lets
 * migration 30, run again on a database the migration tests set back to before it, insert its two columns (every row
 * it inserts is already there, and is skipped).
 */
export const URL_LETTERS_DATED_MIGRATION = `
  DROP TABLE IF EXISTS listing_url_letters_dated;
  CREATE TABLE listing_url_letters_dated (
    listing_id BIGINT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE,
    letters TEXT NOT NULL,
    last_updated TEXT COLLATE "C" NOT NULL DEFAULT ''
  );
  INSERT INTO listing_url_letters_dated (listing_id, letters, last_updated)
    SELECT c.listing_id, c.letters, l.last_updated FROM listing_url_letters c JOIN listings l ON l.id = c.listing_id ORDER BY c.listing_id;
  DROP TABLE listing_url_letters;
  ALTER TABLE listing_url_letters_dated RENAME TO listing_url_letters;
  ALTER INDEX listing_url_letters_dated_pkey RENAME TO listing_url_letters_pkey;
  CREATE INDEX listing_url_letters_trigrams ON listing_url_letters USING gin (letters gin_trgm_ops);
  CREATE OR REPLACE FUNCTION catalog_spell_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO listing_url_letters (listing_id, letters, last_updated) VALUES (NEW.id, catalog_url_letters(NEW.resource), NEW.last_updated);
    RETURN NULL;
  END $$;
  CREATE OR REPLACE FUNCTION catalog_date_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE listing_url_letters SET last_updated = NEW.last_updated WHERE listing_id = NEW.id;
    RETURN NULL;
  END $$;
  CREATE OR REPLACE TRIGGER listings_date_url AFTER UPDATE OF last_updated ON listings
    FOR EACH ROW WHEN (OLD.last_updated IS DISTINCT FROM NEW.last_updated) EXECUTE FUNCTION catalog_date_listing_url();
  ANALYZE listing_url_letters;`;

/**
 * Catalog migration 32: the spelled URLs in page order (lastUpdated, then listing, as the list key `all` orders every
 * listing), so a `url` page without other filters walks them in one index range and checks each on its spelling, where
 * it read each walked listing's row by its key (list-index.ts listByUrl: at 100k, 4,000 rows read one by one took
 * 7–10 ms). The spelling is not in the index: a URL spelled can outgrow an index entry's limit.
 */
export const URL_LETTERS_PAGE_MIGRATION = `
  CREATE INDEX IF NOT EXISTS listing_url_letters_page ON listing_url_letters (last_updated, listing_id);
  ANALYZE listing_url_letters;`;

/**
 * Catalog migration 33: each spelled URL carries its listing's list keys as bits (`key_bits`: two of 64 for each key,
 * catalog_key_bits), so a `url` page checks a match's other filters on the row its index read named and looks up in
 * listing_keys only the matches whose bits hold a key's (list-index.ts listByUrl). An exact page of a few hundred
 * matches looked each up (a page of listing_keys_pkey, 1.9 GB at 1M listings, read for most): 5 ms of 17 for one at 1M.
 * The bits hold every key the listing has had (a key removed leaves its bits: a match more is looked up, none is
 * missed). A new listing's spelled URL starts with none; a trigger on each added key, deferred to the write's commit,
 * sets all its listing's keys' bits at the first (one row version per write that adds keys, where one per key wrote a
 * dozen): 0.2 ms more per new listing (2.53 against 2.32, 3,000 written through the store in process beside a database
 * without the trigger), none for a write that adds no key. The table is rebuilt whole, as migration 31 rebuilt it
 * (compact, where setting the column on every row would write each twice): 30–70 s at 1M listings.
 */
export const URL_LETTERS_KEYED_MIGRATION = `
  CREATE OR REPLACE FUNCTION catalog_key_bits(kind text, value text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (1::bigint << (get_byte(decode(md5(kind || E'\n' || value), 'hex'), 0) % 64))
      | (1::bigint << (get_byte(decode(md5(kind || E'\n' || value), 'hex'), 1) % 64))
  $$;
  DROP TABLE IF EXISTS listing_url_letters_keyed;
  CREATE TABLE listing_url_letters_keyed (
    listing_id BIGINT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE,
    letters TEXT NOT NULL,
    last_updated TEXT COLLATE "C" NOT NULL DEFAULT '',
    key_bits BIGINT NOT NULL DEFAULT 0
  );
  INSERT INTO listing_url_letters_keyed (listing_id, letters, last_updated, key_bits)
    SELECT c.listing_id, c.letters, c.last_updated, coalesce(b.bits, 0)
    FROM listing_url_letters c LEFT JOIN (
      SELECT listing_id, bit_or(catalog_key_bits(kind, value)) AS bits FROM listing_keys GROUP BY listing_id
    ) b ON b.listing_id = c.listing_id
    ORDER BY c.listing_id;
  DROP TABLE listing_url_letters;
  ALTER TABLE listing_url_letters_keyed RENAME TO listing_url_letters;
  ALTER INDEX listing_url_letters_keyed_pkey RENAME TO listing_url_letters_pkey;
  CREATE INDEX listing_url_letters_trigrams ON listing_url_letters USING gin (letters gin_trgm_ops);
  CREATE INDEX listing_url_letters_page ON listing_url_letters (last_updated, listing_id);
  CREATE OR REPLACE FUNCTION catalog_key_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE listing_url_letters c
      SET key_bits = c.key_bits | (SELECT bit_or(catalog_key_bits(k.kind, k.value)) FROM listing_keys k WHERE k.listing_id = NEW.listing_id)
      WHERE c.listing_id = NEW.listing_id AND ((~c.key_bits) & catalog_key_bits(NEW.kind, NEW.value)) <> 0;
    RETURN NULL;
  END $$;
  DROP TRIGGER IF EXISTS listing_keys_url_bits ON listing_keys;
  CREATE CONSTRAINT TRIGGER listing_keys_url_bits AFTER INSERT ON listing_keys DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION catalog_key_listing_url();
  ANALYZE listing_url_letters;`;

/**
 * The condition that spelled match `k` (a row of spelledCte's table) holds `url` itself, not only its spelling: decided on
 * its spelled URL when each character `url` holds is spelled as no other (ownSpelling) and the spelling is found where
 * a character's spelling starts (every `q` starts a two-letter spelling, so there an even run of `q`s ends); else, when
 * `url` holds a character spelled `qh` (many are), on the listing's URL.
 */
export function spelledHolds(url: string, p: (value: unknown) => string): string {
  if ([...asciiLower(url)].every((c) => ownSpelling(c) !== undefined)) return `k.letters ~ ${p(`(^|[^q])(qq)*${urlLetters(url)}`)}`;
  return `strpos((SELECT lower(l.resource) FROM listings l WHERE l.id = k.listing_id), ${p(asciiLower(url))}) > 0`;
}

/** `sample` (URLs spelled as the index spells them, and the catalog's listings), drawn again from the catalog when it is stale. */
export async function freshSample(db: Db, sample: UrlSample, nowMs: number): Promise<UrlSample> {
  if (!sample.stale(nowMs)) return sample;
  const rows = await db.query<{ resource: string; listings: string | null }>(
    `SELECT letters AS resource, (SELECT n FROM listing_counts WHERE kind = 'all' AND value = '') AS listings
     FROM listing_url_letters WHERE listing_id = ANY(ARRAY(
       SELECT 1 + floor(random() * (SELECT max(listing_id) FROM listing_url_letters))::bigint FROM generate_series(1, $1)))`,
    [URL_SAMPLE_SIZE],
  );
  sample.replace(
    rows.rows.map((r) => r.resource),
    nowMs,
    Number(rows.rows[0]?.listings ?? 0),
  );
  return sample;
}

/**
 * From this share of the sample's URLs holding `url` (4 of 256), the spelled URLs may be scanned in place of the index
 * (scanReadsLess): a scan stops at the cap's matches and one more, so it reads about the cap over the share. Fewer
 * sampled URLs could stand for a substring that fewer listings than the cap hold (at 1M listings one stands for 3,900),
 * whose scan would read every spelled URL; 4 stand for fewer than 500 at 1M about once in 100,000 draws.
 */
const SCANNED_SHARE = 4 / URL_SAMPLE_SIZE;
/**
 * What a spelled URL a scan reads costs, in index entries read (1M listings, cached: 0.14 µs against 0.046 µs). The
 * statement is planned once per connection (queries.ts queryGeneric), so this choice, which Postgres made with each
 * page's values when it planned every page (a scan for `7.seller`, whose window `7qa` a fifth of URLs hold: 0.7 ms
 * where reading that window's 189,000 entries took 9), is made here.
 */
const SCAN_ROW_ENTRIES = 3;
/**
 * How many times the spelled URLs it expects to read (scanReadsLess) a scan reads at most before the index is asked
 * instead (spelledCte). The expectation holds where the matches are spread through the table; where they lie together
 * past the scan's start (a seller's listings written at once), an unbounded scan read most of the table: `api9` at 1M
 * listings, held by 111,000 listings of which 100,000 are the newest tenth, read 620,000–750,000 spelled URLs, 105–122 ms.
 */
const SCAN_BOUND = 4;
/**
 * Below this share of the sample's URLs holding `url`, a walk beside other filters may read only the spelled URLs the
 * index names for it (when at most JOINED_MATCHES hold it), not each walked entry's: a match is rarer than one listing
 * in 32 there, and a walk for a page's matches reads thousands of entries (at 100k, 4,000 read one by one took 5–7 ms
 * for `i26`, held by 1,111). A walk without other filters reads the spelled URLs in page order (list-index.ts
 * listByUrl). (SQLite's FTS5 reads each window's whole entry list, about as long as such a walk: there the walk reads
 * each listing's URL.)
 */
const WALKED_BY_INDEX_SHARE = 1 / 32;
/**
 * The most spelled matches a walk beside other filters is joined to; past it the walk reads its entries' spelled URLs
 * (list-index.ts listByUrl). Counting to it reads up to one more match, a page each where the matches are not cached,
 * and that read is wasted when more hold the substring: so the join is asked only while one sampled URL stands for at
 * most half the cap's listings (a catalog of up to 256,000 listings), where a substring held by more than the cap shows
 * in a few sampled URLs. At 1M listings, where one stands for 3,900, none of a substring held by 1,000 or by 10,000
 * may show; reading 1,001 matches to find out took 5–10 ms there, and the join made the p95 of `url` + `asset` +
 * `network` 2–3 ms higher in process, where at 100k it keeps it about 1 ms lower. At 100k a cap of 2,000 gave a p95
 * 0.1–0.5 ms lower than 1,000 in six runs of six over HTTP, and 4,000 no better (docs/BENCHMARKS.md "Filter combinations").
 */
export const JOINED_MATCHES = 2_000;

/**
 * How many of the suffixes' index entries spelledCte reads for each listing it looks for: a URL holds a substring once
 * or a few times (`lolo` twice in `/lololo`), so four per listing find them unless many URLs hold it many times (then
 * the trigram index is asked). Reading 2,004 entries at 1M listings took 0.6–0.8 ms on a fresh server.
 */
const SUFFIX_ROWS_PER_MATCH = 4;

/**
 * How `url` is read: lowered (asciiLower), the suffix entries read per listing looked for (spelledCte), its spelling, the
 * windows the trigram index is asked for, the most spelled URLs a scan reads first (undefined: no scan; Infinity: every
 * one, the index never asked), and whether a walk joins the index's matches.
 */
export interface UrlLettersRead {
  lowered: string;
  spelled: string;
  windows: string[];
  scanned?: number;
  walkedByIndex: boolean;
  suffixRowsPerMatch: number;
}

/** `url`'s read, by the share of `sample` holding it and the listings each sampled URL stands for (tests set their shares and cap). */
export function urlLettersRead(
  url: string,
  sample: UrlSample,
  {
    urlIndexCap = URL_INDEX_CAP,
    urlScannedShare = SCANNED_SHARE,
    urlWalkedByIndexShare = WALKED_BY_INDEX_SHARE,
    urlJoinCap = JOINED_MATCHES,
    urlScanBound = SCAN_BOUND,
    urlMoreWindowsFrom = urlIndexCap,
    urlSuffixRowsPerMatch: suffixRowsPerMatch = SUFFIX_ROWS_PER_MATCH,
  }: UrlScale = {},
): UrlLettersRead {
  const lowered = asciiLower(url);
  const spelled = urlLetters(url);
  const share = sample.share(spelled);
  const all = urlWindows(spelled);
  const rarest = prunedWindows(rarestWindows(all, sample, WINDOWS_ASKED), sample);
  const windows = sample.listings > sample.urls.length * urlMoreWindowsFrom ? askedWindows(all, rarest, sample) : rarest;
  // A scan is weighed against the two rarest windows' entries, as it was measured (scanReadsLess); its fallback asks all.
  if (share >= urlScannedShare && scanReadsLess(share, rarest, sample, urlIndexCap)) {
    const bound = Math.max(1, Math.ceil(urlScanBound * scanRows(share, sample, urlIndexCap)));
    return { lowered, spelled, windows, scanned: bound >= sample.listings ? Infinity : bound, walkedByIndex: false, suffixRowsPerMatch };
  }
  const resolves = sample.listings * 2 <= sample.urls.length * urlJoinCap;
  return { lowered, spelled, windows, walkedByIndex: share < urlWalkedByIndexShare && resolves, suffixRowsPerMatch };
}

/** The spelled URLs a scan is expected to read to find the cap's matches and one more: every one at most. */
const scanRows = (share: number, sample: UrlSample, cap: number) => Math.min(sample.listings, (cap + 1) / share);

/**
 * Whether a scan of the spelled URLs is expected to cost less than reading `windows` from the index: the scan reads
 * about (`cap` + 1) / `share` of them (at most every one), each costing SCAN_ROW_ENTRIES entries; the index reads every
 * entry of each window, its share of the sample of the catalog's listings. In process at 1M listings (128 MB of shared
 * buffers, seeds 6–8), against a scan only from an eighth of the sample: the p95 of `url` + `asset` + `network` 0.9–1.3 ms
 * lower (9.27 / 9.21 / 11.14 against 10.19 / 10.41 / 12.43), the p50 1.2–1.7; no change at 100k.
 */
function scanReadsLess(share: number, windows: string[], sample: UrlSample, cap: number): boolean {
  const entries = (windows.reduce((sum, window) => sum + sample.holding(window), 0) / sample.urls.length) * sample.listings;
  return scanRows(share, sample, cap) * SCAN_ROW_ENTRIES < entries;
}

/**
 * `windows` (rarestWindows', in the substring's order) without the more common of two when at least half the sampled
 * URLs holding the rarer also hold it: it prunes little. Such windows come together (`/mi` and `/m`, `tav` and `avo`),
 * and the index reads both entry lists into a bitmap where the rarer alone costs less: at 1M listings a window that
 * 2–5 % of URLs hold takes 10–25 ms to read whole (docs/BENCHMARKS.md "Filter combinations"). Windows that no sampled
 * URL holds are both asked.
 */
function prunedWindows(windows: string[], sample: UrlSample): string[] {
  if (windows.length !== 2) return windows;
  const [first, last] = windows.map((window) => sample.holding(window)) as [number, number];
  return sample.holdingAll(windows) * 2 > Math.min(first, last) ? [first <= last ? windows[0]! : windows[1]!] : windows;
}

/**
 * `rarest` (prunedWindows', at most WINDOWS_ASKED) and the substring's other uncommon windows (`all`, urlWindows'; at
 * most UNCOMMON_SHARE of the sample holds each), the fewest held first, up to WINDOWS_ASKED_MOST in all. Asked where
 * one sampled URL stands for more listings than the cap (urlLettersRead): there a window that one sampled URL holds, or
 * none, may be held by a few listings or by thousands, so the two the sample calls rarest may name thousands of spelled
 * URLs where another window would have pruned most (`nebebe` at 1M listings: `neb` + `ebe` name 2,677 for 41 matches,
 * `beb` + `neb` 41). Measured in process at 1M listings (128 MB of shared buffers), against the two alone, side by
 * side: the p95 of `url` + `asset` + `network` 0.7–1.5 ms lower (seeds 186–189: 11.44 / 10.30 / 9.63 / 10.66 against
 * 10.34 / 9.24 / 8.96 / 9.18), the p50 0.2–0.4. The rule is flat (seeds 180–185): 3 or 6 windows in all, or uncommon at
 * a 64th of the sample, no different; at a quarter, 0.4–0.8 ms higher; leaving out a window that comes with one asked
 * (as prunedWindows does), no different. At 100k listings (a sampled URL for 390) the two suffice: asking more left the
 * p95 0.1–0.4 ms higher.
 */
function askedWindows(all: string[], rarest: string[], sample: UrlSample): string[] {
  const uncommon = all
    .map((window, at) => ({ window, at, held: sample.holding(window) }))
    .filter((x) => x.held <= sample.urls.length * UNCOMMON_SHARE && !rarest.includes(x.window))
    .sort((x, y) => x.held - y.held || x.at - y.at);
  return [...rarest, ...uncommon.map((x) => x.window)].slice(0, WINDOWS_ASKED_MOST);
}

/**
 * The statement's `spelled` table: up to `limit` listings (`listing_id`, `letters`, `last_updated`, `key_bits`) whose
 * spelled URL holds `read`'s spelling, every one when fewer. First read from the suffixes' index range
 * (url-suffixes.ts), at most `limit` × `read.suffixRowsPerMatch` entries (a URL may hold a substring more than once):
 * - when a short `url` (at most SUFFIX_LENGTH characters: every entry's listing holds it) has `limit` listings there,
 *   the table is `limit` of them without their columns: it says only that more than `limit` - 1 hold it (list-index.ts
 *   listByUrl and urlHeldIds read a row's columns only when fewer do), and no spelled URL is read;
 * - else, when the range was read whole, the spelled URLs of its listings (a long `url`'s checked: spelledHolds);
 * - else (the range has more entries than were read: a URL holding the substring many times, or a long `url` whose
 *   first characters many hold), the trigram index's (lettersCte).
 * And `spelled_count`'s row: `n`, how many rows `spelled` has (a short `url`'s from the range where it tells, none
 * read), and `complete`, whether `suffix_rows` named every listing holding `url`, so a walk may be joined to those ids
 * (list-index.ts listByUrl). Over HTTP beside the trigram index alone, `url` + `asset` + `network` p95 5.80–7.45 ms
 * against 9.27–11.8 at 1M listings, 3.05–5.44 against 3.48–6.06 at 100k (docs/BENCHMARKS.md "Filter combinations").
 */
export function spelledCte(read: UrlLettersRead, p: (value: unknown) => string, limit: number): string {
  const { from, to, short } = suffixRange(read.lowered);
  const rows = p(limit * read.suffixRowsPerMatch);
  // Only a short `url`'s statement asks whether the range held `limit` listings (a parameter the text does not hold fails).
  const many = short ? `(SELECT listings FROM suffixed) >= ${p(limit)}` : 'false';
  const found = `NOT ${many}`;
  return `suffix_rows AS MATERIALIZED (
       SELECT s.listing_id FROM listing_url_suffixes s
       WHERE s.suffix >= ${p(from)} AND ${to === undefined ? `starts_with(s.suffix, ${p(from)})` : `s.suffix < ${p(to)}`} LIMIT ${rows}),
     suffixed AS MATERIALIZED (SELECT count(*) < ${rows} AS whole, count(DISTINCT s.listing_id) AS listings FROM suffix_rows s),
     ${lettersCte(read, p, limit)},
     spelled AS MATERIALIZED (${
       short
         ? `SELECT d.listing_id, NULL::text AS letters, NULL::text COLLATE "C" AS last_updated, NULL::bigint AS key_bits
       FROM (SELECT DISTINCT s.listing_id FROM suffix_rows s LIMIT ${p(limit)}) d WHERE ${many}
       UNION ALL `
         : ''
     }SELECT * FROM (
         SELECT k.listing_id, k.letters, k.last_updated, k.key_bits FROM listing_url_letters k
         WHERE k.listing_id = ANY(ARRAY(SELECT DISTINCT s.listing_id FROM suffix_rows s))${short ? '' : ` AND ${spelledHolds(read.lowered, p)}`} LIMIT ${p(limit)}
       ) c WHERE (SELECT whole FROM suffixed) AND ${found}
       UNION ALL SELECT * FROM indexed WHERE NOT (SELECT whole FROM suffixed) AND ${found}),
     spelled_count AS MATERIALIZED (${
       short
         ? `SELECT CASE WHEN (SELECT whole FROM suffixed) OR ${many} THEN (SELECT least(listings, ${p(limit)}) FROM suffixed)
         ELSE (SELECT count(*) FROM spelled) END AS n, (SELECT whole FROM suffixed) AS complete`
         : 'SELECT count(*) AS n, false AS complete FROM spelled'
     })`;
}

/**
 * The trigram index's `indexed` table (after it, a `scanned` one when `read` scans), as spelledCte's: read by the
 * index's windows, or by a scan of at most `read.scanned` spelled URLs, whose matches are the table's when it found
 * `limit`; else the index is asked (the scan may have stopped short of the rest: SCAN_BOUND).
 */
function lettersCte({ spelled, windows, scanned }: UrlLettersRead, p: (value: unknown) => string, limit: number): string {
  const columns = 'c.listing_id, c.letters, c.last_updated, c.key_bits';
  const holding = `strpos(c.letters, ${p(spelled)}) > 0 LIMIT ${p(limit)}`;
  const byIndex = () =>
    `SELECT ${columns} FROM listing_url_letters c WHERE ${windows.map((window) => `c.letters LIKE ${p(`%${window}%`)} AND `).join('')}${holding}`;
  if (scanned === undefined) return `indexed AS MATERIALIZED (${byIndex()})`;
  if (scanned === Infinity) return `indexed AS MATERIALIZED (SELECT ${columns} FROM listing_url_letters c WHERE ${holding})`;
  return `scanned AS MATERIALIZED (
       SELECT ${columns} FROM (SELECT ${columns} FROM listing_url_letters c LIMIT ${p(scanned)}) c WHERE ${holding}),
     indexed AS MATERIALIZED (
       SELECT * FROM scanned WHERE (SELECT count(*) FROM scanned) = ${p(limit)}
       UNION ALL SELECT * FROM (${byIndex()}) c WHERE (SELECT count(*) FROM scanned) < ${p(limit)})`;
}

/**
 * The ids of the listings holding `url` when at most `cap` listings' spelled URLs hold its spelling, else undefined:
 * the set a filtered search may be narrowed to (filter-driver.ts searchFilters; sqlite/filter-set.ts urlSet). The spelled
 * matches are counted, at most `cap` + 1, and only when they are at most `cap` checked (spelledHolds).
 */
export async function urlHeldIds(db: Db, url: string, letters: UrlLettersRead, cap: number): Promise<number[] | undefined> {
  const { values, p } = parameters();
  const found = await db.query<{ ids: string[] | null }>(
    `WITH ${spelledCte(letters, p, cap + 1)}
     SELECT CASE WHEN (SELECT n FROM spelled_count) <= ${p(cap)} THEN ARRAY(SELECT k.listing_id FROM spelled k WHERE ${spelledHolds(url, p)}) END AS ids`,
    values,
  );
  return found.rows[0]!.ids?.map(Number);
}
