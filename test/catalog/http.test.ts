/**
 * The catalog over real HTTP on loopback: POST /settle's EXTENSION-RESPONSES header from the real
 * hook, and GET /discovery/resources and /discovery/search over a real catalog file. The payment
 * scheme is the shared FakeScheme (the named boundary, PaymentScheme in src/scheme/types.ts): it settles what
 * the test says. Every response is checked against openapi.yaml by the contract helper.
 */
import { unlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/contract.ts';
import { exactKind, FakeScheme } from '../helpers/fake-scheme.ts';
import { startTestServer } from '../helpers/server.ts';
import { PAY_TO_A, PAY_TO_B, settlement, tempCatalog, type SettlementOptions } from './fixtures.ts';

const HASH = 'cd'.repeat(32);
const PAYER = 'GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG';

type Listing = Record<string, any>;
const scheme = new FakeScheme({
  kinds: [exactKind('stellar:testnet'), exactKind('stellar:pubnet')],
  settle: { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER },
});
let t: ReturnType<typeof tempCatalog>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;

beforeAll(async () => {
  t = tempCatalog();
  server = await startTestServer({ scheme, catalog: t.catalog });
  client = api(server.url);
});
afterAll(async () => {
  await server.close();
  t.close();
});

async function settle(o: SettlementOptions) {
  const s = settlement(o);
  const res = await client.post('/settle', { x402Version: 2, ...s });
  const header = res.headers.get('extension-responses');
  return { res, bazaar: header === null ? null : JSON.parse(Buffer.from(header, 'base64').toString('utf8')).bazaar };
}
const q = (params: Record<string, string | number | undefined>) =>
  new URLSearchParams(
    Object.entries(params).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]])),
  ).toString();

describe('POST /settle → catalog hook', () => {
  it('creates a listing and reports success in EXTENSION-RESPONSES; the body is the scheme result', async () => {
    const { res, bazaar } = await settle({
      url: 'https://h1.example.com/weather?x=1',
      serviceName: 'Weather',
      description: 'forecast by city',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER });
    expect(bazaar).toEqual({ status: 'success' });
    const list = await client.get(`/discovery/resources?${q({ payTo: PAY_TO_A })}`);
    expect((list.body.items as Listing[]).map((l) => l.resource)).toContain('https://h1.example.com/weather');
  });

  it('rejections carry status, rejectedReason and code, and the body is unchanged', async () => {
    const { res, bazaar } = await settle({ url: 'https://h2.example.com/', bazaar: { info: 'nope' } });
    expect(res.body).toEqual({ success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER });
    expect(bazaar).toMatchObject({ status: 'rejected', code: 'bazaar_extension_not_object' });
    expect(bazaar.rejectedReason).toMatch(/\S/);
    const stolen = await settle({ url: 'https://h1.example.com/weather', payTo: PAY_TO_B, description: 'stolen' });
    expect(stolen.bazaar).toMatchObject({ status: 'rejected', code: 'bazaar_listing_owned_by_other_payee' });
    expect(stolen.res.body.success).toBe(true);
  });

  it('omits the header when no extension was echoed and when the settlement failed (nothing listed)', async () => {
    expect((await settle({ url: 'https://h3.example.com/', extensions: {} })).bazaar).toBeNull();
    scheme.settleResult = {
      success: false,
      transaction: '',
      network: 'stellar:testnet',
      errorReason: 'settle_exact_stellar_transaction_failed',
    };
    try {
      const failed = await settle({ url: 'https://h4.example.com/' });
      expect(failed.res.body.success).toBe(false);
      expect(failed.bazaar).toBeNull();
    } finally {
      scheme.settleResult = { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER };
    }
    const all = await client.get('/discovery/resources?limit=100');
    const hosts = (all.body.items as Listing[]).map((l) => new URL(l.resource).host);
    expect(hosts).not.toContain('h3.example.com');
    expect(hosts).not.toContain('h4.example.com');
  });
});

describe('GET /discovery/resources', () => {
  beforeAll(async () => {
    for (let i = 0; i < 7; i++)
      await settle({
        url: `https://list${i}.example.com/r`,
        network: i % 2 ? 'stellar:pubnet' : 'stellar:testnet',
        description: `listing ${i}`,
      });
    await settle({ url: 'https://mcp.example.com/mcp', mcpTool: 'summarize' });
  });

  it('pages with limit/offset/total, filters, and clamps limit', async () => {
    const first = await client.get(`/discovery/resources?${q({ limit: 3 })}`);
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(3);
    expect(first.body.pagination).toMatchObject({ limit: 3, offset: 0 });
    const total = first.body.pagination.total as number;
    const pages: string[] = [];
    for (let offset = 0; offset < total; offset += 3) {
      const page = await client.get(`/discovery/resources?${q({ limit: 3, offset })}`);
      pages.push(...(page.body.items as Listing[]).map((l) => l.resource));
    }
    expect(new Set(pages).size).toBe(total);
    expect((await client.get('/discovery/resources?limit=500')).body.pagination.limit).toBe(100);
    expect((await client.get('/discovery/resources?limit=0')).body.pagination.limit).toBe(1);
    const mcp = await client.get(`/discovery/resources?${q({ type: 'mcp' })}`);
    expect((mcp.body.items as Listing[]).map((l) => l.resource)).toEqual(['https://mcp.example.com/mcp']);
    const pubnet = await client.get(`/discovery/resources?${q({ network: 'stellar:pubnet', scheme: 'exact', extensions: 'bazaar' })}`);
    expect(pubnet.body.pagination.total).toBe(3);
  });

  it('refuses non-numeric and repeated parameters with svc_invalid_query_parameter', async () => {
    for (const query of ['limit=ten', 'offset=-1', 'offset=x', 'type=http&type=mcp']) {
      const res = await client.get(`/discovery/resources?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_query_parameter');
    }
  });
});

describe('GET /discovery/search', () => {
  beforeAll(async () => {
    for (let i = 0; i < 9; i++)
      await settle({
        url: `https://s${i}.example.com/r`,
        serviceName: i % 3 === 0 ? 'Geocoder' : `Svc ${i}`,
        description: `geocode address ${i}`,
      });
  });

  it('ranks, pages with a cursor visiting each match once, and reports partialResults and the page size as the list does', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: any } = await client.get(
        `/discovery/search?${q({ query: 'geocoder address', limit: 4, ...(cursor ? { cursor } : {}) })}`,
      );
      expect(res.status).toBe(200);
      // The page size, as on the list; the final page may hold fewer.
      expect(res.body.pagination.limit).toBe(4);
      expect(res.body.resources.length).toBeLessThanOrEqual(4);
      expect(res.body.partialResults).toBe(res.body.pagination.cursor !== null);
      expect(res.body).not.toHaveProperty('items');
      seen.push(...(res.body.resources as Listing[]).map((l) => l.resource));
      cursor = res.body.pagination.cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
    // The three "Geocoder" services match both terms, one in the heaviest field: they come first.
    expect(seen.slice(0, 3).sort()).toEqual(['https://s0.example.com/r', 'https://s3.example.com/r', 'https://s6.example.com/r']);
  });

  it('400 svc_missing_search_query for a missing or blank query', async () => {
    for (const query of ['', 'query=', 'query=%20%20', 'limit=5']) {
      const res = await client.get(`/discovery/search?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_missing_search_query');
    }
  });

  it('400 svc_invalid_search_cursor for a foreign, tampered or mismatched cursor', async () => {
    const first = await client.get(`/discovery/search?${q({ query: 'geocode', limit: 2 })}`);
    const cursor = first.body.pagination.cursor as string;
    for (const params of [
      { query: 'geocode', cursor: 'not-a-cursor' },
      { query: 'geocode', cursor: cursor.slice(0, -3) + 'AAA' },
      { query: 'address', cursor },
      { query: 'geocode', type: 'mcp', cursor },
    ]) {
      const res = await client.get(`/discovery/search?${q(params)}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_search_cursor');
    }
  });

  it('hostile query syntax is just text', async () => {
    for (const query of ['"', 'NEAR(geocode address)', 'geocode*', '-geocode', 'a OR', "' OR 1=1 --"]) {
      const res = await client.get(`/discovery/search?${q({ query })}`);
      expect(res.status).toBe(200);
    }
  });
});

describe('broken catalog over HTTP', () => {
  it('a deleted database: settle still succeeds without the header; discovery answers 503 svc_catalog_unavailable', async () => {
    const broken = tempCatalog();
    const brokenServer = await startTestServer({ scheme, catalog: broken.catalog });
    try {
      const c = api(brokenServer.url);
      // Both lanes have opened the file before it goes (a thread that started later would create a fresh one).
      expect((await c.get('/discovery/resources')).status).toBe(200);
      const first = await c.post('/settle', { x402Version: 2, ...settlement({ url: 'https://a.example.com/' }) });
      expect(first.headers.get('extension-responses')).not.toBeNull();
      unlinkSync(broken.dbPath);
      const started = performance.now();
      const res = await c.post('/settle', { x402Version: 2, ...settlement({ url: 'https://b.example.com/' }) });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER });
      expect(res.headers.get('extension-responses')).toBeNull();
      for (const path of ['/discovery/resources', '/discovery/search?query=weather']) {
        const r = await c.get(path);
        expect(r.status).toBe(503);
        expect(r.body.error.code).toBe('svc_catalog_unavailable');
      }
    } finally {
      await brokenServer.close();
      broken.close();
    }
  });
});
