/**
 * Sockets cannot be held or desynchronised (docs/SECURITY.md "Held sockets and pipelining desync"): a client that never
 * finishes its request head and never reads is answered 408 and its descriptor released within
 * the configured timeout; junk pipelined behind a valid POST /settle never replaces the settle's
 * answer; one address cannot hold more than its connection cap; and with a 1,024 file limit,
 * 1,100 slow connections from one address leave /health answering from another.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/app.ts';
import { checkContract } from '../helpers/contract.ts';
import { freePort } from '../helpers/svc-process.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import { HASH, envelopeBody, instantScheme } from './payment-fixtures.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const envelope = envelopeBody();

const servers: RunningServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function server(limits: { headersTimeoutMs: number; requestTimeoutMs: number; maxConnectionsPerAddress: number }) {
  const config = testConfig({
    HEADERS_TIMEOUT_MS: String(limits.headersTimeoutMs),
    REQUEST_TIMEOUT_MS: String(limits.requestTimeoutMs),
    MAX_CONNECTIONS_PER_ADDRESS: String(limits.maxConnectionsPerAddress),
  });
  const running = await startTestServer({ config, scheme: instantScheme(400) });
  servers.push(running);
  return running;
}

function open(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** GET /health from a given local address (the cap is per client address); 0 when it fails within 2 s. */
function healthFrom(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', localAddress, timeout: 2_000, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
    req.end();
  });
}

function connections(s: RunningServer): Promise<number> {
  return new Promise((resolve, reject) => s.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

async function until(check: () => Promise<boolean>, ms: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < ms) {
    if (await check()) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`condition not met within ${ms} ms`);
}

/** Everything the server sends until it closes the connection. */
function readAll(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.once('close', () => resolve(data));
    socket.once('error', () => resolve(data));
  });
}

describe('held sockets', () => {
  it('a client that never finishes its head and never reads: 408, descriptor released within the head timeout', async () => {
    const s = await server({ headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, maxConnectionsPerAddress: 100 });
    const sockets = await Promise.all(Array.from({ length: 20 }, () => open(s.port)));
    for (const socket of sockets) {
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      socket.pause(); // never reads what the server sends
      socket.on('error', () => {});
    }
    await until(async () => (await connections(s)) === 20, 1_000);
    const released = await until(async () => (await connections(s)) === 0, 3_000);
    expect(released).toBeLessThan(2_000);
    // A reading client sees the refusal: 408 with the documented code.
    const reader = await open(s.port);
    const answer = readAll(reader);
    reader.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('"svc_request_timeout"');
    for (const socket of sockets) socket.destroy();
  });

  it('a body that never arrives: 408 within the request timeout', async () => {
    const s = await server({ headersTimeoutMs: 1_000, requestTimeoutMs: 1_500, maxConnectionsPerAddress: 100 });
    const socket = await open(s.port);
    const answer = readAll(socket);
    const started = performance.now();
    socket.write('POST /verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"x');
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(performance.now() - started).toBeLessThan(2_500);
  });
});

describe('pipelining', () => {
  it.each([
    ['junk', 'THIS IS NOT HTTP\r\n\r\n'],
    ['an unknown method', 'BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['an oversized head', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('a valid POST /settle followed by %s on one connection gets its settle answer, then the connection closes', async (_name, junk) => {
    const s = await server({ headersTimeoutMs: 2_000, requestTimeoutMs: 3_000, maxConnectionsPerAddress: 100 });
    const socket = await open(s.port);
    const answer = readAll(socket);
    socket.write(
      `POST /settle HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(envelope)}\r\n\r\n${envelope}${junk}`,
    );
    const text = await answer;
    const responses = text.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(responses[0]).toMatch(/connection: close/i);
    expect(responses[0]).toContain(`"transaction":"${HASH}"`);
  });

  it('junk alone is still answered with the ErrorEnvelope and closed', async () => {
    const s = await server({ headersTimeoutMs: 2_000, requestTimeoutMs: 3_000, maxConnectionsPerAddress: 100 });
    const socket = await open(s.port);
    const answer = readAll(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(await answer).toMatch(/^HTTP\/1\.1 400 [\s\S]*"svc_malformed_request_body"/);
  });
});

/** A raw HTTP/1.1 answer as the contract helper reads it. */
function parseAnswer(text: string): { status: number; headers: Headers; text: string } {
  const [head, ...body] = text.split('\r\n\r\n');
  const [statusLine, ...fields] = head!.split('\r\n');
  const headers = new Headers();
  for (const field of fields) headers.append(field.slice(0, field.indexOf(':')), field.slice(field.indexOf(':') + 1).trim());
  return { status: Number(statusLine!.split(' ')[1]), headers, text: body.join('\r\n\r\n') };
}

describe('requests the HTTP parser refuses, within the contract (openapi.yaml RequestUnparseable)', () => {
  let shared: Promise<RunningServer> | undefined;
  const one = () => (shared ??= server({ headersTimeoutMs: 2_000, requestTimeoutMs: 3_000, maxConnectionsPerAddress: 100 }));
  const head = (path: string, field: string) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: mine-7\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(envelope)}\r\n${field}\r\n\r\n${envelope}`;
  it.each([
    ['/settle', 'X-Odd: a\u0007b', 'errorReason'],
    ['/verify', 'X-Odd: a\u0007b', 'invalidReason'],
    ['/settle', 'Idempotency-Key: \u00ab\u00ce\u0007\u00bb', 'errorReason'],
    ['/verify', 'Bad Name: v', 'invalidReason'],
  ])("POST %s with %j: 400 in the route's own shape, with the caller's X-Request-Id", async (path, field, code) => {
    const s = await one();
    const socket = await open(s.port);
    const answer = readAll(socket);
    socket.write(Buffer.from(head(path, field), 'latin1'));
    const res = parseAnswer(await answer);
    const body = checkContract({ method: 'POST', path }, res) as Record<string, unknown>;
    expect(res.status).toBe(400);
    expect(body[code]).toBe('svc_malformed_request_body');
    expect(res.headers.get('x-request-id')).toBe('mine-7');
  });

  it('an unknown expectation is ignored (RFC 9110 §10.1.1), not a bare 417', async () => {
    const s = await one();
    const socket = await open(s.port);
    const answer = readAll(socket);
    socket.write(head('/settle', 'Expect: x-custom-expectation\r\nConnection: close'));
    const res = parseAnswer(await answer);
    expect(checkContract({ method: 'POST', path: '/settle' }, res)).toMatchObject({ success: true, transaction: HASH });
  });

  it('a head of more than 1000 fields is a 431 that says so', async () => {
    const s = await one();
    const socket = await open(s.port);
    const answer = readAll(socket);
    socket.write(`GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 1000 }, (_, i) => `X-F${i}: ${i}\r\n`).join('')}\r\n`);
    const res = parseAnswer(await answer);
    expect(res.status).toBe(431);
    expect(checkContract({ method: 'GET', path: '/health' }, res)).toEqual({
      error: { code: 'svc_malformed_request_body', reason: expect.stringContaining('1000 header fields') },
    });
  });
});

describe('per-address connection cap', () => {
  it('connections beyond the cap are closed on accept; another address is still served', async () => {
    const s = await server({ headersTimeoutMs: 5_000, requestTimeoutMs: 5_000, maxConnectionsPerAddress: 5 });
    const sockets = await Promise.all(Array.from({ length: 12 }, () => open(s.port)));
    const closed = sockets.map(
      (socket) =>
        new Promise<boolean>((resolve) => {
          socket.on('error', () => {});
          socket.once('close', () => resolve(true));
          // Generous for a loaded CI machine: the 5 connections within the cap stay open for all of it.
          setTimeout(() => resolve(false), 2_000);
        }),
    );
    expect((await Promise.all(closed)).filter(Boolean)).toHaveLength(7);
    expect(await healthFrom(s.port, '127.0.0.2')).toBe(200);
    for (const socket of sockets) socket.destroy();
  });

  it(
    'with a 1,024 file limit, 1,100 slow connections from one address leave /health answering from another',
    { timeout: 90_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-sockets-'));
      const env = {
        ...process.env,
        SUBMITTER_SECRET: Keypair.random().secret(),
        // A port the system just gave out: a random one could be another process's, and svc would exit at once.
        PORT: String(await freePort()),
        DB_PATH: join(dir, 'svc.sqlite'),
        RPC_URL: 'http://127.0.0.1:9/',
        LOG_LEVEL: 'silent',
        HEADERS_TIMEOUT_MS: '5000',
        REQUEST_TIMEOUT_MS: '5000',
      };
      const child: ChildProcess = spawn('prlimit', ['--nofile=1024:1024', process.execPath, 'dist/main.js'], {
        cwd: ROOT,
        env,
        stdio: 'ignore',
      });
      const port = Number(env.PORT);
      const sockets: Socket[] = [];
      try {
        // A busy machine can take many seconds to start a process; the test is about the sockets, not the start.
        await until(async () => (await healthFrom(port, '127.0.0.2')) === 200, 45_000);
        // 1,100 connections from 127.0.0.1, each sending half a request head and never reading.
        const opened = await Promise.allSettled(
          Array.from({ length: 1_100 }, async () => {
            const socket = await open(port);
            socket.on('error', () => {});
            socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
            socket.pause();
            sockets.push(socket);
          }),
        );
        expect(opened.length).toBe(1_100);
        // /health from 127.0.0.2 keeps answering while they are held.
        const probes: boolean[] = [];
        for (let i = 0; i < 20; i++) {
          probes.push((await healthFrom(port, '127.0.0.2')) === 200);
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(probes.filter(Boolean).length).toBe(20);
      } finally {
        for (const socket of sockets) socket.destroy();
        child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
