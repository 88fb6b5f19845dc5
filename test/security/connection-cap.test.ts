/**
 * The total connection cap (docs/OPERATIONS.md "Connection limits"), with real sockets from
 * several loopback addresses: at the cap a newcomer is admitted by closing the oldest idle
 * connection of the address holding the most, never a connection whose settle is being answered;
 * when every connection is busy the newcomer is closed. Also the cap's derivation from the
 * open-file limit and the start-time warning.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConnectionCap, descriptorLimit } from '../../src/http/connection-cap.ts';
import { connectionCapAtStart } from '../../src/http/connections.ts';
import { FAKE_ENVELOPE, FakeScheme } from '../helpers/fake-scheme.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

/** A server whose settles wait until the test releases them. */
async function heldServer(maxConnections: number) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const scheme = new FakeScheme({
    settle: async () => {
      await released;
      return {
        success: true,
        transaction: 'ab'.repeat(32),
        network: 'stellar:testnet',
        payer: 'GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG',
      };
    },
  });
  const s = await startTestServer({ config: testConfig({ MAX_CONNECTIONS: String(maxConnections) }), scheme });
  servers.push(s);
  return { s, scheme, release };
}

function open(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** A slow client: half a request head, then nothing. */
async function slow(port: number, localAddress: string): Promise<Socket> {
  const socket = await open(port, localAddress);
  socket.on('error', () => {});
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
  return socket;
}

/** POST /settle on its own connection; resolves with the status once answered (0 if the connection fails). */
function settleFrom(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve) => {
    const body = JSON.stringify(FAKE_ENVELOPE);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/settle',
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.once('error', () => resolve(0));
    req.end(body);
  });
}

function healthFrom(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', localAddress, timeout: 10_000, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
    req.end();
  });
}

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const connections = (s: TestServer) =>
  new Promise<number>((resolve, reject) => s.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));

describe('the total connection cap', () => {
  it('at the cap a newcomer is admitted by closing the busiest address’s oldest idle connection, never a settle in flight', async () => {
    const { s, scheme, release } = await heldServer(12);
    // A settle from 127.0.0.3, held by the scheme: its connection is busy.
    const settled = settleFrom(s.port, '127.0.0.3');
    await until(() => scheme.calls.includes('settle'));
    // 8 slow connections from 127.0.0.2 and 3 from 127.0.0.4: 12 open, the cap.
    const floodA: Socket[] = [];
    for (let i = 0; i < 8; i++) floodA.push(await slow(s.port, '127.0.0.2'));
    const floodB: Socket[] = [];
    for (let i = 0; i < 3; i++) floodB.push(await slow(s.port, '127.0.0.4'));
    await until(async () => (await connections(s)) === 12);

    // Four more slow connections from 127.0.0.5: each takes the room of the oldest of 127.0.0.2,
    // the busiest address, first in first out.
    const floodC: Socket[] = [];
    for (let i = 1; i <= 4; i++) {
      floodC.push(await slow(s.port, '127.0.0.5'));
      await until(() => floodA.filter((c) => c.closed).length === i);
    }
    expect(floodA.map((c) => c.closed)).toEqual([true, true, true, true, false, false, false, false]);
    expect(await connections(s)).toBe(12);
    // A request from 127.0.0.5 makes it the busiest (5 with the newcomer against 4): it is served,
    // and the room is taken from its own oldest slow connection.
    expect(await healthFrom(s.port, '127.0.0.5')).toBe(200);
    await until(() => floodC[0]!.closed);
    expect(floodA.filter((c) => c.closed)).toHaveLength(4);
    // Honest requests from another address keep being served; 127.0.0.4 was never touched.
    for (let i = 0; i < 3; i++) expect(await healthFrom(s.port, '127.0.0.6')).toBe(200);
    expect(floodB.some((c) => c.closed)).toBe(false);
    expect(await connections(s)).toBeLessThanOrEqual(12);
    // The metrics count what the caps closed (5 evicted so far, a few more if a probe came before the last one had closed; nothing refused).
    const metrics = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: s.port, path: '/metrics', localAddress: '127.0.0.6', agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.once('end', () => resolve(text));
      });
      req.once('error', reject);
      req.end();
    });
    expect(metrics).toMatch(/^svc_http_connections_shed_total\{reason="evicted"\} [5-8]$/m);
    expect(metrics).toMatch(/^svc_http_connections_shed_total\{reason="refused"\} 0$/m);
    expect(metrics).toMatch(/^svc_http_connections_open 1[0-2]$/m);

    // The held settle's connection was never chosen: released, it is answered.
    release();
    expect(await settled).toBe(200);
    for (const c of [...floodA, ...floodB, ...floodC]) c.destroy();
  });

  it('when every connection is busy the newcomer is closed, and the settles in flight are all answered', async () => {
    const { s, scheme, release } = await heldServer(2);
    const settles = [settleFrom(s.port, '127.0.0.2'), settleFrom(s.port, '127.0.0.3')];
    await until(() => scheme.calls.filter((c) => c === 'settle').length === 2);
    expect(await healthFrom(s.port, '127.0.0.4')).toBe(0);
    release();
    expect(await Promise.all(settles)).toEqual([200, 200]);
    // Room again once they are answered (the settle connections closed: agent false).
    await until(async () => (await healthFrom(s.port, '127.0.0.4')) === 200);
  });
});

describe('the cap from the open-file limit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-limits-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const limitsFile = (soft: string) => {
    const path = join(dir, `limits-${soft}`);
    writeFileSync(
      path,
      'Limit                     Soft Limit           Hard Limit           Units     \n' +
        'Max processes             63432                63432                processes \n' +
        `Max open files            ${soft.padEnd(20)} 1048576              files     \n`,
    );
    return path;
  };

  it('reads the soft limit of /proc/self/limits; unlimited and unreadable are told apart', () => {
    expect(descriptorLimit(limitsFile('1024'))).toBe(1024);
    expect(descriptorLimit(limitsFile('unlimited'))).toBe(Infinity);
    expect(descriptorLimit(join(dir, 'absent'))).toBeNull();
    // This process's own limit, on Linux.
    expect(descriptorLimit()).toBeGreaterThan(0);
  });

  it('keeps max(128, limit/8) descriptors free and warns when the limit is low, unknown or overridden past it', () => {
    expect(defaultConnectionCap(1024)).toBe(896);
    expect(defaultConnectionCap(65_536)).toBe(57_344);
    expect(connectionCapAtStart(null, 1024)).toMatchObject({
      maxConnections: 896,
      warning: expect.stringMatching(/open-file limit is low/),
    });
    expect(connectionCapAtStart(null, 20_000)).toEqual({ maxConnections: 17_500, descriptorLimit: 20_000 });
    expect(connectionCapAtStart(300, 20_000)).toEqual({ maxConnections: 300, descriptorLimit: 20_000 });
    expect(connectionCapAtStart(19_000, 20_000).warning).toMatch(/MAX_CONNECTIONS leaves svc fewer than 2500 descriptors/);
    expect(connectionCapAtStart(null, null)).toMatchObject({ maxConnections: 3584, warning: expect.stringMatching(/could not be read/) });
    expect(connectionCapAtStart(null, Infinity)).toEqual({ maxConnections: Number.MAX_SAFE_INTEGER, descriptorLimit: Infinity });
  });
});
