/**
 * Liveness (/health), readiness (/ready) and metrics (/metrics) over real HTTP on loopback.
 * Readiness runs its real checks against the embedded devnet, reached through a TCP relay the test
 * can cut and restore (the RPC "going away" as a network outage would). Metrics are parsed with a
 * Prometheus text-format parser and compared with the requests made; the payment scheme is the
 * shared FakeScheme (the boundary: PaymentScheme in src/scheme/types.ts).
 */
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error the package ships no type declarations; the shape used is `Metric` below.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stellarReadinessChecks } from '../../src/chains/stellar/health.ts';
import { startDevnet } from '../../src/devnet/index.ts';
import { ServiceMetrics, instrumentCatalog, instrumentRpc } from '../../src/ops/metrics.ts';
import { SchemaNotJudgedError, type CatalogPort } from '../../src/catalog/types.ts';
import { ReadinessProbe, databaseWritableCheck, drainingCheck } from '../../src/ops/readiness.ts';
import { FAKE_ENVELOPE, FakeScheme } from '../helpers/fake-scheme.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';

/** A TCP relay to `target` on a fixed local port that can be cut (all connections dropped) and restored. */
async function relay(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const up = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await up();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    up,
    down: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server!.close(() => resolve());
      }),
  };
}

async function waitFor(what: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    if (await what()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not within ${withinMs} ms`);
}

describe('GET /health', () => {
  it('is public and cheap: no RPC URL or database path, and the port actually bound', async () => {
    const config = testConfig({ RPC_URL: 'http://127.0.0.1:9/private-rpc', DB_PATH: '/srv/secret/place.sqlite', PORT: '4021' });
    const server = await startTestServer({ config });
    try {
      const res = await api(server.url).get('/health');
      expect(res.status).toBe(200);
      expect(res.body.port).toBe(server.port);
      expect(res.text).not.toContain('private-rpc');
      expect(res.text).not.toContain('place.sqlite');
      expect(res.body).not.toHaveProperty('rpcUrl');
      expect(res.body).not.toHaveProperty('dbPath');
    } finally {
      await server.close();
    }
  });
});

describe('GET /ready against the devnet', () => {
  let devnet: Awaited<ReturnType<typeof startDevnet>>;
  let cut: Awaited<ReturnType<typeof relay>>;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let dir: string;
  let draining = false;
  const metrics = new ServiceMetrics();

  beforeAll(async () => {
    devnet = await startDevnet({ ledgerMs: 1000 });
    cut = await relay(new URL(devnet.rpcUrl).port ? Number(new URL(devnet.rpcUrl).port) : 80);
    const submitter = await devnet.createAccount({ usdc: 0n });
    dir = mkdtempSync(join(tmpdir(), 'svc-ready-'));
    const config = testConfig({ SUBMITTER_SECRET: submitter.secret, RPC_URL: cut.url, DB_PATH: join(dir, 'svc.sqlite') });
    const readiness = new ReadinessProbe({
      checks: {
        ...stellarReadinessChecks(config, { wrapRpc: (rpc) => instrumentRpc(rpc, metrics, config.network) }),
        database: databaseWritableCheck(config.dbPath),
        draining: drainingCheck(() => draining),
      },
    });
    server = await startTestServer({ config, readiness, metrics });
  });
  afterAll(async () => {
    await server?.close();
    await cut?.down().catch(() => {});
    await devnet?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const isReady = async () => (await api(server.url).get('/ready')).status === 200;

  it('is ready with a live RPC, a funded submitter and a writable database; the body names each check', async () => {
    await waitFor(isReady, 5_000);
    const res = await api(server.url).get('/ready');
    expect(res.body.status).toBe('ready');
    expect(Object.keys(res.body.checks).sort()).toEqual(['balances', 'database', 'draining', 'rpc']);
  });

  it('goes not-ready within 5 s of the RPC going away and ready again within 5 s of its return', async () => {
    await cut.down();
    const down = await waitFor(async () => !(await isReady()), 5_000);
    const res = await api(server.url).get('/ready');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('not_ready');
    expect(res.body.checks.rpc.ok).toBe(false);
    expect(res.body.checks.database.ok).toBe(true);
    expect(res.body.checks.balances.detail).not.toContain('does not exist'); // a transport fault is not a missing account
    // Liveness is unaffected.
    expect((await api(server.url).get('/health')).status).toBe(200);
    await cut.up();
    const up = await waitFor(isReady, 5_000);
    expect(down).toBeLessThan(5_000);
    expect(up).toBeLessThan(5_000);
    const parsed = parsePrometheusTextFormat((await api(server.url).get('/metrics')).text) as Metric[];
    expect(sample(parsed, 'svc_rpc_requests_total', { method: 'getLatestLedger', outcome: 'error' })).toBeGreaterThan(0);
    expect(sample(parsed, 'svc_rpc_requests_total', { method: 'getLatestLedger', outcome: 'ok' })).toBeGreaterThan(0);
  });

  it('is not ready while draining', async () => {
    draining = true;
    try {
      await waitFor(async () => !(await isReady()), 3_000);
      expect((await api(server.url).get('/ready')).body.checks.draining).toEqual({ ok: false, detail: 'draining' });
    } finally {
      draining = false;
    }
  });

  it('is not ready when a paying account is below the minimum balance', async () => {
    const poor = await devnet.createAccount({ usdc: 0n, xlmStroops: 10_000_000n });
    const checks = stellarReadinessChecks({
      ...testConfig({ SUBMITTER_SECRET: poor.secret, RPC_URL: devnet.rpcUrl }),
      readyMinBalanceStroops: 50_000_000,
    });
    const result = await checks.balances();
    expect(result.ok).toBe(false);
    expect(result.detail).toContain(poor.publicKey);
    expect(result.detail).toContain('1.0000000 XLM');
    expect(result.detail).not.toContain(poor.secret);
    const missing = stellarReadinessChecks({ ...testConfig({ RPC_URL: devnet.rpcUrl }) });
    expect((await missing.balances()).detail).toContain('does not exist');
  });
});

type Metric = {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; count?: string; buckets?: Record<string, string> }[];
};
function sample(parsed: Metric[], name: string, labels: Record<string, string> = {}): number {
  const family = parsed.find((m) => m.name === name);
  if (!family) return 0;
  return family.metrics
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((n, m) => n + Number(m.value ?? m.count ?? 0), 0);
}

describe('GET /metrics', () => {
  const envelope = FAKE_ENVELOPE;
  let settles = 0;
  // The pool gauges read the scheme's submitter pool (busy / waiting).
  const scheme = new FakeScheme({
    pool: { busy: 2, waiting: 1 },
    signers: { 'stellar:*': [] },
    verify: { isValid: false, invalidReason: 'invalid_exact_stellar_payload_malformed', invalidMessage: 'x' },
    settle: () =>
      ++settles % 2
        ? { success: true, transaction: 'ab'.repeat(32), network: 'stellar:testnet' }
        : {
            success: false,
            transaction: '',
            network: 'stellar:testnet',
            errorReason: 'settle_exact_stellar_transaction_failed',
            errorMessage: 'x',
          },
  });

  it('counts a seller schema svc could not judge now apart from catalog faults', async () => {
    const metrics = new ServiceMetrics();
    // The catalog port is the boundary: one hook answers, one could not judge the schema, one faults.
    const answers = [
      () => Promise.resolve({ status: 'success' as const }),
      () => Promise.reject(new SchemaNotJudgedError('The schema waited too long for validation.')),
      () => Promise.reject(new Error('database is locked')),
    ];
    const port = { recordSettlement: () => answers.shift()!() } as unknown as CatalogPort;
    const catalog = instrumentCatalog(port, metrics);
    const settled = {} as Parameters<CatalogPort['recordSettlement']>[0];
    await catalog.recordSettlement(settled, { strict: true });
    await expect(catalog.recordSettlement(settled, { strict: true })).rejects.toThrow(SchemaNotJudgedError);
    await expect(catalog.recordSettlement(settled, { strict: true })).rejects.toThrow('database is locked');
    const parsed = parsePrometheusTextFormat(await metrics.registry.metrics()) as Metric[];
    for (const outcome of ['success', 'not_judged', 'fault'])
      expect(sample(parsed, 'svc_catalog_hook_outcomes_total', { outcome }), outcome).toBe(1);
  });

  it('parses as Prometheus text and its counters match the requests made', async () => {
    const server = await startTestServer({ scheme });
    try {
      const http = api(server.url);
      for (let i = 0; i < 3; i++) expect((await http.get('/health')).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await http.get('/supported')).status).toBe(200);
      expect((await http.get('/nope')).status).toBe(404);
      for (let i = 0; i < 4; i++) await http.post('/verify', envelope);
      for (let i = 0; i < 5; i++) await http.post('/settle', envelope);
      await http.post('/settle', { not: 'an envelope' });
      const res = await http.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const parsed = parsePrometheusTextFormat(res.text) as Metric[];
      expect(sample(parsed, 'svc_http_requests_total', { route: 'GET /health', status: '200' })).toBe(3);
      expect(sample(parsed, 'svc_http_requests_total', { route: 'GET /supported', status: '200' })).toBe(2);
      expect(sample(parsed, 'svc_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
      expect(sample(parsed, 'svc_http_requests_total', { route: 'POST /verify' })).toBe(4);
      expect(sample(parsed, 'svc_http_requests_total', { route: 'POST /settle', status: '200' })).toBe(5);
      expect(sample(parsed, 'svc_http_requests_total', { route: 'POST /settle', status: '400' })).toBe(1);
      expect(sample(parsed, 'svc_verify_outcomes_total', { code: 'invalid_exact_stellar_payload_malformed' })).toBe(4);
      expect(sample(parsed, 'svc_settle_outcomes_total', { code: 'success' })).toBe(3);
      expect(sample(parsed, 'svc_settle_outcomes_total', { code: 'settle_exact_stellar_transaction_failed' })).toBe(2);
      const histogram = parsed.find((m) => m.name === 'svc_settle_duration_seconds');
      expect(histogram?.type).toBe('HISTOGRAM');
      // The parser keeps buckets only; the _count series are read from the text.
      const counts = [...res.text.matchAll(/^svc_settle_duration_seconds_count\{[^}]*\} (\d+)$/gm)].map((m) => Number(m[1]));
      expect(counts.reduce((n, c) => n + c, 0)).toBe(5);
      expect(sample(parsed, 'svc_submitter_pool_in_use')).toBe(2);
      expect(sample(parsed, 'svc_submitter_pool_queued')).toBe(1);
      for (const name of [
        'svc_submitter_pool_in_use',
        'svc_submitter_pool_queued',
        'svc_sponsored_fees_stroops_total',
        'nodejs_eventloop_lag_seconds',
        'svc_catalog_hook_outcomes_total',
        'svc_rpc_duration_seconds',
      ]) {
        expect(
          parsed.some((m) => m.name === name),
          name,
        ).toBe(true);
      }
      // Counting itself: the metrics request shows up on the next scrape.
      const again = parsePrometheusTextFormat((await http.get('/metrics')).text) as Metric[];
      expect(sample(again, 'svc_http_requests_total', { route: 'GET /metrics', status: '200' })).toBe(1);
    } finally {
      await server.close();
    }
  });
});
