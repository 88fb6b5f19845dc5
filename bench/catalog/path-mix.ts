/**
 * Which search and list paths random query mixes take (the /metrics path counters, as shares), with search p50/p95 per word count.
 *
 * Replays random discovery requests (xorshift, a seed per run, printed) against one svc per store (`dist/main.js`, what
 * `npm start` runs) over HTTP, one connection, and reads which paths answered them from the path counters of GET
 * /metrics (svc_catalog_search_path_total, svc_catalog_list_path_total; src/catalog/query-paths.ts): their deltas over
 * each group of requests, as shares of the requests sent (a request answered by two paths counts in both, so a column
 * may sum past 100 %). Searches are 1–40 words in six word-count groups, each word of a frequency band of the corpus's
 * Zipf vocabulary (bench/lib/catalog-corpus.ts: top, ranks 0–15; common, 16–199; middle, 200–1,999; rare,
 * 2,000–19,999; or mixed, each word of any band), half of them with filters (network, type, asset, maxUsdPrice, a `url` substring of a real
 * listing's URL, alone or combined); list pages carry the list filters at random (none, network, type, payTo, a price,
 * a `url` substring, a resource, a deep offset). The paths that answered nothing are the ones the engine can lose.
 *
 * The corpus is the one bench/catalog/catalog-postgres.ts seeds and loads (DIR/catalog-SIZE.sqlite and database
 * catalog_SIZE in DIR/postgres), served as it is (liveness checks off, so nothing writes to it); with `--stores sqlite`
 * only the SQLite file is seeded (a 1M file is about 15 GB and seeds in hours on a busy machine).
 *
 *   npm run build && npm run bench -- path-mix --keep-dir DIR [--size 100000] [--stores sqlite,postgres]
 *       [--searches 1200] [--lists 300] [--warm 200] [--seed N]
 *   npm run bench -- path-mix --quick     (300 listings, both stores, a few seconds)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { databaseUrl, freePort, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { LIST_PATHS, SEARCH_PATHS } from '../../src/catalog/query-paths.ts';
import { NETWORKS, rng, seedCorpus, urlSubstring, usdPriceCap, vocabularyWord } from '../lib/catalog-corpus.ts';
import { fmt, getJson, loadAverage, machineLine, pct, request, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { keptDir, loadedCorpus } from './lib/loaded-corpus.ts';
import { discoveryOnlyEnv, pathCounters, stopServers } from './lib/catalog-sides.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    'keep-dir': { type: 'string' },
    size: { type: 'string', default: '100000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    searches: { type: 'string', default: '1200' },
    lists: { type: 'string', default: '300' },
    warm: { type: 'string', default: '200' },
    seed: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, a few requests of each kind, in a temporary directory (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { size: '300', searches: '60', lists: '20', warm: '10' });
if (values.quick && !values['keep-dir']) values['keep-dir'] = scratchDir('svc-bench-paths-', { traversable: true });
const dir = keptDir(values['keep-dir']);
requireBuild();
const SIZE = Number(values.size);
const stores = values.stores.split(',');
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));
const out = (s: string) => console.log(s);

/** The corpus's one asset (bench/lib/catalog-corpus.ts), Circle's testnet USDC: `maxUsdPrice` applies to it. */
const ASSET = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';
type Rand = () => number;
const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const between = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

/** The word-count groups of the searches: [fewest, most] words. */
const GROUPS: Array<[number, number]> = [
  [1, 1],
  [2, 2],
  [3, 4],
  [5, 8],
  [9, 16],
  [17, 40],
];
const groupName = ([lo, hi]: [number, number]) => (lo === hi ? `${lo}` : `${lo}–${hi}`);
/** Vocabulary ranks of each frequency band (rank 0 is the most common word; the top 16 are the catalog's chosen common terms at 100k). */
const BANDS: Record<string, [number, number]> = { top: [0, 15], common: [16, 199], middle: [200, 1999], rare: [2000, 19_999] };
const word = (rand: Rand, band: string) =>
  vocabularyWord(between(rand, ...BANDS[band === 'mixed' ? pick(rand, Object.keys(BANDS)) : band]!));

/** What a mix's filters are drawn from: real values of the corpus read from the server. */
interface Sample {
  urls: string[];
  payTos: string[];
  total: number;
}

/** A search's filters (none half the time): one filter, or two that do not repeat a parameter. */
function searchFilters(rand: Rand, sample: Sample): string {
  if (rand() < 0.5) return '';
  const network = () => `network=${pick(rand, NETWORKS)}`;
  const type = () => `type=${pick(rand, ['http', 'mcp'])}`;
  const url = () => `url=${urlSubstring(rand, sample.urls)}`;
  const sets = [
    () => network(),
    () => type(),
    () => url(),
    () => `asset=${ASSET}&maxUsdPrice=${usdPriceCap(rand)}`,
    () => `${network()}&maxUsdPrice=${usdPriceCap(rand)}`,
    () => `${network()}&${type()}`,
    () => `${url()}&${network()}`,
  ];
  return `&${pick(rand, sets)()}`;
}

/** A list page's query string. */
function listQuery(rand: Rand, sample: Sample): string {
  const offset = () => `offset=${pick(rand, [0, 0, 20, 100])}`;
  const kinds = [
    () => offset(),
    () => `network=${pick(rand, NETWORKS)}&${offset()}`,
    () => `type=${pick(rand, ['http', 'mcp'])}&${offset()}`,
    () => `payTo=${pick(rand, sample.payTos)}`,
    () => `asset=${ASSET}&maxAmount=${between(rand, 1000, 1_001_000)}&${offset()}`,
    () => `network=${pick(rand, NETWORKS)}&maxUsdPrice=${usdPriceCap(rand)}&${offset()}`,
    () => `asset=${ASSET}&network=${pick(rand, NETWORKS)}&maxAmount=${between(rand, 1000, 1_001_000)}`,
    () => `url=${urlSubstring(rand, sample.urls)}`,
    () => `url=${urlSubstring(rand, sample.urls)}&network=${pick(rand, NETWORKS)}`,
    () => `resource=${encodeURIComponent(pick(rand, sample.urls))}`,
    () => `offset=${Math.floor(sample.total * rand())}`,
    () => `network=${pick(rand, NETWORKS)}&offset=${Math.floor((sample.total / 3) * rand())}`,
  ];
  return `/discovery/resources?limit=20&${pick(rand, kinds)()}`;
}

/** The searches of the mix, by word-count group and with or without filters (the same for every store: one seed). */
function searches(sample: Sample, count: number): Map<string, string[]> {
  const rand = rng(seed);
  const phases = new Map<string, string[]>();
  for (let i = 0; i < count; i++) {
    const group = pick(rand, GROUPS);
    const band = pick(rand, [...Object.keys(BANDS), 'mixed']);
    const text = Array.from({ length: between(rand, ...group) }, () => word(rand, band)).join(' ');
    const filters = searchFilters(rand, sample);
    const key = `${groupName(group)}|${filters ? 'filtered' : 'unfiltered'}`;
    phases.set(key, [...(phases.get(key) ?? []), `/discovery/search?limit=20&query=${encodeURIComponent(text)}${filters}`]);
  }
  return phases;
}

/** Sends `paths` one at a time; their latencies, non-200 answers, partial answers, and the path counters' deltas. */
async function replay(port: number, paths: string[]) {
  const before = await pathCounters(port);
  const times: number[] = [];
  /** Non-200 answers by status. */
  const failed = new Map<number, number>();
  let partial = 0;
  for (const path of paths) {
    const started = performance.now();
    const res = await request(port, 'GET', path);
    times.push(performance.now() - started);
    if (res.status !== 200) failed.set(res.status, (failed.get(res.status) ?? 0) + 1);
    else if (res.text.includes('"searchMethod":"text_partial"')) partial++;
  }
  const after = await pathCounters(port);
  const delta = (kind: 'search' | 'list') =>
    new Map([...after[kind]].map(([path, n]) => [path, n - (before[kind].get(path) ?? 0)] as [string, number]));
  return { times, failed, partial, search: delta('search'), list: delta('list') };
}

/** Non-200 answers, as "2× 503", or 0. */
const refusals = (...all: Array<Map<number, number> | undefined>) => {
  const counts = new Map<number, number>();
  for (const [status, n] of all.flatMap((m) => [...(m ?? [])])) counts.set(status, (counts.get(status) ?? 0) + n);
  return [...counts].map(([status, n]) => `${n}× ${status}`).join(', ') || '0';
};
const share = (n: number, of: number) => (of === 0 ? '–' : n === 0 ? '0' : `${((100 * n) / of).toFixed(n * 1000 < of ? 2 : 1)} %`);

/** Measures the mix on the server at `port`; prints its tables. */
async function measure(store: 'sqlite' | 'postgres', port: number): Promise<void> {
  const rand = rng(seed ^ 0x5bd1e995);
  const total = (await getJson<{ pagination: { total: number } }>(port, '/discovery/resources?limit=1')).pagination.total;
  const sample: Sample = { urls: [], payTos: [], total };
  for (let i = 0; i < 40; i++) {
    const page = await getJson<{ items: Array<{ resource: string; accepts: Array<{ payTo: string }> }> }>(
      port,
      `/discovery/resources?limit=1&offset=${Math.floor(rand() * total)}`,
    );
    for (const item of page.items) {
      sample.urls.push(item.resource);
      sample.payTos.push(item.accepts[0]!.payTo);
    }
  }
  const phases = searches(sample, Number(values.searches));
  const lists = Array.from({ length: Number(values.lists) }, () => listQuery(rand, sample));
  const every = [...[...phases.values()].flat(), ...lists];
  // A fresh process answers its first pages slower (V8 compiles as it runs): warmed with requests of the mix, not counted.
  const warmRand = rng(seed ^ 0x27d4eb2d);
  await replay(
    port,
    Array.from({ length: Number(values.warm) }, () => pick(warmRand, every)),
  );
  out(`\n### ${store === 'sqlite' ? 'SQLite' : 'Postgres'}, ${total.toLocaleString('en')} listings (load at start ${loadAverage()})\n`);

  const results = new Map<string, Awaited<ReturnType<typeof replay>>>();
  for (const [key, paths] of [...phases].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true })))
    results.set(key, await replay(port, paths));
  const listed = await replay(port, lists);

  out('| words | searches | unfiltered p50 / p95 ms | filtered p50 / p95 ms | text_partial | non-200 |');
  out('| --- | --- | --- | --- | --- | --- |');
  for (const group of GROUPS.map(groupName)) {
    const [plain, filtered] = ['unfiltered', 'filtered'].map((f) => results.get(`${group}|${f}`));
    const cell = (r: typeof plain) => (r && r.times.length ? `${fmt(pct(r.times, 50))} / ${fmt(pct(r.times, 95))}` : '–');
    const n = (plain?.times.length ?? 0) + (filtered?.times.length ?? 0);
    out(
      `| ${group} | ${n} | ${cell(plain)} | ${cell(filtered)} | ${(plain?.partial ?? 0) + (filtered?.partial ?? 0)} | ${refusals(plain?.failed, filtered?.failed)} |`,
    );
  }

  // Search paths: shares of all searches, of the unfiltered and filtered ones, and of each word-count group's.
  const sum = (keys: (key: string) => boolean) => {
    const picked = [...results].filter(([key]) => keys(key)).map(([, r]) => r);
    return {
      n: picked.reduce((a, r) => a + r.times.length, 0),
      of: (path: string) => picked.reduce((a, r) => a + (r.search.get(path) ?? 0), 0),
    };
  };
  const columns = [
    { name: 'all', ...sum(() => true) },
    { name: 'unfiltered', ...sum((k) => k.endsWith('|unfiltered')) },
    { name: 'filtered', ...sum((k) => k.endsWith('|filtered')) },
    ...GROUPS.map(groupName).map((g) => ({ name: `${g} words`, ...sum((k) => k.startsWith(`${g}|`)) })),
  ];
  const ofStore = (paths: Record<string, { stores: readonly string[] }>) =>
    Object.entries(paths).flatMap(([name, p]) => (p.stores.includes(store) ? [name] : []));
  out(`\n| search path | searches | ${columns.map((c) => `${c.name} (${c.n})`).join(' | ')} |`);
  out(`| --- | --- | ${columns.map(() => '---').join(' | ')} |`);
  const unused: string[] = [];
  for (const path of ofStore(SEARCH_PATHS)) {
    const n = columns[0]!.of(path);
    if (n === 0) unused.push(`search ${path}`);
    out(`| ${path} | ${n} | ${columns.map((c) => share(c.of(path), c.n)).join(' | ')} |`);
  }
  out(`\n| list path | pages | share of ${lists.length} list pages |`);
  out('| --- | --- | --- |');
  for (const path of ofStore(LIST_PATHS)) {
    const n = listed.list.get(path) ?? 0;
    if (n === 0) unused.push(`list ${path}`);
    out(`| ${path} | ${n} | ${share(n, lists.length)} |`);
  }
  out(
    `\nList pages p50 / p95 ${fmt(pct(listed.times, 50))} / ${fmt(pct(listed.times, 95))} ms, non-200: ${refusals(listed.failed)}. ` +
      `Served nothing: ${unused.join(', ') || 'none'}. Load average at the end: ${loadAverage()} (/proc/loadavg).`,
  );
}

out(machineLine());
out(`Seed ${seed}; ${values.searches} searches, ${values.lists} list pages, ${values.warm} to warm; limit 20, one connection.`);
const env = (port: number, dbPath: string, extra: Record<string, string> = {}) =>
  discoveryOnlyEnv(port, dbPath, { LIVENESS_CHECKS_PER_MINUTE: '0', ...extra });
const serve = async (store: 'sqlite' | 'postgres', variables: Record<string, string>, port: number) => {
  const server = startNode(['--max-semi-space-size=4', 'dist/main.js'], variables);
  try {
    await waitReady(port, '/discovery/resources?limit=1');
    await measure(store, port);
  } finally {
    await stopServers(server);
  }
};
// The corpus: loaded into Postgres too when it is measured, else only the SQLite file.
const sqlite = stores.includes('postgres') ? loadedCorpus(dir, SIZE) : join(dir, `catalog-${SIZE}.sqlite`);
if (!existsSync(sqlite)) seedCorpus(sqlite, SIZE, (n) => process.stderr.write(`seeded ${n}\r`));
if (stores.includes('sqlite')) {
  const port = await freePort();
  await serve('sqlite', env(port, sqlite), port);
}
if (stores.includes('postgres')) {
  const postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres') });
  try {
    const port = await freePort();
    await serve(
      'postgres',
      env(port, join(dir, `unused-${SIZE}.sqlite`), { DATABASE_URL: databaseUrl(postgres.url, `catalog_${SIZE}`) }),
      port,
    );
  } finally {
    await postgres.stop();
  }
}
