/**
 * Agents' sentences (docs/CATALOG.md "The search budget"): a 13-word sentence and a 400-character
 * query are answered 200 with the right listing first over real HTTP on loopback, the hosted MCP
 * server (POST /mcp) and the stdio MCP tool server (a separate process), on both stores; a
 * 2,049-character query is 400 naming the cap everywhere. With the budget lowered to a few rows
 * (as a small catalog needs to reach it), a long query ranks exactly as a query of its searched
 * terms alone, says which were dropped, and a cursor walk keeps its first page's terms while a
 * write moves the terms' rows.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';
import { api } from '../helpers/contract.ts';
import { BACKENDS, freshCatalogDatabase } from '../helpers/postgres.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { MCP_BUNDLE, MCP_MAIN } from '../mcp/harness.ts';
import { settlement, tempCatalog } from './fixtures.ts';

const SENTENCE = 'find an api that returns the current weather forecast for a city please';
const LONG = (
  'Hello! I am building a travel assistant and I need a paid api that returns the current weather forecast ' +
  'for a city, ideally with temperature, wind and rain for the next few days. It should accept the name of ' +
  'the city as a query parameter and answer in JSON. Please find the best one you can for my agent, thanks ' +
  'a lot; price matters less than the quality of the forecast data for each city.'
).padEnd(400, ' weather');
const TOO_LONG = 'w'.repeat(2049);

/** Listings sharing the sentence's common words, and the one it asks for. */
const LISTINGS = [
  {
    url: 'https://rates.example.com/fx',
    serviceName: 'FX rates',
    description: 'an api that returns the current exchange rate for a currency pair',
  },
  {
    url: 'https://guide.example.com/city',
    serviceName: 'City guide',
    description: 'find restaurants and museums in a city, please rate them',
  },
  { url: 'https://news.example.com/top', serviceName: 'Top news', description: 'returns the current headlines for a country' },
  {
    url: 'https://wx.example.com/forecast',
    serviceName: 'Weather forecast',
    tags: ['weather', 'forecast'],
    description: 'current weather forecast for any city: temperature, wind and rain',
  },
  { url: 'https://maps.example.com/geo', serviceName: 'Geocoder', description: 'find the coordinates of a city or an address' },
  { url: 'https://stocks.example.com/q', serviceName: 'Stock quotes', description: 'an api for the current price of a stock' },
];
const WEATHER = 'https://wx.example.com/forecast';
/** Listings made of the sentence's function words, as a real catalog is: they hold most of "find an api that returns the … for a". */
const NOUNS = ['price', 'score', 'status', 'balance', 'schedule', 'ranking', 'supply', 'volume', 'quote', 'index', 'rating', 'count'];
const FILLERS = Array.from({ length: 24 }, (_, i) => ({
  url: `https://s${i}.example.com/${NOUNS[i % NOUNS.length]}`,
  serviceName: `Service ${i}`,
  description: `an api that returns the current ${NOUNS[i % NOUNS.length]} for a ${NOUNS[(i + 5) % NOUNS.length]}; find more on our site`,
}));

describe.each(BACKENDS)('%s', (backend) => {
  let t: ReturnType<typeof tempCatalog>;
  let server: TestServer;
  let hosted: Client;
  beforeAll(async () => {
    t = tempCatalog(Date.now(), { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    // Only the weather listing keeps the fixture's parameters (a city): the others have none.
    for (const listing of [...LISTINGS, ...FILLERS])
      await t.catalog.recordSettlement(settlement(listing.url === WEATHER ? listing : { ...listing, queryParams: {}, paramSchema: {} }));
    server = await startTestServer({ catalog: t.catalog });
    hosted = new Client({ name: 'long-queries', version: '1.0.0' });
    await hosted.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 120_000);
  afterAll(async () => {
    await hosted?.close();
    await server?.close();
    t?.close();
  });

  const http = (query: string) => api(server.url).get(`/discovery/search?${new URLSearchParams({ query, limit: '5' }).toString()}`);

  it('GET /discovery/search: the sentence and the 400-character query find the weather forecast first; 2,049 characters are 400', async () => {
    expect(LONG.length).toBe(400);
    for (const query of [SENTENCE, LONG]) {
      const res = await http(query);
      expect(res.status).toBe(200);
      expect(res.body.resources[0].resource).toBe(WEATHER);
      // Function words ("the", "for", and "api", "find" in a catalog of APIs) are searched in neither list.
      expect(res.body.searchedTerms).toEqual(expect.arrayContaining(['weather', 'forecast']));
      for (const word of ['the', 'api', 'for', 'find']) {
        expect(res.body.searchedTerms).not.toContain(word);
        expect(res.body.droppedTerms).not.toContain(word);
      }
      expect(res.body.relevance).not.toBe('none');
      expect(res.body.resources[0].match.terms).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ term: 'weather', match: 'exact', fields: expect.arrayContaining(['serviceName']) }),
        ]),
      );
    }
    // A word no listing holds is in neither list.
    const unknown = await http(`${SENTENCE} zyzzyva`);
    expect(unknown.body.searchedTerms).not.toContain('zyzzyva');
    expect(unknown.body.droppedTerms).not.toContain('zyzzyva');
    const refused = await http(TOO_LONG);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'svc_invalid_query_parameter',
      reason: expect.stringMatching(/2049 characters.*at most 2048/),
    });
  });

  it('hosted MCP search_resources: the same first listing, what was searched, and the same refusal', async () => {
    for (const query of [SENTENCE, LONG]) {
      const result = (await hosted.callTool({ name: 'search_resources', arguments: { query, limit: 5 } })) as {
        isError?: boolean;
        structuredContent?: any;
      };
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent.hits[0].resource).toBe(WEATHER);
      expect(result.structuredContent.searchedTerms).toEqual(expect.arrayContaining(['weather', 'forecast']));
      expect(result.structuredContent.searchedTerms).not.toContain('the');
    }
    const refused = (await hosted.callTool({ name: 'search_resources', arguments: { query: TOO_LONG } })) as {
      isError?: boolean;
      structuredContent?: any;
    };
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused)).toMatch(/svc_invalid_query_parameter.*at most 2048/);
  });

  it.runIf(backend === 'SQLite')(
    'stdio MCP search_resources (a separate process asking svc over HTTP): the same',
    async () => {
      const transport = new StdioClientTransport({
        command: MCP_BUNDLE[0],
        args: MCP_BUNDLE[1],
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FACILITATOR_URL: server.url, SVC_MCP_TIMEOUT_MS: '20000' },
        stderr: 'pipe',
        cwd: join(MCP_MAIN, '../../..'),
      });
      const stdio = new Client({ name: 'long-queries-stdio', version: '1.0.0' });
      await stdio.connect(transport);
      try {
        for (const query of [SENTENCE, LONG]) {
          const result = (await stdio.callTool({ name: 'search_resources', arguments: { query, limit: 5 } }, undefined, {
            timeout: 60_000,
          })) as any;
          expect(result.isError).toBeFalsy();
          expect(result.structuredContent.hits[0].resource).toBe(WEATHER);
          expect(result.structuredContent.searchedTerms).toEqual(expect.arrayContaining(['weather', 'forecast']));
          expect(result.structuredContent.searchedTerms).not.toContain('the');
        }
        const refused = (await stdio.callTool({ name: 'search_resources', arguments: { query: TOO_LONG } })) as any;
        expect(refused.isError).toBe(true);
        expect(JSON.stringify(refused)).toMatch(/svc_invalid_query_parameter.*at most 2048/);
      } finally {
        await stdio.close();
      }
    },
    90_000,
  );

  it('past a budget of 3 rows: the rank over the searched terms alone, the dropped ones named, a cursor walk on its first terms', async () => {
    type Search = (query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }) => Promise<SearchPage>;
    let search: Search;
    let close: () => Promise<void> | void;
    const now = () => new Date();
    if (backend === 'SQLite') {
      const own = new CatalogStore(t.dbPath, { searchRowBudget: 3 });
      search = async (query, filters, page) => own.search(query, filters, page, now(), 2);
      close = () => own.close();
    } else {
      const own = await PostgresCatalogStore.open(t.databaseUrl!, { searchRowBudget: 3 });
      search = (query, filters, page) => own.search(query, filters, page, now(), 2);
      close = () => own.close();
    }
    try {
      const first = await search(SENTENCE, {}, { limit: 1 });
      expect(first.searchMethod).toBe('text_budgeted');
      expect(first.searchedTerms.length).toBeGreaterThan(0);
      expect(first.droppedTerms).toEqual(expect.arrayContaining(['city']));
      // Rarest first while their rows total at most 3: weather and forecast (one listing each) among them.
      expect(first.searchedTerms).toEqual(expect.arrayContaining(['weather', 'forecast']));
      expect(first.searchedTerms.length).toBeLessThanOrEqual(3);
      // The rank is the contract's rank over the searched terms: the same pages as a query of them alone.
      const alone = await search(first.searchedTerms.join(' '), {}, { limit: 10 });
      const all = await search(SENTENCE, {}, { limit: 10 });
      expect(all.resources.map((r) => r.resource)).toEqual(alone.resources.map((r) => r.resource));
      // A write between pages gives a searched term more rows than the budget: the walk keeps its terms.
      const walked = [first.resources[0]!.resource];
      await t.catalog.recordSettlement(
        settlement({
          url: 'https://more.example.com/a',
          description: `${first.searchedTerms.join(' ')} ${first.searchedTerms.join(' ')} again`,
        }),
      );
      await t.catalog.recordSettlement(settlement({ url: 'https://more.example.com/b', description: first.searchedTerms.join(' ') }));
      let cursor = first.pagination.cursor;
      while (cursor) {
        const next = await search(SENTENCE, {}, { limit: 1, cursor });
        expect(next.searchedTerms).toEqual(first.searchedTerms);
        walked.push(...next.resources.map((r) => r.resource));
        cursor = next.pagination.cursor;
      }
      expect(walked).toEqual(alone.resources.map((r) => r.resource));
    } finally {
      await close();
    }
  }, 60_000);
});
