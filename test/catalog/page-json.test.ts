/**
 * The discovery pages as JSON text serialized on a reader thread (CatalogPort.listJson and
 * searchJson, docs/CATALOG.md "Threads"): the same bytes as the page object stringified on the
 * main thread, through the catalog and over real HTTP, where both GET routes send that text with
 * the Content-Type and Content-Length Koa gives a JSON object. The oracle is the object path of
 * the same catalog (list, search), which POST /mcp's search_resources still takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog, CatalogPort } from '../../src/catalog/types.ts';
import type { DiscoveryFilters } from '../../src/filters.ts';
import { exactKind, FakeScheme } from '../helpers/fake-scheme.ts';
import { startTestServer } from '../helpers/server.ts';
import { PAY_TO_A, PAY_TO_B, settlement, tempCatalog } from './fixtures.ts';

let t: ReturnType<typeof tempCatalog>;
let server: Awaited<ReturnType<typeof startTestServer>>;
/** The same catalog without the JSON-text methods: the routes serialize the object (a catalog for tests). */
let objectsOnly: Awaited<ReturnType<typeof startTestServer>>;

const scheme = new FakeScheme({ kinds: [exactKind('stellar:testnet'), exactKind('stellar:pubnet')] });
const WORDS = ['weather', 'forecast', 'quotes', 'stock', 'translate', 'Lisboa', 'São', 'Paulo', 'émoji', '天気', 'rain'];

function withoutJsonText(catalog: Catalog): CatalogPort {
  return {
    recordSettlement: (settled, options) => catalog.recordSettlement(settled, options),
    list: (filters, page, requester) => catalog.list(filters, page, requester),
    search: (query, filters, page, requester) => catalog.search(query, filters, page, requester),
  };
}

beforeAll(async () => {
  t = tempCatalog();
  // Listings with non-ASCII text (the byte length differs from the string's) and both kinds.
  for (let i = 0; i < 45; i++) {
    const words = [WORDS[i % WORDS.length], WORDS[(i * 7 + 3) % WORDS.length], WORDS[(i * 5 + 1) % WORDS.length]];
    const outcome = await t.catalog.recordSettlement(
      settlement({
        url: `https://h${i % 9}.example.com/api/${i}`,
        payTo: i % 3 === 0 ? PAY_TO_B : PAY_TO_A,
        network: i % 4 === 0 ? 'stellar:pubnet' : 'stellar:testnet',
        amount: String(1000 * (i + 1)),
        description: `${words.join(' ')} — listing ${i} “quoted”`,
        serviceName: `Service ${i} ${words[0]}`,
        ...(i % 5 === 0 ? { mcpTool: `tool_${i}` } : {}),
      }),
    );
    expect(outcome).toEqual({ status: 'success' });
    t.tick(1000);
  }
  server = await startTestServer({ scheme, catalog: t.catalog });
  objectsOnly = await startTestServer({ scheme, catalog: withoutJsonText(t.catalog) });
});
afterAll(async () => {
  await server?.close();
  await objectsOnly?.close();
  t?.close();
});

const LISTS: Array<{ filters: DiscoveryFilters; limit: number; offset: number }> = [
  { filters: {}, limit: 20, offset: 0 },
  { filters: {}, limit: 7, offset: 40 },
  { filters: {}, limit: 100, offset: 0 },
  { filters: { payTo: PAY_TO_B }, limit: 5, offset: 2 },
  { filters: { network: 'stellar:pubnet' }, limit: 20, offset: 0 },
  { filters: {}, limit: 20, offset: 1000 },
];
const SEARCHES: Array<{ query: string; filters: DiscoveryFilters; limit: number }> = [
  { query: 'weather', filters: {}, limit: 4 },
  { query: 'forecast quotes', filters: {}, limit: 3 },
  { query: 'São Paulo', filters: { network: 'stellar:testnet' }, limit: 5 },
  { query: '天気 rain émoji', filters: {}, limit: 2 },
  { query: 'nothingmatchesthis', filters: {}, limit: 20 },
];

/** Every page of a search, by its cursors, through the object path. */
async function searchPages(query: string, filters: DiscoveryFilters, limit: number) {
  const pages: Array<{ cursor: string | undefined; page: Awaited<ReturnType<Catalog['search']>> }> = [];
  let cursor: string | undefined;
  do {
    const page = await t.catalog.search(query, filters, { limit, ...(cursor === undefined ? {} : { cursor }) });
    pages.push({ cursor, page });
    cursor = page.pagination.cursor ?? undefined;
  } while (cursor !== undefined && pages.length < 30);
  return pages;
}

const urlOf = (base: string, route: string, params: Record<string, string | number | undefined>) =>
  `${base}${route}?${new URLSearchParams(Object.entries(params).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]]))).toString()}`;

/** The body bytes and the two headers the page text must carry. */
async function fetchPage(url: string) {
  const res = await fetch(url);
  const bytes = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    length: res.headers.get('content-length'),
    text: bytes.toString('utf8'),
    bytes,
  };
}

describe('discovery pages as JSON text from the reader thread', () => {
  it('listJson is JSON.stringify of list, byte for byte, on every page asked', async () => {
    for (const { filters, limit, offset } of LISTS) {
      const text = await t.catalog.listJson(filters, { limit, offset });
      expect(text).toBe(JSON.stringify(await t.catalog.list(filters, { limit, offset })));
    }
  });

  it('searchJson is JSON.stringify of search, byte for byte, on every page of each walk (cursors included)', async () => {
    let walked = 0;
    for (const { query, filters, limit } of SEARCHES) {
      for (const { cursor, page } of await searchPages(query, filters, limit)) {
        const text = await t.catalog.searchJson(query, filters, { limit, ...(cursor === undefined ? {} : { cursor }) });
        expect(text).toBe(JSON.stringify(page));
        walked++;
      }
    }
    expect(walked).toBeGreaterThan(SEARCHES.length); // some walks went past their first page
  });

  it('GET /discovery/resources and /discovery/search send those bytes with the JSON object headers, as the object path does', async () => {
    const cases = [
      ...LISTS.map(({ filters, limit, offset }) => ({ route: '/discovery/resources', params: { ...filters, limit, offset } })),
      ...SEARCHES.map(({ query, filters, limit }) => ({ route: '/discovery/search', params: { ...filters, query, limit } })),
    ];
    for (const { route, params } of cases) {
      const sent = await fetchPage(urlOf(server.url, route, params));
      const oracle = await fetchPage(urlOf(objectsOnly.url, route, params));
      expect(sent.status).toBe(200);
      expect(sent.type).toBe('application/json; charset=utf-8');
      expect(oracle.type).toBe('application/json; charset=utf-8');
      expect(sent.length).toBe(String(sent.bytes.length));
      expect(sent.text).toBe(oracle.text);
      expect(sent.length).toBe(oracle.length);
    }
    // A cursor page over HTTP too.
    const first = await t.catalog.search('weather', {}, { limit: 2 });
    const cursor = first.pagination.cursor!;
    expect(cursor).toEqual(expect.any(String));
    const next = await fetchPage(urlOf(server.url, '/discovery/search', { query: 'weather', limit: 2, cursor }));
    expect(next.text).toBe(JSON.stringify(await t.catalog.search('weather', {}, { limit: 2, cursor })));
  });

  it("keeps the error answers: a bad cursor is 400 with the catalog's code, in the JSON error shape", async () => {
    const sent = await fetchPage(urlOf(server.url, '/discovery/search', { query: 'weather', cursor: 'v2.AAAA' }));
    const oracle = await fetchPage(urlOf(objectsOnly.url, '/discovery/search', { query: 'weather', cursor: 'v2.AAAA' }));
    expect(sent.status).toBe(400);
    expect(sent.type).toBe('application/json; charset=utf-8');
    expect({ status: sent.status, body: JSON.parse(sent.text) }).toEqual({ status: oracle.status, body: JSON.parse(oracle.text) });
  });
});
