/**
 * A filtered search on SQLite sums each listing's rows, sorts the listings by rank and checks the filters one listing
 * at a time in that order until the page is full (src/catalog/sqlite/search.ts rankTerms; docs/BENCHMARKS.md "Filter
 * combinations"). Its outer ORDER BY fixes the page whatever the plan, so a plan that sorted again after the filters
 * would give the same pages, only slower: every listing the budget read probed. This holds the plan itself: the only
 * sort is the ranked groups' own, under the filters, never one above them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { ASSET, PAY_TO_A, PAY_TO_B, settlement, tempCatalog } from './fixtures.ts';

const FILTERS: DiscoveryFilters[] = [
  { network: 'stellar:testnet' },
  { type: 'http' },
  { payTo: PAY_TO_B },
  { asset: ASSET, maxAmount: '500000' },
  { network: 'stellar:pubnet', scheme: 'exact' },
  { url: 'example' },
];

describe('a filtered search on SQLite', () => {
  let t: ReturnType<typeof tempCatalog>;
  let store: CatalogStore;
  const sent: string[] = [];

  beforeAll(async () => {
    t = tempCatalog();
    for (let i = 0; i < 60; i++) {
      t.tick();
      await t.catalog.recordSettlement(
        settlement({
          url: `https://s${i}.example.com/api`,
          payTo: i % 3 === 0 ? PAY_TO_B : PAY_TO_A,
          network: i % 2 === 0 ? 'stellar:testnet' : 'stellar:pubnet',
          amount: String(100_000 * (1 + (i % 9))),
          description: `weather forecast ${i % 4 === 0 ? 'rain radar' : 'wind'} data`,
        }),
      );
    }
    store = new CatalogStore(t.dbPath);
    const statement = store.statement.bind(store);
    store.statement = (sql) => (sent.push(sql), statement(sql));
  });

  afterAll(() => {
    store?.close();
    t?.close();
  });

  it.each(FILTERS.map((filters) => [JSON.stringify(filters), filters] as const))(
    'checks %s under the rank order, with no sort above the filters',
    (_name, filters) => {
      sent.length = 0;
      const page = store.search('weather forecast rain', filters, { limit: 5 }, t.clock(), DISCOVERY_X402_VERSION);
      expect(page.searchMethod).toBe('text');
      const ranked = sent.filter((sql) => sql.includes('GROUP BY t.rev ORDER BY rank DESC'));
      expect(ranked.length).toBeGreaterThan(0);
      for (const sql of ranked) {
        const plan = store.statement(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ parent: number; detail: string }>;
        const sorts = plan.filter((step) => step.detail.includes('TEMP B-TREE FOR ORDER BY'));
        // One sort, the groups' own, inside the subquery the filters read from.
        expect(sorts, JSON.stringify(plan)).toHaveLength(1);
        expect(sorts[0]!.parent, JSON.stringify(plan)).not.toBe(0);
      }
    },
  );
});
