/**
 * Search p95 with 90 % of 100k listings hidden (past LISTING_TTL_DAYS) against the visible 10k alone, over HTTP, beside a baseline.
 *
 * Each side (the baseline commit's build, and this checkout's) seeds two catalog files with its own code
 * (bench/catalog/lib/hidden-corpus.ts): all `--size` listings of the corpus with every tenth settled a day ago and
 * the others 60 days ago (hidden by the 30-day TTL), and the visible tenth alone, in the same order. A side with the
 * lifecycle pass has run it (docs/CATALOG.md "Lifecycle"). Four `dist/main.js` processes serve them; the same random
 * queries (seed printed) from word-frequency bands of the corpus's Zipf vocabulary, 1 to 8 words, go to each, one
 * connection, the four catalogs in turn per query. Reported per side: p50 / p95 on each catalog and the ratio of the
 * p95s (goal: at most 1.2 for this checkout), and how many first pages differ between the two catalogs.
 *
 * With `--postgres` (this checkout alone) the two catalogs are databases of one embedded PostgreSQL server, its data
 * directory kept beside the SQLite files so a second run finds them loaded: each SQLite file, seeded (and passed) as
 * above, is copied in with COPY (bench/catalog/lib/postgres-copy.ts, as bench/catalog/catalog-postgres.ts loads its
 * corpus: writing 100k listings one settlement at a time takes the better part of an hour), and svc serves them with
 * DATABASE_URL.
 *
 *   npm run build && npm run bench -- hidden-search --before COMMIT|none [--size 100000] [--requests 40] [--seed N] [--postgres]
 *
 * (`--before none`: this checkout alone.)
 *   npm run bench -- hidden-search --quick     (2,000 listings, this checkout alone)
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { rng, vocabularyWord } from '../lib/catalog-corpus.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { THIS_CHECKOUT } from '../lib/quick.ts';
import { discoveryOnlyEnv, stopServers } from './lib/catalog-sides.ts';
import { databaseUrl, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import pg from 'pg';
import { openPool } from '../../src/db/postgres.ts';
import { copyCatalog } from './lib/postgres-copy.ts';
import { fmt, loadAverage, machineLine, pct, request, requireBuild, startNode, waitReady } from '../lib/http-load.ts';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: THIS_CHECKOUT },
    size: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '40' },
    seed: { type: 'string' },
    quick: { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
  },
});
const quick = values.quick;
if (quick) Object.assign(values, { before: THIS_CHECKOUT, size: '2000', requests: '3' });
else requireBuild();
const SIZE = Number(values.size);
const REQUESTS = Number(values.requests);
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));
const out = (s: string) => console.log(s);

const BANDS: Record<string, (rand: () => number) => string> = {
  'top 16': (rand) => vocabularyWord(Math.floor(rand() * 16)),
  'top 200': (rand) => vocabularyWord(Math.floor(rand() * 200)),
  rare: (rand) => vocabularyWord(200 + Math.floor(rand() * 2800)),
};
const query = (band: string, n: number, rand: () => number) => Array.from({ length: n }, () => BANDS[band]!(rand)).join(' ');
const LENGTHS = quick ? [1, 8] : [1, 2, 3, 8];

// Seeded files are kept between runs (the same size and baseline reuse them).
const dir = join(tmpdir(), 'svc-bench-hidden-search');
mkdirSync(dir, { recursive: true });
const seedScript = resolve('bench/catalog/lib/hidden-corpus.ts');
/** --postgres: one server for every side's databases, kept in `dir` (initdb runs as the postgres user when this runs as root). */
chmodSync(dir, 0o755);
const postgres = values.postgres ? await startEmbeddedPostgres({ dataDir: join(dir, quick ? 'postgres-quick' : 'postgres') }) : undefined;
/** The URL of database `name`, loaded from the SQLite file at `path` unless a complete load is there (catalog_meta `bench_seeded`). */
async function seededDatabase(name: string, path: string): Promise<string> {
  const admin = new pg.Client({ connectionString: postgres!.url });
  await admin.connect();
  const url = databaseUrl(postgres!.url, name);
  try {
    if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1) {
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      const done = await db
        .query("SELECT 1 FROM catalog_meta WHERE key = 'bench_seeded'")
        .then((r) => r.rowCount === 1)
        .catch(() => false);
      await db.end();
      if (done && !quick) return url;
      await admin.query(`DROP DATABASE ${name}`);
    }
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const pool = openPool(url, { max: 1 });
  try {
    await copyCatalog(pool, path);
    await pool.query("INSERT INTO catalog_meta (key, value) VALUES ('bench_seeded', '1')");
  } finally {
    await pool.end();
  }
  return url;
}

// Quick: this checkout alone (its figures mean nothing; it checks that the benchmark runs).
const sideTrees = [
  ...(quick || values.before === 'none' || values.postgres
    ? []
    : [{ name: `before (${values.before})`, cwd: baselineBuild(values.before), tag: `before-${values.before.replace(/\W/g, '')}` }]),
  { name: 'this checkout', cwd: process.cwd(), tag: 'after' },
];
/** Seeds a catalog with the side's tree; asynchronous, so the embedded server's output keeps being read meanwhile. */
const seedInto = (cwd: string, path: string, kind: string) =>
  new Promise<void>((done, fail) =>
    spawn(process.execPath, ['--import', 'tsx', seedScript, path, String(SIZE), kind], { cwd, stdio: 'inherit' }).on('exit', (code) =>
      code === 0 ? done() : fail(new Error(`seeding ${path} exited with ${code}`)),
    ),
  );
const sides = [];
try {
  for (const [s, side] of sideTrees.entries()) {
    const catalogs = [];
    for (const [k, kind] of (['all', 'visible-only'] as const).entries()) {
      const port = 47420 + 2 * s + k;
      const main = quick ? ['--import', 'tsx', join(side.cwd, 'src/main.ts')] : [join(side.cwd, 'dist/main.js')];
      const path = join(dir, `${side.tag}-${kind}-${SIZE}${quick ? '-quick' : ''}.sqlite`);
      if (quick || !existsSync(path)) await seedInto(side.cwd, path, kind);
      const env = postgres
        ? discoveryOnlyEnv(port, join(dir, `postgres-side-${port}.sqlite`), {
            LISTING_TTL_DAYS: '30',
            DATABASE_URL: await seededDatabase(`hidden_${side.tag.replace(/\W/g, '_')}_${kind.replace('-', '_')}_${SIZE}`, path),
          })
        : discoveryOnlyEnv(port, path, { LISTING_TTL_DAYS: '30' });
      catalogs.push({ kind, port, process: startNode(['--max-semi-space-size=4', ...main], env) });
    }
    sides.push({ ...side, catalogs });
  }
} catch (err) {
  await stopServers(...sides.flatMap((side) => side.catalogs.map((c) => c.process)));
  await postgres?.stop();
  throw err;
}

out(machineLine());
out(
  `${postgres ? 'PostgreSQL (embedded); ' : ''}seed ${seed}; ${SIZE.toLocaleString('en')} listings, 90 % hidden, against their visible tenth alone; ${REQUESTS} queries per row, limit 20, one connection`,
);
try {
  await Promise.all(sides.flatMap((side) => side.catalogs.map((c) => waitReady(c.port, '/supported'))));
  out(
    `\n| band | words | ${sides.map((s) => `${s.name}: hidden+visible / visible only, p50 / p95 ms | ratio p95 | first pages differing`).join(' | ')} |`,
  );
  out(`| --- | --- | ${sides.map(() => '--- | --- | ---').join(' | ')} |`);
  const overall = sides.map(() => ({ all: [] as number[], visible: [] as number[] }));
  for (const band of Object.keys(BANDS)) {
    for (const n of LENGTHS) {
      const rand = rng(seed ^ (n * 7919) ^ (band.length * 104729));
      const queries = Array.from({ length: REQUESTS }, () => query(band, n, rand));
      const times = sides.map(() => ({ all: [] as number[], visible: [] as number[], differing: 0, refused: 0 }));
      for (const q of queries) {
        for (const [s, side] of sides.entries()) {
          const pages: string[] = [];
          for (const c of side.catalogs) {
            const started = performance.now();
            const res = await request(c.port, 'GET', `/discovery/search?query=${encodeURIComponent(q)}&limit=20`);
            const ms = performance.now() - started;
            times[s]![c.kind === 'all' ? 'all' : 'visible'].push(ms);
            overall[s]![c.kind === 'all' ? 'all' : 'visible'].push(ms);
            if (res.status !== 200) times[s]!.refused++;
            pages.push(
              res.status === 200
                ? JSON.stringify((JSON.parse(res.text) as { resources: Array<{ resource: string }> }).resources.map((r) => r.resource))
                : String(res.status),
            );
          }
          if (pages[0] !== pages[1]) times[s]!.differing++;
        }
      }
      const cells = times.map(
        (t) =>
          `${fmt(pct(t.all, 50))} / ${fmt(pct(t.all, 95))} vs ${fmt(pct(t.visible, 50))} / ${fmt(pct(t.visible, 95))}${t.refused ? ` (${t.refused} not 200)` : ''} | ${(pct(t.all, 95) / pct(t.visible, 95)).toFixed(2)} | ${t.differing}`,
      );
      out(`| ${band} | ${n} | ${cells.join(' | ')} |`);
    }
  }
  out(
    `| all | | ${overall.map((o) => `${fmt(pct(o.all, 50))} / ${fmt(pct(o.all, 95))} vs ${fmt(pct(o.visible, 50))} / ${fmt(pct(o.visible, 95))} | ${(pct(o.all, 95) / pct(o.visible, 95)).toFixed(2)} |`).join(' | ')} |`,
  );
} finally {
  await stopServers(...sides.flatMap((side) => side.catalogs.map((c) => c.process)));
  await postgres?.stop();
}
out(`\nLoad average after the searches: ${loadAverage()}.`);
