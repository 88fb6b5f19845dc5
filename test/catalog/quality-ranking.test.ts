/**
 * Search ranking with quality signals (docs/CATALOG.md "Ranking"), on SQLite and PostgreSQL:
 * among equally relevant listings the one with more distinct payers ranks first, whichever was
 * created first; distinct payers count for more than repeat payments; quality never lifts a less
 * relevant listing above a more relevant one; and a cursor walk visits every match exactly once
 * while payments change the listings' quality between its pages.
 */
import { describe, expect, it } from 'vitest';
import type { SettledPayment } from '../../src/catalog/types.ts';
import { settlement } from './fixtures.ts';
import { BACKENDS, freshCatalogPerTest } from './fresh.ts';

const paid = (url: string, payer: string, o: { description?: string; serviceName?: string } = {}): SettledPayment => ({
  ...settlement({ url, description: o.description ?? 'weather forecast', ...(o.serviceName ? { serviceName: o.serviceName } : {}) }),
  payment: { payer },
});
const A = 'https://a.example.com/weather';
const B = 'https://b.example.com/weather';

describe.each(BACKENDS)('on %s', (backend) => {
  const fresh = freshCatalogPerTest(backend);
  const order = async (t: ReturnType<typeof fresh>, query: string) =>
    (await t.catalog.search(query, {}, { limit: 50 })).resources.map((r) => r.resource);

  it.each([
    ['A created first', [A, B]],
    ['B created first', [B, A]],
  ])('three distinct payers beat one, equal text (%s)', async (_, creation) => {
    const t = fresh();
    for (const url of creation) await t.catalog.recordSettlement(paid(url, 'P1'));
    await t.catalog.recordSettlement(paid(A, 'P2'));
    await t.catalog.recordSettlement(paid(A, 'P3'));
    expect(await order(t, 'weather')).toEqual([A, B]);
    expect(await order(t, 'weather forecast')).toEqual([A, B]);
  });

  it('distinct payers count for more than repeat payments', async () => {
    const t = fresh();
    for (let i = 0; i < 20; i++) await t.catalog.recordSettlement(paid(B, 'P1')); // one payer, 20 payments
    await t.catalog.recordSettlement(paid(A, 'P1'));
    await t.catalog.recordSettlement(paid(A, 'P2'));
    await t.catalog.recordSettlement(paid(A, 'P3'));
    expect(await order(t, 'weather')).toEqual([A, B]);
  });

  it('quality never lifts a less relevant listing above a more relevant one', async () => {
    const t = fresh();
    const C = 'https://c.example.com/weather';
    // A: many payers, the term once in its description. C: no payer, the term in its name.
    for (let i = 0; i < 100; i++) await t.catalog.recordSettlement(paid(A, `P${i}`, { description: 'weather' }));
    await t.catalog.recordSettlement({ ...settlement({ url: C, description: 'sunny', serviceName: 'weather' }) });
    // B: the term in its description twice (more relevant than A by a description match's share).
    await t.catalog.recordSettlement({ ...settlement({ url: B, description: 'weather weather' }) });
    expect(await order(t, 'weather')).toEqual([C, B, A]);
    // Matching more of the query's terms always ranks first.
    await t.catalog.recordSettlement({ ...settlement({ url: 'https://d.example.com/x', description: 'weather rain' }) });
    expect((await order(t, 'weather rain'))[0]).toBe('https://d.example.com/x');
  });

  it('a cursor walk visits each match exactly once while payments change quality between pages', async () => {
    const t = fresh();
    const urls = Array.from({ length: 30 }, (_, i) => `https://l${i}.example.com/weather`);
    for (const url of urls) await t.catalog.recordSettlement(paid(url, 'P0'));
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0, payer = 1; page < 20; page++) {
      const result = await t.catalog.search('weather', {}, { limit: 4, ...(cursor ? { cursor } : {}) });
      seen.push(...result.resources.map((r) => r.resource));
      cursor = result.pagination.cursor ?? undefined;
      if (!cursor) break;
      // New payers for listings both behind and ahead of the cursor: their levels (and ranks) move.
      for (const i of [page, 29 - page, (page * 7) % 30]) await t.catalog.recordSettlement(paid(urls[i]!, `P${payer++}`));
    }
    expect([...seen].sort()).toEqual([...urls].sort());
    // A new search sees the new quality: the most paid listings first.
    const top = (await t.catalog.search('weather', {}, { limit: 30 })).resources;
    const payers = top.map((r) => r.quality.l30DaysUniquePayers);
    expect(payers).toEqual([...payers].sort((x, y) => y - x));
  });
});
