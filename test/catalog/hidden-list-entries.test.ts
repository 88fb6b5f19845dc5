/**
 * A listing hidden by its failures leaves every list page, before a lifecycle pass and after it: the pass moves its
 * list entries below every listing's time (src/catalog/lifecycle.ts HIDDEN_LIST_TIME), where the list's age cut leaves
 * them out and counts them, and a read leaves out by their ids only the failing listings no pass has hidden yet
 * (docs/CATALOG.md "Lifecycle"). The oracle: each filter's pages as they were before any listing failed, less the
 * hidden listings; a listing put back (a passing check, a settlement) is back in its place.
 */
import { describe, expect, it } from 'vitest';
import type { Catalog, DiscoveryFilters } from '../../src/catalog/types.ts';
import { ASSET, PAY_TO_A, PAY_TO_B, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LISTINGS = 36;
const url = (i: number) => `https://s${i}.example.com/api`;
const terms = (i: number) => ({
  url: url(i),
  payTo: i % 4 === 0 ? PAY_TO_B : PAY_TO_A,
  network: i % 3 === 0 ? 'stellar:pubnet' : 'stellar:testnet',
  amount: String(10_000 * (1 + (i % 7))),
  description: `weather ${i}`,
});
/** Hidden by failures past the grace period, and failing within it (still listed). */
const HIDDEN = [1, 4, 9, 12, 20, 27, 33];
const WITHIN_GRACE = [2, 15];

const FILTERS: DiscoveryFilters[] = [
  {},
  { network: 'stellar:testnet' },
  { asset: ASSET },
  { asset: ASSET, maxAmount: '40000' },
  { asset: ASSET, network: 'stellar:pubnet', maxAmount: '60000' },
  { payTo: PAY_TO_B },
  { network: 'stellar:testnet', type: 'http' },
  { url: 'example.com/api' },
  { url: '//s1' },
  { url: 'example.com/api', network: 'stellar:testnet' },
  { url: '//s1', asset: ASSET, maxAmount: '50000' },
];
const PAGES = [
  { limit: 7, offset: 0 },
  { limit: 7, offset: 7 },
  { limit: 5, offset: 20 },
];

const everyPage = async (catalog: Catalog, filters: DiscoveryFilters) =>
  (await catalog.list(filters, { limit: 100, offset: 0 })).items.map((r) => r.resource);

/** A catalog of LISTINGS listings, each filter's every page read, then HIDDEN failing past the grace period. */
async function failingCatalog(backend: string) {
  const t = tempCatalog(undefined, {
    databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined,
    livenessGraceMs: DAY,
  });
  for (let i = 0; i < LISTINGS; i++) {
    t.tick(1000);
    await t.catalog.recordSettlement(settlement(terms(i)));
  }
  const before = new Map<string, string[]>();
  for (const filters of FILTERS) before.set(JSON.stringify(filters), await everyPage(t.catalog, filters));
  expect(before.get('{}')).toHaveLength(LISTINGS);
  const fail = async (indexes: number[]) => {
    const live = t.catalog.liveness!;
    const claimedAt = t.clock().getTime();
    const due = await live.claimDue(claimedAt, claimedAt, 100);
    const failedAt = t.clock().toISOString();
    for (const i of indexes) {
      const listing = due.find((l) => l.resource === url(i))!;
      await live.writeLiveness(listing.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimedAt);
    }
  };
  await fail(HIDDEN);
  t.tick(DAY + HOUR);
  await fail(WITHIN_GRACE);
  /** Every filter's pages and totals: what they were before, less `hidden`. */
  const expectPages = async (catalog: Catalog, hidden: Set<string>, label: string) => {
    for (const filters of FILTERS) {
      const expected = before.get(JSON.stringify(filters))!.filter((resource) => !hidden.has(resource));
      for (const page of PAGES) {
        const got = await catalog.list(filters, page);
        const where = `${label} ${JSON.stringify(filters)} ${JSON.stringify(page)}`;
        expect(
          got.items.map((r) => r.resource),
          where,
        ).toEqual(expected.slice(page.offset, page.offset + page.limit));
        expect(got.pagination.total, where).toBe(expected.length);
      }
    }
  };
  const pass = async (catalog: Catalog) => {
    while ((await catalog.maintainLifecycle!()).hidden > 0);
  };
  return { t, before, expectPages, pass };
}

describe.each(BACKENDS)('listings hidden by failures on %s', (backend) => {
  it('leave every list page and total before and after the pass, and come back in place', async () => {
    const { t, before, expectPages, pass } = await failingCatalog(backend);
    try {
      const hidden = new Set(HIDDEN.map(url));
      await expectPages(t.catalog, hidden, 'before the pass');
      await pass(t.catalog);
      await expectPages(t.catalog, hidden, 'after the pass');

      // A passing check puts one back in its place.
      const live = t.catalog.liveness!;
      const again = t.clock().getTime();
      const back = (await live.claimDue(again, again, 100)).find((l) => l.resource === url(HIDDEN[0]!))!;
      await live.writeLiveness(back.key, { status: 'live', checkedAt: t.clock().toISOString(), failingSince: null }, again);
      hidden.delete(url(HIDDEN[0]!));
      await expectPages(t.catalog, hidden, 'after a passing check');

      // A settlement puts one back too, as the newest listing of each page it belongs to.
      t.tick(1000);
      const settled = url(HIDDEN[1]!);
      await t.catalog.recordSettlement(settlement(terms(HIDDEN[1]!)));
      hidden.delete(settled);
      for (const [key, resources] of before)
        if (resources.includes(settled)) before.set(key, [settled, ...resources.filter((r) => r !== settled)]);
      await expectPages(t.catalog, hidden, 'after a settlement');
    } finally {
      t.close();
    }
  });
});
