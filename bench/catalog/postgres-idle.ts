/**
 * Discovery's first requests after a pause, catalog on PostgreSQL, beside a baseline commit.
 *
 * A catalog that is not busy (a seller checking its listing now and then, an agent's occasional search) meets svc
 * after a pause, not in a stream of requests. This benchmark serves one PostgreSQL catalog (the corpus of
 * bench/catalog/catalog-postgres.ts, database catalog_SIZE in DIR/postgres, loaded by it when missing) from two svc
 * processes, the baseline commit's and this checkout's (`dist/main.js`: run `npm run build` first), both reading the
 * same database. Each round waits `--gap` seconds with both idle, then sends each server a `url` list page (a
 * substring of a resource URL drawn at random), a `network` list page and a one-word search, one after another, and
 * times them; then the same three again at once, warm. Which server goes first alternates by round. The values are
 * drawn from the corpus with a seed (printed). docs/BENCHMARKS.md "Discovery on Postgres beside SQLite".
 *
 *   npm run build && npm run bench -- postgres-idle --keep-dir DIR [--before COMMIT] [--size 100000] [--gap 12] [--rounds 6] [--seed N]
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { databaseUrl, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { NETWORKS, rng, vocabularyWord } from '../lib/catalog-corpus.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { THIS_CHECKOUT } from '../lib/quick.ts';
import { discoveryOnlyEnv, stopServers } from './lib/catalog-sides.ts';
import { keptDir, loadedCorpus } from './lib/loaded-corpus.ts';
import { fmt, getJson, loadAverage, machineLine, request, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';

const { values } = parseArgs({
  options: {
    'keep-dir': { type: 'string' },
    before: { type: 'string', default: '63e1ffb' },
    size: { type: 'string', default: '100000' },
    gap: { type: 'string', default: '12' },
    rounds: { type: 'string', default: '6' },
    seed: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, two rounds half a second apart, this checkout on both sides (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { before: THIS_CHECKOUT, size: '300', gap: '0.5', rounds: '2' });
if (values.quick && !values['keep-dir']) values['keep-dir'] = scratchDir('svc-bench-idle-', { traversable: true });
const dir = keptDir(values['keep-dir']);
requireBuild();
const SIZE = Number(values.size);
const GAP_MS = Number(values.gap) * 1000;
const ROUNDS = Number(values.rounds);
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));
const rand = rng(seed);

loadedCorpus(dir, SIZE);

const out = (line: string) => console.log(line);
out(machineLine());
out(`Seed ${seed}; before = ${values.before}, after = this checkout; ${ROUNDS} rounds, ${values.gap} s idle before each, size ${SIZE}.`);
const beforeDir = baselineBuild(values.before);
const postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres') });
const servers: ChildProcess[] = [];
const sides = [
  { name: 'before', cwd: beforeDir, port: 47360 },
  { name: 'after', cwd: '.', port: 47361 },
] as const;
try {
  const url = databaseUrl(postgres.url, `catalog_${SIZE}`);
  for (const side of sides)
    servers.push(
      startNode(
        ['--max-semi-space-size=4', join(side.cwd, 'dist/main.js')],
        discoveryOnlyEnv(side.port, join(dir, `unused-idle-${side.name}.sqlite`), { DATABASE_URL: url }),
      ),
    );
  await Promise.all(sides.map((side) => waitReady(side.port, '/discovery/resources?limit=1')));
  // Resource URLs to draw substrings from: a page of the newest and one deep in the catalog.
  const page = (offset: number) =>
    getJson<{ items: Array<{ resource: string }> }>(sides[1].port, `/discovery/resources?limit=100&offset=${offset}`);
  const resources = [...(await page(0)).items, ...(await page(Math.floor(SIZE / 2))).items].map((item) => item.resource);
  const substring = () => {
    const from = resources[Math.floor(rand() * resources.length)]!;
    const start = 8 + Math.floor(rand() * Math.max(1, from.length - 11));
    return from.slice(start, start + 3 + Math.floor(rand() * 12));
  };
  const kinds = ['url', 'network', 'search'] as const;
  const paths = (): Record<(typeof kinds)[number], string> => ({
    url: `/discovery/resources?url=${encodeURIComponent(substring())}`,
    network: `/discovery/resources?network=${encodeURIComponent(NETWORKS[Math.floor(rand() * NETWORKS.length)]!)}`,
    search: `/discovery/search?query=${encodeURIComponent(vocabularyWord(Math.floor(rand() * 200)))}`,
  });
  const timed = async (port: number, path: string) => {
    const start = performance.now();
    const answer = await request(port, 'GET', path);
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    return performance.now() - start;
  };
  // ms per side, kind, and whether after the pause or warm.
  const times = new Map<string, number[]>();
  const note = (key: string, ms: number) => times.set(key, [...(times.get(key) ?? []), ms]);
  for (let round = 0; round < ROUNDS; round++) {
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
    const drawn = paths();
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      for (const kind of kinds) note(`${side.name} ${kind} idle`, await timed(side.port, drawn[kind]));
      for (const kind of kinds) note(`${side.name} ${kind} warm`, await timed(side.port, drawn[kind]));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cell = (key: string) => `${fmt(median(times.get(key)!))} / ${fmt(Math.max(...times.get(key)!))}`;
  out('\n| request, ms median / max | before, after the pause | after, after the pause | before, warm | after, warm |');
  out('| --- | --- | --- | --- | --- |');
  for (const kind of kinds)
    out(
      `| ${kind} | ${cell(`before ${kind} idle`)} | ${cell(`after ${kind} idle`)} | ${cell(`before ${kind} warm`)} | ${cell(`after ${kind} warm`)} |`,
    );
  out(`\nLoad average at the end: ${loadAverage()}.`);
} finally {
  await stopServers(...servers);
  await postgres.stop();
}
