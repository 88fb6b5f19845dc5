/**
 * CORS over real HTTP (src/http/cors.ts, openapi.yaml "Browsers on other origins"): the operations
 * marked x-svc-cors answer preflights and carry Access-Control-Allow-Origin for any origin, errors
 * included; /verify and /settle carry none; POST /mcp checks Origin against MCP_ALLOWED_ORIGINS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, openapiDocument } from '../helpers/contract.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';

const PAGE = 'https://catalog-page.example';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
let open: TestServer;
let guarded: TestServer;

beforeAll(async () => {
  [open, guarded] = await Promise.all([
    startTestServer(),
    startTestServer({ config: testConfig({ MCP_ALLOWED_ORIGINS: `${PAGE},http://localhost:5173` }) }),
  ]);
});
afterAll(async () => {
  await Promise.all([open.close(), guarded.close()]);
});

/** Every path with an operation marked x-svc-cors, with those methods. */
const corsPaths = Object.entries(openapiDocument.paths as Record<string, Record<string, { 'x-svc-cors'?: boolean }>>).flatMap(
  ([path, item]) => {
    const methods = Object.entries(item)
      .filter(([method, op]) => method !== 'options' && op['x-svc-cors'] === true)
      .map(([method]) => method.toUpperCase());
    return methods.length ? [{ path, methods }] : [];
  },
);

describe('preflights', () => {
  it('every path of a cross-origin operation answers OPTIONS 204 with its methods, the headers and any origin', async () => {
    expect(corsPaths.map((p) => p.path)).toEqual(
      expect.arrayContaining([
        '/discovery/resources',
        '/discovery/search',
        '/discovery/merchant',
        '/discovery/validate',
        '/discovery/delist',
        '/mcp',
        '/openapi.yaml',
        '/supported',
      ]),
    );
    for (const { path, methods } of corsPaths) {
      const res = await api(open.url).request('OPTIONS', path, {
        headers: { origin: PAGE, 'access-control-request-method': methods[0]!, 'access-control-request-headers': 'content-type' },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(res.headers.get('access-control-allow-methods'), path).toBe(methods.join(', '));
      expect(res.headers.get('access-control-allow-headers'), path).toContain('MCP-Protocol-Version');
      expect(res.headers.get('access-control-allow-credentials'), path).toBeNull();
    }
  });

  it('are not operations of openapi.yaml (no preflight method in a generated client), yet described there', () => {
    const methods = Object.values(openapiDocument.paths as Record<string, Record<string, unknown>>).flatMap((item) => Object.keys(item));
    expect(methods).not.toContain('options');
    expect(Object.keys(openapiDocument['x-svc-cors-preflight'])).toContain('204');
  });

  it('/verify and /settle stay same-origin: OPTIONS is 405 without CORS headers', async () => {
    for (const path of ['/verify', '/settle']) {
      const res = await api(open.url).request('OPTIONS', path, { headers: { origin: PAGE, 'access-control-request-method': 'POST' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});

describe('answers', () => {
  it('discovery reads, their errors and the document carry Access-Control-Allow-Origin: * and expose X-Request-Id', async () => {
    for (const path of ['/discovery/resources', '/discovery/search?query=weather', '/discovery/search', '/openapi.yaml', '/supported']) {
      const res = await api(open.url).get(path, { headers: { origin: PAGE } });
      expect([200, 400], path).toContain(res.status);
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(res.headers.get('access-control-expose-headers'), path).toContain('X-Request-Id');
    }
  });

  it('POST /discovery/delist answers another origin like its GET, a refusal included', async () => {
    const res = await fetch(`${open.url}/discovery/delist`, {
      method: 'POST',
      headers: { origin: PAGE, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
  });

  it('POST /verify carries no CORS header', async () => {
    const res = await fetch(`${open.url}/verify`, {
      method: 'POST',
      headers: { origin: PAGE, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('without MCP_ALLOWED_ORIGINS, POST /mcp answers any origin of its own host (loopback here: test/mcp/dns-rebinding.test.ts)', async () => {
    const res = await api(open.url).request('POST', '/mcp', {
      headers: { ...MCP_HEADERS, origin: 'http://localhost:5173' },
      body: toolsList,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('MCP_ALLOWED_ORIGINS', () => {
  it('an allowed origin is answered with itself and Vary: Origin, preflight and call', async () => {
    const preflight = await api(guarded.url).request('OPTIONS', '/mcp', {
      headers: { origin: PAGE, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(preflight.headers.get('vary')).toContain('Origin');
    const res = await api(guarded.url).request('POST', '/mcp', { headers: { ...MCP_HEADERS, origin: PAGE }, body: toolsList });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
  });

  it('another origin is 403 svc_origin_not_allowed, before the body is read; no Origin (not a browser) is served', async () => {
    for (const method of ['OPTIONS', 'POST']) {
      const res = await api(guarded.url).request(method, '/mcp', {
        headers: { ...MCP_HEADERS, origin: 'http://attacker.example:8080' },
        ...(method === 'POST' ? { body: toolsList } : {}),
      });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('svc_origin_not_allowed');
      expect(res.body.error.reason).toContain('MCP_ALLOWED_ORIGINS');
    }
    const server = await api(guarded.url).request('POST', '/mcp', { headers: MCP_HEADERS, body: toolsList });
    expect(server.status).toBe(200);
  });

  it('discovery reads still answer any origin', async () => {
    const res = await api(guarded.url).get('/discovery/resources', { headers: { origin: 'http://attacker.example:8080' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('a value that is not an origin stops svc at start', () => {
    for (const bad of ['https://a.example/', 'a.example', 'https://A.example', 'https://a.example/path', 'https://a.example,']) {
      expect(() => testConfig({ MCP_ALLOWED_ORIGINS: bad }), bad).toThrow(/MCP_ALLOWED_ORIGINS/);
    }
  });
});
