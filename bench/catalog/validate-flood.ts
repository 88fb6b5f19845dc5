/**
 * Settle latency while POST /discovery/validate is flooded, with and without its rate limits.
 *
 * Settle latency while POST /discovery/validate is flooded (docs/BENCHMARKS.md "Settle latency
 * under a validate flood"):
 *
 *   npm run build && npx tsx bench/catalog/validate-flood.ts [--n 12] [--rounds 2] [--flooders 16]
 *
 * One devnet (1 s ledgers) and two svc processes of this tree, each with its own submitter:
 * "limited" with the default validate rates (10 a minute per address, 120 for all), and
 * "unlimited" with both raised out of reach, so every flood request probes the target and runs the
 * catalog's checks. Sequential settles are POSTed to each at random points of a ledger, in turns
 * (quiet, flooded, quiet, flooded…) so the machine's load weighs on every phase alike. The flood:
 * `--flooders` closed-loop clients, each from its own loopback address (127.0.0.20…), validating
 * a seller route (in this process) that answers a 402 with exact terms and a bazaar declaration.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startDevnet } from '../../src/devnet/index.ts';
import { encodeX402Header, httpBazaar, paymentRequired, PAYMENT_REQUIRED_HEADER } from '../../src/client/seller.ts';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import { requireBuild, loadAverage, pct } from '../lib/http-load.ts';
import { machine, NO_NEW_ADDRESS_ALLOWANCE, ROOT, startSvc } from '../lib/ops-procs.ts';
import { exactRequirements, exactTerms, postSettle } from '../lib/payments.ts';
import { freePort } from '../../src/dev/postgres.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '12' },
    rounds: { type: 'string', default: '2' },
    flooders: { type: 'string', default: '16' },
    quick: { type: 'boolean', default: false },
  },
});
// --quick: 2 settles a phase, one round, 2 flooders, 250 ms ledgers (bench/lib/quick.ts).
if (values.quick) Object.assign(values, { n: '2', rounds: '1', flooders: '2' });
requireBuild();
const N = Number(values.n);
const ROUNDS = Number(values.rounds);
const FLOODERS = Array.from({ length: Number(values.flooders) }, (_, k) => `127.0.0.${20 + k}`);
const LEDGER_MS = values.quick ? 250 : 1000;

const devnet = await startDevnet({ ledgerMs: LEDGER_MS });
const seller = await devnet.createAccount({});

// The validated route: a 402 with the devnet's exact terms and a bazaar declaration.
const offer = {
  facilitator: createFacilitatorClient('http://127.0.0.1:9'),
  accepts: [exactRequirements(devnet, seller.publicKey, 60)],
  resource: { url: '', description: 'validate flood target' },
  bazaar: httpBazaar({
    method: 'GET',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
    example: { city: 'Lisbon' },
  }),
};
const target = http.createServer((_req, res) => {
  res.writeHead(402, { 'content-type': 'application/json', [PAYMENT_REQUIRED_HEADER]: encodeX402Header(paymentRequired(offer)) });
  res.end('{}');
});
await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/weather`;
offer.resource.url = targetUrl;

const variants: Array<{ name: string; env: Record<string, string> }> = [
  { name: 'limited (default rates)', env: {} },
  { name: 'unlimited (rates raised)', env: { VALIDATE_RATE_PER_MINUTE: '100000', VALIDATE_GLOBAL_PER_MINUTE: '1000000' } },
];
const dirs: string[] = [];
const services = await Promise.all(
  variants.map(async (v) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-vflood-'));
    dirs.push(dir);
    const submitter = await devnet.createAccount({ usdcTrustline: false });
    const svc = startSvc(
      'compiled',
      ROOT,
      {
        SUBMITTER_SECRET: submitter.secret,
        RPC_URL: devnet.rpcUrl,
        DB_PATH: join(dir, 'svc.sqlite'),
        ALLOW_PRIVATE_TARGETS: '127.0.0.0/8',
        ...NO_NEW_ADDRESS_ALLOWANCE,
        ...v.env,
      },
      await freePort(), // a port picked at random could be another process's ephemeral one
    );
    await svc.readyAfter('/health', 180_000);
    return { ...v, svc, quiet: [] as number[], flooded: [] as number[], failures: 0, validate: new Map<number, number>() };
  }),
);
const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 60);

/** Closed-loop validate clients against `url` until `stop` is set; counts answers by status. */
function flood(url: string, counts: Map<number, number>): { stop: () => Promise<void> } {
  let stopped = false;
  const body = JSON.stringify({ url: targetUrl });
  const loops = FLOODERS.map(async (localAddress) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress });
    while (!stopped) {
      const status = await new Promise<number>((resolve) => {
        const req = http.request(
          `${url}/discovery/validate`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.once('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.once('error', () => resolve(0));
        req.end(body);
      });
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    agent.destroy();
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

async function settles(s: (typeof services)[number], into: number[]) {
  for (let i = 0; i < N; i++) {
    const payload = await sign(await buyer(10_000_000n));
    await new Promise((r) => setTimeout(r, Math.random() * LEDGER_MS));
    const t0 = performance.now();
    const { ok, at } = await postSettle(s.svc.url, payload, requirements);
    if (ok) into.push(at - t0);
    else s.failures++;
  }
}

const loads: string[] = [];
try {
  console.log(`machine: ${await machine()}`);
  for (const s of services) await settles(s, []); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of services) {
      await settles(s, s.quiet);
      const flooding = flood(s.svc.url, s.validate);
      await settles(s, s.flooded);
      await flooding.stop();
      loads.push(loadAverage());
    }
  }
  console.log(`load averages after each flooded phase: ${loads.join('; ')}`);
  console.log(
    '| svc | settles quiet / flooded | failures | p50 quiet → flooded | p95 quiet → flooded | mean ratio flooded / quiet | validate answers during the flood |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const s of services) {
    const answers = [...s.validate.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${count} × ${status}`)
      .join(', ');
    console.log(
      `| ${s.name} | ${s.quiet.length} / ${s.flooded.length} | ${s.failures} | ${pct(s.quiet, 50).toFixed(0)} → ${pct(s.flooded, 50).toFixed(0)} ms | ${pct(s.quiet, 95).toFixed(0)} → ${pct(s.flooded, 95).toFixed(0)} ms | ${(mean(s.flooded) / mean(s.quiet)).toFixed(2)} | ${answers} |`,
    );
  }
} finally {
  for (const s of services) await s.svc.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  target.close();
  await devnet.stop();
}
