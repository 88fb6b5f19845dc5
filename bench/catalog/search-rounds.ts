/**
 * A search's round trips timed in process, on SQLite and on Postgres: the same random queries (seed printed), round by round.
 *
 * Where Postgres's search time parts from SQLite's (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). The search
 * engine (src/catalog/search-engine.ts) runs on each store's statements (its TextIndex) under a runner that times each
 * of its yields: a round, one statement or those it yields together (Postgres sends them in one write on one connection,
 * SQLite runs them in turn in its read transaction). A round is named by the statements it holds, and both stores take
 * the same rounds for the same query (one engine over the same corpus), so each table row compares one kind of round.
 * HTTP, the catalog threads and the pool's handoff are left out: `search-bands` measures the whole request. Queries are
 * search-bands' bands (bench/lib/catalog-corpus.ts bandQuery), unfiltered first pages of 20, each timed on both stores
 * in turn (the order flipped every query) after an untimed pass over the same queries.
 *
 *   npm run bench -- search-rounds --keep-dir DIR [--size 100000] [--requests 200] [--bands natural,agent,top 50]
 *       [--lengths 3,8] [--seed N] [--kept on|off|written]
 *
 * `--kept`: each store's reader keeps its term counts (`on`, as svc's readers do: src/catalog/search-engine.ts
 * KeptCounts), keeps none (`off`), or keeps them while a write comes before every search (`written`: the store's write
 * sequence taken, untimed, before each; it stays taken in DIR's databases).
 *
 * DIR: a directory bench/catalog/catalog-postgres.ts has loaded (its catalog-SIZE.sqlite and postgres/); no other
 * server may be running on it.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CATALOG_SCHEMA } from '../../src/catalog/postgres/migrations.ts';
import { textIndex as postgresTextIndex } from '../../src/catalog/postgres/search.ts';
import { KeptCounts, searchPage, type TextIndex } from '../../src/catalog/search-engine.ts';
import { textIndex as sqliteTextIndex } from '../../src/catalog/sqlite/search.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { nextSeq as nextSqliteSeq } from '../../src/catalog/sqlite/revisions.ts';
import { nextSeq as nextPostgresSeq } from '../../src/catalog/postgres/queries.ts';
import type { Steps } from '../../src/catalog/steps.ts';
import { migrate, onOneClient, openPool } from '../../src/db/postgres.ts';
import { inReadTransaction } from '../../src/db/sqlite.ts';
import { databaseUrl, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { SEARCH_BANDS, bandQuery, rng } from '../lib/catalog-corpus.ts';
import { fmt, loadAverage, machineLine, pct } from '../lib/http-load.ts';
import { QUICK_SIZE, quickPostgresDir } from './lib/quick-postgres.ts';

const { values } = parseArgs({
  options: {
    'keep-dir': { type: 'string' },
    size: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
    bands: { type: 'string', default: SEARCH_BANDS.join(',') },
    lengths: { type: 'string', default: '3,8' },
    seed: { type: 'string' },
    quick: { type: 'boolean', default: false },
    kept: { type: 'string', default: 'on' },
  },
});
if (!['on', 'off', 'written'].includes(values.kept)) {
  console.error('--kept is on, off or written.');
  process.exit(2);
}
// --quick: 3 queries a row, on a temporary 300-listing directory unless given (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { size: QUICK_SIZE, requests: '3' });
if (values.quick && !values['keep-dir']) values['keep-dir'] = quickPostgresDir();
if (!values['keep-dir']) {
  console.error('--keep-dir DIR is required: a directory bench/catalog/catalog-postgres.ts has loaded.');
  process.exit(2);
}
const dir = values['keep-dir'];
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));
const REQUESTS = Number(values.requests);
const bands = values.bands.split(',');
const lengths = values.lengths.split(',').map(Number);

/** Each round's time (ms) by the statements it held, and the whole engine's. */
type Rounds = Map<string, number[]>;
const WHOLE = 'the whole search';

/**
 * Runs `engine` on `index` as steps.ts's runners do, timing each round: its statements' names (the TextIndex methods
 * they call, in order) and its time go into `rounds` when given.
 */
async function timed<T>(index: TextIndex, engine: Steps<TextIndex, T>, rounds?: Rounds): Promise<void> {
  const record = (name: string, ms: number) => rounds?.set(name, [...(rounds.get(name) ?? []), ms]);
  const started = performance.now();
  let next = engine.next();
  while (!next.done) {
    const step = next.value;
    const names: string[] = [];
    const named = new Proxy(index, {
      get: (target, key) => {
        const method: unknown = Reflect.get(target, key);
        if (typeof method !== 'function') return method;
        return (...args: unknown[]) => {
          names.push(String(key));
          return (method as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const t0 = performance.now();
    const answers = await Promise.all((Array.isArray(step) ? step : [step]).map((s) => s(named)));
    record(names.join(' + '), performance.now() - t0);
    next = engine.next(Array.isArray(step) ? answers : answers[0]);
  }
  record(WHOLE, performance.now() - started);
}

const postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres') });
const pool = openPool(databaseUrl(postgres.url, `catalog_${values.size}`), { pipeline: true, max: 1 });
const sqlite = new CatalogStore(join(dir, `catalog-${values.size}.sqlite`));
try {
  await migrate(pool, 'catalog', CATALOG_SCHEMA);
  // Each store keeps its readers' term counts, as its catalog store does (src/catalog/search-engine.ts KeptCounts).
  const kept =
    values.kept === 'off' ? { SQLite: undefined, Postgres: undefined } : { SQLite: new KeptCounts(), Postgres: new KeptCounts() };
  const written = values.kept === 'written';
  const request = (query: string, now: Date, keptCounts: KeptCounts | undefined) => ({
    query,
    filters: {},
    page: { limit: 20 },
    now,
    x402Version: 2,
    secret: Buffer.alloc(32),
    keptCounts,
  });
  const onStore = {
    SQLite: (query: string, rounds?: Rounds) => {
      if (written) nextSqliteSeq(sqlite.db);
      const now = new Date();
      return inReadTransaction(sqlite.db, () => timed(sqliteTextIndex(sqlite), searchPage(request(query, now, kept.SQLite)), rounds));
    },
    Postgres: async (query: string, rounds?: Rounds) => {
      if (written) await nextPostgresSeq(pool);
      const now = new Date();
      return onOneClient(pool, (db) => timed(postgresTextIndex(db, now), searchPage(request(query, now, kept.Postgres)), rounds));
    },
  };
  const stores = Object.keys(onStore) as Array<keyof typeof onStore>;
  console.log(machineLine());
  console.log(
    `seed ${seed}; ${REQUESTS} queries a row, limit 20, in process, one connection, kept counts ${values.kept}; ${dir}, ${values.size} listings`,
  );
  const load = loadAverage();
  const rand = rng(seed);
  console.log('\n| band | words | round | SQLite mean / p50 ms | Postgres mean / p50 ms | ratio of means |\n|---|---|---|---|---|---|');
  for (const band of bands)
    for (const n of lengths) {
      const queries = Array.from({ length: REQUESTS }, () => bandQuery(band, n, rand));
      for (const query of queries) for (const store of stores) await onStore[store](query); // warm both
      const rounds = { SQLite: new Map(), Postgres: new Map() } as Record<(typeof stores)[number], Rounds>;
      for (const [i, query] of queries.entries())
        for (const store of i % 2 ? stores : [...stores].reverse()) await onStore[store](query, rounds[store]);
      const mean = (times: number[]) => times.reduce((sum, t) => sum + t, 0) / times.length;
      // Rounds the two stores name alike, most frequent first, then the whole search.
      const names = [...rounds.SQLite.keys()]
        .filter((name) => name !== WHOLE && rounds.Postgres.has(name))
        .sort((a, b) => rounds.SQLite.get(b)!.length - rounds.SQLite.get(a)!.length);
      for (const name of [...names, WHOLE]) {
        const [s, p] = [rounds.SQLite.get(name)!, rounds.Postgres.get(name)!];
        const shown = name === WHOLE ? `**${name}**` : `${name} (${s.length}×)`;
        console.log(
          `| ${band} | ${n} | ${shown} | ${fmt(mean(s))} / ${fmt(pct(s, 50))} | ${fmt(mean(p))} / ${fmt(pct(p, 50))} | ${(mean(p) / mean(s)).toFixed(2)} |`,
        );
      }
    }
  console.log(`\nLoad average ${load} → ${loadAverage()}.`);
} finally {
  sqlite.close();
  await pool.end();
  await postgres.stop();
}
