/**
 * The search budget's choice of terms (src/catalog/term-budget.ts, docs/CATALOG.md "Search
 * budget"), against a counter of known rows: rarest first, the first term always, the rest while
 * the rows fit the budget, at most 8; terms found nowhere in neither list; two terms kept when
 * every one is past the budget; and the counting itself bounded whatever the query.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  MAX_SEARCHED_TERMS,
  SEARCH_ROW_BUDGET,
  chooseTerms,
  distinctTerms,
  type CountRequest,
  type TermChoice,
} from '../../src/catalog/term-budget.ts';
import { windowBound, windowExact, windowRowsPerTerm } from '../../src/catalog/search.ts';

/** The choice for these terms' rows, and every counting request it made. */
function choose(rows: Record<string, number>, query = Object.keys(rows).join(' '), listings?: number) {
  const requests: CountRequest[] = [];
  const steps = chooseTerms(distinctTerms(query), undefined, listings);
  let next = steps.next();
  while (!next.done) {
    const request = next.value;
    requests.push(request);
    next = steps.next(request.terms.map((term) => Math.min(rows[term] ?? 0, request.cap)));
  }
  const choice: TermChoice = next.value;
  return {
    ...choice,
    requests,
    counted: requests.reduce((sum, r) => sum + r.terms.reduce((s, t) => s + Math.min(rows[t] ?? 0, r.cap), 0), 0),
  };
}

describe('which terms are searched', () => {
  it('every term when their rows fit: rarest first, method text', () => {
    expect(choose({ weather: 40, forecast: 12, city: 900 })).toMatchObject({
      searched: ['forecast', 'weather', 'city'],
      dropped: [],
      method: 'text',
    });
  });

  it('the rarest while their rows fit the budget; the rest dropped in query order, method text_budgeted', () => {
    const rows = { find: 30_000, an: 50_000, weather: 300, api: 16_000, forecast: 200, city: 3_000, for: 60_000 };
    const choice = choose(rows);
    expect(choice.searched).toEqual(['forecast', 'weather', 'city']);
    expect(choice.dropped).toEqual(['find', 'an', 'api', 'for']);
    expect(choice.method).toBe('text_budgeted');
  });

  it('a term found nowhere is in neither list and takes no place', () => {
    const words = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`w${i}`, 10 + i]));
    const choice = choose({ please: 0, ...words, zzz: 0 });
    expect(choice.searched).toEqual(Object.keys(words).slice(0, MAX_SEARCHED_TERMS));
    expect(choice.dropped).toEqual(Object.keys(words).slice(MAX_SEARCHED_TERMS));
    expect(choice.searched).not.toContain('please');
    expect(choice.dropped).not.toContain('zzz');
  });

  it('the first term is kept whatever its rows; the next only within the budget', () => {
    expect(choose({ weather: 300, the: 90_000 }).searched).toEqual(['weather']);
    const tight = choose({ a: SEARCH_ROW_BUDGET - 6, b: 5, c: 1 });
    expect(tight.searched).toEqual(['c', 'b', 'a']);
    expect(choose({ a: SEARCH_ROW_BUDGET - 6, b: 5, c: 2 }).searched).toEqual(['c', 'b']);
  });

  it('more terms than are searched: the function words (held by over a quarter of the listings) go, if any other term has rows', () => {
    const sentence = {
      find: 40,
      an: 90,
      api: 95,
      that: 60,
      returns: 30,
      the: 99,
      current: 20,
      weather: 3,
      forecast: 2,
      for: 97,
      a: 98,
      city: 8,
      please: 1,
    };
    const choice = choose(sentence, Object.keys(sentence).join(' '), 100);
    expect(choice.searched).toEqual(['please', 'forecast', 'weather', 'city', 'current']);
    expect(choice.dropped).toEqual(['find', 'an', 'api', 'that', 'returns', 'the', 'for', 'a']);
    // Eight terms or fewer: every one that fits the budget, as before.
    expect(choose({ the: 99, weather: 3, for: 97 }, 'the weather for', 100).searched).toEqual(['weather', 'for', 'the']);
    // Only function words: the budget's rule over them.
    const only = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, 60 + i]));
    expect(choose(only, Object.keys(only).join(' '), 100).searched).toHaveLength(MAX_SEARCHED_TERMS);
  });

  it('every term past the budget: the first two in query order kept, and the window ranks them', () => {
    const rows = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`c${i}`, 90_000 - i * 1000]));
    const all = choose(rows, 'c3 c0 c1 c2 c4');
    expect(all.searched).toEqual(['c3', 'c0']);
    expect(all.dropped).toEqual(['c1', 'c2', 'c4']);
    expect(all.method).toBe('text_budgeted');
    // One other word within the budget among them: the budget's rule (its rows, then nothing fits).
    expect(choose({ ...rows, other: 3_000 }, 'c0 c1 other').searched).toEqual(['other']);
  });
});

describe('what the choice costs', () => {
  it('one term with rows is counted only up to the first step: it is kept whatever its rows', () => {
    const one = choose({ the: 90_000 });
    expect(one).toMatchObject({ searched: ['the'], dropped: [], method: 'text' });
    expect(one.requests).toHaveLength(1);
    // Beside terms found nowhere, the same.
    expect(choose({ the: 90_000, zzz: 0, qqq: 0 }).requests).toHaveLength(1);
  });

  it('a natural sentence is counted in one step when its rare words settle it', () => {
    const rows = {
      find: 10,
      an: 20,
      api: 30,
      that: 40,
      returns: 5,
      the: 7,
      current: 8,
      weather: 9,
      forecast: 3,
      for: 1,
      a: 2,
      city: 4,
      please: 6,
    };
    const choice = choose(rows);
    expect(choice.requests).toHaveLength(1);
    expect(choice.searched).toHaveLength(MAX_SEARCHED_TERMS);
  });

  it('any query of 2,048 characters counts a bounded number of rows', () => {
    // Every term common (the worst case): at most 64 rows each, 1,024 for 128 of them, the budget for 16.
    const bound = (terms: number) => terms * 64 + 128 * 1024 + 16 * (SEARCH_ROW_BUDGET + 1);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 600 }), fc.integer(), (counts, salt) => {
        const rows = Object.fromEntries(counts.map((n, i) => [`t${i}x${salt & 0xff}`, n]));
        const choice = choose(rows);
        expect(choice.counted).toBeLessThanOrEqual(bound(counts.length));
        expect(choice.requests.length).toBeLessThanOrEqual(3);
        expect(choice.searched.length).toBeGreaterThan(0);
        expect(choice.searched.length).toBeLessThanOrEqual(MAX_SEARCHED_TERMS);
        const exact = choice.searched.filter((t) => rows[t]! <= SEARCH_ROW_BUDGET);
        if (choice.searched.length > 1) expect(exact.reduce((s, t) => s + rows[t]!, 0)).toBeLessThanOrEqual(SEARCH_ROW_BUDGET);
      }),
      { numRuns: 200, seed: 53 },
    );
  });
});

/** The bounds of a filtered search (src/catalog/search.ts; docs/CATALOG.md "The three paths"). */
describe('what bounds a filtered search', () => {
  it("the window's bound: each term cut at its rows may still hold an unseen listing at its last share", () => {
    expect(windowRowsPerTerm(4000, 2, 21)).toBe(168);
    expect(windowRowsPerTerm(4000, 2, 200)).toBe(1600);
    expect(windowRowsPerTerm(4000, 8, 2)).toBe(128);
    expect(windowRowsPerTerm(3, 8, 21)).toBe(1);
    // Both terms cut at 2,000 rows, their last shares 900 and 700, weighed 3 and 2: an unseen listing ranks at most
    // 3 × (PRESENCE + 900) + 2 × (PRESENCE + 700).
    const bound = windowBound(
      [
        { rows: 2000, lowest: 900 },
        { rows: 2000, lowest: 700 },
      ],
      2000,
      [3, 2],
    );
    expect(bound).toBe(3 * 10_900 + 2 * 10_700);
    // A term read to its end holds no unseen listing; both read to their ends, nothing is unseen.
    expect(
      windowBound(
        [
          { rows: 2000, lowest: 900 },
          { rows: 12, lowest: 5 },
        ],
        2000,
        [1, 1],
      ),
    ).toBe(10_900);
    expect(
      windowBound(
        [
          { rows: 7, lowest: 900 },
          { rows: 12, lowest: 5 },
        ],
        2000,
        [1, 1],
      ),
    ).toBe(-1);
    const rows = (...ranks: number[]) => ranks.map((rank, i) => ({ listing_id: i + 1, rank }));
    // Exact only when the page is full and its last rank is above the bound.
    expect(windowExact(rows(60_000, bound + 1), 2, bound)).toBe(true);
    expect(windowExact(rows(60_000, bound), 2, bound)).toBe(false);
    expect(windowExact(rows(60_000), 2, bound)).toBe(false);
    expect(windowExact(rows(5), 2, -1)).toBe(true);
  });
});
