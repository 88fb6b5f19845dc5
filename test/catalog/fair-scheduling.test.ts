/**
 * Fair scheduling of the catalog's readers (docs/CATALOG.md "Fair scheduling"): clients take
 * turns, each holds at most its share of the queue, heavy searches run on all readers but one,
 * and the HTTP layer names the client (its peer address) without the catalog knowing HTTP.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/catalog/threads/fair-queue.ts';
import { tallyReaderCpu, WorkerLanes } from '../../src/catalog/threads/pool.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { CatalogPort, DiscoveryFilters, Requester } from '../../src/catalog/types.ts';
import { isHeavySearch } from '../../src/catalog/index.ts';
import { request } from 'node:http';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { tempDir } from './fixtures.ts';

const job = (client: string, n: number, heavy = false) => ({ client, heavy, n });

describe('FairQueue', () => {
  it('clients take turns, each in its own order', () => {
    const q = new FairQueue<ReturnType<typeof job>>();
    for (let n = 1; n <= 4; n++) q.push(job('flood', n));
    q.push(job('honest', 1));
    q.push(job('other', 1));
    const order: string[] = [];
    for (let j = q.take(true); j; j = q.take(true)) order.push(`${j.client}${j.n}`);
    expect(order).toEqual(['flood1', 'honest1', 'other1', 'flood2', 'flood3', 'flood4']);
    expect(q.size).toBe(0);
  });

  it('a heavy job waits while heavy ones may not run; light ones of other clients go first', () => {
    const q = new FairQueue<ReturnType<typeof job>>();
    q.push(job('flood', 1, true));
    q.push(job('flood', 2, false));
    q.push(job('honest', 1, false));
    expect(q.take(false)).toMatchObject({ client: 'honest', n: 1 });
    expect(q.take(false)).toBeUndefined();
    expect(q.take(true)).toMatchObject({ client: 'flood', n: 1 });
    expect(q.waiting('flood')).toBe(1);
  });

  it('a job that gave up leaves the queue; drain returns the rest', () => {
    const q = new FairQueue<ReturnType<typeof job>>();
    const a = job('a', 1);
    q.push(a);
    q.push(job('b', 1));
    expect(q.remove(a)).toBe(true);
    expect(q.remove(a)).toBe(false);
    expect(q.waiting('a')).toBe(0);
    expect(q.drain().map((j) => j.client)).toEqual(['b']);
    expect(q.size).toBe(0);
  });
});

/** A reader lane over an empty catalog file of its own, closed after the file's tests. */
function readerLane(prefix: string, threads: Partial<ConstructorParameters<typeof WorkerLanes>[0]>): WorkerLanes {
  const t = tempDir(prefix);
  const dbPath = join(t.dir, 'catalog.sqlite');
  new CatalogStore(dbPath).close();
  const lanes = new WorkerLanes(
    {
      dbPath,
      databaseUrl: undefined,
      role: 'reader',
      softBudgetMs: undefined,
      schema: { wallMs: undefined, standby: undefined },
      threads: 1,
      heavyThreads: 1,
      maxQueued: 64,
      maxQueuedPerClient: 16,
      deadlineMs: 60_000,
      ...threads,
    },
    () => undefined,
  );
  afterAll(async () => {
    await lanes.close();
    t.cleanup();
  });
  return lanes;
}

const search = (query: string) => ({ op: 'search' as const, now: Date.now(), query, filters: {}, page: { limit: 5 } });

describe('the reader lane', () => {
  const lanes = readerLane('svc-fair-', { threads: 2 });

  it('heavy searches take one reader of two, a client holds at most its share, and another client still runs at once', async () => {
    const heavy = 'a b c d e f g h';
    const flood = Array.from({ length: 17 }, () => lanes.run(search(heavy), { client: 'flood', heavy: true }).then(() => 'ok'));
    // Dispatch is synchronous: one heavy search runs, 16 wait, the second reader stays free.
    expect(lanes.load).toEqual({ threads: 2, queued: 16, running: 1, heavyRunning: 1 });
    // The 18th is over the client's share: refused at once, saying why.
    await expect(lanes.run(search(heavy), { client: 'flood', heavy: true })).rejects.toThrow(
      /this client already has 16 catalog requests waiting/,
    );
    // Another client's light search takes the free reader at once.
    const honest = lanes.run(search('weather forecast'), { client: 'honest' });
    expect(lanes.load).toEqual({ threads: 2, queued: 16, running: 2, heavyRunning: 1 });
    await honest;
    expect(await Promise.all(flood)).toEqual(Array(17).fill('ok'));
    expect(lanes.load).toEqual({ threads: 2, queued: 0, running: 0, heavyRunning: 0 });
  });
});

describe('what each caller spent on the readers', () => {
  const lanes = readerLane('svc-tally-', { threads: 2 });

  it('is the reader CPU of its own requests, not of those that ran beside them (payment-priority.ts charges discovery with it)', async () => {
    const own = { ms: 0 };
    const beside = { ms: 0 };
    const none = { ms: 0 };
    let done!: () => void;
    // A caller that makes no catalog request while the others run.
    const idle = tallyReaderCpu(none, () => new Promise<void>((resolve) => (done = resolve)));
    const many = Array.from({ length: 6 }, () => search('a b c d e f g h'));
    await Promise.all([
      tallyReaderCpu(own, () => lanes.run(search('weather forecast'), { client: 'own' })),
      tallyReaderCpu(beside, () => Promise.all(many.map((body) => lanes.run(body, { client: 'beside' })))),
      lanes.run(search('uncounted'), { client: 'svc' }),
    ]);
    done();
    await idle;
    expect(own.ms).toBeGreaterThan(0);
    expect(beside.ms).toBeGreaterThan(0);
    expect(none.ms).toBe(0);
  });
});

describe('a reader started on demand', () => {
  const lanes = readerLane('svc-burst-', { burstThreads: 1, burstIdleMs: 200 });

  it('starts when a light request would wait behind heavy work, and stops once idle', async () => {
    const flood = Array.from({ length: 4 }, () => lanes.run(search('a b c d e f g h'), { client: 'flood', heavy: true }));
    // Heavy work waiting for the heavy thread starts nothing more.
    expect(lanes.load).toEqual({ threads: 1, queued: 3, running: 1, heavyRunning: 1 });
    const honest = lanes.run(search('weather forecast'), { client: 'honest' });
    expect(lanes.load).toEqual({ threads: 2, queued: 3, running: 2, heavyRunning: 1 });
    await Promise.all([honest, ...flood]);
    const deadline = Date.now() + 30_000;
    while (lanes.load.threads > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(lanes.load).toEqual({ threads: 1, queued: 0, running: 0, heavyRunning: 0 });
    // The lane still answers on its own thread.
    await lanes.run(search('weather'), { client: 'honest' });
  });
});

describe('a lane with no thread until it is needed (the readers and the writer by default)', () => {
  // A 1 ms deadline: only the boot allowance lets the first request wait for its thread.
  const lanes = readerLane('svc-ondemand-', { threads: 0, burstThreads: 1, burstIdleMs: 300, deadlineMs: 1 });

  it('starts a thread for its first request (whose deadline allows for the boot), warm() starts one ahead, and idle ones stop', async () => {
    expect(lanes.load.threads).toBe(0);
    expect(await lanes.run(search('weather'), { client: 'a' })).toMatchObject({ resources: [] });
    const stopped = async () => {
      const deadline = Date.now() + 30_000;
      while (lanes.load.threads > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return lanes.load.threads;
    };
    expect(await stopped()).toBe(0);
    lanes.warm();
    expect(lanes.load.threads).toBe(1);
    lanes.warm(); // one is enough
    expect(lanes.load.threads).toBe(1);
    expect(await stopped()).toBe(0);
  });
});

it('a search of 3 distinct terms or more is heavy', () => {
  expect(['weather', 'weather forecast', 'x x x x x x', 'weather forecast weather'].map(isHeavySearch)).toEqual([
    false,
    false,
    false,
    false,
  ]);
  expect(['weather forecast city', 'a b c d e f g h'].map(isHeavySearch)).toEqual([true, true]);
});

describe('the requester from HTTP', () => {
  it('GET /discovery/search and /discovery/resources name the peer address', async () => {
    const seen: Array<Requester | undefined> = [];
    const catalog: CatalogPort = {
      recordSettlement: async () => null,
      list: async (_f: DiscoveryFilters, page, requester) => {
        seen.push(requester);
        return { x402Version: 2, items: [], pagination: { limit: page.limit, offset: page.offset, total: 0 } };
      },
      search: async (_q, _f, _p, requester) => {
        seen.push(requester);
        return {
          x402Version: 2,
          resources: [],
          partialResults: false,
          pagination: { limit: 0, cursor: null },
          searchMethod: 'text' as const,
          searchedTerms: [],
          droppedTerms: [],
          relevance: 'none' as const,
        };
      },
    };
    const server = await startTestServer({ catalog });
    try {
      const get = (path: string, localAddress: string) =>
        new Promise<number>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port: server.port, path, localAddress, agent: false }, (res) => {
            res.resume();
            res.once('end', () => resolve(res.statusCode ?? 0));
          });
          req.once('error', reject);
          req.end();
        });
      expect(await get('/discovery/search?query=weather', '127.0.0.2')).toBe(200);
      expect(await get('/discovery/resources', '127.0.0.3')).toBe(200);
      expect(seen).toEqual([{ client: '127.0.0.2' }, { client: '127.0.0.3' }]);
    } finally {
      await server.close();
    }
  });
});
