/**
 * Liveness (src/net/liveness.ts, docs/CATALOG.md "Liveness") against real sellers on loopback with a
 * test clock: a listing whose seller went away is marked unreachable and, after the grace period,
 * hidden; it is shown again once it answers. A 402 naming another payTo is terms_changed, an answer
 * without payment not_payable. Pacing: one origin is probed at most once per interval; 0 a minute is
 * off. The records live behind the LivenessStore port (a map here: the boundary, not the thing tested).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeX402Header } from '../../src/client/seller.ts';
import { guardedFetch } from '../../src/net/guarded-fetch.ts';
import type { CatalogLiveness } from '../../src/catalog/types.ts';
import { LivenessScheduler } from '../../src/net/liveness-scheduler.ts';
import {
  LIVENESS_BACKOFF_CEILING_MS,
  LivenessChecker,
  hiddenByLiveness,
  nextCheckAfter,
  type LivenessListing,
  type LivenessRecord,
} from '../../src/net/liveness.ts';
import { parseAllowList } from '../../src/net/private-addresses.ts';
import { TemplateEscapeError, checkHttpRequest, unpaidHttpRequest } from '../../src/net/check-request.ts';
import { memoryHostSlots } from '../../src/net/host-slots.ts';

const PAY_TO = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';
const OTHER = 'GBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const GRACE_MS = 6 * 3600_000;
const fetchImpl = guardedFetch(parseAllowList('127.0.0.0/8'));

let payTo = PAY_TO;
let free = false;
const required = (url: string) => ({
  x402Version: 2,
  resource: { url },
  accepts: [{ scheme: 'exact', network: 'stellar:testnet', amount: '1000', asset: 'C'.padEnd(56, 'A'), payTo, maxTimeoutSeconds: 60 }],
});
async function startSeller(port = 0): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    if (free) return res.writeHead(200).end('free');
    res.writeHead(402, { 'payment-required': encodeX402Header(required(`http://127.0.0.1${req.url}`)) }).end('{}');
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}
const stop = (server: http.Server) =>
  new Promise((r) => {
    server.close(r);
    server.closeAllConnections();
  });

/** The catalog's liveness port as a map: a claim moves a listing's basis, as the stores do. */
class MapStore implements CatalogLiveness {
  constructor(readonly listings: LivenessListing[]) {}
  readonly records = new Map<string, LivenessRecord>();
  readonly basis = new Map<string, number>();
  async claimDue(now: number, dueBefore: number, limit: number) {
    const due = this.listings.filter((l) => (this.basis.get(l.key) ?? 0) <= dueBefore).slice(0, limit);
    for (const l of due) this.basis.set(l.key, now);
    return due.map((l) => ({ ...l, ...(this.records.has(l.key) ? { previous: this.records.get(l.key)! } : {}) }));
  }
  async writeLiveness(key: string, record: LivenessRecord, claimedAt: number) {
    if (this.basis.get(key) === claimedAt) this.records.set(key, record);
  }
  async postponeLiveness(keys: string[], basis: number, claimedAt: number) {
    for (const key of keys) if (this.basis.get(key) === claimedAt) this.basis.set(key, basis);
  }
}

let seller: { server: http.Server; port: number };
beforeAll(async () => {
  seller = await startSeller();
});
afterAll(() => stop(seller.server));

function checker(
  store: CatalogLiveness,
  clock: () => Date,
  overrides: { perMinute?: number; hostIntervalMs?: number; passMs?: number } = {},
) {
  return new LivenessChecker({
    store,
    fetchImpl,
    clock,
    intervalMs: 1800_000, // every hourly pass of the tests finds the listing due
    concurrency: 2,
    perMinute: overrides.perMinute ?? 60,
    hostSlots: memoryHostSlots(overrides.hostIntervalMs ?? 0),
    timeoutMs: 5_000,
    ...(overrides.passMs !== undefined ? { passMs: overrides.passMs } : {}),
  });
}

describe('liveness', () => {
  it('a failing listing is checked again after as long as it has failed: the gaps double, up to 7 days', () => {
    const H = 3_600_000;
    const at = (hours: number) => Date.parse('2026-11-01T00:00:00Z') + hours * H;
    const failing = { status: 'unreachable', checkedAt: '', failingSince: new Date(at(0)).toISOString() } as const;
    expect(nextCheckAfter({ status: 'live', checkedAt: '', failingSince: null }, at(100), 6 * H)).toBe(6 * H);
    expect([0, 6, 12, 24, 48].map((h) => nextCheckAfter(failing, at(h), 6 * H) / H)).toEqual([6, 6, 12, 24, 48]);
    expect(nextCheckAfter(failing, at(24 * 30), 6 * H)).toBe(LIVENESS_BACKOFF_CEILING_MS);
    expect(LIVENESS_BACKOFF_CEILING_MS).toBe(7 * 24 * H);
  });

  it('a seller that went away: unreachable at once, hidden after the grace period, shown again when it answers', async () => {
    let now = Date.parse('2026-11-01T00:00:00Z');
    const clock = () => new Date(now);
    const listing: LivenessListing = {
      key: 'a',
      type: 'http',
      resource: `http://127.0.0.1:${seller.port}/weather`,
      toolName: '',
      method: 'GET',
      payTo: PAY_TO,
    };
    const store = new MapStore([listing]);
    const c = checker(store, clock);
    expect(await c.runOnce()).toBe(1);
    expect(store.records.get('a')).toEqual({ status: 'live', checkedAt: '2026-11-01T00:00:00.000Z', failingSince: null });

    await stop(seller.server); // the seller goes away
    now += 3600_000;
    expect(await c.runOnce()).toBe(1);
    expect(store.records.get('a')).toMatchObject({ status: 'unreachable', failingSince: '2026-11-01T01:00:00.000Z' });
    expect(hiddenByLiveness(store.records.get('a'), clock(), GRACE_MS)).toBe(false); // within the grace period
    now += 5 * 3600_000;
    expect(hiddenByLiveness(store.records.get('a'), clock(), GRACE_MS)).toBe(false); // 6 h: the grace period, not beyond it
    now -= 5 * 3600_000;

    for (let hour = 0; hour < 7; hour++) {
      now += 3600_000;
      await c.runOnce();
    }
    expect(store.records.get('a')).toMatchObject({
      status: 'unreachable',
      checkedAt: '2026-11-01T08:00:00.000Z',
      failingSince: '2026-11-01T01:00:00.000Z',
    });
    expect(hiddenByLiveness(store.records.get('a'), clock(), GRACE_MS)).toBe(true);

    seller = await startSeller(seller.port); // back on the same port
    now += 3600_000;
    await c.runOnce();
    expect(store.records.get('a')).toEqual({ status: 'live', checkedAt: '2026-11-01T09:00:00.000Z', failingSince: null });
    expect(hiddenByLiveness(store.records.get('a'), clock(), GRACE_MS)).toBe(false);
  });

  it('a 402 naming another payTo is terms_changed; an answer without payment is not_payable', async () => {
    const clock = () => new Date('2026-11-02T00:00:00Z');
    const listing: LivenessListing = {
      key: 'b',
      type: 'http',
      resource: `http://127.0.0.1:${seller.port}/b`,
      toolName: '',
      method: 'GET',
      payTo: PAY_TO,
    };
    const c = checker(new MapStore([listing]), clock);
    try {
      payTo = OTHER;
      expect((await c.check(listing))?.status).toBe('terms_changed');
      payTo = PAY_TO;
      free = true;
      expect((await c.check(listing))?.status).toBe('not_payable');
    } finally {
      payTo = PAY_TO;
      free = false;
    }
  });

  it('pacing: one origin at most once per interval (the others are given back); perMinute bounds a pass; 0 is off', async () => {
    let now = Date.parse('2026-11-03T00:00:00Z');
    const clock = () => new Date(now);
    const listings = ['c1', 'c2', 'c3'].map((key): LivenessListing => ({
      key,
      type: 'http',
      resource: `http://127.0.0.1:${seller.port}/${key}`,
      toolName: '',
      method: 'GET',
      payTo: PAY_TO,
    }));
    const store = new MapStore(listings);
    expect(await checker(store, clock, { perMinute: 0 }).runOnce()).toBe(0);
    const c = checker(store, clock, { hostIntervalMs: 10_000 });
    expect(await c.runOnce()).toBe(1); // one origin: one probe
    expect(await c.runOnce()).toBe(0); // same instant: the origin waits
    now += 10_000;
    expect(await c.runOnce()).toBe(1);
    // A pass probes its share of perMinute: 2 a minute, passes a minute apart.
    const many = checker(new MapStore(listings), clock, { perMinute: 2, passMs: 60_000 });
    expect(await many.runOnce()).toBe(2);
    expect(await checker(new MapStore(listings), clock, { perMinute: 6 }).runOnce()).toBe(1);
  });

  it('a private seller is unreachable, through the address guard', async () => {
    const strict = new LivenessChecker({
      store: new MapStore([]),
      fetchImpl: guardedFetch([]),
      clock: () => new Date(),
      intervalMs: 1,
      concurrency: 1,
      perMinute: 1,
      hostSlots: memoryHostSlots(0),
      timeoutMs: 5_000,
    });
    const listing: LivenessListing = {
      key: 'p',
      type: 'http',
      resource: `http://127.0.0.1:${seller.port}/p`,
      toolName: '',
      method: 'GET',
      payTo: PAY_TO,
    };
    expect((await strict.check(listing))?.status).toBe('unreachable');
  });

  it('the scheduler runs passes on its own, one at a time, and none after stop()', async () => {
    const listing: LivenessListing = {
      key: 's',
      type: 'http',
      resource: `http://127.0.0.1:${seller.port}/s`,
      toolName: '',
      method: 'GET',
      payTo: PAY_TO,
    };
    const store = new MapStore([listing]);
    let now = Date.parse('2026-11-04T00:00:00Z');
    let passes = 0;
    const claim = store.claimDue.bind(store);
    store.claimDue = async (...args) => (passes++, claim(...args));
    const options = { store, fetchImpl, clock: () => new Date((now += 3600_000)), intervalMs: 1, concurrency: 1 };
    const scheduler = new LivenessScheduler(
      { ...options, perMinute: 60, hostSlots: memoryHostSlots(0), timeoutMs: 5_000, passMs: 20 },
      { warn: () => undefined },
    ).start();
    const deadline = Date.now() + 60_000;
    while (passes < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await scheduler.stop();
    expect(store.records.get('s')).toMatchObject({ status: 'live' });
    const stoppedAt = passes;
    await new Promise((r) => setTimeout(r, 100));
    expect(passes).toBe(stoppedAt);
    expect(await scheduler.runOnce()).toBe(0);
  });

  it('while nothing is due, the scheduler spaces its passes out (each waits twice as long as the last)', async () => {
    const store = new MapStore([]);
    let passes = 0;
    const claim = store.claimDue.bind(store);
    store.claimDue = async (...args) => (passes++, claim(...args));
    const options = { store, fetchImpl, clock: () => new Date(), intervalMs: 1, concurrency: 1 };
    const scheduler = new LivenessScheduler(
      { ...options, perMinute: 60, hostSlots: memoryHostSlots(0), timeoutMs: 5_000, passMs: 20 },
      { warn: () => undefined },
    ).start();
    // Passes at 20, 60 and 140 ms at the earliest (20, 40 and 60 at a fixed 20 ms); timers fire late on a busy machine, and
    // can fire a millisecond early by the clock (the event loop reads its time once per turn): 1 ms of slack per pass.
    const started = performance.now();
    const deadline = Date.now() + 60_000;
    while (passes < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const elapsed = performance.now() - started;
    await scheduler.stop();
    expect(passes).toBeGreaterThanOrEqual(3);
    expect(elapsed).toBeGreaterThanOrEqual(140 - 3);
  });
});

describe('a templated listing is called with its pathParams', () => {
  it('each :name its pathParams name is filled, percent-encoded as one segment; the others stay', () => {
    const target = { type: 'http' as const, url: 'https://api.example.com/users/:id/posts/:post', method: 'GET', input: { q: 'x' } };
    expect(unpaidHttpRequest({ ...target, pathParams: { id: '42', post: 'a b?c' } }).url).toBe(
      'https://api.example.com/users/42/posts/a%20b%3Fc?q=x',
    );
    expect(unpaidHttpRequest({ ...target, pathParams: { id: 7 } }).url).toBe('https://api.example.com/users/7/posts/:post?q=x');
    expect(unpaidHttpRequest({ ...target, pathParams: { id: { nested: 1 } } }).url).toBe(
      'https://api.example.com/users/:id/posts/:post?q=x',
    );
    expect(unpaidHttpRequest(target).url).toBe('https://api.example.com/users/:id/posts/:post?q=x');
    // svc's own check sends no example query and no body, and a safe method first.
    expect(checkHttpRequest({ ...target, pathParams: { id: '42', post: '1' } })).toMatchObject({
      url: 'https://api.example.com/users/42/posts/1',
      method: 'GET',
    });
    const post = checkHttpRequest({
      type: 'http',
      url: 'https://api.example.com/v/:id',
      method: 'DELETE',
      input: { confirm: 'yes' },
      pathParams: { id: '1' },
    });
    expect(post).toEqual({ url: 'https://api.example.com/v/1', method: 'GET', init: { method: 'GET' } });
  });

  it('a value that leaves its segment, or a template without a literal segment, is refused before any request', () => {
    const v = { type: 'http' as const, url: 'https://api.example.com/v/users/:a/:b/:c', method: 'GET' };
    const refused = (pathParams: Record<string, unknown>, url = v.url) => {
      try {
        unpaidHttpRequest({ ...v, url, pathParams });
        return undefined;
      } catch (err) {
        expect(err).toBeInstanceOf(TemplateEscapeError);
        return (err as Error).message;
      }
    };
    expect(refused({ a: '..', b: '..', c: 's' })).toMatch(/pathParams.a is a dot segment/);
    expect(refused({ a: '.', b: 'x', c: 's' })).toMatch(/dot segment/);
    for (const escape of ['a/b', 'a\\b', '%2e%2e', '%2E%2e', 'x%2Fy', 'x%5cy', '%252e%252e', 'x%252Fy', ''])
      expect(refused({ a: escape, b: 'x', c: 's' }), escape).toMatch(/pathParams.a/);
    expect(refused({ anything: 's' }, 'https://api.example.com/:anything')).toMatch(/no literal path segment/);
    expect(refused({ a: 'x', b: 'y' }, 'https://api.example.com/:a/:b')).toMatch(/no literal path segment/);
    expect(refused({ a: 'x.y', b: '..x', c: '%20' })).toBeUndefined(); // dots inside a value, an encoded space: one segment still
  });
});
