/**
 * A running svc wired the way src/main.ts wires it, for the fuzz suites: the real exact scheme
 * (createSchemeFromConfig) on a loopback devnet, the real catalog on a temp SQLite file, the real
 * Koa app on an ephemeral port. Also a buyer-side helper that signs real payments with the
 * client builder in src/client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { openCatalog, type Catalog } from '../../src/catalog/index.ts';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { silentLogger } from '../../src/log.ts';
import { createSchemeFromConfig } from '../../src/chains/stellar/from-config.ts';
import { LedgerTimeEstimator } from '../../src/chains/stellar/ledger-time.ts';
import { createSdkRpc, type ChainRpc } from '../../src/chains/stellar/rpc.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { api } from './contract.ts';
import { startTestServer, testConfig } from './server.ts';

export interface FuzzSvc {
  url: string;
  devnet: Devnet;
  rpc: ChainRpc;
  catalog: Catalog;
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

export async function startFuzzSvc(options: { ledgerMs?: number; submitters?: number } = {}): Promise<FuzzSvc> {
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
  });
  const logger = silentLogger();
  const catalog = openCatalog({ dbPath, logger });
  const server = await startTestServer({ config, logger, scheme: createSchemeFromConfig(config, logger), catalog });
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
      await catalog.close();
      await devnet.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
