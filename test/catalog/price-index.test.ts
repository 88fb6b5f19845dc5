/**
 * The list endpoint's `asset` + `maxAmount` pages (docs/CATALOG.md "Price filters"), on SQLite and
 * PostgreSQL: asset + maxAmount alone or with other key filters is answered from the price index,
 * asset + maxAmount + scheme from the accepted entries themselves. Every listing here accepts only
 * scheme `exact`, so both must give the same items in the same order and the same exact total, at
 * every price bound and page, as listings are refreshed with cheaper and dearer terms, age out
 * (LISTING_TTL_DAYS), fail their liveness checks past the grace period, and are withdrawn.
 */
import { describe, expect, it } from 'vitest';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { ASSET, PAY_TO_A, PAY_TO_B, seededRandom, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

const DAY = 86_400_000;
const GRACE = 3_600_000;
const OTHER_ASSET = 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC';
const AMOUNTS = ['5', '10', '10', '50', '100', '1000', '20000', '007'];
const BOUNDS = ['4', '10', '99', '1000', '20001', '100000'];
const PAGES = [
  { limit: 100, offset: 0 },
  { limit: 7, offset: 3 },
];

describe.each(BACKENDS)('on %s', (backend) => {
  it('asset + maxAmount lists exactly what the accepted entries say, through refreshes, ageing, failures and withdrawals', async () => {
    const t = tempCatalog(undefined, {
      databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined,
      listingTtlDays: 10,
      livenessGraceMs: GRACE,
    });
    try {
      const rand = seededRandom(0x5eed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
      const urls: Array<{ url: string; payTo: string; method: 'GET' | 'POST' }> = [];
      const pay = async (i: number) => {
        const { url, payTo, method } = urls[i]!;
        const s = settlement({ url, payTo, method, amount: pick(AMOUNTS), description: 'price index listing' });
        s.paymentRequirements.asset = rand() < 0.7 ? ASSET : OTHER_ASSET;
        expect(await t.catalog.recordSettlement(s)).toEqual({ status: 'success' });
        t.tick(1000);
      };
      const add = async (n: number) => {
        for (let k = 0; k < n; k++) {
          urls.push({
            url: `https://p${urls.length}.example.com/r`,
            payTo: rand() < 0.5 ? PAY_TO_A : PAY_TO_B,
            method: pick(['GET', 'POST']),
          });
          await pay(urls.length - 1);
          if (rand() < 0.4) await pay(urls.length - 1);
        }
      };
      const same = async () => {
        let matched = 0;
        for (const asset of [ASSET, OTHER_ASSET])
          for (const maxAmount of BOUNDS)
            for (const extra of [{}, { payTo: PAY_TO_B }] as DiscoveryFilters[])
              for (const page of PAGES) {
                const filters = { asset, maxAmount, ...extra };
                const byPrice = await t.catalog.list(filters, page);
                const byEntries = await t.catalog.list({ ...filters, scheme: 'exact' }, page);
                expect(byPrice.items.map((i) => i.resource)).toEqual(byEntries.items.map((i) => i.resource));
                expect(byPrice.pagination.total).toBe(byEntries.pagination.total);
                matched += byPrice.pagination.total;
              }
        return matched;
      };

      await add(40);
      expect(await same()).toBeGreaterThan(0);
      t.tick(11 * DAY); // the first 40 age out of the 10-day TTL
      await add(40);
      for (let k = 0; k < 15; k++) await pay(Math.floor(rand() * 40)); // some come back, cheaper or dearer
      await same();

      // Six listings fail their checks past the grace period.
      const live = t.catalog.liveness!;
      const claimedAt = t.clock().getTime();
      const due = await live.claimDue(claimedAt, claimedAt, 1000);
      const failedAt = t.clock().toISOString();
      for (const l of due.slice(0, 6))
        await live.writeLiveness(l.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimedAt);
      t.tick(GRACE + 1000);
      const before = (await t.catalog.list({ asset: ASSET, maxAmount: '100000' }, { limit: 1, offset: 0 })).pagination.total;
      await same();

      // A withdrawn listing leaves the price index and its counts.
      const gone = (await t.catalog.list({ asset: ASSET, maxAmount: '100000' }, { limit: 1, offset: 0 })).items[0]!;
      const owner = urls.find((u) => u.url === gone.resource)!.payTo;
      expect(
        await t.catalog.withdraw!({ resource: gone.resource, type: 'http', toolName: '', owner, issuedAtMs: t.clock().getTime() }),
      ).toEqual({
        status: 'delisted',
      });
      expect((await t.catalog.list({ asset: ASSET, maxAmount: '100000' }, { limit: 1, offset: 0 })).pagination.total).toBe(before - 1);
      await same();
    } finally {
      t.close();
    }
  });
});
