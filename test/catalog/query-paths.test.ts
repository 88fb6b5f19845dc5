/**
 * The discovery path counters (src/catalog/query-paths.ts, docs/OPERATIONS.md "Metrics") over real HTTP, on both
 * stores: a real svc (its catalog opened from its config, as `npm start` opens it) lists a few listings from real
 * settlements, answers searches and list pages of each kind, and GET /metrics shows the path each one took, every
 * path of the store from 0, no label outside the named paths, and nothing moved by /metrics' own reads.
 */
import { join } from 'node:path';
// @ts-expect-error the package ships no type declarations; the shape used is `Metric` below.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_COUNTS, LIST_PATHS, SEARCH_PATHS } from '../../src/catalog/query-paths.ts';
import { api } from '../helpers/contract.ts';
import { exactKind, FakeScheme } from '../helpers/fake-scheme.ts';
import { BACKENDS, freshCatalogDatabase } from '../helpers/postgres.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { ASSET, settlement, tempDir } from './fixtures.ts';

interface Metric {
  name: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string }>;
}
type Counts = { search: Map<string, number>; list: Map<string, number>; kept: Map<string, number> };

const LISTINGS = [
  { url: 'https://kestrel.example.com/weather', description: 'weather forecast by city', network: 'stellar:testnet', amount: '1000' },
  { url: 'https://osprey.example.com/weather', description: 'weather forecast and tides', network: 'stellar:pubnet', amount: '5000' },
  { url: 'https://heron.example.com/maps', description: 'maps of every city', network: 'stellar:testnet', amount: '20000' },
  { url: 'https://plover.example.com/tiles', description: 'map tiles and weather radar', network: 'stellar:pubnet', amount: '90000' },
];

describe.each(BACKENDS)('discovery path counters on /metrics (%s)', (backend) => {
  const store = backend === 'SQLite' ? 'sqlite' : 'postgres';
  const scheme = new FakeScheme({
    kinds: [exactKind('stellar:testnet'), exactKind('stellar:pubnet')],
    settle: {
      success: true,
      transaction: 'ab'.repeat(32),
      network: 'stellar:testnet',
      payer: 'GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG',
    },
  });
  let server: TestServer;
  let cleanup: () => void;

  beforeAll(async () => {
    const dir = tempDir('svc-paths-');
    cleanup = dir.cleanup;
    const env: Record<string, string> = { DB_PATH: join(dir.dir, 'svc.sqlite') };
    if (backend === 'Postgres') env.DATABASE_URL = await freshCatalogDatabase();
    server = await startTestServer({ scheme, config: testConfig(env) });
    for (const listing of LISTINGS) {
      const res = await api(server.url).post('/settle', { x402Version: 2, ...settlement(listing) });
      expect(res.status).toBe(200);
      expect(JSON.parse(Buffer.from(res.headers.get('extension-responses')!, 'base64').toString('utf8')).bazaar).toEqual({
        status: 'success',
      });
    }
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    cleanup?.();
  });

  /** This store's path counters as /metrics shows them now. */
  async function scrape(): Promise<Counts> {
    const parsed = parsePrometheusTextFormat((await api(server.url).get('/metrics')).text) as Metric[];
    const family = (name: string, label = 'path') => {
      const counts = new Map<string, number>();
      for (const m of parsed.find((f) => f.name === name)?.metrics ?? []) {
        expect(m.labels?.store).toBe(store);
        counts.set(m.labels![label]!, Number(m.value));
      }
      return counts;
    };
    return {
      search: family('svc_catalog_search_path_total'),
      list: family('svc_catalog_list_path_total'),
      kept: family('svc_catalog_search_kept_counts_total', 'outcome'),
    };
  }

  /** The paths whose counters `path` (a GET) moved, and by how much. */
  async function moved(path: string): Promise<{ search: Record<string, number>; list: Record<string, number> }> {
    const before = await scrape();
    const res = await api(server.url).get(path);
    expect(res.status, path).toBe(200);
    const after = await scrape();
    const delta = (kind: 'search' | 'list') =>
      Object.fromEntries(
        [...after[kind]].flatMap(([name, n]) => (n === (before[kind].get(name) ?? 0) ? [] : [[name, n - (before[kind].get(name) ?? 0)]])),
      );
    return { search: delta('search'), list: delta('list') };
  }

  it('shows every path of the store from 0, and only the named paths', async () => {
    const { search, list } = await scrape();
    const ofStore = (paths: Record<string, { stores: readonly string[] }>) =>
      Object.entries(paths)
        .filter(([, p]) => p.stores.includes(store))
        .map(([name]) => name)
        .sort();
    expect([...search.keys()].sort()).toEqual(ofStore(SEARCH_PATHS));
    expect([...list.keys()].sort()).toEqual(ofStore(LIST_PATHS));
  });

  it("searches at one write sequence reuse their reader's kept term counts; after a write, the next forgets them", async () => {
    const keptMoved = async (searches: number) => {
      const before = (await scrape()).kept;
      for (let i = 0; i < searches; i++) expect((await api(server.url).get('/discovery/search?query=weather%20maps')).status).toBe(200);
      const after = (await scrape()).kept;
      expect([...after.keys()].sort()).toEqual(Object.keys(KEPT_COUNTS).sort());
      return Object.fromEntries([...after].map(([outcome, n]) => [outcome, n - before.get(outcome)!]));
    };
    // At most two readers: each reader's first search may forget, every later one reuses.
    const SEARCHES = 6;
    const quiet = await keptMoved(SEARCHES);
    expect(quiet.reused! + quiet.forgotten!).toBe(SEARCHES);
    expect(quiet.reused).toBeGreaterThanOrEqual(SEARCHES - 2);
    const res = await api(server.url).post('/settle', {
      x402Version: 2,
      ...settlement({ url: 'https://wren.example.com/maps', description: 'maps of the coast' }),
    });
    expect(res.status).toBe(200);
    expect(await keptMoved(1)).toEqual({ reused: 0, forgotten: 1 });
  });

  it('a one-word search counts aggregate (the word and its stem are two keys); a word only a URL holds, the URL search', async () => {
    expect(await moved('/discovery/search?query=weather')).toEqual({ search: { aggregate: 1 }, list: {} });
    expect(await moved('/discovery/search?query=kestrel')).toEqual({ search: { url: 1 }, list: {} });
  });

  it('a several-term search within the budget counts aggregate, filtered or not', async () => {
    expect(await moved(`/discovery/search?query=${encodeURIComponent('weather forecast city')}`)).toEqual({
      search: { aggregate: 1 },
      list: {},
    });
    const filtered = await moved(`/discovery/search?query=${encodeURIComponent('weather city')}&network=stellar:pubnet`);
    expect(filtered).toEqual({ search: { aggregate: 1 }, list: {} });
  });

  it('each list page counts its path', async () => {
    expect(await moved('/discovery/resources')).toEqual({ search: {}, list: { keys: 1 } });
    expect(await moved('/discovery/resources?network=stellar:pubnet')).toEqual({ search: {}, list: { keys: 1 } });
    expect(await moved(`/discovery/resources?resource=${encodeURIComponent(LISTINGS[0]!.url)}`)).toEqual({
      search: {},
      list: { columns: 1 },
    });
    expect(await moved('/discovery/resources?url=osprey')).toEqual({ search: {}, list: { url_index: 1 } });
    const priced = await moved(`/discovery/resources?asset=${ASSET}&maxAmount=30000`);
    expect(priced.search).toEqual({});
    expect(Object.values(priced.list)).toEqual([1]);
    expect(Object.keys(priced.list)[0]).toMatch(/^price_by_/);
  });

  it("/metrics' own reads of the listings move no counter", async () => {
    const first = await scrape();
    for (let i = 0; i < 3; i++) await scrape();
    expect(await scrape()).toEqual(first);
  });
});
