/**
 * The trigram index's answer to "which listings hold `url`" on SQLite, at most a cap of them (selective-list.ts).
 * FTS5 answers a phrase by reading the entries of each of its trigrams, and resource URLs share many (`exa`, `com`, a
 * host's labels: each held by most listings), so the phrase of a long substring would read every listing's entry
 * several times over. The index is asked instead for the three of the
 * substring's 3-character windows that the fewest URLs of a random sample of the catalog hold (../url-filter.ts),
 * each one trigram that every match holds, and the whole substring is checked on the rows they name, stopping at
 * the cap. The sample only chooses what is read: the answer is every match (up to the cap) either way.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { URL_SAMPLE_SIZE, UrlSample, asciiLower, rarestWindows, urlWindows } from '../url-filter.ts';
import { urlPhrase } from './queries.ts';

const WINDOWS_ASKED = 3;

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
  const match = windows.length === 0 ? urlPhrase(url) : windows.map(urlPhrase).join(' AND ');
  const rows = cachedStatement(
    db,
    'SELECT rowid AS id FROM listing_urls WHERE listing_urls MATCH ? AND instr(lower(resource), ?) > 0 LIMIT ?',
  ).all(match, asciiLower(url), want) as Array<{ id: number }>;
  return rows.map((r) => Number(r.id));
}
