/**
 * Readiness per network (docs/OPERATIONS.md "Several networks", openapi.yaml GET /ready): with
 * NETWORK=stellar:testnet,stellar:pubnet on two devnets, pubnet's RPC going down leaves /ready 200
 * with pubnet named not ready (READY_NETWORKS=all makes it 503), `?network=` answers for one
 * network; an RPC that serves another network's passphrase fails that network's `rpc` check, and
 * `npm start` (dist/main.js) refuses to start on it with exit 78. /health and the start-up line name
 * both networks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { startDevnet, type Devnet, type DevnetExtras } from '../../src/devnet/index.ts';
import type { RunningServer } from '../../src/http/app.ts';
import { silentLogger } from '../../src/log.ts';
import { createService, type Service } from '../../src/service.ts';
import { startSvc } from '../helpers/svc-process.ts';

type Net = 'stellar:testnet' | 'stellar:pubnet';
const NETS: Net[] = ['stellar:testnet', 'stellar:pubnet'];
const submitters = { 'stellar:testnet': Keypair.random(), 'stellar:pubnet': Keypair.random() };
const devnets = {} as Record<Net, Devnet & DevnetExtras>;
let dataDir: string;
const started: Array<{ service: Service; running: RunningServer }> = [];

interface ReadyBody {
  status: string;
  checks: Record<string, { ok: boolean; detail: string }>;
  networks?: Record<string, { status: string }>;
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NETWORK: 'stellar:testnet,stellar:pubnet',
    RPC_URL_TESTNET: devnets['stellar:testnet'].rpcUrl,
    RPC_URL_PUBNET: devnets['stellar:pubnet'].rpcUrl,
    SUBMITTER_SECRET_TESTNET: submitters['stellar:testnet'].secret(),
    SUBMITTER_SECRET_PUBNET: submitters['stellar:pubnet'].secret(),
    DB_PATH: join(dataDir, `svc-${started.length}-${Math.random().toString(36).slice(2)}.sqlite`),
    LIVENESS_CHECKS_PER_MINUTE: '0',
    ...extra,
  };
}

async function start(config: Config): Promise<string> {
  const service = createService(config, { logger: silentLogger() });
  const running = await service.listen(0, '127.0.0.1');
  started.push({ service, running });
  return running.url;
}

async function ready(url: string, query = ''): Promise<{ status: number; body: ReadyBody }> {
  const res = await fetch(`${url}/ready${query}`);
  return { status: res.status, body: (await res.json()) as ReadyBody };
}

/** Polls /ready until `done` holds (the probe reuses a round for 1 s; a dead RPC's check fails within its 2 s budget). */
async function readyUntil(url: string, done: (r: { status: number; body: ReadyBody }) => boolean, query = '') {
  const end = Date.now() + 20_000;
  let last = await ready(url, query);
  while (!done(last) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
    last = await ready(url, query);
  }
  return last;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-network-ready-'));
  for (const network of NETS) {
    devnets[network] = await startDevnet({ network, ledgerMs: 1000 });
    await devnets[network].fund(submitters[network].publicKey(), { usdcTrustline: false });
  }
}, 90_000);

afterAll(async () => {
  for (const { service } of started) await service.close();
  for (const devnet of Object.values(devnets)) await devnet.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('two networks, one of them wrong or down', () => {
  it('an RPC of the wrong network fails that network’s rpc check, naming what it serves', async () => {
    // RPC_URL_PUBNET points at the testnet devnet: it answers, with a recent ledger, for the wrong network.
    const url = await start(loadConfig(env({ RPC_URL_PUBNET: devnets['stellar:testnet'].rpcUrl })));
    const { status, body } = await readyUntil(url, (r) => r.body.checks['rpc:stellar:pubnet']?.ok === false);
    expect(status).toBe(200);
    expect(body.checks['rpc:stellar:pubnet']!.detail).toMatch(
      /^RPC serves stellar:testnet \(passphrase "Test SDF Network ; September 2015"\), not stellar:pubnet$/,
    );
    expect(body.checks['rpc:stellar:testnet']!.ok).toBe(true);
    expect(body.networks).toEqual({ 'stellar:testnet': { status: 'ready' }, 'stellar:pubnet': { status: 'not_ready' } });
    expect((await ready(url, '?network=stellar:pubnet')).status).toBe(503);
  });

  it('`npm start` refuses an RPC of the wrong network: exit 78, the network and its variable named, nothing bound', async () => {
    const svc = startSvc(devnets['stellar:testnet'].rpcUrl, env({ RPC_URL_PUBNET: devnets['stellar:testnet'].rpcUrl }));
    const failed = await svc.then(
      () => null,
      (err: Error) => err.message,
    );
    expect(failed).toMatch(/svc exited 78 before listening/);
    expect(failed).toContain(
      'svc: invalid configuration: the RPC of stellar:pubnet (RPC_URL_PUBNET, else RPC_URL) serves stellar:testnet (passphrase "Test SDF Network ; September 2015"), not stellar:pubnet',
    );
  }, 30_000);

  it('both up: ready, each network named ready; /health and the start-up line name both networks', async () => {
    const svc = await startSvc(devnets['stellar:testnet'].rpcUrl, env());
    try {
      const { status, body } = await readyUntil(
        svc.url,
        (r) => r.status === 200 && r.body.networks?.['stellar:pubnet']?.status === 'ready',
      );
      expect(status).toBe(200);
      expect(body.networks).toEqual({ 'stellar:testnet': { status: 'ready' }, 'stellar:pubnet': { status: 'ready' } });
      const health = (await (await fetch(`${svc.url}/health`)).json()) as { network: string; submitters: string[] };
      const both = NETS.map((n) => submitters[n].publicKey());
      expect(health.network).toBe('stellar:testnet,stellar:pubnet');
      expect(health.submitters).toEqual(both);
      const line = svc
        .output()
        .split('\n')
        .find((l) => l.includes('svc listening'));
      expect(JSON.parse(line!)).toMatchObject({ network: 'stellar:testnet,stellar:pubnet', submitters: both });
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
  }, 60_000);

  it('one network served: ?network= of another is not ready here (503), of its own is its readiness', async () => {
    const url = await start(
      loadConfig({
        NETWORK: 'stellar:testnet',
        RPC_URL: devnets['stellar:testnet'].rpcUrl,
        SUBMITTER_SECRET: submitters['stellar:testnet'].secret(),
        DB_PATH: join(dataDir, 'one-network.sqlite'),
        LIVENESS_CHECKS_PER_MINUTE: '0',
      }),
    );
    const own = await readyUntil(url, (r) => r.status === 200, '?network=stellar:testnet');
    expect(own.status).toBe(200);
    expect(own.body.networks).toEqual({ 'stellar:testnet': { status: 'ready' } });
    const other = await ready(url, '?network=stellar:pubnet');
    expect(other.status).toBe(503);
    expect(other.body).toEqual({ status: 'not_ready', checks: {}, networks: { 'stellar:pubnet': { status: 'not_ready' } } });
  });

  it('pubnet’s RPC down: /ready stays 200 naming pubnet not ready; ?network= answers per network; READY_NETWORKS=all is 503', async () => {
    const any = await start(loadConfig(env()));
    const all = await start(loadConfig(env({ READY_NETWORKS: 'all' })));
    expect((await readyUntil(all, (r) => r.status === 200)).status).toBe(200);
    await devnets['stellar:pubnet'].stop();

    const down = await readyUntil(any, (r) => r.body.networks?.['stellar:pubnet']?.status === 'not_ready');
    expect(down.status).toBe(200);
    expect(down.body.status).toBe('ready');
    expect(down.body.networks).toEqual({ 'stellar:testnet': { status: 'ready' }, 'stellar:pubnet': { status: 'not_ready' } });
    expect(down.body.checks['rpc:stellar:pubnet']!.ok).toBe(false);
    expect(down.body.checks['rpc:stellar:testnet']!.ok).toBe(true);

    const pubnet = await ready(any, '?network=stellar:pubnet');
    expect(pubnet.status).toBe(503);
    expect(Object.keys(pubnet.body.checks).sort()).toEqual(['balances:stellar:pubnet', 'database', 'draining', 'rpc:stellar:pubnet']);
    expect(pubnet.body.networks).toEqual({ 'stellar:pubnet': { status: 'not_ready' } });
    const testnet = await ready(any, '?network=stellar:testnet');
    expect(testnet.status).toBe(200);
    expect(testnet.body.networks).toEqual({ 'stellar:testnet': { status: 'ready' } });

    for (const query of ['network=stellar:futurenet', 'network=constructor', 'network=stellar:pubnet&network=stellar:pubnet', 'nets=all']) {
      const unknown = await fetch(`${any}/ready?${query}`);
      expect(unknown.status, query).toBe(400);
      expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('svc_invalid_query_parameter');
    }

    const strict = await readyUntil(all, (r) => r.status === 503);
    expect(strict.status).toBe(503);
    expect(strict.body.networks!['stellar:pubnet']).toEqual({ status: 'not_ready' });
  }, 60_000);
});
