/**
 * Settle throughput and crash recovery of several svc instances on one PostgreSQL database.
 *
 * Several svc instances on one PostgreSQL database (docs/SCALING.md, docs/BENCHMARKS.md), as
 * compiled svc processes (`npm run build` first) on a devnet with 1 s ledgers and an embedded
 * Postgres, every instance configured with the same `SUBMITTER_SECRET` list and `DATABASE_URL`.
 *
 * 1. Throughput: a burst of settles POSTed at once over HTTP, round-robin over the instances, while
 *    two clients send discovery requests (a list page and a search, in turn) round-robin over the
 *    same instances. Every payment lists its own resource (a bazaar extension), so the burst also
 *    writes the shared catalog. Side by side in one run: one instance on SQLite with 4 submitters
 *    (the baseline), then three instances on Postgres with 2, 4 and 8 shared submitters. A
 *    submitter carries one transaction per ledger, so the ceiling is `submitters` settles per
 *    ledger; the figure of merit is settled/s ÷ that ceiling.
 * 2. A crash: the same with three instances and 4 submitters, one instance killed with SIGKILL at
 *    the burst's first answer. Each cut-off payment is sent again to a survivor with its
 *    Idempotency-Key until its outcome is final. Then what the chain and the survivors say is
 *    checked: the seller received exactly one transfer per landed payment, the submitters' sequence
 *    numbers moved once per landed payment (no transaction was submitted twice), no settle failed
 *    for contention, and every landed payment has its journal record and its listing.
 *
 *   npm run build && npx tsx bench/ops/instances.ts [--per-submitter 12] [--submitters 2,4,8]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { createDatabase, startEmbeddedPostgres } from '../../src/dev/postgres.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { fmt, pct } from '../lib/http-load.ts';
import { machine, NO_NEW_ADDRESS_ALLOWANCE, ROOT, startSvc, type SvcProcess } from '../lib/ops-procs.ts';
import { exactTerms, postSettle, withListing } from '../lib/payments.ts';
import { QUICK } from '../lib/quick.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const PER_SUBMITTER = Number(arg('per-submitter', QUICK ? '2' : '12'));
const SUBMITTER_COUNTS = arg('submitters', QUICK ? '2' : '2,4,8')
  .split(',')
  .map(Number);
const LEDGER_SECONDS = 1;
/** Codes that would mean two instances got in each other's way (a submitter or its sequence). */
const CONTENTION = /signer_selection|sequence|bad_seq|unexpected_settle_error/;
/** The amount of every payment (bench/lib/payments.ts exactRequirements). */
const AMOUNT = 1000n;

const devnet = await startDevnet({ ledgerMs: LEDGER_SECONDS * 1000 });
const rpc = createSdkRpc({ url: devnet.rpcUrl });
const postgres = await startEmbeddedPostgres();

// Below the kernel's ephemeral range (32768+), where outgoing connections could hold a port.
let port = 20_000 + Math.floor(Math.random() * 10_000);
let resourceCount = 0;

/** Three (or one) svc processes sharing submitters and, on Postgres, one database. */
async function startInstances(instances: number, submitters: number, database: 'sqlite' | 'postgres') {
  const dir = mkdtempSync(join(tmpdir(), 'svc-instances-'));
  const accounts = await Promise.all(Array.from({ length: submitters }, () => devnet.createAccount({ usdcTrustline: false })));
  const shared: Record<string, string> = {
    SUBMITTER_SECRET: accounts.map((a) => a.secret).join(','),
    RPC_URL: devnet.rpcUrl,
    ...NO_NEW_ADDRESS_ALLOWANCE,
  };
  if (database === 'postgres') shared.DATABASE_URL = await createDatabase(postgres.url);
  const svcs = Array.from({ length: instances }, (_, i) =>
    startSvc('compiled', ROOT, { ...shared, DB_PATH: join(dir, `svc-${i}.sqlite`) }, port++),
  );
  await Promise.all(svcs.map((s) => s.readyAfter('/health', 60_000)));
  return {
    svcs,
    submitters: accounts.map((a) => a.publicKey),
    stop: async () => {
      await Promise.all(svcs.map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Signed payments to a new seller, each listing its own resource and carrying its own Idempotency-Key. */
async function payments(n: number, validitySeconds: number) {
  const seller = await devnet.createAccount({});
  const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, validitySeconds);
  const buyers = await Promise.all(Array.from({ length: 4 }, () => buyer(100_000_000n)));
  const signed = await Promise.all(Array.from({ length: n }, (_, i) => sign(buyers[i % 4]!)));
  const list = signed.map((payload) => {
    const url = `https://bench.example/resource/${++resourceCount}`;
    return { payload: withListing(payload, url), url, key: `bench-${resourceCount}` };
  });
  return { seller: seller.publicKey, requirements, list };
}

/** Two clients sending discovery requests round-robin over `targets()` until `done()`. */
async function browse(targets: () => SvcProcess[], done: () => boolean) {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const client = async (start: number) => {
    for (let k = start; !done(); k += 2) {
      const alive = targets();
      const path = k % 4 < 2 ? '/discovery/resources?limit=20' : '/discovery/search?query=bench+resource&limit=20';
      const started = performance.now();
      let status: string;
      try {
        const res = await fetch(alive[k % alive.length]!.url + path);
        await res.arrayBuffer();
        status = String(res.status);
        latencies.push(performance.now() - started);
      } catch {
        status = 'no answer';
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all([client(0), client(1)]);
  return { latencies, statuses };
}

const discoveryCell = (d: { latencies: number[]; statuses: Record<string, number> }) =>
  `${d.latencies.length} answered, p50 ${fmt(pct(d.latencies, 50))} / p95 ${fmt(pct(d.latencies, 95))} ms, ${JSON.stringify(d.statuses)}`;

async function throughputRun(label: string, instances: number, submitters: number, database: 'sqlite' | 'postgres') {
  const { svcs, stop } = await startInstances(instances, submitters, database);
  try {
    const { requirements, list } = await payments(instances + submitters * PER_SUBMITTER, 120);
    const warm = list.splice(0, instances);
    await Promise.all(warm.map((p, i) => postSettle(svcs[i]!.url, p.payload, requirements)));
    let bursting = true;
    const discovery = browse(
      () => svcs,
      () => !bursting,
    );
    const started = performance.now();
    const results = await Promise.all(list.map((p, i) => postSettle(svcs[i % instances]!.url, p.payload, requirements)));
    bursting = false;
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
      discovery: await discovery,
    };
  } finally {
    await stop();
  }
}

/** Resolves `probe`'s first defined value, asking every 250 ms for at most `ms`. */
async function until<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function crashRun(submitters: number) {
  const validitySeconds = 40;
  const { svcs, submitters: sources, stop } = await startInstances(3, submitters, 'postgres');
  try {
    const { seller, requirements, list } = await payments(3 + submitters * PER_SUBMITTER, validitySeconds);
    const warm = list.splice(0, 3);
    await Promise.all(warm.map((p, i) => postSettle(svcs[i]!.url, p.payload, requirements, p.key)));
    const balanceBefore = devnet.balances(seller).usdc ?? 0n;
    const sequencesBefore = await Promise.all(sources.map((s) => rpc.getAccountSequence(s)));
    let alive = svcs;
    let bursting = true;
    const discovery = browse(
      () => alive,
      () => !bursting,
    );
    const started = performance.now();
    const answers = list.map((p, i) => postSettle(svcs[i % 3]!.url, p.payload, requirements, p.key).catch(() => null));
    // Killed at the first answer: its other settles are queued, submitted or being confirmed.
    await Promise.race(answers);
    svcs[0]!.child.kill('SIGKILL');
    alive = svcs.slice(1);
    const answered = await Promise.all(answers);
    const cutOff = answered.filter((a) => a === null).length;
    // A cut-off payment, asked again on a survivor with its key, answers once its outcome is final
    // (a record the dead instance left is resolved by the survivors' reconcilers).
    const outcomes = await Promise.all(
      list.map(async (p, i) => {
        if (answered[i]) return answered[i];
        return until(
          async () => {
            const r = await postSettle(alive[i % 2]!.url, p.payload, requirements, p.key);
            return r.code === 'settlement_pending' || r.code === 'svc_settlement_outcome_unknown' ? undefined : r;
          },
          (validitySeconds + 30) * 1000,
        );
      }),
    );
    bursting = false;
    const landed = outcomes.filter((r): r is NonNullable<typeof r> => r?.ok === true);
    const seconds = (Math.max(...landed.map((r) => r.at)) - started) / 1000;
    const transferred = (devnet.balances(seller).usdc ?? 0n) - balanceBefore;
    const sequencesAfter = await Promise.all(sources.map((s) => rpc.getAccountSequence(s)));
    const transactions = sequencesAfter.reduce((sum, after, i) => sum + (after - sequencesBefore[i]!), 0n);
    const contention = outcomes.filter((r) => r && CONTENTION.test(r.code)).length;
    const unresolved = outcomes.filter((r) => !r).length;
    const journaled = (
      await Promise.all(
        landed.map(async (r) => {
          const res = await fetch(`${alive[0]!.url}/settlements/${r.transaction}`);
          return res.status === 200 && ((await res.json()) as { state: string }).state === 'settled';
        }),
      )
    ).filter(Boolean).length;
    const landedUrls = new Set(list.filter((_, i) => outcomes[i]?.ok).map((p) => p.url));
    // Listings of payments whose request died with the instance come from the reconcilers' next passes.
    const listed =
      (await until(async () => {
        const res = await fetch(`${alive[1]!.url}/discovery/resources?limit=100`);
        const items = ((await res.json()) as { items: Array<{ resource: string }> }).items;
        const count = items.filter((item) => landedUrls.has(item.resource)).length;
        return count === landedUrls.size ? count : undefined;
      }, 30_000)) ?? 'not all';
    return {
      payments: list.length,
      cutOff,
      landed: landed.length,
      seconds,
      transfers: transferred / AMOUNT,
      transactions,
      contention,
      unresolved,
      journaled,
      listed,
      discovery: await discovery,
    };
  } finally {
    await stop();
  }
}

try {
  console.log(`machine: ${await machine()}`);
  const rows = [await throughputRun(`1 instance, SQLite, 4 submitters (baseline)`, 1, 4, 'sqlite')];
  for (const n of SUBMITTER_COUNTS) rows.push(await throughputRun(`3 instances, Postgres, ${n} shared submitters`, 3, n, 'postgres'));
  console.log(
    `bursts of ${PER_SUBMITTER} settles per submitter POSTed at once, round-robin over the instances, ${LEDGER_SECONDS} s ledgers, 2 discovery clients beside them`,
  );
  console.log(
    '| setup | settled | failed | seconds to the last success | settled/s | ÷ (submitters per ledger) | outcomes | discovery during the burst |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${r.settled} | ${r.failed} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(2)} | ${r.ofCeiling.toFixed(2)} | ${JSON.stringify(r.codes)} | ${discoveryCell(r.discovery)} |`,
    );
  }
  const crash = await crashRun(4);
  console.log(`\nthree instances on Postgres, 4 shared submitters, one killed with SIGKILL at the burst's first answer:`);
  console.log(
    '| payments | cut off by the kill | landed | seconds to the last success | transfers to the seller | transactions (submitter sequences) | contention failures | outcome not final | journaled | listed | discovery during the burst |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${crash.payments} | ${crash.cutOff} | ${crash.landed} | ${crash.seconds.toFixed(1)} | ${crash.transfers} | ${crash.transactions} | ${crash.contention} | ${crash.unresolved} | ${crash.journaled} | ${crash.listed} | ${discoveryCell(crash.discovery)} |`,
  );
  console.log(`after: ${await machine()}`);
} finally {
  await postgres.stop();
  await devnet.stop();
}
