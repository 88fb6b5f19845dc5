/**
 * The trigram index's answer to "which listings hold `url`", at most a cap of them (list-index.ts listByUrlWalk).
 * pg_trgm's GIN index reads the entries of every trigram of the pattern before any LIMIT, and resource URLs share
 * many (`com`, `api`, `exa`…): asked for a whole host, the index read each common trigram's entry for every listing.
 * So the index is asked for at most two of the pattern's alphanumeric 3-character windows (each one trigram that
 * every match holds) that no URL of a random sample of the catalog holds, and the whole pattern is checked on the
 * rows they name; when every window is in the sample, the substring is common and the whole pattern is asked.
 * The sample only chooses what the index reads: the answer is every match either way (up to the cap).
 */
import { urlCondition, type Db } from './queries.ts';
import { asciiLower } from '../url-filter.ts';

/** How many URLs the sample holds, and how long it is kept before it is drawn again. */
const SAMPLE_SIZE = 256;
const SAMPLE_MAX_AGE_MS = 60_000;
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

/** A random sample of the catalog's lowered resource URLs, drawn again when older than SAMPLE_MAX_AGE_MS (one per store). */
export class UrlSample {
  private urls: string[] = [];
  private drawnAt = -Infinity;

  async get(db: Db, nowMs: number): Promise<string[]> {
    if (nowMs - this.drawnAt < SAMPLE_MAX_AGE_MS) return this.urls;
    const rows = await db.query<{ resource: string }>(
      `SELECT lower(resource) AS resource FROM listings WHERE id = ANY(ARRAY(
         SELECT 1 + floor(random() * (SELECT max(id) FROM listings))::bigint FROM generate_series(1, $1)))`,
      [SAMPLE_SIZE],
    );
    this.urls = rows.rows.map((r) => r.resource);
    this.drawnAt = nowMs;
    return this.urls;
  }
}

/**
 * At most `want` ids of listings holding `url` (every one when fewer hold it). The windows are asked in a subquery
 * under a fence (OFFSET 0) and the whole pattern checked above it, so the planner cannot hand the pattern's
 * trigrams to the index too.
 */
export async function urlMatchesCapped(db: Db, url: string, sample: string[], want: number): Promise<number[]> {
  const rare = urlWindows(url)
    .filter((window) => !sample.some((resource) => resource.includes(window)))
    .slice(0, WINDOWS_ASKED);
  const values: unknown[] = [];
  const p = (value: unknown) => `$${values.push(value)}`;
  const text =
    rare.length === 0
      ? `SELECT l.id FROM listings l WHERE ${urlCondition(url, p)} LIMIT ${p(want)}`
      : `SELECT l.id FROM (
           SELECT c.id, c.resource FROM listings c WHERE ${rare.map((window) => `lower(c.resource) LIKE ${p(`%${window}%`)}`).join(' AND ')}
           OFFSET 0
         ) l WHERE ${urlCondition(url, p)} LIMIT ${p(want)}`;
  return (await db.query<{ id: string }>(text, values)).rows.map((r) => Number(r.id));
}
