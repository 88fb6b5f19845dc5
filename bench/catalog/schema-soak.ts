/**
 * svc's RSS while it validates thousands of distinct hostile-sized seller schemas.
 *
 * Seller-schema soak: svc's RSS while it validates 2,000 distinct hostile-sized schemas (997
 * properties each, the shape that leaked 1.4 MB per settle when compiled validators lived in one
 * Ajv forever), against a baseline run of the same 2,000 settlements carrying one and the same
 * schema. A third run keeps the property names fixed (distinct schemas, one search vocabulary). Both run over HTTP against a separate svc process each
 * (bench/lib/schema-soak-server.ts), one after the other; RSS is read from /proc/<pid>/status.
 *
 *   npx tsx bench/catalog/schema-soak.ts [count=2000]
 */
import { cpus, loadavg } from 'node:os';
import { SOAK_REQUIREMENTS, startSoakProcess } from '../lib/soak-process.ts';
import { argsWithoutQuick, QUICK } from '../lib/quick.ts';

const COUNT = Number(argsWithoutQuick()[0] ?? (QUICK ? 10 : 2000));
const requirements = SOAK_REQUIREMENTS;

/**
 * A bazaar extension whose schema has 997 properties: named after `variant` (distinct schemas and
 * distinct search vocabulary), or with fixed names and a `variant`-dependent bound (distinct
 * schemas, one vocabulary: separates the validator's memory from the search index's).
 */
function bazaar(variant: number, names: 'distinct' | 'fixed' = 'distinct'): Record<string, unknown> {
  const properties = Object.fromEntries(
    Array.from({ length: 997 }, (_, k) =>
      names === 'distinct' ? [`p${variant}_${k}`, {}] : [`p${k}`, k === 0 ? { minimum: -variant } : {}],
    ),
  );
  return {
    info: { input: { type: 'http', method: 'GET' } },
    schema: { type: 'object', properties: { input: { type: 'object' }, extra: { type: 'object', properties } } },
  };
}

async function run(label: string, distinct: boolean, names: 'distinct' | 'fixed' = 'distinct') {
  const svc = await startSoakProcess();
  const { url, child } = svc;
  const outcomes = new Map<string, number>();
  const samples: number[] = [];
  const latencies: number[] = [];
  try {
    // Warm-up: one settlement so the worker and statements exist before the first sample.
    const post = async (i: number) => {
      const body = JSON.stringify({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: requirements,
          payload: { transaction: 'AAAA' },
          resource: { url: `https://soak${i}.example.com/r` },
          extensions: { bazaar: bazaar(distinct ? i : 0, names) },
        },
        paymentRequirements: requirements,
      });
      const started = performance.now();
      const res = await fetch(`${url}/settle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      const header = res.headers.get('extension-responses');
      const outcome = header ? JSON.parse(Buffer.from(header, 'base64').toString()).bazaar : null;
      const key = outcome?.code ?? outcome?.status ?? 'none';
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    };
    await post(-1);
    const start = svc.rssMb();
    samples.push(start);
    const started = performance.now();
    for (let i = 0; i < COUNT; i++) {
      await post(i);
      if ((i + 1) % 100 === 0) samples.push(svc.rssMb());
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const result = {
      label,
      startMb: start,
      endMb: samples.at(-1)!,
      peakMb: Math.max(...samples),
      growthMb: samples.at(-1)! - start,
      p50Ms: latencies[Math.floor(latencies.length / 2)]!,
      p95Ms: latencies[Math.floor(latencies.length * 0.95)]!,
      seconds,
      outcomes: Object.fromEntries(outcomes),
      alive: child.exitCode === null,
    };
    return result;
  } finally {
    svc.stop();
  }
}

const before = loadavg();
const soak = await run(`${COUNT} distinct schemas, distinct property names`, true);
const fixedNames = await run(`${COUNT} distinct schemas, one set of property names`, true, 'fixed');
const baseline = await run(`${COUNT} × one schema (baseline)`, false);
const after = loadavg();
const f = (n: number) => n.toFixed(1);
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model}; load average before ${before.map(f).join(' ')}, after ${after.map(f).join(' ')}`,
);
console.log('| run | RSS start MB | RSS end MB | peak MB | growth MB | settle p50 / p95 ms | seconds | hook outcomes | svc alive |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of [soak, fixedNames, baseline]) {
  console.log(
    `| ${r.label} | ${f(r.startMb)} | ${f(r.endMb)} | ${f(r.peakMb)} | ${f(r.growthMb)} | ${f(r.p50Ms)} / ${f(r.p95Ms)} | ${f(r.seconds)} | ${JSON.stringify(r.outcomes)} | ${r.alive} |`,
  );
}
console.log(
  `end RSS ratio vs baseline: distinct names ${(soak.endMb / baseline.endMb).toFixed(2)}, fixed names ${(fixedNames.endMb / baseline.endMb).toFixed(2)}`,
);
