/**
 * Catalog benchmark over HTTP. For each size, a generated corpus (bench/catalog-corpus.ts) is
 * seeded into a file through the store; then svc (`dist/main.js`, what `npm start` runs, in a
 * separate process; run `npm run build` first) and a bare
 * node:http + node:sqlite server (bench/catalog-baseline.ts, same file, same index queries) are
 * started side by side and measured with the same client: search (2 terms, 1 common term, a
 * cursor page) and list (no filter, network filter, payTo filter, a deep offset), p50/p95 at 1 and
 * 16 connections. Then the mixed run: POST /verify throughput alone and while 16 connections
 * search from another client process (bench/catalog-flood.ts), and svc's peak RSS during the load.
 *
 *   npm run build && npx tsx bench/catalog.ts [--sizes 10000,100000] [--requests 200] [--keep-dir DIR]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { seedCorpus, vocabularyWord } from './catalog-corpus.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    requests: { type: 'string', default: '200' },
    'keep-dir': { type: 'string' },
  },
});
const sizes = values.sizes.split(',').map(Number);
if (!existsSync('dist/main.js')) {
  console.error('dist/main.js is missing: run `npm run build` first (the bench measures what `npm start` runs).');
  process.exit(2);
}
const REQUESTS = Number(values.requests);
const dir = values['keep-dir'] ?? mkdtempSync(join(tmpdir(), 'svc-bench-catalog-'));
mkdirSync(dir, { recursive: true });
/** svc's young generation, sized deliberately (the default semi-space grows to 16–32 MiB each). */
const SEMI_SPACE_MB = 4;

function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
}

const agentFor = new Map<number, http.Agent>();
function request(port: number, method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  let agent = agentFor.get(port);
  if (!agent) agentFor.set(port, (agent = new http.Agent({ keepAlive: true, maxSockets: 64 })));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent, headers: body ? { 'content-type': 'application/json' } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function waitReady(port: number, path: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await request(port, 'GET', path)).status < 500) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} never answered`);
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** `total` requests over `conns` connections; latencies in ms. */
async function load(
  port: number,
  conns: number,
  total: number,
  path: (i: number) => string,
): Promise<{ p50: number; p95: number; errors: number }> {
  const times: number[] = [];
  let next = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (next < total) {
        const i = next++;
        const started = performance.now();
        const { status } = await request(port, 'GET', path(i));
        times.push(performance.now() - started);
        if (status !== 200) errors++;
      }
    }),
  );
  return { p50: pct(times, 50), p95: pct(times, 95), errors };
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const fmt = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
const lines: string[] = [];
const out = (s: string) => {
  lines.push(s);
  console.log(s);
};
out(
  `Machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}; load average at start ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}.`,
);

let port = 47100;
for (const size of sizes) {
  const dbPath = join(dir, `catalog-${size}.sqlite`);
  if (!existsSync(dbPath)) {
    const t0 = performance.now();
    seedCorpus(dbPath, size, (n) => process.stderr.write(`seeded ${n}\r`));
    out(`\n### ${size.toLocaleString('en')} listings (seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  } else out(`\n### ${size.toLocaleString('en')} listings (seeded file reused)`);
  const svcPort = port++;
  const basePort = port++;
  const svc = start([`--max-semi-space-size=${SEMI_SPACE_MB}`, 'dist/main.js'], {
    PORT: String(svcPort),
    DB_PATH: dbPath,
    NETWORK: 'stellar:testnet',
    RPC_URL: 'http://127.0.0.1:9',
    SUBMITTER_SECRET: Keypair.random().secret(),
    LOG_LEVEL: 'error',
  });
  const base = start(['--import', 'tsx', 'bench/catalog-baseline.ts', dbPath, String(basePort)], {});
  try {
    await Promise.all([waitReady(svcPort, '/supported'), waitReady(basePort, '/discovery/resources')]);
    let peakRss = 0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(svc.pid!))), 200);
    const common = vocabularyWord(0);
    const two = `${vocabularyWord(3)} ${vocabularyWord(40)}`;
    const firstPage = JSON.parse((await request(svcPort, 'GET', `/discovery/search?query=${common}&limit=20`)).text) as {
      pagination: { cursor: string };
    };
    const cursor = encodeURIComponent(firstPage.pagination.cursor);
    const total = (JSON.parse((await request(svcPort, 'GET', '/discovery/resources?limit=1')).text) as { pagination: { total: number } })
      .pagination.total;
    const payTo = (
      JSON.parse((await request(svcPort, 'GET', '/discovery/resources?limit=1')).text) as {
        items: Array<{ accepts: Array<{ payTo: string }> }>;
      }
    ).items[0]!.accepts[0]!.payTo;
    const deep = Math.floor(total * 0.9);
    const cases: Array<[string, (i: number) => string, ((i: number) => string) | null]> = [
      [`search, 2 terms ("${two}")`, () => `/discovery/search?query=${encodeURIComponent(two)}&limit=20`, null],
      [`search, 1 common term ("${common}")`, () => `/discovery/search?query=${common}&limit=20`, null],
      [
        'search, cursor page 2',
        () => `/discovery/search?query=${common}&limit=20&cursor=${cursor}`,
        () => `/discovery/search?query=${common}&limit=20`,
      ],
      ['list, no filter', (i) => `/discovery/resources?limit=20&offset=${(i * 7) % 200}`, null],
      ['list, network filter', (i) => `/discovery/resources?network=stellar:pubnet&limit=20&offset=${(i * 7) % 200}`, null],
      ['list, payTo filter', () => `/discovery/resources?payTo=${payTo}&limit=20`, null],
      [`list, offset ${deep.toLocaleString('en')}`, () => `/discovery/resources?limit=20&offset=${deep}`, null],
    ];
    out(
      '\n| request | svc p50 / p95 ms, 1 conn | baseline p50 / p95, 1 conn | ratio p95 | svc p50 / p95, 16 conns | baseline p50 / p95, 16 conns |',
    );
    out('|---|---|---|---|---|---|');
    for (const [name, path, basePath] of cases) {
      const b1 = await load(basePort, 1, REQUESTS, basePath ?? path);
      const s1 = await load(svcPort, 1, REQUESTS, path);
      const b16 = await load(basePort, 16, REQUESTS * 2, basePath ?? path);
      const s16 = await load(svcPort, 16, REQUESTS * 2, path);
      const errs = s1.errors + s16.errors ? ` (${s1.errors + s16.errors} non-200)` : '';
      out(
        `| ${name}${errs} | ${fmt(s1.p50)} / ${fmt(s1.p95)} | ${fmt(b1.p50)} / ${fmt(b1.p95)} | ${(s1.p95 / b1.p95).toFixed(1)}× | ${fmt(s16.p50)} / ${fmt(s16.p95)} | ${fmt(b16.p50)} / ${fmt(b16.p95)} |`,
      );
    }

    // Mixed run: /verify alone, then beside 16 search connections (the payload is refused at decode: no RPC, all event loop).
    const verifyBody = JSON.stringify({
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: { scheme: 'exact', network: 'stellar:testnet' }, payload: { transaction: 'AAAA' } },
      paymentRequirements: {
        scheme: 'exact',
        network: 'stellar:testnet',
        asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
        amount: '1000',
        payTo,
        maxTimeoutSeconds: 60,
        extra: { areFeesSponsored: true },
      },
    });
    const verifyFor = async (ms: number) => {
      const until = performance.now() + ms;
      let n = 0;
      const times: number[] = [];
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (performance.now() < until) {
            const t0 = performance.now();
            const { status } = await request(svcPort, 'POST', '/verify', verifyBody);
            if (status === 200) n++;
            times.push(performance.now() - t0);
          }
        }),
      );
      return { rps: n / (ms / 1000), p50: pct(times, 50) };
    };
    const alone = await verifyFor(5000);
    // The flood comes from another client process, started a moment before /verify is measured.
    const flood = start(['--import', 'tsx', 'bench/catalog-flood.ts', String(svcPort), '16', '5400', two, common], {});
    const floodOut = new Promise<string>((resolve) => {
      let text = '';
      flood.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
      flood.once('exit', () => resolve(text));
    });
    await new Promise((r) => setTimeout(r, 300));
    const mixed = await verifyFor(5000);
    const { searches, busy } = JSON.parse((await floodOut).trim().split('\n').at(-1)!) as { searches: number; busy: number };
    clearInterval(sampler);
    out(
      `\nMixed: /verify (4 connections) alone ${alone.rps.toFixed(0)} req/s (p50 ${fmt(alone.p50)} ms); with 16 search connections ${mixed.rps.toFixed(0)} req/s (p50 ${fmt(mixed.p50)} ms) = **${(mixed.rps / alone.rps).toFixed(2)}×** (target ≥ 0.8×); searches served meanwhile ${(searches / 5.4).toFixed(0)}/s, ${busy} answered 503 svc_catalog_busy.`,
    );
    out(
      `svc peak RSS under this load: **${peakRss.toFixed(0)} MB** (--max-semi-space-size=${SEMI_SPACE_MB}; catalog workers capped by resourceLimits). Load average now ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}.`,
    );
  } finally {
    svc.kill('SIGTERM');
    base.kill('SIGTERM');
  }
}
if (!values['keep-dir']) rmSync(dir, { recursive: true, force: true });
