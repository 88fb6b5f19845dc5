/**
 * Which windows of a `url` filter Postgres asks its trigram index for (src/catalog/postgres/url-probe.ts urlLettersRead):
 * the two that the fewest sampled URLs hold (two that do not overlap first), the more common dropped when it prunes
 * little (most sampled URLs holding the rarer hold it too), both kept when they prune each other or no sampled URL holds
 * them; where one sampled URL stands for more listings than the cap, up to two uncommon windows more. Every match holds
 * every window, so this chooses only what is read; test/catalog/url-walk.test.ts checks the answers against a scan. And
 * whether a walk beside other filters joins the spelled matches: only where one sampled URL stands for at most half
 * the join cap's listings. And whether the spelled URLs are scanned instead: only where the scan reads less.
 */
import { describe, expect, it } from 'vitest';
import { urlLetters, urlLettersRead } from '../../src/catalog/postgres/url-probe.ts';
import { UrlSample } from '../../src/catalog/url-filter.ts';

/** A sample of these resource URLs, spelled as the store's sample is. */
function sampleOf(urls: string[], listings = 0): UrlSample {
  const sample = new UrlSample();
  sample.replace(urls.map(urlLetters), 0, listings);
  return sample;
}

const urls = (n: number, url: (i: number) => string) => Array.from({ length: n }, (_, i) => url(i));

describe('the windows a url filter reads on Postgres', () => {
  it('drops the second window when the URLs holding the rarer nearly all hold it', () => {
    // `/mi` (spelled qbmi) is held by 8 of 100, `/m` (qbm) by 12: every URL holding `bmi` holds `qbm`.
    const sample = sampleOf([
      ...urls(8, (i) => `https://api${i}.example.com/mixo`),
      ...urls(4, (i) => `https://api${i}.example.com/mu`),
      ...urls(88, (i) => `https://api${i}.example.com/zu`),
    ]);
    const read = urlLettersRead('.com/mi', sample);
    expect(read.spelled).toBe(urlLetters('.com/mi'));
    expect(read.windows).toEqual(['bmi']);
  });

  it('keeps both windows when each prunes the other', () => {
    // `abc` and `bcd` are held by 11 each, both by 1: each leaves out most of the other's URLs.
    const sample = sampleOf([
      'https://api.example.com/abcd',
      ...urls(10, (i) => `https://api${i}.example.com/abcx`),
      ...urls(10, (i) => `https://api${i}.example.com/xbcd`),
      ...urls(79, (i) => `https://api${i}.example.com/zu`),
    ]);
    expect(urlLettersRead('abcd', sample).windows).toEqual(['abc', 'bcd']);
  });

  it('asks the rarer of two windows that come together', () => {
    // `bcd` is held by 10, `abc` by 12, both by 10.
    const sample = sampleOf([
      ...urls(10, (i) => `https://api${i}.example.com/abcd`),
      ...urls(2, (i) => `https://api${i}.example.com/abcx`),
      ...urls(88, (i) => `https://api${i}.example.com/zu`),
    ]);
    expect(urlLettersRead('abcd', sample).windows).toEqual(['bcd']);
  });

  it('keeps two windows that do not overlap when no sampled URL holds any', () => {
    const sample = sampleOf(urls(100, (i) => `https://api${i}.example.com/zu`));
    expect(urlLettersRead('tavopa', sample).windows).toEqual(['tav', 'opa']);
  });

  it('keeps overlapping windows when the substring has no two apart', () => {
    const sample = sampleOf(urls(100, (i) => `https://api${i}.example.com/zu`));
    expect(urlLettersRead('tavop', sample).windows).toEqual(['tav', 'avo']);
  });

  it('scans the spelled URLs where the scan reads less than the windows, and only from 4 sampled URLs holding the substring', () => {
    // `7.seller` (7qaseller) is held by `holding` of 256; its only selective window, `7qa`, by 50.
    const sampled = (holding: number) => [
      ...urls(holding, () => 'https://api7.seller.example.com/zu'),
      ...urls(50 - holding, () => 'https://api7.example.com/zu'),
      ...urls(206, () => 'https://api.seller.example.com/zu'),
    ];
    // At 1M listings a scan reads about 501 / (26/256), 4,900 spelled URLs, where `7qa` has 195,000 entries; it stops at
    // four times that (SCAN_BOUND), where the index, asked for `7qa`, answers instead.
    expect(urlLettersRead('7.seller', sampleOf(sampled(26), 1_000_000))).toMatchObject({ windows: ['7qa'], scanned: 19_732 });
    // At 10,000 the entries are 1,950, fewer than the scan's reads (each about three entries' cost).
    expect(urlLettersRead('7.seller', sampleOf(sampled(26), 10_000)).scanned).toBeUndefined();
    // 3 sampled URLs could stand for fewer listings than the cap: a scan would read them all.
    expect(urlLettersRead('7.seller', sampleOf(sampled(3), 1_000_000)).scanned).toBeUndefined();
    expect(urlLettersRead('7.seller', sampleOf(sampled(4), 1_000_000)).scanned).toBe(128_256);
    // Where the bound passes the catalog's listings, the scan reads every spelled URL and the index is never asked.
    expect(urlLettersRead('7.seller', sampleOf(sampled(4), 1_000_000), { urlScanBound: 32 }).scanned).toBe(Infinity);
  });

  it('asks up to two uncommon windows more where one sampled URL stands for more listings than the cap', () => {
    // Of 100 sampled URLs, 10 hold `avo` and `vop` (not uncommon: more than a sixteenth), 3 hold `pak` and `aki`, and
    // none `tav` or `opa`, the two rarest.
    const sampled = [
      ...urls(10, (i) => `https://api${i}.example.com/avop`),
      ...urls(3, (i) => `https://api${i}.example.com/paki`),
      ...urls(87, (i) => `https://api${i}.example.com/zu`),
    ];
    // At 1M listings each sampled URL stands for 10,000, more than the cap (500).
    expect(urlLettersRead('tavopaki', sampleOf(sampled, 1_000_000)).windows).toEqual(['tav', 'opa', 'pak', 'aki']);
    // The fewest held first, then the first in the substring: of `tavopakapa`, `aka` and `kap` (held by none) before
    // `apa` (none, later) and `pak` (3).
    expect(urlLettersRead('tavopakapa', sampleOf(sampled, 1_000_000)).windows).toEqual(['tav', 'opa', 'aka', 'kap']);
    // At 50,000, 500 each: the two rarest alone.
    expect(urlLettersRead('tavopaki', sampleOf(sampled, 50_000)).windows).toEqual(['tav', 'opa']);
    expect(urlLettersRead('tavopaki', sampleOf(sampled, 50_000), { urlMoreWindowsFrom: 0 }).windows).toEqual(['tav', 'opa', 'pak', 'aki']);
  });

  it("joins a rare substring's matches to a walk only while the sample resolves the join cap", () => {
    const sampled = [...urls(20, (i) => `https://api${i}.example.com/mixo`), ...urls(236, (i) => `https://api${i}.example.com/zu`)];
    // 256 sampled URLs: each stands for 390 listings of 100,000 (at most half the cap of 2,000), 3,906 of 1,000,000.
    expect(urlLettersRead('tavopa', sampleOf(sampled, 100_000)).walkedByIndex).toBe(true);
    expect(urlLettersRead('tavopa', sampleOf(sampled, 1_000_000)).walkedByIndex).toBe(false);
    expect(urlLettersRead('tavopa', sampleOf(sampled, 1_000_000), { urlJoinCap: 8_000 }).walkedByIndex).toBe(true);
    // A substring more than one sampled URL in 32 holds (20 of 256) is walked in parts whatever the catalog's size.
    expect(urlLettersRead('mixo', sampleOf(sampled, 100_000)).scanned).toBeUndefined();
    expect(urlLettersRead('mixo', sampleOf(sampled, 100_000)).walkedByIndex).toBe(false);
  });
});
