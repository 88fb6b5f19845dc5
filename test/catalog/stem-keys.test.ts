/**
 * A word's stem key (src/catalog/terms.ts stemKey) comes from a bounded cache of the words a thread met last: it must
 * be the stemmer's key whatever the cache holds, before it fills, as it is cleared, and after.
 */
import { stemmer } from 'stemmer';
import { describe, expect, it } from 'vitest';
import { stemKey } from '../../src/catalog/terms.ts';

describe('stem keys', () => {
  it("are the stemmer's through more distinct words than the cache holds", () => {
    const words = ['forecasts', 'forecasting', 'converting', 'prices', 'weather', 'running', 'ran', 'agreed'];
    // Distinct words enough to fill the cache a few times over, the same ones asked again after it was cleared.
    const many = Array.from({ length: 50_000 }, (_, i) => `${words[i % words.length]}${i.toString(36)}s`);
    for (const word of [...words, ...many, ...words, ...many.slice(0, 1000)]) expect(stemKey(word)).toBe(`~${stemmer(word)}`);
    expect(stemKey('forecasts')).toBe(stemKey('forecasting'));
  });
});
