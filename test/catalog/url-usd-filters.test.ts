/**
 * The CDP Bazaar's filters (openapi.yaml UrlFilter, MaxUsdPriceFilter) and a case-insensitive
 * `asset`, black-box over real HTTP on loopback, the hosted MCP server (POST /mcp) and the stdio
 * MCP tool server (a separate process), on both stores: `url` is a substring of the resource URL
 * ignoring case, its wildcards and quotes taken literally; `maxUsdPrice` matches an accepted entry
 * in a USD-pegged asset at most that many dollars, and never a listing in another asset; bad values
 * are 400. When the text finds nothing, the query's terms are looked up among the URLs' host labels
 * and path segments.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { STELLAR_NETWORKS } from '../../src/chains/stellar/networks.ts';
import { DEFAULT_USD_ASSETS, parseUsdAssets, usdMaxAmounts } from '../../src/filters.ts';
import { api } from '../helpers/contract.ts';
import { BACKENDS, freshCatalogDatabase } from '../helpers/postgres.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { MCP_BUNDLE, MCP_MAIN } from '../mcp/harness.ts';
import { ASSET, settlement, tempCatalog } from './fixtures.ts';

/** A contract that is no USD-pegged asset. */
const OTHER_ASSET = 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC';
/** resource → [amount, asset]: USDC has 7 decimals, so 100000 is $0.01. */
const LISTINGS: Record<string, [string, string]> = {
  'https://api.weather.example.com/v1/forecast': ['100000', ASSET],
  'https://maps.example.com/geo/50%25_off': ['500000', ASSET],
  'https://cheap.example.org/weather': ['1', OTHER_ASSET],
};
const [WEATHER, MAPS, CHEAP] = Object.keys(LISTINGS) as [string, string, string];

describe('USD_ASSETS', () => {
  it("defaults to Circle's USDC on testnet and pubnet (the chain's own ids); reads ASSET:DECIMALS lists; converts dollars to base units", () => {
    expect(DEFAULT_USD_ASSETS.map((a) => a.asset).sort()).toEqual(
      Object.values(STELLAR_NETWORKS)
        .map((n) => n.usdc)
        .sort(),
    );
    expect(parseUsdAssets(`${OTHER_ASSET}:2, ${ASSET}:7`)).toEqual([
      { asset: OTHER_ASSET, decimals: 2 },
      { asset: ASSET, decimals: 7 },
    ]);
    expect(parseUsdAssets(`${ASSET}`)).toMatch(/ASSET:DECIMALS/);
    expect(usdMaxAmounts('0.015', [{ asset: ASSET, decimals: 7 }])).toEqual([{ asset: ASSET, maxAmount: '150000' }]);
    // A fraction of a base unit is dropped: an amount is whole.
    expect(usdMaxAmounts('0.019', [{ asset: OTHER_ASSET, decimals: 2 }])).toEqual([{ asset: OTHER_ASSET, maxAmount: '1' }]);
  });
});

describe.each(BACKENDS)('%s', (backend) => {
  let t: ReturnType<typeof tempCatalog>;
  let server: TestServer;
  let hosted: Client;
  beforeAll(async () => {
    t = tempCatalog(Date.now(), { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    for (const [url, [amount, asset]] of Object.entries(LISTINGS)) {
      const s = settlement({ url, amount, description: 'forecast data for a city' });
      s.paymentRequirements.asset = asset;
      expect(await t.catalog.recordSettlement(s)).toEqual({ status: 'success' });
    }
    server = await startTestServer({ catalog: t.catalog });
    hosted = new Client({ name: 'url-usd-filters', version: '1.0.0' });
    await hosted.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 120_000);
  const hostedClient = () => hosted;
  afterAll(async () => {
    await hosted?.close();
    await server?.close();
    t?.close();
  });

  /** The sorted resources of GET /discovery/resources and /discovery/search with `filters`, which must agree. */
  const found = async (filters: Record<string, string>) => {
    const list = await api(server.url).get(`/discovery/resources?${new URLSearchParams(filters).toString()}`);
    const search = await api(server.url).get(`/discovery/search?${new URLSearchParams({ query: 'forecast', ...filters }).toString()}`);
    expect([list.status, search.status]).toEqual([200, 200]);
    const listed = list.body.items.map((i: { resource: string }) => i.resource).sort();
    expect(list.body.pagination.total).toBe(listed.length);
    expect(search.body.resources.map((i: { resource: string }) => i.resource).sort()).toEqual(listed);
    return listed;
  };

  it('url: a substring of the resource URL ignoring case, wildcards and quotes literal, on list and search', async () => {
    expect(await found({ url: 'WEATHER.Example' })).toEqual([WEATHER]);
    expect(await found({ url: 'weather' })).toEqual([CHEAP, WEATHER].sort());
    expect(await found({ url: 'https://' })).toEqual([WEATHER, MAPS, CHEAP].sort());
    expect(await found({ url: '/50%25_off' })).toEqual([MAPS]);
    expect(await found({ url: '%25_' })).toEqual([MAPS]);
    expect(await found({ url: 'geo%2F' })).toEqual([]);
    expect(await found({ url: 'o_f' })).toEqual([]);
    expect(await found({ url: 'ap%' })).toEqual([]);
    expect(await found({ url: '"weather"' })).toEqual([]);
    expect(await found({ url: 'weather OR maps' })).toEqual([]);
    expect(await found({ url: 'nowhere.example' })).toEqual([]);
    expect(await found({ url: 'weather\u0000' })).toEqual([]);
  });

  it('maxUsdPrice: an entry in a USD-pegged asset at most that price; another asset never matches; asset in any case', async () => {
    expect(await found({ maxUsdPrice: '0.01' })).toEqual([WEATHER]);
    expect(await found({ maxUsdPrice: '0.0099999' })).toEqual([]);
    expect(await found({ maxUsdPrice: '0.05' })).toEqual([WEATHER, MAPS].sort());
    expect(await found({ maxUsdPrice: '1000000' })).toEqual([WEATHER, MAPS].sort());
    expect(await found({ maxUsdPrice: '0.05', url: 'maps' })).toEqual([MAPS]);
    expect(await found({ maxUsdPrice: '0.05', asset: OTHER_ASSET })).toEqual([]);
    expect(await found({ maxUsdPrice: '0.05', asset: ASSET.toLowerCase(), network: 'stellar:testnet' })).toEqual([WEATHER, MAPS].sort());
    // The list reads the one listed USD asset's price index: the smaller of maxAmount and the price bounds it (list and search agree).
    expect(await found({ maxUsdPrice: '0.05', asset: ASSET, maxAmount: '100000' })).toEqual([WEATHER]);
    expect(await found({ maxUsdPrice: '0.01', asset: ASSET, maxAmount: '500000', type: 'http' })).toEqual([WEATHER]);
    expect(await found({ maxUsdPrice: '0.05', network: 'stellar:pubnet' })).toEqual([]);
    expect(await found({ asset: OTHER_ASSET.toLowerCase() })).toEqual([CHEAP]);
    expect(await found({ asset: `${ASSET.slice(0, 20).toLowerCase()}${ASSET.slice(20)}`, maxAmount: '100000' })).toEqual([WEATHER]);
  });

  it('bad values are 400 svc_invalid_query_parameter naming the filter', async () => {
    for (const [name, value] of [
      ['url', 'ab'],
      ['url', 'x'.repeat(2049)],
      ['maxUsdPrice', '1e3'],
      ['maxUsdPrice', '-1'],
      ['maxUsdPrice', '$1'],
    ] as const) {
      for (const path of ['/discovery/resources', '/discovery/search?query=forecast&']) {
        const res = await api(server.url).get(`${path}${path.endsWith('&') ? '' : '?'}${name}=${encodeURIComponent(value)}`);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'svc_invalid_query_parameter', reason: expect.stringContaining(name) });
      }
    }
  });

  it('the resource URL is searched when the text finds nothing: host labels and path segments, most terms first, cursor walks, filters', async () => {
    const search = async (params: Record<string, string>) => {
      const res = await api(server.url).get(`/discovery/search?${new URLSearchParams(params).toString()}`);
      expect(res.status).toBe(200);
      return res.body as { resources: Array<{ resource: string }>; searchMethod: string; searchedTerms: string[]; pagination: any };
    };
    const resources = (page: { resources: Array<{ resource: string }> }) => page.resources.map((r) => r.resource);
    // No description holds "weather": a host label and a path segment do.
    const weather = await search({ query: 'weather' });
    expect(weather).toMatchObject({ searchMethod: 'url', searchedTerms: ['weather'], droppedTerms: [] });
    expect(resources(weather)).toEqual([WEATHER, CHEAP]);
    // Most terms first, then the listing written first.
    expect(resources(await search({ query: 'geo weather org' }))).toEqual([CHEAP, WEATHER, MAPS]);
    // Whole labels and segments only; the text wins whenever it finds something.
    expect(resources(await search({ query: 'weath' }))).toEqual([]);
    expect((await search({ query: 'city weather' })).searchMethod).toBe('text');
    // Filters apply; a filter that leaves the text nothing hands the query to the URLs.
    expect(resources(await search({ query: 'weather', maxUsdPrice: '0.01' }))).toEqual([WEATHER]);
    expect(await search({ query: 'forecast geo', url: 'maps' })).toMatchObject({ searchMethod: 'text' });
    expect(await search({ query: 'forecast weather', asset: OTHER_ASSET })).toMatchObject({ searchMethod: 'text' });
    // A cursor walk of the URLs, one listing a page, every match once.
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await search({ query: 'example', limit: '1', ...(cursor ? { cursor } : {}) });
      expect(page.searchMethod).toBe('url');
      walked.push(...resources(page));
      cursor = page.pagination.cursor;
    } while (cursor);
    expect(walked).toEqual([WEATHER, MAPS, CHEAP]);
    // The hosted MCP server says so too.
    const hosted = (await hostedClient().callTool({ name: 'search_resources', arguments: { query: 'org geo' } })) as unknown as {
      structuredContent: { searchMethod: string; hits: Array<{ resource: string }> };
    };
    expect(hosted.structuredContent.searchMethod).toBe('url');
    expect(hosted.structuredContent.hits.map((h) => h.resource)).toEqual([MAPS, CHEAP]);
  });

  const hits = (result: unknown) => {
    const r = result as { isError?: boolean; structuredContent?: { hits: Array<{ resource: string }> } };
    expect(r.isError).toBeFalsy();
    return r.structuredContent!.hits.map((h) => h.resource).sort();
  };

  it('hosted MCP search_resources: url and maxUsdPrice', async () => {
    const call = (filters: Record<string, string>) =>
      hosted.callTool({ name: 'search_resources', arguments: { query: 'forecast data', filters } });
    expect(hits(await call({ url: 'Weather.example' }))).toEqual([WEATHER]);
    expect(hits(await call({ maxUsdPrice: '0.05', url: 'example.com' }))).toEqual([WEATHER, MAPS].sort());
    const refused = (await call({ maxUsdPrice: 'cheap' })) as { isError?: boolean };
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused)).toMatch(/svc_invalid_query_parameter.*maxUsdPrice/);
  });

  it.runIf(backend === 'SQLite')(
    'stdio MCP search_resources (a separate process asking svc over HTTP): url and maxUsdPrice',
    async () => {
      const stdio = new Client({ name: 'url-usd-filters-stdio', version: '1.0.0' });
      await stdio.connect(
        new StdioClientTransport({
          command: MCP_BUNDLE[0],
          args: MCP_BUNDLE[1],
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FACILITATOR_URL: server.url, SVC_MCP_TIMEOUT_MS: '20000' },
          stderr: 'pipe',
          cwd: join(MCP_MAIN, '../../..'),
        }),
      );
      try {
        const call = (filters: Record<string, string>) =>
          stdio.callTool({ name: 'search_resources', arguments: { query: 'forecast', filters } }, undefined, { timeout: 60_000 });
        expect(hits(await call({ url: 'cheap.EXAMPLE' }))).toEqual([CHEAP]);
        expect(hits(await call({ maxUsdPrice: '0.01' }))).toEqual([WEATHER]);
      } finally {
        await stdio.close();
      }
    },
    90_000,
  );
});
