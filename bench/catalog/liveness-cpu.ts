/**
 * The CPU svc's liveness checks cost at their default rate, beside the same svc with them off.
 *
 * What svc's liveness checks cost in CPU at their default rate over a 100k-listing catalog
 * (docs/BENCHMARKS.md "Liveness checks: CPU"). Two `dist/main.js` processes run side by side on
 * copies of the same seeded catalog, one with LIVENESS_CHECKS_PER_MINUTE at its default and one
 * with 0 (off), so machine load hits both alike; each process's CPU time (all its threads, from
 * /proc) is read over the same window. Every listing is due and points at a cheap loopback 402
 * origin served by this script (50 loopback addresses, so the per-origin pause does not bind),
 * which counts the probes it receives.
 *
 *   npm run build && npx tsx bench/catalog/liveness-cpu.ts [--size 100000] [--seconds 180] [--keep-dir DIR]
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { encodeX402Header } from '../../src/client/seller.ts';
import { PROBE_DEFAULTS } from '../../src/net/probe-config.ts';
import { seedCorpus } from '../lib/catalog-corpus.ts';
import { discoveryOnlyEnv } from './lib/catalog-sides.ts';
import { cpuSeconds, fmt, loadAverage, machineLine, requireBuild, startNode, waitReady } from '../lib/http-load.ts';
import { scratchDir } from '../lib/scratch-dir.ts';
import { freePortPair } from '../../src/dev/postgres.ts';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '180' },
    'keep-dir': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 300 listings, a 1 s window after a 1 s settling (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { size: '300', seconds: '1' });
requireBuild();
const SIZE = Number(values.size);
const WINDOW_S = Number(values.seconds);
const ORIGINS = 50;
const ORIGIN_PORT = 47330;
const out = (s: string) => console.log(s);
const dir = values['keep-dir'] ?? scratchDir('svc-bench-liveness-');
mkdirSync(dir, { recursive: true });

out(machineLine());
const seeded = join(dir, `corpus-${SIZE}.sqlite`);
if (!existsSync(seeded)) {
  seedCorpus(seeded, SIZE, (n) => process.stderr.write(`seeded ${n}\r`));
  // Every listing an http resource at one of the loopback origins, never checked (due at once).
  const db = new DatabaseSync(seeded);
  db.exec(`UPDATE listings SET type = 'http', tool_name = '', liveness_basis_ms = 0,
    resource = 'http://127.0.0.' || (2 + id % ${ORIGINS}) || ':${ORIGIN_PORT}/r/' || id`);
  db.close();
}
const onFile = join(dir, 'on.sqlite');
const offFile = join(dir, 'off.sqlite');
copyFileSync(seeded, onFile);
copyFileSync(seeded, offFile);

// The sellers: a 402 naming a fixed payTo (the check's status does not change its cost).
let probes = 0;
const required = encodeX402Header({
  x402Version: 2,
  resource: { url: 'http://127.0.0.2/r' },
  accepts: [
    {
      scheme: 'exact',
      network: 'stellar:testnet',
      amount: '1000',
      asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
      payTo: Keypair.random().publicKey(),
      maxTimeoutSeconds: 60,
    },
  ],
});
const origins = await Promise.all(
  Array.from({ length: ORIGINS }, async (_, k) => {
    const server = http.createServer((_req, res) => {
      probes++;
      res.writeHead(402, { 'payment-required': required, 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(ORIGIN_PORT, `127.0.0.${2 + k}`, resolve));
    return server;
  }),
);

const env = (port: number, dbPath: string, perMinute: string) =>
  discoveryOnlyEnv(port, dbPath, { ALLOW_PRIVATE_TARGETS: '127.0.0.0/8', LIVENESS_CHECKS_PER_MINUTE: perMinute });
// Free ports, not fixed ones: a fixed port may be another process's ephemeral one (the suite's quick run met 47320 in use).
const [ON_PORT, OFF_PORT] = await freePortPair();
const on = startNode(['dist/main.js'], env(ON_PORT, onFile, String(PROBE_DEFAULTS.LIVENESS_CHECKS_PER_MINUTE)));
const off = startNode(['dist/main.js'], env(OFF_PORT, offFile, '0'));
try {
  await Promise.all([waitReady(ON_PORT, '/supported'), waitReady(OFF_PORT, '/supported')]);
  // Past start-up and the first pass (10 s after start).
  await new Promise((r) => setTimeout(r, values.quick ? 1_000 : 15_000));
  const loadBefore = loadAverage();
  const start = { on: cpuSeconds(on.pid!), off: cpuSeconds(off.pid!), probes, at: performance.now() };
  await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
  const wall = (performance.now() - start.at) / 1000;
  const used = { on: cpuSeconds(on.pid!) - start.on, off: cpuSeconds(off.pid!) - start.off };
  const done = probes - start.probes;
  const db = new DatabaseSync(onFile, { readOnly: true });
  const statuses = db.prepare('SELECT liveness_status AS s, count(*) AS n FROM listings GROUP BY 1 ORDER BY 2 DESC').all();
  db.close();
  const pct = (s: number) => (100 * s) / wall;
  out(`Catalog: ${SIZE.toLocaleString('en')} listings, all due; window ${fmt(wall)} s; load average ${loadBefore} → ${loadAverage()}.`);
  out(
    `Default rate: ${PROBE_DEFAULTS.LIVENESS_CHECKS_PER_MINUTE} checks a minute; the origins received ${done} probes (${fmt((done * 60) / wall)} a minute).`,
  );
  out('\n| svc | CPU seconds | % of one core |');
  out('| --- | --- | --- |');
  out(`| liveness on (default rate) | ${fmt(used.on)} | ${fmt(pct(used.on))} |`);
  out(`| liveness off | ${fmt(used.off)} | ${fmt(pct(used.off))} |`);
  out(`| difference (the checks) | ${fmt(used.on - used.off)} | ${fmt(pct(used.on - used.off))} |`);
  out(`\nPer check: ${fmt(((used.on - used.off) * 1000) / Math.max(1, done))} ms of CPU. Statuses recorded: ${JSON.stringify(statuses)}`);
} finally {
  on.kill('SIGKILL');
  off.kill('SIGKILL');
  for (const server of origins) server.close();
}
