/**
 * The trigram index's answer to "which listings hold `url`", at most a cap of them (list-index.ts listByUrl).
 * pg_trgm indexes only the trigrams of alphanumeric words, and resource URLs share many (`com`, `api`, `exa`…):
 * `3.example.com/v` has no trigram that most URLs lack, though its `3.e` and `m/v` are rare. So the index is of
 * each URL spelled in letters (`listing_url_letters`, catalog migration 30: `.` `qa`, `/` `qb`, `:` `qc`, `-` `qe`,
 * `_` `qf`, any other character that is not a lowercase ASCII letter or digit `qh`, `q` itself `qq`), where every
 * 3 characters of a URL leave a trigram, and a substring spelled so is a substring of the URL spelled so. It is
 * asked for the two windows of the spelled substring that the fewest URLs of a random sample of the catalog hold
 * (../url-filter.ts), each a trigram that every match holds, and the whole substring is checked on the rows they
 * name; one that an eighth of the sample holds is found by a scan. The sample only chooses what is read: the answer
 * is every match either way (up to the cap).
 */
import type { Db } from './queries.ts';
import { URL_SAMPLE_SIZE, UrlSample, asciiLower, rarestWindows, urlWindows } from '../url-filter.ts';

/** How many of `url`'s windows the index is asked for. */
const WINDOWS_ASKED = 2;

/** How catalog_url_letters spells each character that is neither a lowercase ASCII letter nor a digit. */
const SPELLED: Record<string, string> = { q: 'qq', '.': 'qa', '/': 'qb', ':': 'qc', '-': 'qe', _: 'qf' };

/** `url` spelled as catalog_url_letters spells a resource URL (ASCII letters lowered). */
export function urlLetters(url: string): string {
  let out = '';
  for (const c of asciiLower(url)) out += SPELLED[c] ?? (/^[0-9a-z]$/.test(c) ? c : 'qh');
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
        translate(url, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'),
        'q', 'qq'), '.', 'qa'), '/', 'qb'), ':', 'qc'), '-', 'qe'), '_', 'qf'),
      '[^0-9a-z]', 'qh', 'g')
  $$;`;

/** `sample` (URLs spelled as the index spells them), drawn again from the catalog's listings when it is stale. */
export async function freshSample(db: Db, sample: UrlSample, nowMs: number): Promise<UrlSample> {
  if (!sample.stale(nowMs)) return sample;
  const rows = await db.query<{ resource: string }>(
    `SELECT letters AS resource FROM listing_url_letters WHERE listing_id = ANY(ARRAY(
       SELECT 1 + floor(random() * (SELECT max(listing_id) FROM listing_url_letters))::bigint FROM generate_series(1, $1)))`,
    [URL_SAMPLE_SIZE],
  );
  sample.replace(
    rows.rows.map((r) => r.resource),
    nowMs,
  );
  return sample;
}

/** From this share of the sample's URLs holding `url`, the index is not asked: a scan finds `want` matches sooner. */
const SCANNED_SHARE = 1 / 8;

/**
 * At most `want` ids of listings holding `url` (every one when fewer hold it). The windows are asked in a subquery
 * under a fence (OFFSET 0) and the whole pattern checked above it, so the planner cannot hand the pattern's
 * trigrams to the index too. When at least SCANNED_SHARE of the sample holds `url`, its windows are common too
 * and the index would name most listings: the listings are scanned instead (fenced, so no index is used), and the
 * scan stops at `want` matches, after about `want` ÷ that share rows.
 */
export async function urlMatchesCapped(db: Db, url: string, sample: UrlSample, want: number): Promise<number[]> {
  const values: unknown[] = [];
  const p = (value: unknown) => `$${values.push(value)}`;
  const spelled = urlLetters(url);
  const { urls } = sample;
  const common = urls.length > 0 && urls.filter((resource) => resource.includes(spelled)).length >= SCANNED_SHARE * urls.length;
  const rare = common ? [] : rarestWindows(urlWindows(spelled), sample, WINDOWS_ASKED);
  const source = common
    ? 'SELECT c.id, c.resource FROM listings c OFFSET 0'
    : rare.length === 0
      ? 'SELECT c.id, c.resource FROM listings c'
      : // The spelled substring (strpos: not for the index) keeps out most rows a window names before the listing is read;
        // each listing is then one primary-key read (fenced: no hash of every listing), stopped by the LIMIT.
        `SELECT l.id, l.resource FROM (
           SELECT c.listing_id FROM listing_url_letters c
           WHERE ${rare.map((window) => `c.letters LIKE ${p(`%${window}%`)}`).join(' AND ')} AND strpos(c.letters, ${p(spelled)}) > 0 OFFSET 0
         ) c CROSS JOIN LATERAL (SELECT l.id, l.resource FROM listings l WHERE l.id = c.listing_id OFFSET 0) l`;
  // strpos, not urlCondition's LIKE: the check is of the rows named above, and a LIKE would let the planner read the
  // listings' own trigram index (migration 29) for every URL holding the substring's common trigrams as well.
  const text = `SELECT l.id FROM (${source}) l WHERE strpos(lower(l.resource), ${p(asciiLower(url))}) > 0 LIMIT ${p(want)}`;
  return (await db.query<{ id: string }>(text, values)).rows.map((r) => Number(r.id));
}
