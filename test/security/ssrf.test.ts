/**
 * SSRF (docs/SECURITY.md "SSRF"): the address guard behind paid_call refuses loopback, private,
 * link-local, multicast and metadata addresses after DNS resolution and on every redirect hop,
 * and the catalog records no listing whose URL is such an address literal — unless the dev-only
 * allow-list ALLOW_PRIVATE_TARGETS covers it. (paid_call end to end: test/mcp/codes.test.ts.)
 */
import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forbiddenCause, guardedFetch } from '../../src/net/guarded-fetch.ts';
import { forbiddenAddressReason, forbiddenLiteralHost, parseAllowList } from '../../src/net/private-addresses.ts';
import { settlement, tempCatalog } from '../catalog/fixtures.ts';

// This file tests the guard itself: no allow-list unless a case sets one.
delete process.env.ALLOW_PRIVATE_TARGETS;

const servers: Server[] = [];
const hits: string[] = [];
async function serve(host: string, handler: (path: string) => { status: number; headers?: Record<string, string> }): Promise<string> {
  const server = createServer((req, res) => {
    hits.push(`${host}${req.url}`);
    const { status, headers } = handler(req.url ?? '/');
    res.writeHead(status, headers).end('{"AccessKeyId":"fake"}');
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  servers.push(server);
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

describe('address classification', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0.0.0.0',
    '::',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    'fe80::1',
    '100.100.100.200',
    'fd00:ec2::254',
    '224.0.0.1',
    'ff02::1',
    '255.255.255.255',
    '64:ff9b::7f00:1',
    '64:ff9b:1::a9fe:a9fe',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '::ffff:0:7f00:1',
    // IPv4-compatible (::/96): 127.0.0.1, the metadata address, 10.0.0.1, as URLs and libuv spell them
    '::7f00:1',
    '::a9fe:a9fe',
    '::a00:1',
    '::127.0.0.1',
    '::169.254.169.254',
  ])('%s is refused', (address) => {
    expect(forbiddenAddressReason(address, [])).toMatch(/address/);
  });

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34'])('%s (public unicast) is allowed', (address) => {
    expect(forbiddenAddressReason(address, [])).toBeNull();
  });

  it('an IPv4-compatible address is refused even when the allow-list holds the IPv4 address it embeds', () => {
    const allow = parseAllowList('127.0.0.0/8,::1/128');
    expect(forbiddenAddressReason('::7f00:1', allow)).toMatch(/IPv4-compatible IPv6 address \(::\/96\) embedding 127\.0\.0\.1/);
    expect(forbiddenAddressReason('::127.0.0.1', allow)).toMatch(/embedding 127\.0\.0\.1/);
    expect(forbiddenLiteralHost(new URL('http://[::a9fe:a9fe]:8080/').hostname, allow)).toMatch(/embedding 169\.254\.169\.254/);
    expect(forbiddenLiteralHost(new URL('http://[::169.254.169.254]/').hostname, allow)).toMatch(/embedding 169\.254\.169\.254/);
  });

  it('the allow-list admits exactly its ranges', () => {
    const allow = parseAllowList('127.0.0.0/8, ::1');
    expect(forbiddenAddressReason('127.0.0.5', allow)).toBeNull();
    expect(forbiddenAddressReason('::1', allow)).toBeNull();
    expect(forbiddenAddressReason('10.0.0.1', allow)).not.toBeNull();
    expect(forbiddenAddressReason('169.254.169.254', allow)).not.toBeNull();
    expect(() => parseAllowList('127.0.0.0/8,evil')).toThrow(/not an IP address or CIDR/);
  });

  it('URL hosts: literals in every spelling WHATWG parsing accepts, and localhost', () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://0x7f000001/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://[::1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://localhost/',
      'http://LOCALHOST./',
      'http://a.localhost/',
    ]) {
      expect(forbiddenLiteralHost(new URL(url).hostname, [])).not.toBeNull();
    }
    expect(forbiddenLiteralHost(new URL('https://api.example.com/').hostname, [])).toBeNull();
  });
});

describe('guarded fetch (paid_call)', () => {
  let loopbackUrl: string;
  let otherLoopbackUrl: string;
  beforeAll(async () => {
    otherLoopbackUrl = await serve('127.0.0.2', () => ({ status: 200 }));
    loopbackUrl = await serve('127.0.0.1', (path) =>
      path === '/to-other' ? { status: 302, headers: { location: `${otherLoopbackUrl}/meta-data` } } : { status: 200 },
    );
  });

  it('an IP literal outside the allow-list is refused before connecting', async () => {
    const err = await guardedFetch([])(`${loopbackUrl}/latest/meta-data`).catch((e: unknown) => e);
    expect(forbiddenCause(err)?.message).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(hits).toEqual([]);
  });

  it('a name is checked after DNS resolution', async (ctx) => {
    const resolved = await lookup(hostname()).catch(() => null);
    if (!resolved || forbiddenAddressReason(resolved.address, []) === null) ctx.skip();
    const err = await guardedFetch([])(`http://${hostname()}:${new URL(loopbackUrl).port}/x`).catch((e: unknown) => e);
    expect(forbiddenCause(err)?.message).toMatch(/resolves to/);
    expect(hits).toEqual([]);
  });

  it('every redirect hop is checked: an allowed target redirecting to a forbidden one is refused there', async () => {
    const onlyFirst = parseAllowList('127.0.0.1/32');
    expect((await guardedFetch(onlyFirst)(`${loopbackUrl}/plain`)).status).toBe(200);
    const err = await guardedFetch(onlyFirst)(`${loopbackUrl}/to-other`).catch((e: unknown) => e);
    expect(forbiddenCause(err)?.message).toMatch(/127\.0\.0\.2 is a loopback address/);
    expect(hits.filter((h) => h.startsWith('127.0.0.2'))).toEqual([]);
  });
});

describe('catalog', () => {
  const t = tempCatalog();
  afterAll(() => t.close());

  it.each([
    'http://127.0.0.1:8080/latest/meta-data/',
    'http://169.254.169.254/latest/meta-data/iam',
    'http://[::1]/x',
    'http://0x7f000001/x',
    'http://10.0.0.8/x',
    'http://localhost:3000/x',
    'http://[fd00:ec2::254]/x',
    'http://100.100.100.200/x',
    'http://[::7f00:1]:8080/x',
    'http://[::a9fe:a9fe]/latest/meta-data/',
    'http://[64:ff9b::a9fe:a9fe]/x',
  ])('a listing at %s is refused with bazaar_resource_url_invalid', async (url) => {
    expect(await t.catalog.recordSettlement(settlement({ url }))).toMatchObject({
      status: 'rejected',
      code: 'bazaar_resource_url_invalid',
    });
    expect((await t.catalog.list({}, { limit: 10, offset: 0 })).pagination.total).toBe(0);
  });

  it('with the allow-list set, the same URL is recorded (npm run dev)', async () => {
    // The catalog's threads read the environment they start with, as svc's do.
    process.env.ALLOW_PRIVATE_TARGETS = '127.0.0.0/8';
    const dev = tempCatalog();
    try {
      expect(await dev.catalog.recordSettlement(settlement({ url: 'http://127.0.0.1:8080/weather' }))).toEqual({ status: 'success' });
      expect(await dev.catalog.recordSettlement(settlement({ url: 'http://169.254.169.254/latest/meta-data/' }))).toMatchObject({
        code: 'bazaar_resource_url_invalid',
      });
    } finally {
      delete process.env.ALLOW_PRIVATE_TARGETS;
      dev.close();
    }
  });
});
