/**
 * A running svc wired the way src/main.ts wires it, for the fuzz suites: createService builds the
 * real exact scheme on a loopback devnet, the settlement journal and the catalog, on a temp SQLite
 * file or, with `databaseUrl`, on PostgreSQL (submitter leases included); the real Koa app listens
 * on an ephemeral port. Also a buyer-side helper that signs real payments with the client builder
 * in src/client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import type { CatalogPort } from '../../src/catalog/types.ts';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { LedgerTimeEstimator } from '../../src/chains/stellar/ledger-time.ts';
import { createSdkRpc, type ChainRpc } from '../../src/chains/stellar/rpc.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { api } from './contract.ts';
import { freshDatabase, type Backend } from './postgres.ts';
import { startTestServer, testConfig } from './server.ts';
import { openCatalog } from '../../src/catalog/index.ts';
import { databaseUrl } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { BUSY_MACHINE_BOUNDS } from '../catalog/fixtures.ts';

export interface FuzzSvc {
  url: string;
  devnet: Devnet;
  rpc: ChainRpc;
  catalog: CatalogPort;
  /** The facilitator's signing addresses (hostile payTo / payer values). */
  submitters: string[];
  /** GET /health through the contract helper; throws unless 200 `ok`. */
  expectHealthy(): Promise<void>;
  /** A funded buyer and a seller with a USDC trustline. */
  parties(usdc?: bigint): Promise<{ buyer: Keypair; seller: Keypair }>;
  requirements(payTo: string, overrides?: Partial<PaymentRequirements>): PaymentRequirements;
  /** Signs a real payment with the buyer builder in src/client. */
  pay(requirements: PaymentRequirements, buyer: Keypair, extra?: Pick<PaymentPayload, 'resource' | 'extensions'>): Promise<PaymentPayload>;
  stop(): Promise<void>;
}

export async function startFuzzSvc(options: { ledgerMs?: number; submitters?: number; backend?: Backend } = {}): Promise<FuzzSvc> {
  const devnet = await startDevnet({ ledgerMs: options.ledgerMs ?? 200 });
  const dir = mkdtempSync(join(tmpdir(), 'svc-fuzz-'));
  const dbPath = join(dir, 'catalog.sqlite');
  const submitterAccounts = await Promise.all(
    Array.from({ length: options.submitters ?? 2 }, () => devnet.createAccount({ usdcTrustline: false })),
  );
  const config = testConfig({
    SUBMITTER_SECRET: submitterAccounts.map((a) => a.secret).join(','),
    RPC_URL: devnet.rpcUrl,
    DB_PATH: dbPath,
    // Withdrawals past the rate limiter reach the handler (the limit itself: test/http/delist.test.ts).
    DELIST_RATE_PER_MINUTE: '100000',
    ...(options.backend === 'Postgres' ? { DATABASE_URL: await freshDatabase() } : {}),
  });
  // The oracle counts every 5xx as a failure (Schemathesis' not_a_server_error), 503
  // svc_catalog_busy included, so the fuzzed svc's catalog does not shed load: the 200-request
  // burst from one address would otherwise fill that client's share of the reader queue on a busy
  // machine. Shedding itself is tested where it is the point (test/catalog/fair-scheduling.test.ts,
  // docs/BENCHMARKS.md "Discovery under a flood").
  const ownCatalog = openCatalog({
    dbPath,
    databaseUrl: databaseUrl(config) ?? undefined,
    logger: silentLogger(),
    listingTtlDays: config.listingTtlDays,
    // A seller schema's validation starved by a busy machine is not judged (the header omitted, the listing left for
    // later), which the oracle would read as a lost listing; its CPU budget still applies.
    ...BUSY_MACHINE_BOUNDS,
    readDeadlineMs: 60_000,
    writeDeadlineMs: 60_000,
    maxQueuedReads: 4096,
  });
  const server = await startTestServer({ config, catalog: ownCatalog });
  const catalog = server.service.catalog;
  const rpc = createSdkRpc({ url: devnet.rpcUrl, timeoutMs: 5_000 });
  const ledgerTime = new LedgerTimeEstimator(rpc);
  const client = api(server.url);
  return {
    url: server.url,
    devnet,
    rpc,
    catalog,
    submitters: [...config.submitters],
    async expectHealthy() {
      const res = await client.get('/health');
      if (res.status !== 200 || res.body.status !== 'ok') throw new Error(`svc is not healthy: ${res.status} ${res.text}`);
    },
    async parties(usdc = 100_000_000n) {
      const [buyer, seller] = await Promise.all([devnet.createAccount({ usdc }), devnet.createAccount({})]);
      return { buyer: Keypair.fromSecret(buyer.secret), seller: Keypair.fromSecret(seller.secret) };
    },
    requirements(payTo, overrides = {}) {
      return {
        scheme: 'exact',
        network: 'stellar:testnet',
        asset: devnet.usdc.contractId,
        amount: '100000',
        payTo,
        maxTimeoutSeconds: 60,
        extra: { areFeesSponsored: true },
        ...overrides,
      };
    },
    pay(requirements, buyer, extra = {}) {
      return createStellarPayment({ requirements, signer: buyer, rpc, ledgerTime, ...extra });
    },
    async stop() {
      await server.close();
      await ownCatalog.close();
      await devnet.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
