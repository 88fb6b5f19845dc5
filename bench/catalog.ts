/**
 * Catalog benchmark: write time per settlement (the settle hook), list and search latency
 * p50/p95 at 1k, 10k and 100k generated listings, each beside a naive baseline run in the same
 * process on the same file:
 *   write  vs  one autocommit INSERT OR REPLACE of the same JSON into a keyed table
 *   list   vs  a plain primary-key SELECT of the same number of rows
 *   search vs  LIKE-substring search over the description (no ranking, no index)
 *
 *   npx tsx bench/catalog.ts [sizes=1000,10000,100000] [samples=200]
 */
import { cpus, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openCatalog } from '../src/catalog/index.ts';
import { settlement } from '../test/catalog/fixtures.ts';

const sizes = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number);
const samples = Number(process.argv[3] ?? 200);

/** A deterministic generator (xorshift) so every run builds the same corpus. */
let seed = 0x2545f491;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
const VOCAB = Array.from({ length: 600 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}${'bcdfg'[(i >> 2) % 5]}`);
const words = (n: number) => Array.from({ length: n }, () => pick(VOCAB)).join(' ');

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
function measure(n: number, fn: (i: number) => void): { p50: number; p95: number } {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    fn(i);
    times.push(performance.now() - started);
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}
const fmt = (x: number) => (x < 1 ? x.toFixed(3) : x.toFixed(2));

function makeSettlement(i: number) {
  return settlement({
    url: `https://svc${i}.example.com/api/${pick(VOCAB)}`,
    description: words(10),
    serviceName: `${pick(VOCAB)} ${i % 100}`,
    tags: [pick(VOCAB), pick(VOCAB)],
    network: i % 3 === 0 ? 'stellar:pubnet' : 'stellar:testnet',
    paramSchema: { [pick(VOCAB)]: { type: 'string', description: words(4) } },
    queryParams: {},
  });
}

const rows: string[] = [];
console.log(`node ${process.version}, nproc ${cpus().length}, ${cpus()[0]?.model ?? 'unknown CPU'}`);
for (const size of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-catalog-'));
  try {
    const dbPath = join(dir, 'catalog.sqlite');
    const catalog = openCatalog({ dbPath, logger: { warn() {}, error: (o, m) => console.error(m, o) } });
    const baseline = new DatabaseSync(join(dir, 'baseline.sqlite'));
    baseline.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE kv (id INTEGER PRIMARY KEY, url TEXT UNIQUE, description TEXT, body TEXT)');
    const insert = baseline.prepare('INSERT OR REPLACE INTO kv (id, url, description, body) VALUES (?, ?, ?, ?)');

    // Build the corpus through the real hook, timing every write; the baseline stores the same JSON.
    const hookTimes: number[] = [];
    const baseTimes: number[] = [];
    const built = performance.now();
    for (let i = 0; i < size; i++) {
      const s = makeSettlement(i);
      let started = performance.now();
      const outcome = await catalog.recordSettlement(s);
      hookTimes.push(performance.now() - started);
      if (outcome?.status !== 'success') throw new Error(`write ${i} failed: ${JSON.stringify(outcome)}`);
      started = performance.now();
      insert.run(i + 1, (s.paymentPayload.resource as { url: string }).url, (s.paymentPayload.resource as { description: string }).description, JSON.stringify(s.paymentPayload));
      baseTimes.push(performance.now() - started);
    }
    const buildSeconds = (performance.now() - built) / 1000;
    const write = { p50: percentile(hookTimes, 50), p95: percentile(hookTimes, 95) };
    const writeBase = { p50: percentile(baseTimes, 50), p95: percentile(baseTimes, 95) };
    // Refreshes (same key, same owner) are the steady state once a catalog is populated.
    const refresh = measure(samples, (i) => void catalog.recordSettlement(makeSettlement((i * 7919) % size)));

    const total = catalog.list({}, { limit: 1, offset: 0 }).pagination.total;
    const list = measure(samples, () => catalog.list({}, { limit: 20, offset: Math.floor(rand() * Math.max(1, total - 20)) }));
    const listFiltered = measure(samples, () => catalog.list({ network: 'stellar:pubnet' }, { limit: 20, offset: Math.floor(rand() * 100) }));
    const byKey = baseline.prepare('SELECT body FROM kv WHERE id = ?');
    const listBase = measure(samples, () => {
      const start = 1 + Math.floor(rand() * Math.max(1, size - 20));
      for (let k = 0; k < 20; k++) JSON.parse((byKey.get(start + k) as { body: string }).body);
    });

    const queries = Array.from({ length: samples }, () => words(2));
    const search = measure(samples, (i) => catalog.search(queries[i]!, {}, { limit: 20 }));
    let cursorPage = 0;
    const searchPage2 = measure(samples, (i) => {
      const first = catalog.search(queries[i]!, {}, { limit: 20 });
      if (first.pagination.cursor) {
        catalog.search(queries[i]!, {}, { limit: 20, cursor: first.pagination.cursor });
        cursorPage++;
      }
    });
    const like = baseline.prepare("SELECT body FROM kv WHERE description LIKE '%' || ? || '%' OR description LIKE '%' || ? || '%' LIMIT 21");
    const searchBase = measure(samples, (i) => {
      const [a, b] = queries[i]!.split(' ');
      for (const r of like.all(a!, b!) as Array<{ body: string }>) JSON.parse(r.body);
    });
    const matchCount = catalog.search(queries[0]!, {}, { limit: 100 }).resources.length;

    catalog.close();
    baseline.close();
    const line = (what: string, ours: { p50: number; p95: number }, base: { p50: number; p95: number }, baseName: string) =>
      `| ${size} | ${what} | ${fmt(ours.p50)} | ${fmt(ours.p95)} | ${baseName} ${fmt(base.p50)} / ${fmt(base.p95)} | ${(ours.p50 / base.p50).toFixed(1)}× |`;
    rows.push(
      line('write (new listing, hook total)', write, writeBase, 'INSERT'),
      line('write (refresh, hook total)', refresh, writeBase, 'INSERT'),
      line('list limit 20, random offset', list, listBase, '20× PK SELECT'),
      line('list limit 20, network filter', listFiltered, listBase, '20× PK SELECT'),
      line('search 2 terms, first page', search, searchBase, 'LIKE'),
      line('search first + cursor page', searchPage2, searchBase, 'LIKE'),
    );
    console.log(`size ${size}: built in ${buildSeconds.toFixed(1)} s, ${cursorPage}/${samples} searches had a second page, first query ≥${matchCount} matches`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log('\n| listings | operation | p50 ms | p95 ms | baseline p50 / p95 ms | p50 ratio |\n|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
