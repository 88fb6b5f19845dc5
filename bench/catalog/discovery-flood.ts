/**
 * An honest client's search while 8 addresses flood the most expensive search, against a baseline commit.
 *
 * Discovery under a flood (docs/BENCHMARKS.md "Discovery under a flood"): an honest client's
 * two-term search while 8 clients, each from its own loopback address, send the most expensive
 * search the server accepts as fast as it answers. svc as built here ("after") and svc at an
 * earlier commit ("before", bench/lib/baseline-build.ts) serve copies of the same seeded catalog in
 * their own processes, side by side, and are flooded in turns (before, after, before, after…) so
 * the machine's load weighs on both alike.
 *
 * The flood query is picked per server: each candidate (the most frequent words of the corpus,
 * 100 of them before the query limits, 8 after; without a filter and with network filters) is
 * timed alone, and the slowest one the server accepts (not refused 400) floods.
 *
 *   npm run build && npx tsx bench/catalog/discovery-flood.ts [--listings 50000] [--before d4b1734] [--seconds 20] [--rounds 2]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePortPair } from '../../src/dev/postgres.ts';
import { baselineBuild } from '../lib/baseline-build.ts';
import { seedCorpus, vocabularyWord } from '../lib/catalog-corpus.ts';
import { discoveryOnlyEnv } from './lib/catalog-sides.ts';
import { fmt, loadAverage, machineLine, pct, requireBuild, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';
import { copySqlite } from '../lib/sqlite-copy.ts';

const { values } = parseArgs({
  options: {
    listings: { type: 'string', default: '50000' },
    before: { type: 'string', default: 'd4b1734' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    flooders: { type: 'string', default: '8' },
    'keep-dir': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, this checkout on both sides, one 4 s round, 2 flooders (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { listings: '300', before: '.', seconds: '4', rounds: '1', flooders: '2' });
requireBuild();
const LISTINGS = Number(values.listings);
const PHASE_MS = Number(values.seconds) * 1000;
const FLOODERS = Array.from({ length: Number(values.flooders) }, (_, k) => `127.0.0.${10 + k}`);
const HONEST = '127.0.0.2';
const out = (s: string) => console.log(s);

const dir = values['keep-dir'] ?? scratchDir('svc-bench-flood-');
mkdirSync(dir, { recursive: true });
const seeded = join(dir, `catalog-${LISTINGS}.sqlite`);
if (!existsSync(seeded)) seedCorpus(seeded, LISTINGS, (n) => process.stderr.write(`seeded ${n}\r`));
const beforeDir = baselineBuild(values.before);

out(machineLine());
out(`Catalog: ${LISTINGS.toLocaleString('en')} listings (bench/lib/catalog-corpus.ts); before = ${values.before}, after = this checkout.`);

function startSvc(cwd: string, port: number, name: string): ChildProcess {
  const dbPath = join(dir, `${name}.sqlite`);
  copySqlite(seeded, dbPath);
  return spawn(process.execPath, ['--max-semi-space-size=4', 'dist/main.js'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    // LISTING_TTL_DAYS at its default, as this benchmark has always run.
    env: { ...process.env, ...discoveryOnlyEnv(port, dbPath, { LISTING_TTL_DAYS: '30' }) },
  });
}

const honestAgent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: HONEST });
function timedGet(port: number, path: string, agent = honestAgent): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.once('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end();
  });
}

const words = (n: number) => Array.from({ length: n }, (_, k) => vocabularyWord(k)).join(' ');
const searchPath = (query: string, filter = '') => `/discovery/search?query=${encodeURIComponent(query)}&limit=20${filter}`;
const FILTERS = ['', '&network=stellar:pubnet', '&network=solana:mainnet', '&type=mcp'];

/**
 * The slowest candidate the server accepts (any answer but a 400: a search answered 503 at the
 * read deadline cost the reader all of it), each timed alone (best of 2).
 */
async function mostExpensive(port: number, terms: number): Promise<{ path: string; ms: number }> {
  let worst = { path: '', ms: -1 };
  for (const filter of FILTERS) {
    const path = searchPath(words(terms), filter);
    const tries = [await timedGet(port, path), await timedGet(port, path)];
    if (tries.some((t) => t.status === 400 || t.status === 0)) continue;
    const ms = Math.min(...tries.map((t) => t.ms));
    if (ms > worst.ms) worst = { path, ms };
  }
  return worst;
}

const honestPath = searchPath(`${vocabularyWord(3)} ${vocabularyWord(40)}`);

/** One phase: the flood on `port` for PHASE_MS, the honest client probing once it is under way. */
async function phase(port: number, floodPath: string) {
  const flood = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/catalog/lib/discovery-flood-client.ts', String(port), String(PHASE_MS), floodPath, ...FLOODERS],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let floodOut = '';
  flood.stdout.on('data', (c: Buffer) => (floodOut += c.toString()));
  const exited = new Promise<void>((r) => flood.once('exit', () => r()));
  await new Promise((r) => setTimeout(r, values.quick ? 1_500 : 3_000));
  const times: number[] = [];
  let ok = 0;
  let busy = 0;
  let other = 0;
  const end = performance.now() + PHASE_MS - (values.quick ? 2_000 : 5_000);
  while (performance.now() < end) {
    const { status, ms } = await timedGet(port, honestPath);
    // Every answer's time counts, a refusal's too: p95 is what the honest client waited.
    times.push(ms);
    if (status === 200) ok++;
    else if (status === 503) busy++;
    else other++;
    await new Promise((r) => setTimeout(r, 50));
  }
  await exited;
  const counts = JSON.parse(floodOut.trim().split('\n').pop() ?? '{}') as { ok: number; busy: number; other: number };
  return { times, ok, busy, other, flood: counts, load: loadAverage() };
}

// Kernel-picked ports: ports drawn at random could be other processes' ephemeral ones.
const [afterPort, beforePort] = await freePortPair();
const servers = [startSvc(process.cwd(), afterPort, 'after'), startSvc(beforeDir, beforePort, 'before')];
try {
  await Promise.all([waitReady(afterPort, '/health'), waitReady(beforePort, '/health')]);
  // Warm both catalogs' pages (the first searches read the file from disk).
  for (let i = 0; i < 3; i++) await Promise.all([timedGet(afterPort, honestPath), timedGet(beforePort, honestPath)]);
  const quiet = { before: [] as number[], after: [] as number[] };
  for (let i = 0; i < 40; i++) {
    quiet.before.push((await timedGet(beforePort, honestPath)).ms);
    quiet.after.push((await timedGet(afterPort, honestPath)).ms);
  }
  const floodBefore = await mostExpensive(beforePort, 100);
  const floodAfter = await mostExpensive(afterPort, 8);
  out(`Honest query: GET ${honestPath} from ${HONEST}, one at a time, 50 ms apart.`);
  out(`Flood: ${FLOODERS.length} clients (${FLOODERS[0]}…${FLOODERS.at(-1)}), one keep-alive connection each, closed loop.`);
  if (!floodBefore.path || !floodAfter.path) throw new Error('no flood candidate was accepted');
  out(`- before: GET ${floodBefore.path.slice(0, 90)}… (100 terms): ${fmt(floodBefore.ms)} ms alone`);
  out(`- after:  GET ${floodAfter.path} (8 terms): ${fmt(floodAfter.ms)} ms alone`);
  out(
    `Quiet (no flood), honest p50 / p95 ms: before ${fmt(pct(quiet.before, 50))} / ${fmt(pct(quiet.before, 95))}, after ${fmt(pct(quiet.after, 50))} / ${fmt(pct(quiet.after, 95))}`,
  );
  out(
    '\n| round | server | honest 200 | honest 503 busy | honest p50 / p95 ms (every answer) | flood 200 / 503 per s | load average (1/5/15 min) |',
  );
  out('|---|---|---|---|---|---|---|');
  const all = { before: { times: [] as number[], ok: 0, n: 0 }, after: { times: [] as number[], ok: 0, n: 0 } };
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const [name, port, flood] of [
      ['before', beforePort, floodBefore.path],
      ['after', afterPort, floodAfter.path],
    ] as const) {
      const r = await phase(port, flood);
      const n = r.times.length;
      all[name].times.push(...r.times);
      all[name].ok += r.ok;
      all[name].n += n;
      const secs = PHASE_MS / 1000;
      out(
        `| ${round} | ${name} | ${r.ok} of ${n} | ${r.busy}${r.other ? ` (+${r.other} other)` : ''} | ${r.times.length ? `${fmt(pct(r.times, 50))} / ${fmt(pct(r.times, 95))}` : '–'} | ${(r.flood.ok / secs).toFixed(1)} / ${(r.flood.busy / secs).toFixed(1)} | ${r.load} |`,
      );
    }
  }
  const p95 = (xs: number[]) => (xs.length ? pct(xs, 95) : NaN);
  out(
    `\nAll rounds: before ${all.before.ok} of ${all.before.n} honest searches answered 200 (p95 of every answer ${fmt(p95(all.before.times))} ms), ` +
      `after ${all.after.ok} of ${all.after.n} (p95 ${fmt(p95(all.after.times))} ms); p95 before / after = ${(p95(all.before.times) / p95(all.after.times)).toFixed(1)}×.`,
  );
} finally {
  for (const s of servers) s.kill('SIGKILL');
  honestAgent.destroy();
}
process.exit(0);
