/**
 * The word-vector neighbours a query word is expanded with (src/catalog/word-neighbours.ts,
 * docs/CATALOG.md "Ranking"), read from the file svc ships (lexicon/word-neighbours.tsv.gz).
 */
import { describe, expect, it } from 'vitest';
import { MAX_NEIGHBOURS, MIN_SIMILARITY, wordNeighbours } from '../../src/catalog/word-neighbours.ts';
import { stemKey } from '../../src/catalog/terms.ts';
import { isFunctionWord } from '../../src/catalog/query-terms.ts';

describe('word neighbours', () => {
  it('gives words met in the same contexts, most similar first, within the bounds', () => {
    expect(wordNeighbours('smog').map((n) => n.word)).toEqual(expect.arrayContaining(['pollution', 'ozone']));
    expect(wordNeighbours('airplane').map((n) => n.word)).toContain('flight');
    for (const word of ['smog', 'airplane', 'hurricane', 'parcel', 'currency', 'zebra']) {
      const neighbours = wordNeighbours(word);
      expect(neighbours.length, word).toBeGreaterThan(0);
      expect(neighbours.length, word).toBeLessThanOrEqual(MAX_NEIGHBOURS);
      const similarities = neighbours.map((n) => n.similarity);
      expect(similarities, word).toEqual([...similarities].sort((a, b) => b - a));
      expect(Math.min(...similarities), word).toBeGreaterThanOrEqual(MIN_SIMILARITY);
      // Neither the word's own stem (the stem row matches it already) nor a function word, one per stem.
      const stems = neighbours.map((n) => stemKey(n.word));
      expect(stems, word).not.toContain(stemKey(word));
      expect(new Set(stems).size, word).toBe(stems.length);
      expect(
        neighbours.filter((n) => isFunctionWord(n.word)),
        word,
      ).toEqual([]);
    }
  });

  it('gives nothing for a word the vectors lack, a function word or no word', () => {
    for (const word of ['xyzzyplugh', 'the', '', 'a\tb', '\n']) expect(wordNeighbours(word), JSON.stringify(word)).toEqual([]);
  });
});
