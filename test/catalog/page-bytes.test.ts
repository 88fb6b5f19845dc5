/**
 * Discovery pages within what a stock bazaar client reads (src/catalog/page-bytes.ts,
 * docs/CATALOG.md "Page size"): a catalog of oversized listings (each near the 64 KiB extension
 * cap and the 2,048-character description cap) walked over real HTTP by the stock @x402/extensions
 * bazaar client whose fetch refuses an answer over 4 MiB, as the newer upstream client does
 * (MAX_DISCOVERY_RESPONSE_BYTES). The 2.27.0 on npm predates that cap, so the cap is its fetch's.
 * The same catalog searched with search_resources over MCP: at svc's hosted POST /mcp by the MCP
 * SDK's v1 and v2 clients through that capped fetch, and from the stdio tool server (as `npm run
 * mcp` starts it), whose answer lines are measured as they leave it: each whole JSON-RPC answer
 * within 4 MiB, though it holds each hit twice (structuredContent and its JSON text).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { withBazaar } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DISCOVERY_RESPONSE_BYTES } from '../../src/catalog/page-bytes.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { MCP_BUNDLE } from '../mcp/harness.ts';
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

interface SearchAnswer {
  hits: { resource: string }[];
  nextCursor: string | null;
  partialResults: boolean;
}

/** Walks search_resources by nextCursor with `call`; every listing once, shrunk pages saying so. */
async function walkSearch(call: (args: Record<string, unknown>) => Promise<{ isError?: boolean; structuredContent?: unknown }>) {
  const seen: string[] = [];
  let cursor: string | undefined;
  let shrunk = 0;
  for (let pages = 0; pages < LISTINGS; pages++) {
    const result = await call({ query: 'weather', limit: 100, ...(cursor ? { cursor } : {}) });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    const answer = result.structuredContent as SearchAnswer;
    seen.push(...answer.hits.map((h) => h.resource));
    if (answer.nextCursor === null) break;
    // Fewer than the 100 asked, and the page says more follow.
    expect(answer.hits.length).toBeLessThan(100);
    expect(answer.partialResults).toBe(true);
    shrunk++;
    cursor = answer.nextCursor;
  }
  expect(shrunk).toBeGreaterThan(0);
  expect(seen).toHaveLength(LISTINGS);
  expect(new Set(seen).size).toBe(LISTINGS);
}

describe('search_resources over MCP on the same catalog: every whole JSON-RPC answer within 4 MiB', () => {
  it.each([
    ['v1 (MCP 2025-11-25)', () => new ClientV1({ name: 'capped-v1', version: '1.0.0' }), (url: URL) => new HttpV1(url)],
    ['v2 (MCP 2026-07-28)', () => new ClientV2({ name: 'capped-v2', version: '1.0.0' }), (url: URL) => new HttpV2(url)],
  ] as const)(
    'hosted POST /mcp, SDK %s client',
    async (_, makeClient, makeTransport) => {
      const client = makeClient();
      await client.connect(makeTransport(new URL(`${server.url}/mcp`)));
      try {
        answered.length = 0;
        await walkSearch((args) => client.callTool({ name: 'search_resources', arguments: args }) as never);
        expect(Math.max(...answered)).toBeLessThanOrEqual(MAX_DISCOVERY_RESPONSE_BYTES);
        // Shrunk to what fits, not far below it.
        expect(Math.max(...answered)).toBeGreaterThan(MAX_DISCOVERY_RESPONSE_BYTES * 0.9);
      } finally {
        await client.close();
      }
    },
    120_000,
  );

  it('the stdio tool server: each answer line it writes is within 4 MiB', async () => {
    const child = spawn(MCP_BUNDLE[0], MCP_BUNDLE[1], {
      env: { PATH: process.env.PATH ?? '', FACILITATOR_URL: server.url },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const lines: string[] = [];
    const waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
      if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    });
    let nextId = 0;
    const request = (method: string, params: unknown) =>
      new Promise<{ result?: any; error?: unknown }>((resolve) => {
        const id = ++nextId;
        waiting.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    try {
      const init = await request('initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'capped-stdio', version: '1.0.0' },
      });
      expect(init.error).toBeUndefined();
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      await walkSearch(async (args) => {
        const answer = await request('tools/call', { name: 'search_resources', arguments: args });
        expect(answer.error).toBeUndefined();
        return answer.result;
      });
      const sizes = lines.map((line) => Buffer.byteLength(line, 'utf8') + 1);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_DISCOVERY_RESPONSE_BYTES);
      expect(Math.max(...sizes)).toBeGreaterThan(MAX_DISCOVERY_RESPONSE_BYTES * 0.9);
    } finally {
      child.kill();
    }
  }, 120_000);
});
