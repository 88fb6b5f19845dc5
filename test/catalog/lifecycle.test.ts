/**
 * Listing lifecycle (docs/CATALOG.md "Lifecycle"; LISTING_TTL_DAYS), on SQLite and PostgreSQL: a
 * listing with no settlement for the TTL leaves list (items and total) and search, is kept, and
 * its next settlement brings it back with its history; a search whose best matches are hidden
 * still fills its pages and walks every visible match once.
 */
import { describe, expect, it } from 'vitest';
import { settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

const DAY = 86_400_000;
const A = 'https://a.example.com/weather';
const B = 'https://b.example.com/weather';
const paid = (url: string, payer: string, description = 'weather forecast') => ({
  ...settlement({ url, description }),
  payment: { payer },
});

describe.each(BACKENDS)('on %s', (backend) => {
  const open = async (listingTtlDays?: number) =>
    tempCatalog(undefined, {
      databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined,
      ...(listingTtlDays !== undefined ? { listingTtlDays } : {}),
    });
  const shown = async (t: Awaited<ReturnType<typeof open>>, filters: Record<string, string> = {}) => {
    const page = await t.catalog.list(filters, { limit: 100, offset: 0 });
    const found = await t.catalog.search('weather', filters, { limit: 100 });
    const resources = page.items.map((i) => i.resource).sort();
    expect(found.resources.map((r) => r.resource).sort()).toEqual(resources);
    expect(page.pagination.total).toBe(resources.length);
    return resources;
  };

  it('a listing not settled for 30 days (the default) leaves list and search, and its next settlement brings it back', async () => {
    const t = await open();
    try {
      await t.catalog.recordSettlement(paid(A, 'P1'));
      await t.catalog.recordSettlement(paid(A, 'P2'));
      t.tick(20 * DAY);
      await t.catalog.recordSettlement(paid(B, 'P1'));
      t.tick(10 * DAY - 1);
      expect(await shown(t)).toEqual([A, B]);
      t.tick(2); // A: 30 days and a millisecond without settlement
      expect(await shown(t)).toEqual([B]);
      expect(await shown(t, { resource: A })).toEqual([]);
      expect(await shown(t, { payTo: settlement().paymentRequirements.payTo as string })).toEqual([B]);
      t.tick(5 * DAY);
      await t.catalog.recordSettlement(paid(A, 'P3'));
      expect(await shown(t)).toEqual([A, B]);
      const [back] = (await t.catalog.list({ resource: A }, { limit: 1, offset: 0 })).items;
      // Its earlier payments left the 30-day window; the listing itself was kept.
      expect(back!.quality).toEqual({ l30DaysTotalCalls: 1, l30DaysUniquePayers: 1, lastCalledAt: t.clock().toISOString() });
    } finally {
      t.close();
    }
  });

  it('LISTING_TTL_DAYS sets the time; hidden best matches do not shorten pages, a cursor walk shows every visible match once', async () => {
    const t = await open(2);
    try {
      // 40 listings paid by many payers (best ranked) go stale; 25 less paid ones stay.
      for (let i = 0; i < 40; i++) await t.catalog.recordSettlement(paid(`https://old${i}.example.com/w`, `P${i}`));
      for (let i = 0; i < 40; i++) await t.catalog.recordSettlement(paid(`https://old${i}.example.com/w`, `Q${i}`));
      t.tick(DAY);
      const fresh = Array.from({ length: 25 }, (_, i) => `https://new${i}.example.com/w`);
      for (const url of fresh) await t.catalog.recordSettlement(paid(url, 'P0'));
      t.tick(DAY + 1); // the old ones: two days and a millisecond
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 20; page++) {
        const result = await t.catalog.search('weather', {}, { limit: 4, ...(cursor ? { cursor } : {}) });
        if (result.pagination.cursor) expect(result.resources).toHaveLength(4);
        seen.push(...result.resources.map((r) => r.resource));
        cursor = result.pagination.cursor ?? undefined;
        if (!cursor) break;
      }
      expect(seen.sort()).toEqual([...fresh].sort());
      expect((await t.catalog.list({}, { limit: 10, offset: 20 })).pagination.total).toBe(25);
    } finally {
      t.close();
    }
  });
});
