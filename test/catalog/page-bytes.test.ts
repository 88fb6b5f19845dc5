/**
 * Discovery pages within what a stock bazaar client reads (src/catalog/page-bytes.ts,
 * docs/CATALOG.md "Page size"): a catalog of oversized listings (each near the 64 KiB extension
 * cap and the 2,048-character description cap) walked over real HTTP by the stock @x402/extensions
 * bazaar client whose fetch refuses an answer over 4 MiB, as the newer upstream client does
 * (MAX_DISCOVERY_RESPONSE_BYTES). The 2.27.0 on npm predates that cap, so the cap is its fetch's.
 */
import { HTTPFacilitatorClient } from '@x402/core/http';
import { withBazaar } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DISCOVERY_RESPONSE_BYTES } from '../../src/catalog/page-bytes.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { PAY_TO_A, settlement, tempCatalog } from './fixtures.ts';

const LISTINGS = 90;
/** An extension block just under the catalog's 64 KiB cap (bazaar_extensions_too_large). */
const FILLER = 60_000;

let t: ReturnType<typeof tempCatalog>;
let server: TestServer;
const answered: number[] = [];

/** The upstream client's cap, applied to what it fetches: an answer over 4 MiB is refused, not parsed. */
const realFetch = globalThis.fetch;
async function cappedFetch(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
  const res = await realFetch(input, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  answered.push(bytes.length);
  if (bytes.length > MAX_DISCOVERY_RESPONSE_BYTES)
    throw new Error(`discovery response of ${bytes.length} bytes exceeds MAX_DISCOVERY_RESPONSE_BYTES`);
  return new Response(bytes, { status: res.status, headers: res.headers });
}

beforeAll(async () => {
  t = tempCatalog();
  for (let i = 0; i < LISTINGS; i++) {
    const bazaar = {
      info: { input: { type: 'http', method: 'GET', queryParams: { note: `${i} ${'é'.repeat(FILLER / 2)}` } } },
      schema: { type: 'object' },
    };
    const outcome = await t.catalog.recordSettlement(
      settlement({ url: `https://big${i}.example.com/weather`, payTo: PAY_TO_A, description: `weather ${'w'.repeat(2000)}`, bazaar }),
    );
    expect(outcome, `listing ${i}`).toEqual({ status: 'success' });
    t.tick(1000);
  }
  server = await startTestServer({ catalog: t.catalog });
  globalThis.fetch = cappedFetch;
}, 120_000);
afterAll(async () => {
  globalThis.fetch = realFetch;
  await server?.close();
  t?.close();
});

describe('a catalog of oversized listings, read by a client that refuses answers over 4 MiB', () => {
  it('a full page would be over the cap: the catalog is what the test says', async () => {
    const one = await api(server.url).get('/discovery/resources?limit=1');
    const listingBytes = Buffer.byteLength(JSON.stringify(one.body.items[0]));
    expect(listingBytes * 100).toBeGreaterThan(MAX_DISCOVERY_RESPONSE_BYTES);
    expect(one.body.pagination.total).toBe(LISTINGS);
  });

  it('the list walked by offset += pagination.limit visits every listing once, every page within 4 MiB and shrunk', async () => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: server.url }));
    const seen: string[] = [];
    let offset = 0;
    let shrunk = 0;
    answered.length = 0;
    for (let pages = 0; pages < LISTINGS; pages++) {
      const page = await client.extensions.bazaar.listResources({ limit: 100, offset });
      expect(page.pagination.total).toBe(LISTINGS);
      // The page says the size it was served with: 100 asked, fewer when the cap shrank it.
      expect(page.items.length).toBe(Math.min(page.pagination.limit, LISTINGS - offset));
      if (page.pagination.limit < 100) shrunk++;
      seen.push(...page.items.map((item) => item.resource));
      offset += page.pagination.limit;
      if (offset >= page.pagination.total) break;
    }
    expect(shrunk).toBeGreaterThan(0);
    expect(seen).toHaveLength(LISTINGS);
    expect(new Set(seen).size).toBe(LISTINGS);
    expect(Math.max(...answered)).toBeLessThanOrEqual(MAX_DISCOVERY_RESPONSE_BYTES);
    // Shrunk to what fits, not far below it.
    expect(Math.max(...answered)).toBeGreaterThan(MAX_DISCOVERY_RESPONSE_BYTES * 0.9);
  });

  it('search walked by cursor finds every match once, every page within 4 MiB, partialResults on each shrunk page', async () => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: server.url }));
    const seen: string[] = [];
    let cursor: string | undefined;
    answered.length = 0;
    for (let pages = 0; pages < LISTINGS; pages++) {
      const page = await client.extensions.bazaar.search({ query: 'weather', limit: 100, ...(cursor ? { cursor } : {}) });
      seen.push(...page.resources.map((item) => item.resource));
      const pagination = page.pagination as { limit: number; cursor: string | null };
      expect(page.resources.length).toBeLessThanOrEqual(pagination.limit);
      const next = pagination.cursor;
      if (next === null) break;
      expect(page.partialResults).toBe(true);
      expect(pagination.limit).toBeLessThan(100);
      cursor = next;
    }
    expect(new Set(seen).size).toBe(LISTINGS);
    expect(seen).toHaveLength(LISTINGS);
    expect(Math.max(...answered)).toBeLessThanOrEqual(MAX_DISCOVERY_RESPONSE_BYTES);
  });

  it('GET /discovery/merchant of the seller of them all stays within 4 MiB; its limit says how many', async () => {
    const res = await cappedFetch(`${server.url}/discovery/merchant?payTo=${PAY_TO_A}&limit=100`);
    const body = (await res.json()) as { resources: unknown[]; pagination: { limit: number; total: number } };
    expect(res.status).toBe(200);
    expect(body.pagination.total).toBe(LISTINGS);
    expect(body.pagination.limit).toBe(body.resources.length);
    expect(body.resources.length).toBeLessThan(LISTINGS);
  });
});
