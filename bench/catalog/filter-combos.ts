/**
 * Filter combinations (asset with network, scheme or type, price caps, url) on list and search, both stores, against a baseline.
 *
 * `GET /discovery/resources` and `GET /discovery/search` with `asset` combined with `network`, `scheme` or `type`, with
 * and without `maxAmount` or `maxUsdPrice`, and the `url` filter (docs/CATALOG.md "List"): per combination, every
 * request draws its values at random (xorshift, a seed per run, printed) from the corpus's real values (its networks,
 * scheme, types and asset; amounts over its 1,000–1,001,000 range; url substrings cut from the resource URLs of random
 * listings; search queries of one or two of the 200 most common words, and two of the 16 most common under a filter:
 * the case the set driver and the work budget bound), so no fixed request can be tuned for.
 *
 * Each store runs two `dist/main.js` processes (what `npm start` runs): this checkout and a baseline build
 * (bench/lib/baseline-build.ts) each on its own copy of one corpus, measured by the same client at one connection,
 * alternating sides per combination (two rounds, the better p95 kept), the same requests on both. The corpus is the
 * one bench/catalog/catalog-postgres.ts seeds and loads into Postgres, run by the baseline's own tree in DIR (so
 * the SQLite file and the database are at the baseline's schema; this checkout's svc migrates its copies when it
 * starts): DIR keeps them between runs, and a copy for this checkout is made once (`--fresh` makes it again).
 *
 *   npm run build && npm run bench -- filter-combos --keep-dir DIR [--before COMMIT] [--size 100000] [--requests 100]
 *       [--stores sqlite,postgres] [--seed N] [--fresh] [--rows REGEX (the rows whose "endpoint, filters" it matches)]
 *       [--warm N] [--pg-setting NAME=VALUE (the Postgres server's, repeatable: `shared_buffers=6GB`)]
 *       [--failing SHARE or BEFORE,AFTER (Postgres: that share of the listings failing their liveness checks)]
 *
 * `--failing` sets a share (0–1) of each side's database's listings failing, half of them hidden (past the grace period),
 * before the servers start, and waits for their lifecycle pass to stash the hidden ones (lib/failing-listings.ts): the
 * statements that leave failing listings out are planned on the share a real catalog holds. Two shares are the
 * baseline's and this checkout's (`--before . --failing 0,0.01`: this checkout beside itself, without and with them).
 *
 * `--before none` measures this checkout alone on the corpus itself, no copy: a 1M corpus on Postgres is about 25 GB a
 * database, and a baseline needs two more (docs/BENCHMARKS.md "Filter combinations").
 *
 * Before the rows, each server answers --warm requests (default 1,000) drawn from every row's: a fresh process answers its
 * first few hundred pages about twice as slowly as later ones (V8 compiles the hot code as it runs), so without this the
 * first rows measured start-up, not what a running svc answers.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { databaseUrl, freePortPair, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { NETWORKS, rng, urlSubstring, usdPriceCap, vocabularyWord } from '../lib/catalog-corpus.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { keptDir, loadedCorpus } from './lib/loaded-corpus.ts';
import { FAILING_GRACE_HOURS, markFailing, settledLifecycle } from './lib/failing-listings.ts';
import { THIS_CHECKOUT } from '../lib/quick.ts';
import { discoveryOnlyEnv, stopServers } from './lib/catalog-sides.ts';
import { fmt, getJson, load, loadAverage, machineLine, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';
import { copySqlite } from '../lib/sqlite-copy.ts';

const { values } = parseArgs({
  options: {
    'keep-dir': { type: 'string' },
    before: { type: 'string', default: '3cbc6d9' },
    size: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '100' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    seed: { type: 'string' },
    fresh: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    rows: { type: 'string' },
    warm: { type: 'string', default: '1000' },
    'pg-setting': { type: 'string', multiple: true, default: [] },
    failing: { type: 'string' },
  },
});
// --quick: 300 listings, 3 requests a row, 20 to warm, this checkout on both sides, in a temporary directory (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { before: THIS_CHECKOUT, size: '300', requests: '3', warm: '20' });
if (values.quick && !values['keep-dir']) values['keep-dir'] = scratchDir('svc-bench-combos-');
const dir = keptDir(values['keep-dir']);
requireBuild();
const SIZE = Number(values.size);
const REQUESTS = Number(values.requests);
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));
const stores = values.stores.split(',');
const out = (s: string) => console.log(s);
/** No baseline (`--before none`): this checkout alone, its server on the corpus it loaded. */
const alone = values.before === 'none';
/** --failing: each side's share of listings failing (one share for both), undefined to leave the databases as they are. */
const failing = values.failing?.split(',').map(Number);
if (failing && (failing.length > 2 || failing.some((share) => !(share >= 0 && share <= 1))))
  throw new Error(`--failing ${values.failing}: one share or two (before,after), each 0 to 1`);

/** The corpus's one asset (bench/lib/catalog-corpus.ts), Circle's testnet USDC: `maxUsdPrice` applies to it (7 decimals). */
const ASSET = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';

/** A combination: its name and the query string of its i-th request, drawn with `rand`; `common`: a search row only, of common words. */
interface Combination {
  name: string;
  query: (rand: () => number) => string;
  common?: boolean;
}
const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const network = (rand: () => number) => `network=${pick(rand, NETWORKS)}`;
const type = (rand: () => number) => `type=${pick(rand, ['http', 'mcp'])}`;
const maxAmount = (rand: () => number) => `maxAmount=${1000 + Math.floor(rand() * 1_000_000)}`;
const maxUsdPrice = (rand: () => number) => `maxUsdPrice=${usdPriceCap(rand)}`;
const asset = () => `asset=${ASSET}`;
const scheme = () => 'scheme=exact';
const offset = (rand: () => number) => `offset=${pick(rand, [0, 0, 20, 100])}`;

/** url values: substrings of real resource URLs, 3 to 24 characters. */
function urlFilter(urls: string[]): (rand: () => number) => string {
  return (rand) => `url=${urlSubstring(rand, urls)}`;
}

/** url values that name a listing's host (api{i}.seller{j}.example.com), as a lookup of one resource does. */
function urlHost(urls: string[]): (rand: () => number) => string {
  return (rand) => {
    const url = pick(rand, urls);
    return `url=${encodeURIComponent(url.slice(8, url.indexOf('/', 8)))}`;
  };
}

function combinations(urls: string[]): Combination[] {
  const all =
    (...parts: Array<(rand: () => number) => string>) =>
    (rand: () => number) =>
      parts.map((p) => p(rand)).join('&');
  const url = urlFilter(urls);
  return [
    { name: 'asset + network', query: all(asset, network, offset) },
    { name: 'asset + scheme', query: all(asset, scheme, offset) },
    { name: 'asset + type', query: all(asset, type, offset) },
    { name: 'asset + scheme + network', query: all(asset, scheme, network, offset) },
    { name: 'asset + network + type', query: all(asset, network, type, offset) },
    { name: 'asset + network + maxAmount', query: all(asset, network, maxAmount, offset) },
    { name: 'asset + scheme + maxAmount', query: all(asset, scheme, maxAmount, offset) },
    { name: 'asset + type + maxAmount', query: all(asset, type, maxAmount, offset) },
    { name: 'network + maxUsdPrice', query: all(network, maxUsdPrice, offset) },
    { name: 'asset + type + maxUsdPrice', query: all(asset, type, maxUsdPrice, offset) },
    { name: "url, a listing's host", query: all(urlHost(urls)) },
    { name: 'url, any 3–24 characters', query: all(url) },
    { name: 'url, any 3–24 characters + asset + network', query: all(url, asset, network) },
    // The unbounded case before the set driver and the work budget (docs/CATALOG.md "The three paths"): common words under a filter.
    { name: 'two common words + network', query: all(network), common: true },
    { name: 'two common words + type', query: all(type), common: true },
    { name: 'two common words + asset + network + maxAmount', query: all(asset, network, maxAmount), common: true },
    { name: 'two common words + url, any 3–24 characters', query: all(url), common: true },
  ];
}

/** A search query: one or two of the 200 most common words. */
const searchQuery = (rand: () => number) =>
  `query=${Array.from({ length: 1 + Math.floor(rand() * 2) }, () => vocabularyWord(Math.floor(rand() * 200))).join('+')}`;

/** Two distinct words of the 16 most common (the catalog's chosen common terms: both are searched, past the budget). */
const commonPair = (rand: () => number) => {
  const a = Math.floor(rand() * 16);
  return `query=${vocabularyWord(a)}+${vocabularyWord((a + 1 + Math.floor(rand() * 15)) % 16)}`;
};

/** The same `REQUESTS` paths for both sides: drawn once per combination and endpoint from the run's seed. */
function paths(endpoint: 'list' | 'search', c: Combination, k: number): string[] {
  const rand = rng(seed + k * 7919 + (endpoint === 'search' ? 104_729 : 0));
  return Array.from({ length: REQUESTS }, () =>
    endpoint === 'list'
      ? `/discovery/resources?limit=20&${c.query(rand)}`
      : `/discovery/search?limit=20&${(c.common ? commonPair : searchQuery)(rand)}&${c.query(rand).replace(/&?offset=\d+/, '')}`,
  );
}

/** This checkout's copy of the baseline's SQLite file (made once, or again with --fresh). */
function afterCopy(sqlite: string): string {
  const copy = join(dir, `after-${SIZE}.sqlite`);
  if (values.fresh || !existsSync(copy)) {
    copySqlite(sqlite, copy);
  }
  return copy;
}

/** Databases `before_SIZE` and `after_SIZE`, copies of catalog_SIZE (made once, or again with --fresh); their URLs. */
async function postgresCopies(adminUrl: string): Promise<{ before: string; after: string }> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const urls = { before: '', after: '' };
  try {
    for (const side of ['before', 'after'] as const) {
      const name = `${side}_${SIZE}`;
      const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
      if (exists && values.fresh) await admin.query(`DROP DATABASE ${name}`);
      if (!exists || values.fresh) await admin.query(`CREATE DATABASE ${name} TEMPLATE catalog_${SIZE}`);
      urls[side] = databaseUrl(adminUrl, name);
    }
  } finally {
    await admin.end();
  }
  return urls;
}

/** Resource URLs of random listings (the seed's), read from a server. */
async function sampleUrls(port: number): Promise<string[]> {
  const rand = rng(seed ^ 0x5bd1e995);
  const urls: string[] = [];
  for (let i = 0; i < 50; i++) {
    const page = await getJson<{ items: Array<{ resource: string }> }>(
      port,
      `/discovery/resources?limit=1&offset=${Math.floor(rand() * Math.min(SIZE, 100_000))}`,
    );
    if (page.items[0]) urls.push(page.items[0].resource);
  }
  return urls;
}

/** Measures every combination on both servers; prints the table. */
async function measure(store: string, beforePort: number | undefined, afterPort: number): Promise<void> {
  const urls = await sampleUrls(afterPort);
  const combos = combinations(urls);
  out(`\n### ${store}, ${SIZE.toLocaleString('en')} listings (load at start ${loadAverage()})\n`);
  const rows = (['list', 'search'] as const).flatMap((endpoint) =>
    [...combos.entries()]
      .filter(([, c]) => !(c.common && endpoint === 'list'))
      .filter(([, c]) => values.rows === undefined || new RegExp(values.rows).test(`${endpoint}, ${c.name}`))
      .map(([k, c]) => ({ endpoint, c, requests: paths(endpoint, c, k) })),
  );
  const everyRequest = rows.flatMap((row) => row.requests);
  const WARM = Number(values.warm);
  if (everyRequest.length === 0) throw new Error(`--rows ${values.rows} matches no row`);
  const ports = [beforePort, afterPort].filter((port) => port !== undefined);
  for (const port of ports) await load(port, 1, WARM, (i) => everyRequest[(i * 7919) % everyRequest.length]!);
  out(`Each server warmed with ${WARM} requests drawn from every row's.\n`);
  // The columns name their code (the baseline's commit, this checkout), so a table read alone cannot be read backwards.
  out(
    `| endpoint, filters | before (${values.before}) p50 / p95 ms | after (this checkout) p50 / p95 ms | after ÷ before p95 | text_partial answers: before / after |`,
  );
  out('| --- | --- | --- | --- | --- |');
  for (const { endpoint, c, requests } of rows) {
    const path = (i: number) => requests[i % requests.length]!;
    for (const port of ports) await load(port, 1, Math.min(10, REQUESTS), path); // warm both
    // Alone (no beforePort), `before` is never measured nor printed.
    const best = { before: { p50: Infinity, p95: Infinity, errors: 0 }, after: { p50: Infinity, p95: Infinity, errors: 0 } };
    for (let round = 0; round < 2; round++)
      for (const [side, port] of round % 2
        ? ([
            ['after', afterPort],
            ['before', beforePort],
          ] as const)
        : ([
            ['before', beforePort],
            ['after', afterPort],
          ] as const)) {
        if (port === undefined) continue;
        const r = await load(port, 1, REQUESTS, path);
        if (r.p95 < best[side].p95) best[side] = r;
      }
    const { before, after } = best;
    const errors = before.errors + after.errors ? ` (non-200: before ${before.errors}, after ${after.errors})` : '';
    // How many answers stopped at the work budget, on each side (each request once more, outside the timing).
    const partial = async (port: number | undefined) => {
      let n = 0;
      if (port !== undefined && endpoint === 'search')
        for (const request of requests) if ((await getJson<{ searchMethod?: string }>(port, request)).searchMethod === 'text_partial') n++;
      return port === undefined ? '—' : String(n);
    };
    out(
      `| ${endpoint}, ${c.name}${errors} | ${beforePort === undefined ? '—' : `${fmt(before.p50)} / ${fmt(before.p95)}`} | ${fmt(after.p50)} / ${fmt(after.p95)} | ${beforePort === undefined ? '—' : (after.p95 / before.p95).toFixed(2)} | ${endpoint === 'search' ? `${await partial(beforePort)} / ${await partial(afterPort)} of ${requests.length}` : ''} |`,
    );
  }
  out(`\nLoad average at the end of ${store}: ${loadAverage()}.`);
}

out(machineLine());
out(`Seed ${seed}; before = ${values.before}, after = this checkout; ${REQUESTS} requests per row and side, 1 connection.`);
const beforeDir = baselineBuild(alone ? THIS_CHECKOUT : values.before);
// The corpus at the baseline's schema.
const beforeSqlite = loadedCorpus(dir, SIZE, beforeDir);
const servers: ChildProcess[] = [];
const node = (cwd: string, port: number, env: Record<string, string>) =>
  // Liveness checks off: the kept databases would gain failing listings with each run, and runs would no longer compare.
  startNode(
    ['--max-semi-space-size=4', join(cwd, 'dist/main.js')],
    discoveryOnlyEnv(port, env.DB_PATH!, {
      LIVENESS_CHECKS_PER_MINUTE: '0',
      ...(failing ? { LIVENESS_GRACE_HOURS: String(FAILING_GRACE_HOURS) } : {}),
      ...env,
    }),
  );
// Free ports, not fixed ones: a fixed port may be another process's ephemeral one.
const [freeBefore, afterPort] = await freePortPair();
const beforePort = alone ? undefined : freeBefore;
const ready = () =>
  Promise.all([beforePort, afterPort].flatMap((port) => (port === undefined ? [] : [waitReady(port, '/discovery/resources?limit=1')])));
if (stores.includes('sqlite')) {
  if (alone) servers.push(node('.', afterPort, { DB_PATH: beforeSqlite }));
  else servers.push(node(beforeDir, beforePort!, { DB_PATH: beforeSqlite }), node('.', afterPort, { DB_PATH: afterCopy(beforeSqlite) }));
  try {
    await ready();
    await measure('SQLite', beforePort, afterPort);
  } finally {
    await stopServers(...servers.splice(0));
  }
}
if (stores.includes('postgres')) {
  const postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), settings: values['pg-setting'] });
  try {
    // Alone, the loaded corpus itself (catalog_SIZE) is served.
    const urls: { before?: string; after: string } = alone
      ? { after: databaseUrl(postgres.url, `catalog_${SIZE}`) }
      : await postgresCopies(postgres.url);
    const sides = [...(urls.before === undefined ? [] : [{ side: 'before', url: urls.before }]), { side: 'after', url: urls.after }];
    for (const { side, url } of sides) {
      const share = failing?.[side === 'before' ? 0 : failing.length - 1];
      if (share !== undefined) out(`${side}: ${JSON.stringify(await markFailing(url, share))} listings failing (share ${share}).`);
    }
    const unused = (side: string) => join(dir, `unused-${side}-${SIZE}.sqlite`);
    if (beforePort !== undefined) servers.push(node(beforeDir, beforePort, { DB_PATH: unused('before'), DATABASE_URL: urls.before! }));
    servers.push(node('.', afterPort, { DB_PATH: unused('after'), DATABASE_URL: urls.after }));
    try {
      await ready();
      if (failing) await Promise.all(sides.map(({ url }) => settledLifecycle(url)));
      await measure('Postgres', beforePort, afterPort);
    } finally {
      await stopServers(...servers.splice(0));
    }
  } finally {
    await postgres.stop();
  }
}
