/**
 * The order by meaning of a page none of whose results holds the query's informative words
 * (src/catalog/word-vectors.ts, relevance.ts orderByMeaning, docs/CATALOG.md "Ranking"), from the
 * vectors svc ships (lexicon/word-vectors.bin.gz), and on a real catalog through its search.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope, evalCatalogOptions } from '../../bench/catalog/lib/ranking-eval-set.ts';
import { openCatalog } from '../../src/catalog/index.ts';
import { orderByMeaning } from '../../src/catalog/relevance.ts';
import { meaningScore, queryVectors } from '../../src/catalog/word-vectors.ts';

const words = (text: string) => text.split(' ');
const row = (key: string, text: string) => ({ key, resource: { serviceName: key, description: text } });

describe('meaning', () => {
  it('scores a listing by how close its words are to the query words, 0 without vectors', () => {
    const query = queryVectors(words('photograph handwriting'));
    expect(query).toHaveLength(2);
    const ocr = meaningScore(query, words('extract printed text from photos and scanned images'));
    const fx = meaningScore(query, words('latest foreign exchange rates for currencies'));
    expect(ocr).toBeGreaterThan(2 * fx);
    expect(meaningScore(queryVectors(['money']), words('exchange rates'))).toBeGreaterThan(
      meaningScore(queryVectors(['money']), words('random joke')),
    );
    expect(meaningScore(query, [])).toBe(0);
    expect(meaningScore([], words('photos'))).toBe(0);
    // Words without a vector: unknown ones, function words (never built into the file), nothing.
    expect(queryVectors(['xyzzyplugh', 'the', '', 'a\tb'])).toEqual([]);
  });

  it('orders a page by meaning, keeping its listings and the rank order among equals', () => {
    const page = [row('fx', 'currency exchange rates'), row('ocr', 'text from photos and scanned images'), row('joke', 'a random joke')];
    expect(orderByMeaning(page, words('photograph of handwriting'))[0]!.key).toBe('ocr');
    expect(orderByMeaning(page, words('comedian laughter'))[0]!.key).toBe('joke');
    expect(orderByMeaning(page, words('xyzzyplugh')).map((r) => r.key)).toEqual(['fx', 'ocr', 'joke']);
    expect(orderByMeaning(page.slice(0, 1), words('picture')).map((r) => r.key)).toEqual(['fx']);
    expect(new Set(orderByMeaning(page, words('money')))).toEqual(new Set(page));
  });

  it('puts first, in a search whose results hold none of its words, the listing closest in meaning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-meaning-'));
    let now = Date.parse('2026-03-01T00:00:00Z');
    const catalog = openCatalog(evalCatalogOptions(dir, () => new Date(now)));
    try {
      const listings = [
        {
          key: 'ocr',
          serviceName: 'Image OCR',
          description: 'extract printed and handwritten text from photos and scanned images',
          tags: ['ocr', 'images'],
        },
        { key: 'upscale', serviceName: 'Image Upscaler', description: 'upscale photos to higher resolution', tags: ['images'] },
        { key: 'fx', serviceName: 'FX Rates', description: 'latest foreign exchange rates for 170 currencies', tags: ['currency'] },
        { key: 'jokes', serviceName: 'Random Jokes', description: 'a random joke, optionally by category', tags: ['fun'] },
      ];
      let tx = 0;
      for (const listing of listings) {
        now += 1_000;
        await catalog.recordSettlement({ ...envelope(listing), payment: { payer: `payer-${listing.key}`, id: `tx-${++tx}` } });
      }
      // No listing holds these words: both image listings are found by related words and neighbours, the OCR one
      // ranked first by them (a photo's text), the upscaler first by meaning.
      for (const query of ['enlarge this grainy picture', 'make my fuzzy snapshot crisper and larger']) {
        const page = await catalog.search(query, {}, { limit: 10 });
        expect(page.relevance, query).toBe('none');
        expect(
          page.resources.map((r) => new URL(r.resource).hostname.split('.')[0]),
          query,
        ).toEqual(['upscale', 'ocr']);
      }
    } finally {
      await catalog.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
