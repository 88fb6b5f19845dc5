/**
 * svc's RSS over an hour of mixed traffic, compressed, beside a process answering only /health.
 *
 * Memory under an hour of mixed traffic, compressed: svc's RSS over N requests (default 72,000:
 * one hour at 20 requests/s) of the mix a public facilitator sees — verify, settle with a bazaar
 * extension (new resources; every fourth with a 997-property seller schema), search, list,
 * health, malformed bodies, unknown routes and wrong methods — sent over HTTP by 8 concurrent
 * clients to a separate svc process (bench/lib/soak-process.ts), against a baseline process that
 * answers the same number of GET /health, side by side in one run. RSS is sampled every 2,000
 * requests after a 1,000-request warm-up; the bound is growth ≤ 50 MB.
 *
 *   npx tsx bench/ops/mixed-memory.ts [requests=72000]
 */
import { cpus, loadavg } from 'node:os';
import { SOAK_REQUIREMENTS, startSoakProcess } from '../lib/soak-process.ts';
import { argsWithoutQuick, QUICK } from '../lib/quick.ts';

const TOTAL = Number(argsWithoutQuick()[0] ?? (QUICK ? 200 : 72_000));
const WARMUP = QUICK ? 50 : 1_000;
const SAMPLE_EVERY = QUICK ? 50 : 2_000;
const CLIENTS = 8;
const BOUND_MB = 50;
const requirements = SOAK_REQUIREMENTS;
const WORDS = ['weather', 'forecast', 'stock', 'quote', 'price', 'translate', 'image', 'search', 'news', 'token', 'map', 'route'];

function envelope(i: number, withBazaar: boolean): string {
  const properties =
    i % 4 === 0 ? Object.fromEntries(Array.from({ length: 997 }, (_, k) => [`p${k}`, k === 0 ? { minimum: -i } : {}])) : { city: {} };
  return JSON.stringify({
    x402Version: 2,
    paymentPayload: {
      x402Version: 2,
      accepted: requirements,
      payload: { transaction: 'AAAA' },
      resource: {
        url: `https://mixed${i}.example.com/${WORDS[i % WORDS.length]}`,
        description: `${WORDS[i % 7]} ${WORDS[(i * 5) % 12]} service ${i}`,
      },
      ...(withBazaar
        ? {
            extensions: {
              bazaar: {
                info: { input: { type: 'http', method: 'GET', queryParams: { city: 'Lisbon' } } },
                schema: { type: 'object', properties: { input: { type: 'object' }, extra: { type: 'object', properties } } },
              },
            },
          }
        : {}),
    },
    paymentRequirements: requirements,
  });
}

const JSON_HEADERS = { 'content-type': 'application/json' };
type Request = { method: string; path: string; body?: string; headers?: Record<string, string> };

/** The i-th request of the mix (12 slots: verify ×3, settle ×2, search ×2, list ×2, health, junk, wrong route). */
function mixed(i: number): Request {
  switch (i % 12) {
    case 0:
    case 1:
    case 2:
      return { method: 'POST', path: '/verify', body: envelope(i, false), headers: JSON_HEADERS };
    case 3:
    case 4:
      return { method: 'POST', path: '/settle', body: envelope(i, true), headers: JSON_HEADERS };
    case 5:
    case 6:
      return { method: 'GET', path: `/discovery/search?query=${WORDS[i % 12]}+${WORDS[(i * 7) % 12]}&limit=10` };
    case 7:
    case 8:
      return { method: 'GET', path: `/discovery/resources?limit=20&offset=${(i * 13) % 500}` };
    case 9:
      return { method: 'GET', path: '/health' };
    case 10:
      return { method: 'POST', path: '/verify', body: '{"paymentPayload": {', headers: JSON_HEADERS };
    default:
      return Math.floor(i / 12) % 2 ? { method: 'GET', path: `/no-such-route/${i}` } : { method: 'PUT', path: '/verify' };
  }
}

const healthOnly = (): Request => ({ method: 'GET', path: '/health' });

async function run(label: string, next: (i: number) => Request) {
  const svc = await startSoakProcess();
  const statuses = new Map<number, number>();
  const samples: Array<{ at: number; mb: number }> = [];
  let issued = 0;
  let done = 0;
  const started = performance.now();
  const client = async () => {
    for (let i = issued++; i < TOTAL + WARMUP; i = issued++) {
      const r = next(i);
      const res = await fetch(`${svc.url}${r.path}`, { method: r.method, headers: r.headers, body: r.body });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      done += 1;
      if (done === WARMUP || (done > WARMUP && (done - WARMUP) % SAMPLE_EVERY === 0)) samples.push({ at: done - WARMUP, mb: svc.rssMb() });
    }
  };
  try {
    await Promise.all(Array.from({ length: CLIENTS }, client));
    const seconds = (performance.now() - started) / 1000;
    const start = samples[0]!.mb;
    const end = samples.at(-1)!.mb;
    const middle = samples[Math.floor(samples.length / 2)]!.mb;
    return {
      label,
      start,
      middle,
      end,
      peak: Math.max(...samples.map((s) => s.mb)),
      growth: end - start,
      secondHalf: end - middle,
      rps: (TOTAL + WARMUP) / seconds,
      seconds,
      statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
      alive: svc.child.exitCode === null,
      curve: samples.filter((_, k) => k % Math.max(1, Math.floor(samples.length / 8)) === 0).map((s) => s.mb.toFixed(0)),
    };
  } finally {
    svc.stop();
  }
}

const before = loadavg();
const mixedRun = await run(`${TOTAL.toLocaleString('en')} mixed requests`, mixed);
const baseline = await run(`${TOTAL.toLocaleString('en')} × GET /health (baseline)`, healthOnly);
const after = loadavg();
const f = (n: number) => n.toFixed(1);
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model}; load average before ${before.map(f).join(' ')}, after ${after.map(f).join(' ')}`,
);
console.log('| run | RSS start MB | middle | end | peak | growth | 2nd-half growth | req/s | seconds | statuses | alive |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of [mixedRun, baseline]) {
  console.log(
    `| ${r.label} | ${f(r.start)} | ${f(r.middle)} | ${f(r.end)} | ${f(r.peak)} | ${f(r.growth)} | ${f(r.secondHalf)} | ${r.rps.toFixed(0)} | ${f(r.seconds)} | ${JSON.stringify(r.statuses)} | ${r.alive} |`,
  );
}
console.log(`RSS curve (MB, mixed): ${mixedRun.curve.join(' → ')}`);
console.log(
  `end RSS ratio mixed / baseline: ${(mixedRun.end / baseline.end).toFixed(2)}; growth within ${BOUND_MB} MB: ${mixedRun.growth <= BOUND_MB}`,
);
