/**
 * The discovery query-parameter layer over real HTTP. The catalog is a small in-memory CatalogPort
 * (the named boundary: src/catalog/types.ts) that records what it was asked; HTTP tests on the
 * real catalog live with the catalog engineer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogQueryError, type CatalogPort, type DiscoveryFilters } from '../../src/catalog/types.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';

const SELLER = 'GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3';
const CONTRACT = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';
const MUXED = `M${'A'.repeat(68)}`;

const listing = (n: number) => ({
  resource: `https://api.example.com/r${n}`,
  type: 'http',
  x402Version: 2,
  accepts: [{ scheme: 'exact', network: 'stellar:testnet', asset: 'C', amount: '1', payTo: 'G', maxTimeoutSeconds: 60 }],
  lastUpdated: new Date(1_700_000_000_000 + n).toISOString(),
  quality: { l30DaysTotalCalls: n, l30DaysUniquePayers: n, lastCalledAt: new Date(1_700_000_000_000 + n).toISOString() },
  liveness: null,
  description: `resource ${n}`,
});

class InMemoryCatalog implements CatalogPort {
  readonly items = Array.from({ length: 7 }, (_, i) => listing(i));
  lastList?: { filters: DiscoveryFilters; page: { limit: number; offset: number } };
  lastSearch?: { query: string; filters: DiscoveryFilters; page: { limit: number; cursor?: string } };
  async recordSettlement() {
    return null;
  }
  async list(filters: DiscoveryFilters, page: { limit: number; offset: number }) {
    this.lastList = { filters, page };
    const items = this.items.slice(page.offset, page.offset + page.limit);
    return { x402Version: 2, items, pagination: { limit: page.limit, offset: page.offset, total: this.items.length } };
  }
  async search(query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }) {
    this.lastSearch = { query, filters, page };
    if (page.cursor !== undefined && page.cursor !== 'page.two')
      throw new CatalogQueryError('svc_invalid_search_cursor', 'cursor was not issued for this query');
    const start = page.cursor === 'page.two' ? 2 : 0;
    const resources = this.items.slice(start, start + Math.min(page.limit, 2));
    const more = start + resources.length < this.items.length;
    return {
      x402Version: 2,
      resources,
      partialResults: more,
      pagination: { limit: resources.length, cursor: more ? 'page.two' : null },
      searchMethod: 'text' as const,
      searchedTerms: [],
      droppedTerms: [],
      relevance: 'none' as const,
    };
  }
}

const catalog = new InMemoryCatalog();
let server: Awaited<ReturnType<typeof startTestServer>>;
let bare: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;
beforeAll(async () => {
  server = await startTestServer({ catalog });
  // A catalog database that cannot open: the service still starts and discovery answers 500.
  bare = await startTestServer({ config: testConfig({ DB_PATH: '/dev/null/catalog.sqlite' }) });
  client = api(server.url);
});
afterAll(async () => {
  await server.close();
  await bare.close();
});

describe('GET /discovery/resources', () => {
  it('defaults: limit 20, offset 0, no filters', async () => {
    const res = await client.get('/discovery/resources');
    expect(res.status).toBe(200);
    expect(catalog.lastList).toEqual({ filters: {}, page: { limit: 20, offset: 0 } });
    expect(res.body.items).toHaveLength(7);
    expect(res.body.pagination).toEqual({ limit: 20, offset: 0, total: 7 });
  });

  it.each([
    ['0', 1],
    ['-5', 1],
    ['1', 1],
    ['100', 100],
    ['101', 100],
    ['99999999999999999999999', 100],
    ['+7', 7],
    ['7.0', 7],
  ])('limit=%s is clamped to %i', async (raw, expected) => {
    const res = await client.get(`/discovery/resources?limit=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(200);
    expect(catalog.lastList!.page.limit).toBe(expected);
  });

  it('passes the five filters and offset through', async () => {
    const res = await client.get(
      `/discovery/resources?type=http&payTo=${SELLER}&scheme=exact&network=stellar%3Atestnet&extensions=bazaar&offset=3&limit=2`,
    );
    expect(res.status).toBe(200);
    expect(catalog.lastList).toEqual({
      filters: { type: 'http', payTo: SELLER, scheme: 'exact', network: 'stellar:testnet', extensions: 'bazaar' },
      page: { limit: 2, offset: 3 },
    });
    expect(res.body.items.map((i: { resource: string }) => i.resource)).toEqual([
      'https://api.example.com/r3',
      'https://api.example.com/r4',
    ]);
  });

  it.each([
    ['3.0', 3],
    ['3.', 3],
    ['-0', 0],
  ])('offset=%s (an integer as JSON Schema counts one) is offset %i', async (raw, expected) => {
    const res = await client.get(`/discovery/resources?offset=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(200);
    expect(catalog.lastList!.page.offset).toBe(expected);
  });

  it.each([
    'limit=ten',
    'limit=1.5',
    'limit=',
    'limit=1e2',
    'offset=-1',
    'offset=abc',
    'offset=2.5',
    'offset=',
    'offset=99999999999999999999',
    'limit=5&limit=6',
    'type=http&type=mcp',
    'offset=1&offset=1',
    'type=',
    'payTo=%20',
    'payTo=null',
    'payTo=G',
    `payTo=${SELLER.toLowerCase()}`,
  ])('%s → 400 svc_invalid_query_parameter', async (qs) => {
    const res = await client.get(`/discovery/resources?${qs}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('svc_invalid_query_parameter');
    expect(res.body.error.reason).toMatch(/\S/);
  });

  it.each(['null', 'G', SELLER.toLowerCase(), `${SELLER}X`, '0x1111111111111111111111111111111111111111'])(
    'GET /discovery/merchant?payTo=%s (not a payee address) → 400 naming payTo, not an empty seller',
    async (payTo) => {
      const res = await client.get(`/discovery/merchant?payTo=${encodeURIComponent(payTo)}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_query_parameter');
      expect(res.body.error.reason).toContain('payTo');
    },
  );

  it('GET /discovery/merchant with a payee address asks the catalog for its listings', async () => {
    for (const payTo of [SELLER, CONTRACT, MUXED]) {
      const res = await client.get(`/discovery/merchant?payTo=${payTo}`);
      expect(res.status, payTo).toBe(200);
      expect(catalog.lastList!.filters).toEqual({ payTo });
    }
  });

  it.each(['/discovery/resources?maxAmount=100', '/discovery/search?query=weather&maxAmount=100'])(
    '%s (maxAmount without asset) → 400 saying maxAmount requires asset',
    async (path) => {
      const res = await client.get(path);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_query_parameter');
      expect(res.body.error.reason).toMatch(/maxAmount requires asset/);
    },
  );

  it('passes asset and maxAmount through; a maxAmount that is not a whole number of base units → 400', async () => {
    const res = await client.get('/discovery/resources?asset=CASSET&maxAmount=0100');
    expect(res.status).toBe(200);
    expect(catalog.lastList!.filters).toEqual({ asset: 'CASSET', maxAmount: '0100' });
    for (const bad of ['1.5', '-1', 'abc', '1'.repeat(41)]) {
      const refused = await client.get(`/discovery/resources?asset=CASSET&maxAmount=${bad}`);
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.code).toBe('svc_invalid_query_parameter');
    }
  });

  // Names a parser that gathers the query into an object loses (a prototype's, an empty one) too.
  it.each(['LIMIT=5', 'q=x', 'page=2', '__proto__=1', 'constructor=1', 'toString=x', 'hasOwnProperty=x', '=1'])(
    'an undeclared parameter %s → 400 naming it',
    async (qs) => {
      const res = await client.get(`/discovery/resources?${qs}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_query_parameter');
      expect(res.body.error.reason).toContain(JSON.stringify(qs.split('=')[0]));
    },
  );

  it('without a catalog (its database cannot open) → 503 svc_catalog_unavailable on every discovery route', async () => {
    const payTo = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';
    for (const path of [
      '/discovery/resources',
      '/discovery/search?query=weather',
      `/discovery/merchant?payTo=${payTo}`,
      `/discovery/delist?resource=https%3A%2F%2Fapi.example.com%2Fw&type=http&payTo=${payTo}`,
    ]) {
      const res = await api(bare.url).get(path);
      expect({ path, status: res.status, code: res.body.error.code }).toEqual({ path, status: 503, code: 'svc_catalog_unavailable' });
      expect(res.body.error.reason).toMatch(/could not be opened/);
    }
  });

  it('a catalog whose file was deleted while svc ran → 503 svc_catalog_unavailable saying so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-deleted-catalog-'));
    const s = await startTestServer({ config: testConfig({ DB_PATH: join(dir, 'svc.sqlite') }) });
    try {
      expect((await api(s.url).get('/discovery/resources')).status).toBe(200);
      rmSync(join(dir, 'svc.sqlite'));
      for (const path of ['/discovery/resources', '/discovery/search?query=weather']) {
        const res = await api(s.url).get(path);
        expect({ path, status: res.status, code: res.body.error.code }).toEqual({ path, status: 503, code: 'svc_catalog_unavailable' });
        expect(res.body.error.reason).toMatch(/deleted or replaced/);
      }
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a catalog fault → 500 svc_internal_error without its message', async () => {
    const broken: CatalogPort = {
      recordSettlement: async () => null,
      list: async () => {
        throw new Error('SQLITE_CORRUPT secret detail');
      },
      search: () => {
        throw new Error('SQLITE_CORRUPT secret detail');
      },
    };
    const s = await startTestServer({ catalog: broken });
    try {
      for (const path of ['/discovery/resources', '/discovery/search?query=x']) {
        const res = await api(s.url).get(path);
        expect(res.status).toBe(500);
        expect(res.body.error.code).toBe('svc_internal_error');
        expect(res.text).not.toContain('SQLITE');
      }
    } finally {
      await s.close();
    }
  });
});

describe('GET /discovery/search', () => {
  it('passes query, filters and limit; pages with the cursor', async () => {
    const first = await client.get('/discovery/search?query=weather%20now&network=stellar%3Atestnet&limit=500');
    expect(first.status).toBe(200);
    expect(catalog.lastSearch).toEqual({ query: 'weather now', filters: { network: 'stellar:testnet' }, page: { limit: 100 } });
    expect(first.body.partialResults).toBe(true);
    expect(first.body.pagination).toEqual({ limit: 2, cursor: 'page.two' });
    const second = await client.get('/discovery/search?query=weather%20now&cursor=page.two');
    expect(catalog.lastSearch!.page).toEqual({ limit: 20, cursor: 'page.two' });
    expect(second.body.resources[0].resource).toBe('https://api.example.com/r2');
  });

  it.each(['', 'query=', 'query=%20%20', 'q=weather', 'limit=5'])('%s → 400 svc_missing_search_query', async (qs) => {
    const res = await client.get(`/discovery/search?${qs}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('svc_missing_search_query');
  });

  it.each(['query=a&query=b', 'query=a&limit=x', 'query=a&cursor=page.two&cursor=page.two', 'query=a&limit=2.5'])(
    '%s → 400 svc_invalid_query_parameter',
    async (qs) => {
      const res = await client.get(`/discovery/search?${qs}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_query_parameter');
    },
  );

  it.each(['', 'x', 'a.', '.b', 'a.b.c', 'a b.c', `${'a'.repeat(1024)}.b`])(
    'cursor=%s cannot have been issued → 400 svc_invalid_search_cursor before the catalog is asked',
    async (cursor) => {
      catalog.lastSearch = undefined;
      const res = await client.get(`/discovery/search?query=a&cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_search_cursor');
      expect(catalog.lastSearch).toBeUndefined();
    },
  );

  it('a CatalogQueryError becomes 400 with its code and message', async () => {
    const res = await client.get('/discovery/search?query=a&cursor=forged.cursor');
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'svc_invalid_search_cursor', reason: 'cursor was not issued for this query' });
  });

  it('wrong method → 405 svc_unknown_route with Allow', async () => {
    const res = await client.request('POST', '/discovery/search?query=a');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, OPTIONS');
    expect(res.body.error.code).toBe('svc_unknown_route');
    expect(res.body.error.reason).toContain('accepts GET');
  });
});
