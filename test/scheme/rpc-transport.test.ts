/**
 * The JSON-RPC transport under rpc.Server (src/chains/stellar/rpc-transport.ts), against a real
 * loopback server: calls share one kept-alive connection, an HTTP error is named as the SDK's
 * client names it, a silent server times out, and a redirect is left to the SDK's own client.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepAliveClient, type PostClient } from '../../src/chains/stellar/rpc-transport.ts';

let server: http.Server;
let base = '';
let connections = 0;
const fallbackCalls: string[] = [];
const fallback: PostClient = {
  defaults: {},
  post: (url) => {
    fallbackCalls.push(url);
    return Promise.resolve({ data: { result: 'via fallback' }, status: 200, headers: {} });
  },
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      if (req.url === '/error') return void res.writeHead(503).end('busy');
      if (req.url === '/moved') return void res.writeHead(307, { location: '/' }).end();
      if (req.url === '/silent') return; // never answers
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: { method } }));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('keep-alive JSON-RPC transport', () => {
  it('answers the JSON body and reuses one connection for sequential calls', async () => {
    const client = keepAliveClient(fallback, 5_000);
    for (let i = 0; i < 5; i++) {
      const r = await client.post(`${base}/`, { jsonrpc: '2.0', id: i, method: 'getHealth' });
      expect(r).toMatchObject({ status: 200, data: { id: i, result: { method: 'getHealth' } } });
    }
    expect(connections).toBe(1);
  });

  it('names an HTTP error as the SDK client does, times out a silent server, hands a redirect to the SDK client', async () => {
    const client = keepAliveClient(fallback, 300);
    await expect(client.post(`${base}/error`, {})).rejects.toThrow('Request failed with status code 503');
    await expect(client.post(`${base}/silent`, {})).rejects.toThrow('timeout of 300ms exceeded');
    await expect(client.post(`${base}/moved`, {})).resolves.toMatchObject({ data: { result: 'via fallback' } });
    expect(fallbackCalls).toEqual([`${base}/moved`]);
  });
});
