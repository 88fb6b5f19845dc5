/**
 * A list page filtered by `resource` or `toolName` reads the listings' own columns (src/catalog/list-engine.ts
 * `columns`), and every list page has an age cut. On SQLite, an index of listings by type and time (the first schema's)
 * drew a `resource` + `type` page to read every listing of the type since the cut, where the identity's unique index
 * names the one listing: catalog migration 35 drops it with the first schema's indexes by time and by owner, which no
 * read used. This holds the plans: each such read is a SEARCH by the identity's index or the tool name's.
 */
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/catalog/sqlite/migrations.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { settlement, tempCatalog } from './fixtures.ts';

const FIRST_SCHEMA_INDEXES = ['listings_by_recency', 'listings_by_owner', 'listings_by_type'];
const RESOURCE = 'https://a.example.com/weather';
const FILTERS: DiscoveryFilters[] = [
  { resource: RESOURCE },
  { resource: RESOURCE, type: 'http' },
  { resource: RESOURCE, type: 'mcp', toolName: 'forecast' },
  { toolName: 'forecast' },
  { toolName: 'forecast', type: 'mcp' },
];

describe('a list page by resource or tool name on SQLite', () => {
  let t: ReturnType<typeof tempCatalog>;
  let store: CatalogStore;
  const sent: string[] = [];

  beforeAll(async () => {
    t = tempCatalog();
    for (let i = 0; i < 30; i++) {
      t.tick();
      await t.catalog.recordSettlement(settlement({ url: i === 0 ? RESOURCE : `https://s${i}.example.com/api`, description: 'weather' }));
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
    'reads %s by the identity or the tool name, not by type',
    (_name, filters) => {
      sent.length = 0;
      const page = store.list(filters, { limit: 5, offset: 0 }, t.clock(), '2000-01-01T00:00:00.000Z', undefined);
      expect(page.total).toBe(filters.toolName !== undefined ? 0 : 1);
      const reads = sent.filter((sql) => /FROM listings l\b/.test(sql));
      expect(reads.length).toBeGreaterThan(0);
      for (const sql of reads) {
        const plan = (store.statement(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((step) => step.detail);
        const listings = plan.filter((detail) => /^(SCAN|SEARCH) l\b/.test(detail));
        expect(listings, JSON.stringify(plan)).toHaveLength(1);
        const by = filters.resource !== undefined ? 'sqlite_autoindex_listings_1 (resource=?' : 'listings_by_tool_name (tool_name=?';
        expect(listings[0], JSON.stringify(plan)).toContain(`SEARCH l USING INDEX ${by}`);
      }
    },
  );

  it('has the first schema indexes dropped, also from a catalog that had them', () => {
    const indexes = (db: DatabaseSync) =>
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'listings'").all() as Array<{ name: string }>).map(
        (r) => r.name,
      );
    const db = new DatabaseSync(t.dbPath);
    try {
      expect(indexes(db)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^listings_by_(recency|owner|type)$/)]));
      db.exec(`
        CREATE INDEX listings_by_recency ON listings (last_updated DESC, id DESC);
        CREATE INDEX listings_by_owner ON listings (owner, last_updated DESC, id DESC);
        CREATE INDEX listings_by_type ON listings (type, last_updated DESC, id DESC);
        PRAGMA user_version = ${MIGRATIONS.length - 1};`);
      expect(indexes(db)).toEqual(expect.arrayContaining(FIRST_SCHEMA_INDEXES));
    } finally {
      db.close();
    }
    new CatalogStore(t.dbPath).close();
    const reopened = new DatabaseSync(t.dbPath, { readOnly: true });
    try {
      for (const name of FIRST_SCHEMA_INDEXES) expect(indexes(reopened)).not.toContain(name);
    } finally {
      reopened.close();
    }
  });
});
