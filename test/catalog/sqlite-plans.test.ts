/**
 * Statements on SQLite whose pages any plan would give alike, only slower: this holds their plans, on one catalog.
 *
 * A filtered search sums each listing's rows, sorts the listings by rank and checks the filters one listing at a time in
 * that order until the page is full (src/catalog/sqlite/search.ts rankTerms; docs/BENCHMARKS.md "Filter combinations").
 * Its outer ORDER BY fixes the page whatever the plan, so a plan that sorted again after the filters would probe every
 * listing the budget read: the only sort must be the ranked groups' own, under the filters, never one above them.
 *
 * A list page filtered by `resource` or `toolName` reads the listings' own columns (src/catalog/list-engine.ts
 * `columns`), with the age cut every list page has. An index of listings by type and time would draw a `resource` +
 * `type` page to read every listing of the type since the cut, where the identity's unique index names the one
 * listing (the schema holds none). Each such read must be a SEARCH by the identity's index or the tool name's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { ASSET, PAY_TO_A, PAY_TO_B, settlement, tempCatalog } from './fixtures.ts';

const RESOURCE = 'https://s0.example.com/api';

let t: ReturnType<typeof tempCatalog>;
let store: CatalogStore;
/** The statements the store ran since the last test's start. */
const sent: string[] = [];
const plan = (sql: string) => store.statement(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ parent: number; detail: string }>;

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

describe('a filtered search on SQLite', () => {
  const FILTERS: DiscoveryFilters[] = [
    { network: 'stellar:testnet' },
    { type: 'http' },
    { payTo: PAY_TO_B },
    { asset: ASSET, maxAmount: '500000' },
    { network: 'stellar:pubnet', scheme: 'exact' },
    { url: 'example' },
  ];

  it.each(FILTERS.map((filters) => [JSON.stringify(filters), filters] as const))(
    'checks %s under the rank order, with no sort above the filters',
    (_name, filters) => {
      sent.length = 0;
      const page = store.search('weather forecast rain', filters, { limit: 5 }, t.clock(), DISCOVERY_X402_VERSION);
      expect(page.searchMethod).toBe('text');
      const ranked = sent.filter((sql) => sql.includes('GROUP BY t.rev ORDER BY rank DESC'));
      expect(ranked.length).toBeGreaterThan(0);
      for (const sql of ranked) {
        const steps = plan(sql);
        const sorts = steps.filter((step) => step.detail.includes('TEMP B-TREE FOR ORDER BY'));
        // One sort, the groups' own, inside the subquery the filters read from.
        expect(sorts, JSON.stringify(steps)).toHaveLength(1);
        expect(sorts[0]!.parent, JSON.stringify(steps)).not.toBe(0);
      }
    },
  );
});

describe('a list page by resource or tool name on SQLite', () => {
  const FILTERS: DiscoveryFilters[] = [
    { resource: RESOURCE },
    { resource: RESOURCE, type: 'http' },
    { resource: RESOURCE, type: 'mcp', toolName: 'forecast' },
    { toolName: 'forecast' },
    { toolName: 'forecast', type: 'mcp' },
  ];

  it.each(FILTERS.map((filters) => [JSON.stringify(filters), filters] as const))(
    'reads %s by the identity or the tool name, not by type',
    (_name, filters) => {
      sent.length = 0;
      const page = store.list(filters, { limit: 5, offset: 0 }, t.clock(), '2000-01-01T00:00:00.000Z', undefined);
      expect(page.total).toBe(filters.toolName !== undefined ? 0 : 1);
      const reads = sent.filter((sql) => /FROM listings l\b/.test(sql));
      expect(reads.length).toBeGreaterThan(0);
      for (const sql of reads) {
        const steps = plan(sql).map((step) => step.detail);
        const listings = steps.filter((detail) => /^(SCAN|SEARCH) l\b/.test(detail));
        expect(listings, JSON.stringify(steps)).toHaveLength(1);
        const by = filters.resource !== undefined ? 'sqlite_autoindex_listings_1 (resource=?' : 'listings_by_tool_name (tool_name=?';
        expect(listings[0], JSON.stringify(steps)).toContain(`SEARCH l USING INDEX ${by}`);
      }
    },
  );
});
