/**
 * Startup to serving and to ready, against a baseline commit.
 *
 * Startup to ready (docs/BENCHMARKS.md):
 *
 *   npm run build && npx tsx bench/ops/start.ts [--runs 5] [--baseline <git revision>]
 *
 * Spawns svc as a separate process against a devnet and times spawn → first 200 on /health
 * (serving) and on /ready (every readiness check passed), alternating this tree's `npm start`
 * (plain Node on dist/) with the baseline revision's `tsx src/main.ts` (which has no /ready: its
 * /health is always ready).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnet } from '../../src/devnet/index.ts';
import { exportRevision, machine, ROOT, startSvc } from '../lib/ops-procs.ts';
import { QUICK } from '../lib/quick.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const RUNS = Number(arg('runs', QUICK ? '1' : '5'));
const BASELINE = arg('baseline', QUICK ? '.' : '5686675');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const baseline = exportRevision(BASELINE);
const devnet = await startDevnet({ ledgerMs: 1000 });
const submitter = await devnet.createAccount({ usdcTrustline: false });
const results: Record<string, { health: number[]; ready: number[] }> = {
  'this tree (node dist/main.js)': { health: [], ready: [] },
  [`baseline ${BASELINE} (tsx src/main.ts)`]: { health: [], ready: [] },
};
try {
  console.log(`machine: ${await machine()}`);
  for (let i = 0; i < RUNS; i++) {
    for (const [name, r] of Object.entries(results)) {
      const compiled = name.startsWith('this');
      const dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
      const svc = startSvc(
        compiled ? 'compiled' : 'tsx',
        compiled ? ROOT : baseline.dir,
        { SUBMITTER_SECRET: submitter.secret, RPC_URL: devnet.rpcUrl, DB_PATH: join(dir, 'svc.sqlite') },
        30_000 + Math.floor(Math.random() * 20_000),
      );
      r.health.push(await svc.readyAfter('/health'));
      r.ready.push(compiled ? await svc.readyAfter('/ready') : r.health.at(-1)!);
      await svc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log('| start | runs | median to /health 200 | median to ready | min–max to ready |');
  console.log('|---|---|---|---|---|');
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `| ${name} | ${RUNS} | ${median(r.health).toFixed(0)} ms | ${median(r.ready).toFixed(0)} ms | ${Math.min(...r.ready).toFixed(0)}–${Math.max(...r.ready).toFixed(0)} ms |`,
    );
  }
  console.log(`after: ${await machine()}`);
} finally {
  await devnet.stop();
  baseline.remove();
}
