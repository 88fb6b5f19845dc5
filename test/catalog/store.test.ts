/**
 * The catalog listing lifecycle and the list endpoint (openapi.yaml, docs/CATALOG.md), on real SQLite
 * files and on a real PostgreSQL database (the same contract on both stores): create, refresh, protect; identity; accepts; metadata merge; filters, order, paging.
 */
import { statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/index.ts';
import { CatalogStore, readerPageCacheMiB } from '../../src/catalog/sqlite/store.ts';
import { BASELINE_VERSION, SCHEMA_VERSION } from '../../src/catalog/sqlite/migrations.ts';
import { BUSY_MACHINE_BOUNDS, PAY_TO_A, PAY_TO_B, recordingLogger, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, catalogPerDescribe, freshCatalogPerTest } from './fresh.ts';

type Listing = Record<string, any>;
const all = async (t: ReturnType<typeof tempCatalog>) => (await t.catalog.list({}, { limit: 100, offset: 0 })).items as Listing[];

describe.each(BACKENDS)('on %s', (backend) => {
  const fresh = freshCatalogPerTest(backend);

  describe('listing lifecycle', () => {
    it('creates a listing owned by the settled payTo, with the canonical URL and an ISO lastUpdated', async () => {
      const t = fresh();
      expect(await t.catalog.recordSettlement(settlement({ description: 'Forecast', mimeType: 'application/json' }))).toEqual({
        status: 'success',
      });
      const [listing, ...rest] = await all(t);
      expect(rest).toHaveLength(0);
      expect(listing).toMatchObject({
        resource: 'https://api.example.com/weather',
        type: 'http',
        x402Version: 2,
        lastUpdated: '2026-01-01T00:00:00.000Z',
        description: 'Forecast',
        mimeType: 'application/json',
      });
      expect(typeof listing!.lastUpdated).toBe('string');
      expect(listing!.accepts).toEqual([
        expect.objectContaining({ scheme: 'exact', network: 'stellar:testnet', amount: '100000', payTo: PAY_TO_A }),
      ]);
      expect(listing!.extensions.bazaar.info.input).toEqual({ type: 'http', method: 'GET', queryParams: { city: 'Lisbon' } });
    });

    it('returns null and writes nothing when no bazaar extension was echoed', async () => {
      const t = fresh();
      const s = settlement();
      delete s.paymentPayload.extensions;
      expect(await t.catalog.recordSettlement(s)).toBeNull();
      expect(await t.catalog.recordSettlement(settlement({ extensions: { other: { x: 1 } } }))).toBeNull();
      expect(await all(t)).toHaveLength(0);
    });

    it('refreshes on the same key and payTo: latest metadata wins, absent fields keep their value, accepts accumulate de-duplicated', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(settlement({ description: 'v1', serviceName: 'Weather', tags: ['a'], mimeType: 'text/plain' }));
      t.tick(5000);
      await t.catalog.recordSettlement(settlement({ description: 'v2', amount: '200000' }));
      t.tick(5000);
      await t.catalog.recordSettlement(settlement({ amount: '100000' })); // same terms as the first: not duplicated
      const [listing, ...rest] = await all(t);
      expect(rest).toHaveLength(0);
      expect(listing).toMatchObject({ description: 'v2', serviceName: 'Weather', tags: ['a'], mimeType: 'text/plain' });
      expect(listing!.lastUpdated).toBe('2026-01-01T00:00:10.000Z');
      expect(listing!.accepts.map((a: Listing) => a.amount)).toEqual(['100000', '200000']);
    });

    it('protects a listing: a different payTo is rejected with bazaar_listing_owned_by_other_payee and nothing is written', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(settlement({ description: 'owner', serviceName: 'Mine' }));
      const before = await all(t);
      t.tick(60_000);
      const outcome = await t.catalog.recordSettlement(
        settlement({ payTo: PAY_TO_B, description: 'thief', serviceName: 'Stolen', amount: '1' }),
      );
      expect(outcome).toMatchObject({ status: 'rejected', code: 'bazaar_listing_owned_by_other_payee' });
      expect((outcome as { rejectedReason: string }).rejectedReason.length).toBeGreaterThan(0);
      expect(await all(t)).toEqual(before);
      expect((await t.catalog.search('thief stolen', {}, { limit: 10 })).resources).toHaveLength(0);
      expect((await t.catalog.list({ payTo: PAY_TO_B }, { limit: 10, offset: 0 })).pagination.total).toBe(0);
    });

    it('identity is (resource URL, type, toolName): query/fragment do not split a listing, two MCP tools on one URL are two listings', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(settlement({ url: 'https://api.example.com/weather?a=1' }));
      await t.catalog.recordSettlement(settlement({ url: 'https://api.example.com/weather#frag' }));
      await t.catalog.recordSettlement(settlement({ url: 'https://mcp.example.com/mcp', mcpTool: 'summarize' }));
      await t.catalog.recordSettlement(settlement({ url: 'https://mcp.example.com/mcp', mcpTool: 'translate' }));
      // A different owner for another tool on the same URL is a different key, so it is allowed.
      expect(
        await t.catalog.recordSettlement(settlement({ url: 'https://mcp.example.com/mcp', mcpTool: 'other', payTo: PAY_TO_B })),
      ).toEqual({ status: 'success' });
      const listings = await all(t);
      expect(listings.map((l) => `${l.type} ${l.resource} ${l.extensions.bazaar.info.input.toolName ?? ''}`).sort()).toEqual([
        'http https://api.example.com/weather ',
        'mcp https://mcp.example.com/mcp other',
        'mcp https://mcp.example.com/mcp summarize',
        'mcp https://mcp.example.com/mcp translate',
      ]);
    });

    it('uses origin + routeTemplate as the resource when the template is valid', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(settlement({ url: 'https://api.example.com/users/42?x=1', routeTemplate: '/users/:id' }));
      await t.catalog.recordSettlement(settlement({ url: 'https://api.example.com/users/43', routeTemplate: '/users/:id' }));
      const listings = await all(t);
      expect(listings.map((l) => l.resource)).toEqual(['https://api.example.com/users/:id']);
      expect(listings[0]!.extensions.bazaar.routeTemplate).toBe('/users/:id');
    });

    it('terms in accepts come only from the settled requirements, never from the payload', async () => {
      const t = fresh();
      const s = settlement();
      s.paymentPayload.accepted = { ...(s.paymentPayload.accepted as Listing), amount: '999999999' };
      (s.paymentRequirements as Listing).injected = 'free text';
      await t.catalog.recordSettlement(s);
      const accepts = (await all(t))[0]!.accepts as Listing[];
      expect(accepts).toHaveLength(1);
      expect(accepts[0]!.amount).toBe('100000');
      expect(accepts[0]).not.toHaveProperty('injected');
    });
  });

  describe('control characters', () => {
    it('a filter holding U+0000 matches nothing, in list and search; a tool name with a control character is refused', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/1', description: 'weather report' }));
      expect(await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/mcp', mcpTool: 'tool\u0000name' }))).toMatchObject({
        status: 'rejected',
        rejectedReason: expect.stringContaining('control characters'),
      });
      for (const filters of [
        { extensions: '\u0000' },
        { toolName: 'tool\u0000name' },
        { payTo: `${PAY_TO_A}\u0000` },
        { network: '\u0000' },
      ]) {
        expect(await t.catalog.list(filters, { limit: 10, offset: 0 })).toMatchObject({ items: [], pagination: { total: 0 } });
        expect((await t.catalog.search('weather', filters, { limit: 10 })).resources).toEqual([]);
      }
      expect((await t.catalog.search('weather', {}, { limit: 10 })).resources).toHaveLength(1);
    });
  });

  describe('list (GET /discovery/resources)', () => {
    async function seed(t: ReturnType<typeof tempCatalog>) {
      await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/1' }));
      t.tick();
      await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/2', payTo: PAY_TO_B, network: 'stellar:pubnet' }));
      t.tick();
      await t.catalog.recordSettlement(settlement({ url: 'https://m.example.com/mcp', mcpTool: 'tool' }));
      t.tick();
      await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/3', scheme: 'upto' }));
      t.tick();
      // A refresh of /1 adds pubnet terms and makes it the newest.
      await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/1', network: 'stellar:pubnet' }));
    }
    // Both tests only read the seeded catalog.
    const seeded = catalogPerDescribe(backend);
    beforeAll(() => seed(seeded()));

    it('orders newest first with a stable tie-break, and pages with limit/offset/total', async () => {
      const t = seeded();
      const page1 = await t.catalog.list({}, { limit: 2, offset: 0 });
      expect(page1.pagination).toEqual({ limit: 2, offset: 0, total: 4 });
      expect((page1.items as Listing[]).map((l) => l.resource)).toEqual(['https://a.example.com/1', 'https://a.example.com/3']);
      const page2 = await t.catalog.list({}, { limit: 2, offset: 2 });
      expect((page2.items as Listing[]).map((l) => l.resource)).toEqual(['https://m.example.com/mcp', 'https://a.example.com/2']);
      expect(await t.catalog.list({}, { limit: 2, offset: 10 })).toEqual({
        x402Version: 2,
        items: [],
        pagination: { limit: 2, offset: 10, total: 4 },
      });
      // Same lastUpdated: order falls back to id (newest id first), identically on every call.
      const u = await fresh.another();
      for (const n of [1, 2, 3]) {
        const outcome = await u.catalog.recordSettlement(settlement({ url: `https://t.example.com/${n}` }));
        expect(outcome, JSON.stringify(u.logger.lines)).toEqual({ status: 'success' });
      }
      const order = async () => ((await u.catalog.list({}, { limit: 10, offset: 0 })).items as Listing[]).map((l) => l.resource);
      expect(await order()).toEqual(['https://t.example.com/3', 'https://t.example.com/2', 'https://t.example.com/1']);
      expect(await order()).toEqual(await order());
    });

    it('applies the five filters; scheme and network match any accepted entry', async () => {
      const t = seeded();
      const resources = async (filters: Record<string, string>) =>
        ((await t.catalog.list(filters, { limit: 100, offset: 0 })).items as Listing[]).map((l) => l.resource).sort();
      expect(await resources({ type: 'mcp' })).toEqual(['https://m.example.com/mcp']);
      expect(await resources({ type: 'http' })).toHaveLength(3);
      expect(await resources({ payTo: PAY_TO_B })).toEqual(['https://a.example.com/2']);
      expect(await resources({ scheme: 'upto' })).toEqual(['https://a.example.com/3']);
      expect(await resources({ network: 'stellar:pubnet' })).toEqual(['https://a.example.com/1', 'https://a.example.com/2']);
      expect(await resources({ network: 'stellar:pubnet', scheme: 'upto' })).toEqual([]);
      expect(await resources({ extensions: 'bazaar' })).toHaveLength(4);
      expect(await resources({ extensions: 'other' })).toEqual([]);
      expect(await resources({ type: 'http', payTo: PAY_TO_A, network: 'stellar:testnet' })).toEqual([
        'https://a.example.com/1',
        'https://a.example.com/3',
      ]);
      expect((await t.catalog.list({ type: 'nope' }, { limit: 5, offset: 0 })).pagination.total).toBe(0);
      // The identity filters (list only): exact resource URL and exact MCP tool name.
      expect(await resources({ resource: 'https://a.example.com/2' })).toEqual(['https://a.example.com/2']);
      expect(await resources({ resource: 'https://a.example.com/2/' })).toEqual([]);
      expect(await resources({ resource: 'https://m.example.com/mcp', type: 'mcp', toolName: 'tool' })).toEqual([
        'https://m.example.com/mcp',
      ]);
      expect(await resources({ toolName: 'Tool' })).toEqual([]);
      expect(await resources({ resource: 'https://a.example.com/1', toolName: 'tool' })).toEqual([]);
    });
  });
});

describe('store (SQLite)', () => {
  const fresh = freshCatalogPerTest();

  it('uses WAL, a 100 ms busy timeout and a versioned schema; reopening keeps data and does not re-migrate', async () => {
    const t = fresh();
    await t.catalog.recordSettlement(settlement());
    const raw = new DatabaseSync(t.dbPath);
    try {
      expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
      expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    } finally {
      raw.close();
    }
    await t.catalog.close();
    // At the catalog's clock: by the wall clock the listing would be older than LISTING_TTL_DAYS.
    const again = openCatalog({ dbPath: t.dbPath, logger: recordingLogger(), clock: t.clock, ...BUSY_MACHINE_BOUNDS });
    try {
      expect((await again.list({}, { limit: 10, offset: 0 })).pagination.total).toBe(1);
    } finally {
      await again.close();
    }
  });

  it("gives a connection 32 MiB of page cache unless told otherwise, a reader thread's 8 per GiB of file (8 to 32)", async () => {
    const t = fresh();
    await t.catalog.close();
    const cacheKiB = (store: CatalogStore) => {
      try {
        return -(store.db.prepare('PRAGMA cache_size').get() as { cache_size: number }).cache_size;
      } finally {
        store.close();
      }
    };
    expect(cacheKiB(new CatalogStore(t.dbPath))).toBe(32 * 1024);
    expect(cacheKiB(new CatalogStore(t.dbPath, { pageCacheMiB: readerPageCacheMiB(statSync(t.dbPath).size) }))).toBe(8 * 1024);
    expect([0, 2 ** 30, 2.5 * 2 ** 30, 9 * 2 ** 30].map(readerPageCacheMiB)).toEqual([8, 8, 20, 32]);
  });

  it('refuses a database from a newer schema version', async () => {
    const t = fresh();
    await t.catalog.close();
    const raw = new DatabaseSync(t.dbPath);
    raw.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openCatalog({ dbPath: t.dbPath, logger: recordingLogger() })).toThrow(/newer/);
  });

  it('refuses a database older than its baseline version, and leaves it as it was', async () => {
    const t = fresh();
    await t.catalog.close();
    const raw = new DatabaseSync(t.dbPath);
    raw.exec(`PRAGMA user_version = ${BASELINE_VERSION - 1}`);
    raw.close();
    expect(() => openCatalog({ dbPath: t.dbPath, logger: recordingLogger() })).toThrow(
      `catalog schema ${BASELINE_VERSION - 1} is older than this code's first (${BASELINE_VERSION})`,
    );
    const kept = new DatabaseSync(t.dbPath, { readOnly: true });
    expect(kept.prepare('PRAGMA user_version').get()).toEqual({ user_version: BASELINE_VERSION - 1 });
    kept.close();
  });
});
