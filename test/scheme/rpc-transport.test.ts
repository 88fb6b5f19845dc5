/**
 * The JSON-RPC transport under rpc.Server (src/chains/stellar/rpc-transport.ts), against a real
 * loopback server: calls share one kept-alive connection, an HTTP error is named as the SDK's
 * client names it, a silent server times out, a redirect is left to the SDK's own client, and a
 * call sent on a kept-alive connection the server had just closed is sent again on a new one.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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

  it('sends a call again on a new connection when the kept-alive one it took was closed by the server', async () => {
    // The race of an idle close with the next call, made certain: this server reads the second
    // request of every connection and closes that connection without answering.
    const requestsOn = new Map<Socket, number>();
    let received = 0;
    const closing = http.createServer((req, res) => {
      received++;
      const n = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, n);
      if (n === 2) return void req.socket.destroy();
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
    });
    await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(closing.address() as AddressInfo).port}/`;
      const client = keepAliveClient(fallback, 5_000);
      await expect(client.post(url, { id: 1 })).resolves.toMatchObject({ status: 200 });
      await expect(client.post(url, { id: 2 })).resolves.toMatchObject({ status: 200, data: { result: {} } });
      expect(received).toBe(3); // the first call, the second on the reused connection (closed), and again on a new one
      expect(requestsOn.size).toBe(2);
    } finally {
      closing.closeAllConnections();
      closing.close();
    }
  });
});
