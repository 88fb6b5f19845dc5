/**
 * Both MCP revisions svc speaks (docs/MCP.md "Protocol revisions"), with the MCP project's own
 * clients: the SDK v1 client (@modelcontextprotocol/sdk, MCP 2025-11-25, initialize first) and the
 * SDK v2 client (@modelcontextprotocol/client, MCP 2026-07-28 after a server/discover probe), against
 * svc's hosted POST /mcp over real HTTP on loopback and against the stdio tool server spawned as
 * `npm run mcp` runs it. Each gets the same tools and the same hits; a 2025-11-25 client's ping and
 * logging/setLevel are answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { TOOLS } from '../../src/mcp/tools.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { settlement, tempCatalog } from '../catalog/fixtures.ts';
import { MCP_BUNDLE } from './harness.ts';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

let server: TestServer;
let store: ReturnType<typeof tempCatalog>;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  store = tempCatalog(Date.now());
  await store.catalog.recordSettlement(
    settlement({ url: 'https://w1.example.com/forecast', serviceName: 'Weather', description: 'weather forecast for a city' }),
  );
  server = await startTestServer({ catalog: store.catalog });
}, 120_000);

afterAll(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  await server?.close();
  store?.close();
});

const v1 = () => {
  const client = new ClientV1({ name: 'revisions-v1', version: '1.0.0' });
  open.push(client);
  return client;
};
const v2 = (mode: 'auto' | { pin: string } = 'auto') => {
  const client = new ClientV2({ name: 'revisions-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  open.push(client);
  return client;
};
const stdioParams = () => ({
  command: MCP_BUNDLE[0],
  args: MCP_BUNDLE[1],
  env: { PATH: process.env.PATH ?? '', FACILITATOR_URL: server.url },
  stderr: 'ignore' as const,
});

const hitsOf = (result: unknown) =>
  ((result as { structuredContent?: { hits?: { resource: string }[] } }).structuredContent?.hits ?? []).map((h) => h.resource);

describe('hosted POST /mcp', () => {
  it(`an SDK v1 client speaks ${LEGACY}: initialize, ping, logging/setLevel, tools/list, a search`, async () => {
    const client = v1();
    await client.connect(new HttpV1(new URL(`${server.url}/mcp`)));
    expect(client.getServerVersion()?.name).toBe('svc-discovery');
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, logging: {} });
    await expect(client.ping()).resolves.toEqual({});
    await expect(client.setLoggingLevel('warning')).resolves.toEqual({});
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_resources']);
    expect(hitsOf(await client.callTool({ name: 'search_resources', arguments: { query: 'weather forecast' } }))).toEqual([
      'https://w1.example.com/forecast',
    ]);
  });

  it(`an SDK v2 client negotiates ${MODERN} (server/discover, no initialize) and finds the same`, async () => {
    const client = v2();
    await client.connect(new HttpV2(new URL(`${server.url}/mcp`)));
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(client.getServerVersion()?.name).toBe('svc-discovery');
    const { tools } = await client.listTools();
    expect(tools).toEqual([JSON.parse(JSON.stringify(TOOLS.find((t) => t.name === 'search_resources')))]);
    expect(hitsOf(await client.callTool({ name: 'search_resources', arguments: { query: 'weather forecast' } }))).toEqual([
      'https://w1.example.com/forecast',
    ]);
  });

  it(`an SDK v2 client pinned to ${MODERN} is served; in its legacy mode it gets ${LEGACY}`, async () => {
    const pinned = v2({ pin: MODERN });
    await pinned.connect(new HttpV2(new URL(`${server.url}/mcp`)));
    expect(pinned.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect((await pinned.listTools()).tools).toHaveLength(1);
    const legacy = new ClientV2({ name: 'revisions-v2-legacy', version: '1.0.0' });
    open.push(legacy);
    await legacy.connect(new HttpV2(new URL(`${server.url}/mcp`)));
    expect(legacy.getNegotiatedProtocolVersion()).toBe(LEGACY);
    await expect(legacy.setLoggingLevel('error')).resolves.toEqual({});
    expect((await legacy.listTools()).tools).toHaveLength(1);
  });

  it('a request for a revision svc does not speak is refused with the versions it does', async () => {
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'future', version: '1' },
          },
        },
      }),
    });
    const body = (await res.json()) as { error?: { code: number; data?: { supported?: string[] } } };
    expect(body.error?.code).toBe(-32022);
    expect(body.error?.data?.supported).toContain(MODERN);
  });
  it(`a ${MODERN} header without the request's _meta envelope is answered as the ${LEGACY} request its body is`, async () => {
    const res = await api(server.url).request('POST', '/mcp', {
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    expect(res.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['search_resources']);
  });
});

describe('the stdio tool server', () => {
  it(`an SDK v1 client speaks ${LEGACY}: ping, logging/setLevel, both tools, a search`, async () => {
    const client = v1();
    await client.connect(new StdioV1(stdioParams()));
    expect(client.getServerVersion()?.name).toBe('svc-agent-tools');
    await expect(client.ping()).resolves.toEqual({});
    await expect(client.setLoggingLevel('info')).resolves.toEqual({});
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_resources', 'paid_call']);
    expect(hitsOf(await client.callTool({ name: 'search_resources', arguments: { query: 'weather forecast' } }))).toEqual([
      'https://w1.example.com/forecast',
    ]);
  }, 60_000);

  it(`an SDK v2 client negotiates ${MODERN} and gets the same tools and hits`, async () => {
    const client = v2();
    await client.connect(new StdioV2(stdioParams()));
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect((await client.listTools()).tools).toEqual(JSON.parse(JSON.stringify(TOOLS)));
    expect(hitsOf(await client.callTool({ name: 'search_resources', arguments: { query: 'weather forecast' } }))).toEqual([
      'https://w1.example.com/forecast',
    ]);
  }, 60_000);
});
