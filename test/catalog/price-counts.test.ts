/**
 * A price page's counts on PostgreSQL come from `catalog_price_counts` (postgres/price-counts.ts,
 * catalog migration 18), a function whose statements keep their plans on each connection and
 * which counts the matches hidden by age only when some entry of the range is older than the cut,
 * and those hidden by liveness failures only when some listing fails. Here one connection (a store
 * of pool size 1) reads the same pages many times while nothing is aged or failing, so its plans
 * are made then, and reads them again once entries have aged out and listings fail: every page
 * and total, untyped and typed, must stay what the accepted entries say (price-forced.ts
 * byAcceptedEntries). Few entries age out (fewer than the matches), so the totals are the counts
 * less the hidden matches (postgres/price-index.ts listPriced), not a count of the page's rows.
 */
import { describe, expect, it } from 'vitest';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { failingBefore } from '../../src/catalog/liveness.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { ASSET, settlement, tempCatalog } from './fixtures.ts';
import { freshCatalogDatabase } from './fresh.ts';
import { GRACE, byAcceptedEntries, failEvery, identity } from './price-forced.ts';

const DAY = 86_400_000;
const TTL_DAYS = 10;
const AMOUNTS = ['10', '100', '1000'];
/** Every match (1000) and a part of them (100), untyped and per type. */
const FILTERS: DiscoveryFilters[] = ['1000', '100'].flatMap((maxAmount) =>
  [undefined, 'http', 'mcp'].map((type) => ({ asset: ASSET, maxAmount, ...(type ? { type } : {}) })),
);
/** Reads per filter and phase: past the first five, which Postgres plans for the values at hand, to the plans it keeps. */
const READS = 8;

describe('on Postgres, a price page’s counts from catalog_price_counts', () => {
  it('count the matches hidden by age and by failures once there are any, on a connection whose plans were made before', async () => {
    const t = tempCatalog(undefined, { databaseUrl: await freshCatalogDatabase(), listingTtlDays: TTL_DAYS, livenessGraceMs: GRACE });
    const store = await PostgresCatalogStore.open(t.databaseUrl!, { poolSize: 1 });
    let n = 0;
    const add = async (count: number) => {
      for (let k = 0; k < count; k++, n++) {
        const s = settlement({ url: `https://c${n}.example.com/r`, amount: AMOUNTS[n % 3], ...(n % 2 ? { mcpTool: `tool_${n}` } : {}) });
        expect(await t.catalog.recordSettlement(s)).toEqual({ status: 'success' });
        t.tick(1000);
      }
    };
    /** Every filter's first page and total, READS times on the store's one connection, against the accepted entries; the totals. */
    const same = async () => {
      const totals: number[] = [];
      const now = t.clock();
      const visibleSince = new Date(now.getTime() - TTL_DAYS * DAY).toISOString();
      for (const filters of FILTERS) {
        const expected = await byAcceptedEntries(t.catalog, filters, { limit: 4, offset: 1 });
        for (let r = 0; r < READS; r++) {
          const got = await store.list(filters, { limit: 4, offset: 1 }, now, visibleSince, failingBefore(now.getTime(), GRACE));
          expect(got.items.map(identity), JSON.stringify(filters)).toEqual(expected.items.map(identity));
          expect(got.total, JSON.stringify(filters)).toBe(expected.pagination.total);
        }
        totals.push(expected.pagination.total);
      }
      return totals;
    };
    try {
      await add(4);
      expect((await same())[0]).toBe(4); // nothing aged or failing: the plans are made here
      t.tick((TTL_DAYS + 1) * DAY); // the first 4 age out
      await add(12);
      const aged = await same();
      expect(aged[0]).toBe(12); // 4 of 16 hidden by age

      // Every other listing due for a check fails it past the grace period.
      await failEvery(t, 2);
      t.tick(GRACE + 1000);
      const failing = await same();
      expect(failing[0]).toBeLessThan(12);
      expect(failing[0]).toBeGreaterThan(0);
    } finally {
      await store.end();
      t.close();
    }
  }, 120_000);
});
