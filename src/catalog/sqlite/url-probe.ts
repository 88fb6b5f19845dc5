/**
 * The trigram index's answer to "which listings hold `url`" on SQLite, at most a cap of them (selective-list.ts).
 * FTS5 answers a phrase by reading the entries of each of its trigrams, and resource URLs share many (`exa`, `com`, a
 * host's labels: each held by most listings), so the phrase of a long substring would read every listing's entry
 * several times over. The index is asked instead for the three of the
 * substring's 3-character windows that the fewest URLs of a random sample of the catalog hold (rarestWindows),
 * each one trigram that every match holds, and the whole substring is checked on the rows they name, stopping at
 * the cap. The sample only chooses what is read: the answer is every match (up to the cap) either way.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { asciiLower } from '../url-filter.ts';
import { urlPhrase } from './queries.ts';

const WINDOWS_ASKED = 3;

/** How many URLs a sample holds, and how long it is kept before it is drawn again. */
const URL_SAMPLE_SIZE = 256;
const SAMPLE_MAX_AGE_MS = 60_000;

/** `text`'s 3-character windows (by code point), distinct: each is one trigram of SQLite's URL index. */
function urlWindows(text: string): string[] {
  const chars = Array.from(text);
  const windows = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) windows.add(chars.slice(i, i + 3).join(''));
  return [...windows];
}

/**
 * A random sample of the catalog's resource URLs, lowered (one per connection), drawn
 * again when a minute old. How many of them hold each window is counted once per draw, because a long `url` has about
 * as many windows as characters and counting each against the sample on every request is too slow.
 */
class UrlSample {
  urls: string[] = [];
  private held = new Map<string, number>();
  private drawnAt = -Infinity;

  /** Whether the store should draw it again (its own read of URL_SAMPLE_SIZE random listings) before using it. */
  stale(nowMs: number): boolean {
    return nowMs - this.drawnAt >= SAMPLE_MAX_AGE_MS;
  }

  replace(urls: string[], nowMs: number): void {
    this.urls = urls;
    this.held = new Map();
    for (const url of urls) for (const window of urlWindows(url)) this.held.set(window, (this.held.get(window) ?? 0) + 1);
    this.drawnAt = nowMs;
  }

  holding(window: string): number {
    return this.held.get(window) ?? 0;
  }
}

/**
 * At most `n` of `windows` (a lowered substring's), those the fewest URLs of
 * `sample` hold, in the substring's order: each is one trigram of the index, and every match holds all of them. A
 * window more than a quarter of the sample holds is left out while a rarer one is asked (it would name most
 * listings: reading its entries costs more than checking the rows it keeps out). Windows that do not overlap (three
 * apart in urlWindows' order: their places in the substring, unless a window repeats) are chosen before those that
 * do: two that share two characters (`bep`, `epa`) are held by nearly the same URLs, so the second keeps few out, and
 * a sample too small to tell them apart (most of a rare substring's windows are held by none of it on a large catalog)
 * would otherwise choose neighbours.
 */
function rarestWindows(windows: string[], sample: UrlSample, n: number): string[] {
  const held = windows.map((window, at) => ({ window, at, n: sample.holding(window) })).sort((x, y) => x.n - y.n || x.at - y.at);
  const selective = held.filter((x, i) => i === 0 || x.n <= sample.urls.length / 4);
  // At most `n` apart are taken (the answer holds no more): a long `url` has thousands of windows, too many to check
  // each against every other.
  const apart: typeof selective = [];
  for (const x of selective) {
    if (apart.length === n) break;
    if (apart.every((y) => Math.abs(x.at - y.at) >= 3)) apart.push(x);
  }
  return [...apart, ...selective.filter((x) => !apart.includes(x))]
    .slice(0, n)
    .sort((x, y) => x.at - y.at)
    .map((x) => x.window);
}

/** Each connection's sample (the store's and its readers' connections each keep their own). */
const samples = new WeakMap<DatabaseSync, UrlSample>();

/** The highest listing id: the range a sample draws from, and about how many listings the catalog holds. */
const highestListingId = (db: DatabaseSync) =>
  Number((cachedStatement(db, 'SELECT coalesce(max(id), 0) AS n FROM listings').get() as { n: number }).n);

/** The connection's sample of lowered resource URLs, drawn again (URL_SAMPLE_SIZE random ids) when it is stale. */
function freshSample(db: DatabaseSync): UrlSample {
  let sample = samples.get(db);
  if (!sample) samples.set(db, (sample = new UrlSample()));
  const nowMs = Date.now();
  if (!sample.stale(nowMs)) return sample;
  const max = highestListingId(db);
  const ids = Array.from({ length: max === 0 ? 0 : URL_SAMPLE_SIZE }, () => 1 + Math.floor(Math.random() * max));
  // Read from the trigram table's own copy of each URL (FTS5's `listing_urls_content`: id, c0), a few dozen bytes a row,
  // because a listing's row holds its whole body.
  const rows = cachedStatement(
    db,
    'SELECT lower(c0) AS resource FROM listing_urls_content WHERE id IN (SELECT value FROM json_each(?))',
  ).all(JSON.stringify(ids)) as Array<{ resource: string }>;
  sample.replace(
    rows.map((r) => r.resource),
    nowMs,
  );
  return sample;
}

/** At most `want` ids of listings whose resource URL holds `url`, ignoring ASCII case (every one when fewer hold it). */
export function urlMatchesCapped(db: DatabaseSync, url: string, want: number): number[] {
  // FTS5 cannot read a U+0000 in its query, and no resource URL holds a control character (ingest refuses them).
  if (url.includes('\u0000')) return [];
  const windows = rarestWindows(urlWindows(asciiLower(url)), freshSample(db), WINDOWS_ASKED);
  // A substring of one or two characters has no trigram, and FTS5 matches nothing for it: the URLs are read in id order
  // from the index's own copy of them (a few dozen bytes a row) until `want` hold it.
  const rows = (
    windows.length === 0
      ? cachedStatement(db, 'SELECT id FROM listing_urls_content WHERE instr(lower(c0), ?) > 0 ORDER BY id LIMIT ?').all(
          asciiLower(url),
          want,
        )
      : cachedStatement(
          db,
          'SELECT rowid AS id FROM listing_urls WHERE listing_urls MATCH ? AND instr(lower(resource), ?) > 0 LIMIT ?',
        ).all(windows.map(urlPhrase).join(' AND '), asciiLower(url), want)
  ) as Array<{ id: number }>;
  return rows.map((r) => Number(r.id));
}
