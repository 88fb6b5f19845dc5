/**
 * Payments before discovery (src/http/payment-priority.ts): the gate itself, with the main thread's
 * utilization injected (the named boundary: a test cannot make its own event loop busy without
 * stopping itself), then over real HTTP through the service: while payments keep the thread busy
 * discovery runs one request at a time with a pause after each (its own cost; a burst's debt
 * bounded), taken in turn by client, a request that finds no turn within its wait is refused with
 * 503 svc_catalog_busy, in the shape openapi.yaml declares, and one whose client left is let go.
 */
import { request } from 'node:http';
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

  it('payments arriving at busyPaymentRate hold discovery on an idle thread; a trickle of payments does not', async () => {
    // One payment, then none for several samples: a trickle, the thread idle.
    const g = gate({ busyPaymentRate: 40 });
    utilization = 0;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    expect(g.busy).toBe(false);
    const fast = gate({ busyPaymentRate: 1_000 });
    // 1,000 a second is 10 a sample: a flood of /verify, however idle the samples of the CPU look.
    let flowing = true;
    const flow = (async () => {
      while (flowing) {
        await Promise.all(Array.from({ length: 20 }, () => payment(fast)));
        await sleep(1);
      }
    })();
    try {
      for (let i = 0; i < 100 && !fast.busy; i++) await sleep(SAMPLE_MS);
      expect(fast.busy).toBe(true);
    } finally {
      flowing = false;
      await flow;
    }
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
    // What a search costs, given by the test: exactly 5 ms each.
    const g = gate({ share: 0.01, burstMs: 100, perRequestMs: 0 });
    utilization = 1;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    expect(g.busy).toBe(true);
    // Five searches of 5 ms each: 25 ms of the 100 ms saved. Without the credit each would wait 99
    // times its predecessor's cost (495 ms), past the 300 ms wait.
    for (let i = 0; i < 5; i++) {
      const release = await g.admit('honest');
      expect(release, `search ${i}`).not.toBeNull();
      release!(5);
    }
  });

  it('a burst let in while payments paused leaves a debt of half a wait at most: the next search is not refused for it', async () => {
    // The clock is the test's: time passes only when it says so (timers still run on the real one).
    let clock = 0;
    const g = gate({ share: 0.1, burstMs: 100, maxWaitMs: 1_000, perRequestMs: 0, now: () => clock });
    // A flood's 16 searches let in together while the thread had room...
    const flood = await Promise.all(Array.from({ length: 16 }, () => g.admit('flood')));
    expect(g.load).toEqual({ running: 16, waiting: 0 });
    // ...end once payments keep it busy, each having run 20 ms (wall time here, the gate's default
    // cost): 320 ms charged beside a 100 ms credit.
    utilization = 1;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    expect(g.busy).toBe(true);
    clock += 20;
    for (const release of flood) release!();
    // Half the 1 s wait later, at a tenth of the time, discovery is out of debt: an honest search
    // goes on at once. Charged in full, the debt would hold discovery 1.7 s more and refuse it.
    clock += 500;
    await payment(g);
    const honest = await g.admit('honest');
    expect(honest).not.toBeNull();
    honest!(0);
    expect(g.load).toEqual({ running: 0, waiting: 0 });
  });

  it('a costly request pays for itself in full: the next one waits out its share', async () => {
    let clock = 0;
    const g = gate({ share: 0.1, burstMs: 0, maxWaitMs: 1_000, perRequestMs: 0, now: () => clock });
    utilization = 1;
    await payment(g);
    await sleep(3 * SAMPLE_MS);
    const costly = await g.admit('flood');
    costly!(200);
    // 2 s of the share to pay back: 1.5 s later the next one still waits, and is refused after its 1 s.
    clock += 1_500;
    await payment(g);
    expect(await g.admit('flood')).toBeNull();
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

describe('a search whose client went away while it waited', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let priority: PaymentPriority;
  beforeAll(async () => {
    // No pause to speak of (a full share, a large credit): what holds a search here is a turn.
    priority = new PaymentPriority({
      sampleMs: SAMPLE_MS,
      maxWaitMs: 2_000,
      recentPaymentMs: Infinity,
      share: 1,
      burstMs: 60_000,
      utilization: () => utilization,
    });
    server = await startTestServer({ priority });
  });
  afterAll(async () => {
    await server.close();
  });

  it('ends when its turn comes, so the searches after it are not held', async () => {
    utilization = 1;
    await payment(priority);
    await sleep(3 * SAMPLE_MS);
    expect(priority.busy).toBe(true);
    const running = await priority.admit('test');
    const gone = request(`${server.url}/discovery/search?query=weather`, { agent: false });
    gone.once('error', () => undefined);
    gone.end();
    while (priority.load.waiting === 0) await sleep(5);
    gone.destroy();
    // The server has seen the connection close (and the search's response with it).
    const connections = () => new Promise<number>((resolve) => server.server.getConnections((_, n) => resolve(n)));
    while ((await connections()) > 0) await sleep(5);
    running!(0);
    await new Promise(setImmediate); // the search's middleware goes on (a promise's continuation)
    // Its turn came with no one to answer: it was let go at once, and the next search is answered.
    expect(priority.load).toEqual({ running: 0, waiting: 0 });
    expect((await api(server.url).get('/discovery/search?query=weather')).status).toBe(200);
  });
});
