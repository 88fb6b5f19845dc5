/**
 * The two exact-match identity filters of GET /discovery/resources (`resource`, `toolName`), added
 * so the agent tool server can re-resolve a resource id without walking pages. Real HTTP on
 * loopback over a real catalog file; listings are written through the catalog's settle hook.
 * Every response goes through the openapi.yaml contract helper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/contract.ts';
import { startTestServer } from '../helpers/server.ts';
import { settlement, tempCatalog } from '../catalog/fixtures.ts';

let t: ReturnType<typeof tempCatalog>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;

beforeAll(async () => {
  t = tempCatalog();
  for (const o of [
    { url: 'https://a.example.com/weather?city=Lisbon' },
    { url: 'https://a.example.com/weather/extended' },
    { url: 'https://m.example.com/mcp', mcpTool: 'forecast' },
    { url: 'https://m.example.com/mcp', mcpTool: 'alerts' },
    { url: 'https://n.example.com/mcp', mcpTool: 'forecast' },
  ]) {
    t.tick();
    expect(await t.catalog.recordSettlement(settlement(o))).toEqual({ status: 'success' });
  }
  server = await startTestServer({ catalog: t.catalog });
  client = api(server.url);
});
afterAll(async () => {
  await server?.close();
  t?.close();
});

const list = (params: Array<[string, string]>) => client.get(`/discovery/resources?${new URLSearchParams(params).toString()}`);
const toolOf = (item: any) => item.extensions?.bazaar?.info?.input?.toolName ?? '';

describe('GET /discovery/resources: resource and toolName filters', () => {
  it('resource + type=http selects exactly the one http listing (query-stripped canonical URL)', async () => {
    const res = await list([
      ['resource', 'https://a.example.com/weather'],
      ['type', 'http'],
    ]);
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(1);
    expect(res.body.items.map((i: any) => i.resource)).toEqual(['https://a.example.com/weather']);
  });

  it('resource + type=mcp + toolName selects one of two tools on one URL', async () => {
    const res = await list([
      ['resource', 'https://m.example.com/mcp'],
      ['type', 'mcp'],
      ['toolName', 'alerts'],
    ]);
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0].resource).toBe('https://m.example.com/mcp');
    expect(toolOf(res.body.items[0])).toBe('alerts');
    const both = await list([['resource', 'https://m.example.com/mcp']]);
    expect(both.body.pagination.total).toBe(2);
  });

  it('toolName alone matches that tool on every URL; the match is exact, not a prefix or case-folded', async () => {
    const res = await list([['toolName', 'forecast']]);
    expect(res.body.items.map((i: any) => i.resource).sort()).toEqual(['https://m.example.com/mcp', 'https://n.example.com/mcp']);
    for (const value of ['fore', 'Forecast', 'forecast ']) {
      expect((await list([['toolName', value]])).body.pagination.total).toBe(0);
    }
    expect((await list([['resource', 'https://a.example.com/weather/']])).body.pagination.total).toBe(0);
    expect((await list([['resource', 'https://a.example.com/weather?city=Lisbon']])).body.pagination.total).toBe(0);
  });

  it('a repeated or empty identity filter is 400 svc_invalid_query_parameter', async () => {
    for (const params of [
      [
        ['resource', 'https://a.example.com/weather'],
        ['resource', 'https://m.example.com/mcp'],
      ],
      [
        ['toolName', 'a'],
        ['toolName', 'b'],
      ],
      [['resource', '']],
      [['toolName', ' ']],
    ] as Array<Array<[string, string]>>) {
      const res = await list(params);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_query_parameter');
      expect(res.body.error.reason).toMatch(/resource|toolName/);
    }
  });

  it('search does not declare them: resource on /discovery/search is 400, never silently ignored', async () => {
    const res = await client.get('/discovery/search?query=weather&resource=https%3A%2F%2Fa.example.com%2Fweather');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('svc_invalid_query_parameter');
  });
});
