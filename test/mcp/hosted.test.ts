/**
 * svc's hosted discovery over MCP (POST /mcp, docs/MCP.md "Hosted discovery"): a real MCP SDK client
 * over streamable HTTP against a real svc on loopback, whose catalog (a real SQLite file) was
 * filled by the catalog write of a settlement (recordSettlement, test/catalog/fixtures.ts). The
 * tool is the stdio server's search_resources and finds what GET /discovery/search finds; the
 * transport's refusals and svc's own (405, 406, 415, 400, 413, 429) are checked against openapi.yaml.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toHit } from '../../src/mcp/search.ts';
import { TOOLS } from '../../src/mcp/tools.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { settlement, tempCatalog } from '../catalog/fixtures.ts';

const ACCEPT = 'application/json, text/event-stream';
const JSON_RPC_HEADERS = { accept: ACCEPT, 'content-type': 'application/json' };

let server: TestServer;
let limited: TestServer;
let store: ReturnType<typeof tempCatalog>;
let client: Client;

beforeAll(async () => {
  store = tempCatalog(Date.now());
  for (let i = 0; i < 12; i++) {
    await store.catalog.recordSettlement(
      settlement({ url: `https://w${i}.example.com/forecast`, serviceName: `Weather ${i}`, description: `weather forecast for city ${i}` }),
    );
  }
  await store.catalog.recordSettlement(
    settlement({ url: 'https://tools.example.com/mcp', mcpTool: 'weather_alerts', description: 'weather alerts' }),
  );
  server = await startTestServer({ catalog: store.catalog });
  limited = await startTestServer({ config: testConfig({ MCP_RATE_PER_MINUTE: '2' }) });
  client = new Client({ name: 'hosted-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
}, 120_000);

afterAll(async () => {
  await client?.close();
  await server?.close();
  await limited?.close();
  store?.close();
});

const search = async (args: Record<string, unknown>) =>
  (await client.callTool({ name: 'search_resources', arguments: args })) as { isError?: boolean; structuredContent?: any };

describe('an MCP client adds svc by URL', () => {
  it('lists search_resources only, with the definition of the stdio tool server', async () => {
    expect(client.getServerVersion()?.name).toBe('svc-discovery');
    expect(client.getInstructions()).toContain('search_resources');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_resources']);
    const stdio = TOOLS.find((t) => t.name === 'search_resources')!;
    expect(tools[0]).toEqual(JSON.parse(JSON.stringify(stdio)));
    expect(tools[0]!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('search_resources finds what GET /discovery/search finds, page by page', async () => {
    const http = api(server.url);
    const first = await http.get('/discovery/search?query=weather%20forecast&limit=5');
    expect(first.status).toBe(200);
    const hosted = await search({ query: 'weather forecast', limit: 5 });
    expect(hosted.isError).toBeFalsy();
    expect(hosted.structuredContent.hits).toEqual(first.body.resources.map((r: any) => toHit(r, server.config.network)));
    expect(hosted.structuredContent.partialResults).toBe(true);
    // The cursor each gave leads to the same next page.
    const second = await http.get(`/discovery/search?query=weather%20forecast&limit=5&cursor=${first.body.pagination.cursor}`);
    const hostedSecond = await search({ query: 'weather forecast', limit: 5, cursor: hosted.structuredContent.nextCursor });
    expect(hostedSecond.structuredContent.hits.map((h: any) => h.resource)).toEqual(second.body.resources.map((r: any) => r.resource));
    expect(second.body.resources).toHaveLength(5);
  });

  it('filters and refusals are those of GET /discovery/search', async () => {
    const mcp = await search({ query: 'weather', filters: { type: 'mcp' } });
    expect(mcp.structuredContent.hits.map((h: any) => [h.resource, h.toolName])).toEqual([
      ['https://tools.example.com/mcp', 'weather_alerts'],
    ]);
    const http = await api(server.url).get('/discovery/search?query=weather&cursor=abc.def');
    expect(http.body.error.code).toBe('svc_invalid_search_cursor');
    const badCursor = await search({ query: 'weather', cursor: 'abc.def' });
    expect(badCursor).toMatchObject({ isError: true, structuredContent: { errorCode: 'svc_invalid_search_cursor' } });
    const long = await search({ query: 'w'.repeat(2049) });
    expect(long).toMatchObject({ isError: true, structuredContent: { errorCode: 'svc_invalid_query_parameter' } });
  });

  it('paid_call is not served: a protocol error that points to the stdio server, its code said once', async () => {
    const refused = client.callTool({ name: 'paid_call', arguments: { url: 'https://x.example.com' } });
    // The client prefixes "MCP error <code>: " to the message the server sent, which has no prefix of its own.
    await expect(refused).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /^MCP error -32602: paid_call is not served here: .*stdio.* This server has one tool: search_resources\.$/,
      ) as string,
    });
    await expect(refused).rejects.not.toThrow(/MCP error -32602: MCP error/);
  });
});

describe('POST /mcp over raw HTTP, within openapi.yaml', () => {
  const post = (body: string, headers: Record<string, string> = JSON_RPC_HEADERS) =>
    api(server.url).request('POST', '/mcp', { body, headers });
  const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });

  it('a request without initialize is answered in JSON; a notification 202 without a body', async () => {
    const res = await post(toolsList);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { tools: [{ name: 'search_resources' }] } });
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const note = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(note.status).toBe(202);
    expect(note.text).toBe('');
    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'resources/list' }));
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ id: 'x', error: { code: -32601 } });
  });

  it('GET and DELETE are 405 with Allow: POST, OPTIONS (the CORS preflight)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await api(server.url).request(method, '/mcp', { headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    }
  });

  it('no Accept, or one that takes JSON, gets the JSON answer', async () => {
    for (const accept of [undefined, '*/*', '*/*;q=0.8', 'application/json', 'application/*', 'text/html, application/json;q=0.5']) {
      const res = await post(toolsList, { 'content-type': 'application/json', ...(accept ? { accept } : {}) });
      expect(res.status, String(accept)).toBe(200);
      expect(res.body.result.tools.map((t: { name: string }) => t.name)).toEqual(['search_resources']);
    }
  });

  it('Accept that does not take JSON is 406, a body that is not JSON 415, both JSON-RPC errors', async () => {
    for (const accept of ['text/event-stream', 'text/html', 'application/xml, text/*']) {
      const notAcceptable = await post(toolsList, { accept, 'content-type': 'application/json' });
      expect(notAcceptable.status, accept).toBe(406);
      expect(notAcceptable.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    }
    const unsupported = await post(toolsList, { accept: ACCEPT, 'content-type': 'text/plain' });
    expect(unsupported.status).toBe(415);
    expect(unsupported.body.error.message).toMatch(/Content-Type/);
  });

  it('a response, a notification or an unclaimed request under a 2026-07-28 header is answered as under 2025-11-25', async () => {
    const modern = { ...JSON_RPC_HEADERS, 'mcp-protocol-version': '2026-07-28' };
    for (const body of [
      '{"jsonrpc":"2.0","error":{"code":0,"message":"x","data":""}}',
      '{"jsonrpc":"2.0","id":7,"result":{}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ]) {
      const res = await post(body, modern);
      expect(res.status, body).toBe(202);
    }
    // A request whose `_meta` does not claim the revision (a progress token alone) is a 2025-11-25 request: answered.
    const ping = await post('{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"progressToken":"p"}}}', modern);
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ jsonrpc: '2.0', id: 3, result: {} });
  });

  it('a body that is not one JSON-RPC message, or an unknown protocol version, is 400; over 256 KiB 413', async () => {
    for (const body of [
      '[]',
      JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]),
      '{"jsonrpc":"1.0","id":1,"method":"ping"}',
      '{',
    ]) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect(res.body.error.code).toBe('svc_malformed_request_body');
    }
    const version = await post(toolsList, { ...JSON_RPC_HEADERS, 'mcp-protocol-version': '1999-01-01' });
    expect(version.status).toBe(400);
    const huge = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(300_000) } }));
    expect(huge.status).toBe(413);
  });

  it('beyond MCP_RATE_PER_MINUTE from one address: 429 svc_rate_limited with Retry-After; search is not limited', async () => {
    const limitedPost = () => api(limited.url).request('POST', '/mcp', { body: toolsList, headers: JSON_RPC_HEADERS });
    expect((await limitedPost()).status).toBe(200);
    expect((await limitedPost()).status).toBe(200);
    const refused = await limitedPost();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('svc_rate_limited');
    expect(refused.body.error.reason).toContain('MCP_RATE_PER_MINUTE');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api(limited.url).get('/discovery/search?query=weather')).status).toBe(200);
  });
});
