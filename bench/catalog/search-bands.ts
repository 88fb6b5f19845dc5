/**
 * Search p95 by word-frequency band and query length, random queries (seed printed), over HTTP against a baseline.
 *
 * Queries are drawn at random (xorshift, a seed per run, printed) from the corpus's Zipf vocabulary
 * (bench/catalog-corpus.ts): words of the 16, 50 and 200 most common, and "natural" (content words
 * of rank 40–3,000 mixed with the 8 most common) and "agent" (an agent's sentence: framing words such as "please find
 * an api that", English words searched by their meaning, common and content words), 1 to 20 words long, so no fixed
 * query set can be tuned for. Each side is its own `dist/main.js` process (this checkout
 * and a baseline build, bench/baseline-build.ts) on its own copy of one seeded catalog file, warmed by `--warmup`
 * untimed searches of another draw, measured with the same client at one connection, alternating sides per row, the
 * same queries for both. A
 * baseline answer other than 200 (it refuses more than 8 terms) is reported as such. A last table gives this checkout's
 * times by the path that served each query: after a row is timed, its queries are sent again, each between two reads of
 * the /metrics path counters, so no side's timed requests follow a scrape (a scrape's work would fall on them).
 *
 *   npm run build && npm run bench -- search-bands --db FILE [--before COMMIT] [--requests 40] [--seed N] [--warmup 1000]
 *       [--db-before FILE2]   (1M: each side on its own file as it is, not a copy: this checkout on FILE, the
 *                              baseline on FILE2, e.g. filter-combos' two files; a 1M file is about 15 GB)
 *   npm run bench -- search-bands --quick     (2,000 listings, this checkout only, a few seconds)
 *   npm run bench -- search-bands --db FILE --pg-dir DIR [--pg-database catalog_100000] [--before COMMIT]
 *       [--pg-setting NAME=VALUE (the Postgres server's, repeatable: `shared_buffers=6GB`, as docs/SCALING.md advises)]
 *       (on Postgres: DIR the data directory catalog-postgres.ts --keep-dir keeps, KEEP/postgres, its database loaded
 *        from FILE; this checkout on SQLite beside itself on Postgres, the ratio Postgres ÷ SQLite and the path table
 *        Postgres's; with --before both sides on Postgres)
 */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SEARCH_BANDS, bandQuery as query, rng, seedCorpus } from '../lib/catalog-corpus.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { discoveryOnlyEnv, pathCounters, stopServers } from './lib/catalog-sides.ts';
import { fmt, loadAverage, machineLine, pct, request, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';
import { databaseUrl, freePort, startEmbeddedPostgres } from '../../src/dev/postgres.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    'db-before': { type: 'string' },
    before: { type: 'string' },
    requests: { type: 'string', default: '40' },
    seed: { type: 'string' },
    lengths: { type: 'string', default: '1,2,3,4,6,8,13,20' },
    quick: { type: 'boolean', default: false },
    'pg-dir': { type: 'string' },
    'pg-setting': { type: 'string', multiple: true, default: [] },
    'pg-database': { type: 'string', default: 'catalog_100000' },
    warmup: { type: 'string', default: '1000' },
  },
});
const quick = values.quick;
if (!quick) requireBuild();
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));
const REQUESTS = quick ? 3 : Number(values.requests);
const WARMUP = quick ? 0 : Number(values.warmup);
const lengths = (quick ? '1,13' : values.lengths).split(',').map(Number);
const out = (s: string) => console.log(s);

const dir = scratchDir('svc-bench-bands-');
let source = values.db;
if (quick || !source) {
  source = join(dir, 'corpus.sqlite');
  seedCorpus(source, quick ? 2000 : 10_000);
}
if (!existsSync(source)) throw new Error(`no catalog file at ${source}`);
// Each side's file: a copy of --db, or with --db-before the files as they are (this checkout --db, the baseline --db-before).
const sides: Array<{ name: string; cwd: string; port: number; file?: string; databaseUrl?: string }> = [
  { name: 'this checkout', cwd: process.cwd(), port: 47410, file: values['db-before'] && source },
];
if (values.before && !quick)
  sides.unshift({ name: `before (${values.before})`, cwd: baselineBuild(values.before), port: 47411, file: values['db-before'] });
// --pg-dir: on Postgres (its database loaded from the same corpus by catalog-postgres.ts): with --before both sides, else
// this checkout on SQLite beside itself on Postgres.
const postgres = values['pg-dir'] ? await startEmbeddedPostgres({ dataDir: values['pg-dir'], settings: values['pg-setting'] }) : undefined;
if (postgres) {
  const onPostgres = { databaseUrl: databaseUrl(postgres.url, values['pg-database']) };
  if (values.before) for (const side of sides) Object.assign(side, onPostgres);
  else {
    sides[0]!.name = 'SQLite';
    sides.push({ name: 'Postgres', cwd: process.cwd(), port: await freePort(), ...onPostgres });
  }
}
const processes = sides.map((side) => {
  const file = side.file ?? join(dir, `${side.port}.sqlite`);
  if (!side.file && !side.databaseUrl) copyFileSync(source, file);
  const main = quick ? ['--import', 'tsx', join(side.cwd, 'src/main.ts')] : [join(side.cwd, 'dist/main.js')];
  // Liveness checks off: a kept catalog (--db as it is, --pg-dir) would gain failing listings with each run, and runs
  // would no longer compare (the SQLite side, a fresh copy, would not).
  const env = discoveryOnlyEnv(side.port, file, {
    LIVENESS_CHECKS_PER_MINUTE: '0',
    ...(side.databaseUrl ? { DATABASE_URL: side.databaseUrl } : {}),
  });
  return startNode(['--max-semi-space-size=4', ...main], env);
});

out(machineLine());
out(`seed ${seed}; ${REQUESTS} requests per row and side, limit 20, one connection; catalog ${source}`);
try {
  await Promise.all(sides.map((side) => waitReady(side.port, '/supported')));
  // A serving catalog is warm: a store just started reads its pages from disk (Postgres's shared buffers start empty,
  // and 200 searches left the first rows timed reading from the OS cache: docs/BENCHMARKS.md "Discovery on Postgres
  // beside SQLite"). Each side first answers WARMUP searches of another draw of the same bands and lengths, untimed.
  const warm = rng(seed ^ 0x2545f491);
  const warmups = Array.from({ length: WARMUP }, (_, i) =>
    query(SEARCH_BANDS[i % SEARCH_BANDS.length]!, lengths[i % lengths.length]!, warm),
  );
  for (const side of sides)
    for (const q of warmups) await request(side.port, 'GET', `/discovery/search?query=${encodeURIComponent(q)}&limit=20`);
  out(`Warm-up: ${WARMUP} untimed searches a side, another draw of the same bands and lengths.`);
  out(
    `\n| band | words | ${sides.map((s) => `${s.name} p50 / p95 ms`).join(' | ')}${sides.length > 1 ? ' | ratio p95' : ''} | searched (first query) |`,
  );
  out(`| --- | --- | ${sides.map(() => '---').join(' | ')}${sides.length > 1 ? ' | ---' : ''} | --- |`);
  // Each of this checkout's queries' time, by the path that served it.
  const byPath = new Map<string, number[]>();
  for (const band of SEARCH_BANDS) {
    for (const n of lengths) {
      const rand = rng(seed ^ (n * 7919) ^ band.length);
      const queries = Array.from({ length: REQUESTS }, () => query(band, n, rand));
      const cells: string[] = [];
      const p95s: number[] = [];
      let searched = '';
      let lastTimes: number[] = [];
      for (const side of sides) {
        const times: number[] = [];
        const statuses = new Map<number, number>();
        for (const q of queries) {
          const started = performance.now();
          const res = await request(side.port, 'GET', `/discovery/search?query=${encodeURIComponent(q)}&limit=20`);
          times.push(performance.now() - started);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (side === sides.at(-1) && !searched && res.status === 200) {
            const body = JSON.parse(res.text) as { searchMethod?: string; searchedTerms?: string[] };
            searched = body.searchedTerms ? `${body.searchMethod}: ${body.searchedTerms.length} of ${new Set(q.split(' ')).size}` : '';
          }
        }
        lastTimes = times;
        const refused = [...statuses].filter(([status]) => status !== 200);
        p95s.push(pct(times, 95));
        cells.push(
          refused.length === statuses.size
            ? `all ${refused.map(([s]) => s).join('/')}`
            : `${fmt(pct(times, 50))} / ${fmt(pct(times, 95))}${refused.length ? ` (${refused.map(([s, c]) => `${c}× ${s}`).join(', ')})` : ''}`,
        );
      }
      // The path that served each of this checkout's queries (svc_catalog_search_path_total before and after it), untimed.
      const port = sides.at(-1)!.port;
      for (const [i, q] of queries.entries()) {
        const counts = (await pathCounters(port)).search;
        await request(port, 'GET', `/discovery/search?query=${encodeURIComponent(q)}&limit=20`);
        const after = (await pathCounters(port)).search;
        const served =
          [...after]
            .filter(([path, n]) => n > (counts.get(path) ?? 0))
            .map(([path]) => path)
            .join('+') || 'none';
        byPath.set(served, [...(byPath.get(served) ?? []), lastTimes[i]!]);
      }
      const ratio = sides.length > 1 ? ` | ${cells[0]!.startsWith('all') ? '–' : (p95s[1]! / p95s[0]!).toFixed(2)}` : '';
      out(`| ${band} | ${n} | ${cells.join(' | ')}${ratio} | ${searched} |`);
    }
  }
  out(`\n| path (this checkout) | queries | p50 / p95 / max ms |\n| --- | --- | --- |`);
  for (const [path, times] of [...byPath].sort((a, b) => b[1].length - a[1].length))
    out(`| ${path} | ${times.length} | ${fmt(pct(times, 50))} / ${fmt(pct(times, 95))} / ${fmt(Math.max(...times))} |`);
} finally {
  await stopServers(...processes);
  await postgres?.stop();
}
out(`\nLoad average after the searches: ${loadAverage()}.`);
