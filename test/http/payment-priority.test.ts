/**
 * Payments before discovery (src/http/payment-priority.ts): the gate itself, with the main thread's
 * utilization injected (the named boundary: a test cannot make its own event loop busy without
 * stopping itself), then over real HTTP through the service: while payments keep the thread busy
 * discovery runs one request at a time with a pause after each, taken in turn by client, and a
 * request that finds no turn within its wait is refused with 503 svc_catalog_busy, in the shape
 * openapi.yaml declares.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PaymentPriority } from '../../src/http/payment-priority.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer } from '../helpers/server.ts';

const SAMPLE_MS = 10;
let utilization = 0;
const gates: PaymentPriority[] = [];
/**
 * Payments count as recent for 5 s unless a test says otherwise (the default is 250 ms): on a loaded
 * machine this process can stall longer than 250 ms between two steps of a test, and a gate whose
 * payments went stale meanwhile lets discovery through where the test expects it held.
 */
const gate = (options: ConstructorParameters<typeof PaymentPriority>[0] = {}) => {
  const g = new PaymentPriority({
    sampleMs: SAMPLE_MS,
    maxWaitMs: 300,
    recentPaymentMs: 5_000,
    utilization: () => utilization,
    ...options,
  });
  gates.push(g);
  return g;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Runs the payments middleware once: a payment request was seen now. */
const payment = async (g: PaymentPriority) => g.payments()({} as never, async () => undefined);

afterEach(() => {
  for (const g of gates.splice(0)) g.close();
  utilization = 0;
});

describe('the gate', () => {
  it('never holds discovery while no payment was seen, however busy the thread', async () => {
    const g = gate();
    utilization = 1;
    await sleep(3 * SAMPLE_MS);
    expect(g.busy).toBe(false);
    const [a, b] = await Promise.all([g.admit('a'), g.admit('a')]);
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
  });

  it('while a busy thread serves payments: one discovery request at a time, the next after a pause, none starved', async () => {
    const g = gate({ maxWaitMs: 5_000, share: 0.5, burstMs: 0 });
    utilization = 0.95;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    expect(g.busy).toBe(true);
    // Alone, a request goes on at once: payments leave discovery its share, never nothing.
    const first = await g.admit('a');
    expect(first).not.toBeNull();
    let second: unknown;
    void g.admit('b').then((r) => (second = r));
    await sleep(5 * SAMPLE_MS);
    expect(second).toBeUndefined();
    first!();
    // Not at the release: after a pause as long as the first one ran (share 0.5, no credit saved).
    expect(second).toBeUndefined();
    for (let i = 0; i < 400 && second === undefined; i++) await sleep(5);
    expect(second).toEqual(expect.any(Function));
  });

  it('a client that rarely asks goes on at once on the credit discovery saved (a flood of payments alone starves no search)', async () => {
    // What a search costs, moved by the test alone: exactly 5 ms each.
    let cost = 0;
    const g = gate({ share: 0.01, burstMs: 100, spent: () => cost, perRequestMs: 0 });
    utilization = 1;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    expect(g.busy).toBe(true);
    // Five searches of 5 ms each: 25 ms of the 100 ms saved. Without the credit each would wait 99
    // times its predecessor's cost (495 ms), past the 300 ms wait.
    for (let i = 0; i < 5; i++) {
      const release = await g.admit('honest');
      expect(release, `search ${i}`).not.toBeNull();
      cost += 5;
      release!();
    }
  });

  it('takes the waiting requests in turn by client: an honest client waits for one request of the flood, not for the flood', async () => {
    const g = gate({ maxWaitMs: 10_000, share: 0.9 });
    utilization = 1;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    const running = await g.admit('flood');
    const order: string[] = [];
    const waits = [...Array.from({ length: 4 }, (_, i) => ['flood', `flood ${i}`]), ['honest', 'honest']].map(async ([client, name]) => {
      const release = await g.admit(client);
      order.push(name!);
      await sleep(1);
      release!();
    });
    running!();
    await Promise.all(waits);
    expect(order).toEqual(['flood 0', 'honest', 'flood 1', 'flood 2', 'flood 3']);
  });

  it('refuses a request that waited its bound, and any beyond the waiting cap at once', async () => {
    const g = gate({ maxWaiting: 2 });
    utilization = 1;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    const running = await g.admit('a');
    expect(running).not.toBeNull();
    const started = performance.now();
    let waited = false;
    const waits = Promise.all([g.admit('b'), g.admit('c')]).finally(() => (waited = true));
    // Refused at once: answered while the two admitted to the queue are still waiting (an order, not
    // a wall-clock bound, so a busy machine cannot fail it).
    expect(await g.admit('d')).toBeNull();
    expect(waited).toBe(false);
    expect(await waits).toEqual([null, null]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    running!();
  });

  it('stops holding once payments stop, even if the thread stays busy', async () => {
    const g = gate({ recentPaymentMs: 60, maxWaitMs: 5_000 });
    utilization = 1;
    await payment(g);
    await sleep(2 * SAMPLE_MS);
    const running = await g.admit('a');
    const admitted = await g.admit('b');
    expect(admitted).not.toBeNull();
    expect(g.busy).toBe(false);
    running!();
    admitted!();
  });
});

describe('over HTTP', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let priority: PaymentPriority;
  beforeAll(async () => {
    // Discovery's least share: the pause after a search is 99 times its cost (at least the 1 ms
    // charged for the main thread), longer than the next one waits.
    priority = new PaymentPriority({
      sampleMs: SAMPLE_MS,
      maxWaitMs: 50,
      recentPaymentMs: Infinity,
      share: 0.01,
      burstMs: 0,
      utilization: () => utilization,
    });
    server = await startTestServer({ priority });
  });
  afterAll(async () => {
    await server.close();
  });

  it('beside payments a search is answered in its turn; one that finds no turn within its wait gets 503 svc_catalog_busy', async () => {
    const client = api(server.url);
    utilization = 1;
    await sleep(3 * SAMPLE_MS);
    expect((await client.get('/discovery/search?query=weather')).status).toBe(200);
    // A payment request (refused or not, it is payment work on this thread): discovery now has its share.
    await client.post('/verify', {});
    await sleep(3 * SAMPLE_MS);
    expect(priority.busy).toBe(true);
    // The first search goes on at once; the one after it meets the pause its predecessor's time costs.
    expect((await client.get('/discovery/search?query=weather')).status).toBe(200);
    const started = performance.now();
    const res = await client.get('/discovery/search?query=weather');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('svc_catalog_busy');
    expect(res.body.error.reason).toMatch(/Payments are using this service's capacity/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    // A malformed discovery request is refused at once, without a turn.
    const bad = await client.get('/discovery/resources?bogus=1');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('svc_invalid_query_parameter');
    // The thread has room again: discovery is answered.
    utilization = 0.2;
    await sleep(3 * SAMPLE_MS);
    expect((await client.get('/discovery/resources')).status).toBe(200);
  });
});
