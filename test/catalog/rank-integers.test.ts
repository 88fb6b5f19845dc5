/**
 * A rank is Σ weight × (PRESENCE + milli) over a listing's matched keys (docs/CATALOG.md "Ranking"). Postgres receives
 * the weights as `int` and sums `int` products (src/catalog/postgres/search.ts rankSql): one key's product must stay
 * under 2^31 for any catalog, the highest weight (a key one listing holds among the most listings a number can count)
 * times the highest score a term can have (every field full of it, at the highest quality level).
 */
import { describe, expect, it } from 'vitest';
import { PRESENCE, weighKeys } from '../../src/catalog/query-terms.ts';
import { MAX_QUALITY_LEVEL, withQualityLevel } from '../../src/catalog/quality.ts';
import { termScores } from '../../src/catalog/terms.ts';

describe('a key of a rank', () => {
  it('fits an int at its highest weight and score', () => {
    const word = 'weather';
    const full = Array.from({ length: 5000 }, () => word).join(' ');
    const scores = withQualityLevel(termScores({ serviceName: full, tags: full, description: full, params: full }), MAX_QUALITY_LEVEL);
    const milli = Math.max(...[...scores.values()].map((score) => Math.round(score * 1000)));
    expect(milli).toBeGreaterThan(9_900);
    const [weight] = weighKeys([{ key: '~weather', kind: 'stem', of: '~weather' }], [1], Number.MAX_SAFE_INTEGER, 4000);
    expect(weight! * (PRESENCE + milli)).toBeLessThan(2 ** 31);
    // Not by a hair: twice the highest product still fits.
    expect(weight! * (PRESENCE + milli)).toBeLessThan(2 ** 31 / 2);
  });
});
