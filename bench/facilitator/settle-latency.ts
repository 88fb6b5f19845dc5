/**
 * Settle latency over HTTP against its floor (the next ledger close), against a baseline commit.
 *
 * Settle latency against the floor (docs/BENCHMARKS.md):
 *
 *   npm run build && npx tsx bench/facilitator/settle-latency.ts [--n 16] [--baseline <git revision>] [--ledgers 1000,5000]
 *     [--listing] [--postgres] [--gap S]
 *
 * On 1 s and 5 s devnet ledgers, sequential settles arrive at random points of a ledger; each is
 * POSTed over HTTP to svc running as a separate process. The floor of one settle is the time
 * from its request to the next ledger close (recorded at the devnet itself), since no settle can
 * be confirmed earlier. Side by side, in the same run and interleaved: this tree (compiled,
 * plain Node) and a baseline revision (default: the commit before the close-clock change), each
 * with its own submitter.
 *
 * `--listing`: every settle also carries a bazaar extension for a resource of its own on a local
 * seller origin that answers a 402 naming the seller, so each settle starts the catalog's work for
 * a new listing (the origin check of docs/CATALOG.md "Ownership" runs off the payment path); the
 * listings each tree made are counted at the end.
 *
 * `--postgres`: each svc on a database of its own in one embedded PostgreSQL (DATABASE_URL), so a settle's journal and,
 * with `--listing`, its catalog write are Postgres statements.
 *
 * `--gap S`: each settle comes S seconds after the one before (then at a random point of a ledger), as settles reach a
 * facilitator that is not busy: past the seconds that connections kept alive wait idle (pg's pool 10 s).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnet } from '../../src/devnet/index.ts';
import { exportRevision, machine, NO_NEW_ADDRESS_ALLOWANCE, ROOT, startSvc } from '../lib/ops-procs.ts';
import { exactTerms, postSettle, withListing } from '../lib/payments.ts';
import { encodeX402Header } from '../../src/client/seller.ts';
import { QUICK } from '../lib/quick.ts';
import { createDatabase, freePort, startEmbeddedPostgres } from '../../src/dev/postgres.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const N = Number(arg('n', QUICK ? '2' : '16'));
const BASELINE = arg('baseline', QUICK ? '.' : '5686675');
const LISTING = process.argv.includes('--listing');
const POSTGRES = process.argv.includes('--postgres');
const GAP_MS = Number(arg('gap', '0')) * 1000;
const LEDGERS = arg('ledgers', QUICK ? '250' : '1000,5000')
  .split(',')
  .map(Number);

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;

async function run(ledgerMs: number, baselineDir: string) {
  const devnet = await startDevnet({ ledgerMs });
  const postgres = POSTGRES ? await startEmbeddedPostgres() : undefined;
  const closes: number[] = [];
  const ledger = devnet.ledger as unknown as { closeLedger: () => unknown };
  const close = ledger.closeLedger.bind(ledger);
  ledger.closeLedger = () => {
    const r = close();
    closes.push(performance.now());
    return r;
  };
  // When each transaction reached the devnet: a settle sent after the close its floor counts to
  // could not make that ledger (its request came within svc's pre-submission time of the close).
  const sends: number[] = [];
  const ledgerSubmit = devnet.ledger as unknown as { submit: (...args: unknown[]) => unknown };
  const submit = ledgerSubmit.submit.bind(ledgerSubmit);
  ledgerSubmit.submit = (...args: unknown[]) => {
    sends.push(performance.now());
    return submit(...args);
  };
  const seller = await devnet.createAccount({});
  const { requirements, sign, buyer } = exactTerms(devnet, seller.publicKey, 60);
  // The seller's origin for --listing: every path answers a buyer's unpaid request with its terms.
  const origin = http.createServer((req, res) => {
    const required = encodeX402Header({ x402Version: 2, resource: { url: `http://127.0.0.1:${port}${req.url}` }, accepts: [requirements] });
    res.writeHead(402, { 'payment-required': required, 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  const port = (origin.address() as AddressInfo).port;
  const services = await Promise.all(
    (['compiled', 'tsx'] as const).map(async (kind) => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-lat-'));
      const submitter = await devnet.createAccount({ usdcTrustline: false });
      const svc = startSvc(
        kind,
        kind === 'compiled' ? ROOT : baselineDir,
        {
          SUBMITTER_SECRET: submitter.secret,
          RPC_URL: devnet.rpcUrl,
          DB_PATH: join(dir, 'svc.sqlite'),
          ...(postgres ? { DATABASE_URL: await createDatabase(postgres.url) } : {}),
          ...NO_NEW_ADDRESS_ALLOWANCE,
          ...(LISTING ? { ALLOW_PRIVATE_TARGETS: '127.0.0.0/8' } : {}),
        },
        await freePort(), // a port picked at random could be another process's ephemeral one
      );
      await svc.readyAfter('/health', 180_000);
      return {
        name: kind === 'compiled' ? 'this tree' : `baseline ${BASELINE}`,
        svc,
        dir,
        latencies: [] as number[],
        floors: [] as number[],
        /** Request → the transaction reaching the devnet. */
        presends: [] as number[],
        /** Whether the transaction reached the devnet after the close its floor counts to. */
        sentAfterClose: [] as boolean[],
        failures: 0,
      };
    }),
  );
  // Warm-up: one settle each (first-use compile paths, the close clock's first observation).
  for (let i = -1; i < N; i++) {
    for (const s of services) {
      const signed = await sign(await buyer(10_000_000n));
      const payload = LISTING ? withListing(signed, `http://127.0.0.1:${port}/r/${s.name.replace(/\W+/g, '-')}/${i + 1}`) : signed;
      await new Promise((r) => setTimeout(r, GAP_MS + Math.random() * ledgerMs));
      const t0 = performance.now();
      const { ok, at: t1 } = await postSettle(s.svc.url, payload, requirements);
      if (i < 0) continue;
      const nextClose = closes.find((c) => c > t0);
      if (!ok || nextClose === undefined) {
        s.failures++;
        continue;
      }
      const sent = sends.find((t) => t > t0 && t < t1) ?? t1;
      s.latencies.push(t1 - t0);
      s.floors.push(nextClose - t0);
      s.presends.push(sent - t0);
      s.sentAfterClose.push(sent > nextClose);
    }
  }
  const listed = new Map<string, number>();
  if (LISTING) {
    await new Promise((r) => setTimeout(r, 3_000)); // the origin checks run off the payment path
    for (const s of services) {
      const page = (await (await fetch(`${s.svc.url}/discovery/resources?limit=100`)).json()) as { pagination?: { total?: number } };
      listed.set(s.name, page.pagination?.total ?? 0);
    }
  }
  origin.close();
  for (const s of services) {
    await s.svc.stop();
    rmSync(s.dir, { recursive: true, force: true });
  }
  await postgres?.stop();
  await devnet.stop();
  return services.map((s) => ({
    ledgerMs,
    name: s.name,
    n: s.latencies.length,
    failures: s.failures,
    listed: listed.get(s.name),
    meanFloor: mean(s.floors),
    mean: mean(s.latencies),
    excess: mean(s.latencies) - mean(s.floors),
    p95: p95(s.latencies),
    excesses: s.latencies.map((l, i) => l - s.floors[i]!),
    presends: s.presends,
    sentAfterClose: s.sentAfterClose,
  }));
}

const baseline = exportRevision(BASELINE);
try {
  console.log(`machine: ${await machine()}`);
  const rows = [];
  for (const ledgerMs of LEDGERS) rows.push(...(await run(ledgerMs, baseline.dir)));
  console.log(
    '| ledger | service | settles | failures | mean floor (time to next close) | mean settle latency | latency − floor | p95 latency | p95 of (latency − floor) | settles a ledger late | ratio to baseline |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const base = rows.find((b) => b.ledgerMs === r.ledgerMs && b.name !== 'this tree')!;
    console.log(
      `| ${r.ledgerMs / 1000} s | ${r.name} | ${r.n} | ${r.failures} | ${r.meanFloor.toFixed(0)} ms | ${r.mean.toFixed(0)} ms | ${r.excess.toFixed(0)} ms | ${r.p95.toFixed(0)} ms | ${p95(r.excesses).toFixed(0)} ms | ${r.excesses.filter((e) => e > r.ledgerMs / 2).length} | ${(r.mean / base.mean).toFixed(2)} |`,
    );
  }
  if (LISTING)
    for (const r of rows) console.log(`${r.ledgerMs / 1000} s, ${r.name}: ${r.listed} listings made of ${r.n + 1} settles carrying one`);
  // Where the late ones come from: a settle a ledger late whose transaction reached the devnet
  // after the close could not have made it (its request came within the pre-submission time of
  // the close); one sent before the close and still answered a ledger late is the confirm's fault.
  console.log(
    '| ledger | service | request → send p50 / p95 | late, sent after the close | late, sent before it | mean excess of the others |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const late = r.excesses.map((e) => e > r.ledgerMs / 2);
    const sorted = [...r.presends].sort((a, b) => a - b);
    const others = r.excesses.filter((_, i) => !late[i]);
    console.log(
      `| ${r.ledgerMs / 1000} s | ${r.name} | ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} / ${p95(sorted).toFixed(0)} ms | ${late.filter((l, i) => l && r.sentAfterClose[i]).length} | ${late.filter((l, i) => l && !r.sentAfterClose[i]).length} | ${mean(others).toFixed(0)} ms |`,
    );
  }
  // Per-settle excess over the floor, sorted: where the mean goes (a late settle costs a ledger).
  for (const r of rows)
    console.log(
      `${r.ledgerMs / 1000} s, ${r.name}: ${[...r.excesses]
        .sort((a, b) => a - b)
        .map((e) => e.toFixed(0))
        .join(' ')}`,
    );
  console.log(`after: ${await machine()}`);
} finally {
  baseline.remove();
}
