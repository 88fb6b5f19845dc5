/**
 * POST /mcp's DNS-rebinding protection (docs/MCP.md "DNS rebinding"), over real HTTP: a page of
 * another site whose name resolves to svc's loopback address sends that name in `Host` and its own
 * origin in `Origin`. Bound to loopback, svc answers only loopback names; MCP_ALLOWED_HOSTS names
 * others (a proxy keeping the public name); bound to every address and without it, svc does not
 * check. Every answer is checked against openapi.yaml.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/service.ts';
import { ReadinessProbe } from '../../src/ops/readiness.ts';
import { silentLogger } from '../../src/log.ts';
import { expectResponseMatchesContract } from '../helpers/contract.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

/** POST /mcp with the given Host (fetch cannot set it) and optional Origin; the answer checked against openapi.yaml. */
function post(port: number, host: string, origin?: string) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        headers: {
          host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(origin ? { origin } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          const response = new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers });
          expectResponseMatchesContract(response, { method: 'POST', path: '/mcp' }).then(
            (checked) => resolve({ status: checked.status, body: checked.body }),
            reject,
          );
        });
      },
    );
    req.on('error', reject);
    req.end(TOOLS_LIST);
  });
}

let loopback: TestServer;
let proxied: TestServer;
let everywhere: { port: number; close(): Promise<void> };

beforeAll(async () => {
  loopback = await startTestServer();
  proxied = await startTestServer({ config: testConfig({ MCP_ALLOWED_HOSTS: 'svc.example.com,localhost' }) });
  // Bound to every address: the operator's network decides who reaches it (docs/MCP.md).
  const service = createService(testConfig(), { logger: silentLogger(), readiness: new ReadinessProbe({ checks: {} }) });
  const running = await service.listen(0, '0.0.0.0');
  everywhere = { port: running.port, close: () => service.close() };
}, 120_000);

afterAll(async () => {
  await loopback?.close();
  await proxied?.close();
  await everywhere?.close();
});

describe('svc bound to loopback', () => {
  it('answers a Host of localhost, 127.0.0.1 or [::1] (any port) and a page of those hosts', async () => {
    for (const host of [`127.0.0.1:${loopback.port}`, `localhost:${loopback.port}`, '[::1]:8080', 'LOCALHOST']) {
      const res = await post(loopback.port, host);
      expect(res.status, host).toBe(200);
      expect(res.body.result.tools.map((t: any) => t.name)).toEqual(['search_resources']);
    }
    expect((await post(loopback.port, `localhost:${loopback.port}`, 'http://localhost:5173')).status).toBe(200);
  });

  it('refuses a Host naming another site: 403 svc_host_not_allowed, before anything is served', async () => {
    for (const host of ['evil.example', `evil.example:${loopback.port}`, '127.0.0.1.evil.example', '10.0.0.1']) {
      const res = await post(loopback.port, host);
      expect(res.status, host).toBe(403);
      expect(res.body.error.code).toBe('svc_host_not_allowed');
      expect(res.body.error.reason).toContain('localhost');
    }
  });

  it('refuses a page of another site even with a loopback Host: 403 svc_origin_not_allowed', async () => {
    for (const origin of ['https://evil.example', 'null', 'http://localhost.evil.example']) {
      const res = await post(loopback.port, `127.0.0.1:${loopback.port}`, origin);
      expect(res.status, origin).toBe(403);
      expect(res.body.error.code).toBe('svc_origin_not_allowed');
    }
  });
});

describe('MCP_ALLOWED_HOSTS', () => {
  it('answers the names listed, refuses the others (loopback names too when not listed)', async () => {
    expect((await post(proxied.port, 'svc.example.com')).status).toBe(200);
    expect((await post(proxied.port, 'svc.example.com', 'https://svc.example.com')).status).toBe(200);
    expect((await post(proxied.port, `localhost:${proxied.port}`)).status).toBe(200);
    const other = await post(proxied.port, `127.0.0.1:${proxied.port}`);
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('svc_host_not_allowed');
    expect(other.body.error.reason).toContain('MCP_ALLOWED_HOSTS');
    const page = await post(proxied.port, 'svc.example.com', 'https://evil.example');
    expect(page.body.error.code).toBe('svc_origin_not_allowed');
  });

  it('a value that is not a hostname stops svc at start', () => {
    for (const value of ['svc.example.com:443', 'https://svc.example.com', 'a b', 'svc.example.com,']) {
      expect(() => testConfig({ MCP_ALLOWED_HOSTS: value }), value).toThrow(/MCP_ALLOWED_HOSTS/);
    }
  });
});

describe('svc bound to every address, MCP_ALLOWED_HOSTS unset', () => {
  it('does not check Host or Origin (the network decides who reaches it)', async () => {
    expect((await post(everywhere.port, 'svc.example.com', 'https://anyone.example')).status).toBe(200);
  });
});
