/**
 * Several svc instances on one PostgreSQL database (docs/SCALING.md, docs/BENCHMARKS.md): a burst
 * of settles POSTed at once over HTTP, spread round-robin over compiled svc processes (`npm run
 * build` first) that share one list of submitter accounts, on a devnet with 1 s ledgers and an
 * embedded Postgres. Side by side in one run: one instance on SQLite with the same number of
 * submitters (the baseline), then three instances on Postgres with 2, 4 and 8 shared submitters.
 * A submitter carries one transaction per ledger, so the ceiling is `submitters` settles per
 * ledger; the figure of merit is settled/s ÷ that ceiling.
 *
 *   npm run build && npx tsx bench/instances.ts [--per-submitter 12] [--submitters 2,4,8]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, startEmbeddedPostgres } from '../src/dev/postgres.ts';
import { startDevnet } from '../src/devnet/index.ts';
import { machine, ROOT, startSvc } from './ops-procs.ts';
import { exactTerms, postSettle } from './payments.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const PER_SUBMITTER = Number(arg('per-submitter', '12'));
const SUBMITTER_COUNTS = arg('submitters', '2,4,8').split(',').map(Number);
const LEDGER_SECONDS = 1;

const devnet = await startDevnet({ ledgerMs: LEDGER_SECONDS * 1000 });
const postgres = await startEmbeddedPostgres();
const seller = await devnet.createAccount({});
const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 120);

async function payments(n: number) {
  const buyers = await Promise.all(Array.from({ length: 4 }, () => buyer(100_000_000n)));
  return Promise.all(Array.from({ length: n }, (_, i) => sign(buyers[i % 4]!)));
}

// Below the kernel's ephemeral range (32768+), where outgoing connections could hold a port.
let port = 20_000 + Math.floor(Math.random() * 10_000);
async function run(label: string, instances: number, submitters: number, database: 'sqlite' | 'postgres') {
  const dir = mkdtempSync(join(tmpdir(), 'svc-instances-'));
  const accounts = await Promise.all(Array.from({ length: submitters }, () => devnet.createAccount({ usdcTrustline: false })));
  const shared: Record<string, string> = { SUBMITTER_SECRET: accounts.map((a) => a.secret).join(','), RPC_URL: devnet.rpcUrl };
  if (database === 'postgres') shared.DATABASE_URL = await createDatabase(postgres.url);
  const svcs = Array.from({ length: instances }, (_, i) =>
    startSvc('compiled', ROOT, { ...shared, DB_PATH: join(dir, `svc-${i}.sqlite`) }, port++),
  );
  try {
    await Promise.all(svcs.map((s) => s.readyAfter('/health', 60_000)));
    const [...all] = await payments(instances + submitters * PER_SUBMITTER);
    const warm = all.splice(0, instances);
    await Promise.all(warm.map((p, i) => postSettle(svcs[i]!.url, p, requirements)));
    const started = performance.now();
    const results = await Promise.all(all.map((p, i) => postSettle(svcs[i % instances]!.url, p, requirements)));
    const ok = results.filter((r) => r.ok);
    const seconds = (Math.max(...ok.map((r) => r.at)) - started) / 1000;
    const codes: Record<string, number> = {};
    for (const r of results) codes[r.code] = (codes[r.code] ?? 0) + 1;
    const perSecond = ok.length / seconds;
    return {
      label,
      settled: ok.length,
      failed: results.length - ok.length,
      seconds,
      perSecond,
      ofCeiling: perSecond / (submitters / LEDGER_SECONDS),
      codes,
    };
  } finally {
    await Promise.all(svcs.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  console.log(`machine: ${await machine()}`);
  const rows = [await run(`1 instance, SQLite, 4 submitters (baseline)`, 1, 4, 'sqlite')];
  for (const n of SUBMITTER_COUNTS) rows.push(await run(`3 instances, Postgres, ${n} shared submitters`, 3, n, 'postgres'));
  console.log(
    `bursts of ${PER_SUBMITTER} settles per submitter POSTed at once, round-robin over the instances, ${LEDGER_SECONDS} s ledgers`,
  );
  console.log('| setup | settled | failed | seconds to the last success | settled/s | ÷ (submitters per ledger) | outcomes |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${r.settled} | ${r.failed} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(2)} | ${r.ofCeiling.toFixed(2)} | ${JSON.stringify(r.codes)} |`,
    );
  }
  console.log(`after: ${await machine()}`);
} finally {
  await postgres.stop();
  await devnet.stop();
}
