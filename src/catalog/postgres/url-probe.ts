/**
 * The trigram index's answer to "which listings hold `url`", at most a cap of them (list-index.ts listByUrl).
 * pg_trgm's GIN index reads the entries of every trigram of the pattern before any LIMIT, and resource URLs share
 * many (`com`, `api`, `exa`…): asked for a whole host, the index read each common trigram's entry for every listing.
 * So the index is asked for the two of the pattern's alphanumeric 3-character windows (each one trigram that every
 * match holds) that the fewest URLs of a random sample of the catalog hold (../url-filter.ts), and the whole pattern
 * is checked on the rows they name; a pattern without such a window is asked whole, and one that much of the
 * sample holds is found by a scan. The sample only chooses what is read: the answer is every match either way
 * (up to the cap).
 */
import { urlCondition, type Db } from './queries.ts';
import { URL_SAMPLE_SIZE, UrlSample, asciiLower, rarestWindows } from '../url-filter.ts';

/** How many of `url`'s windows the index is asked for. */
const WINDOWS_ASKED = 2;

/** `url`'s alphanumeric 3-character windows, lowered and distinct: pg_trgm indexes each as one trigram. */
export function urlWindows(url: string): string[] {
  const windows = new Set<string>();
  const lowered = asciiLower(url);
  for (let i = 0; i + 3 <= lowered.length; i++) {
    const window = lowered.slice(i, i + 3);
    if (/^[a-z0-9]{3}$/.test(window)) windows.add(window);
  }
  return [...windows];
}

/** `sample`'s URLs, drawn again from the catalog's listings when it is stale. */
export async function sampledUrls(db: Db, sample: UrlSample, nowMs: number): Promise<string[]> {
  if (!sample.stale(nowMs)) return sample.urls;
  const rows = await db.query<{ resource: string }>(
    `SELECT lower(resource) AS resource FROM listings WHERE id = ANY(ARRAY(
       SELECT 1 + floor(random() * (SELECT max(id) FROM listings))::bigint FROM generate_series(1, $1)))`,
    [URL_SAMPLE_SIZE],
  );
  sample.replace(
    rows.rows.map((r) => r.resource),
    nowMs,
  );
  return sample.urls;
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
export async function urlMatchesCapped(db: Db, url: string, sample: string[], want: number): Promise<number[]> {
  const values: unknown[] = [];
  const p = (value: unknown) => `$${values.push(value)}`;
  const lowered = asciiLower(url);
  const common = sample.length > 0 && sample.filter((resource) => resource.includes(lowered)).length >= SCANNED_SHARE * sample.length;
  const rare = common ? [] : rarestWindows(urlWindows(url), sample, WINDOWS_ASKED);
  const source = common
    ? 'SELECT c.id, c.resource FROM listings c OFFSET 0'
    : rare.length === 0
      ? 'SELECT c.id, c.resource FROM listings c'
      : `SELECT c.id, c.resource FROM listings c WHERE ${rare.map((window) => `lower(c.resource) LIKE ${p(`%${window}%`)}`).join(' AND ')} OFFSET 0`;
  const text = `SELECT l.id FROM (${source}) l WHERE ${urlCondition(url, p)} LIMIT ${p(want)}`;
  return (await db.query<{ id: string }>(text, values)).rows.map((r) => Number(r.id));
}
