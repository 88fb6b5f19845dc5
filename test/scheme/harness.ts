/**
 * One devnet + one svc HTTP server wired with the real exact scheme, for the HTTP-level scheme
 * tests. Everything runs on loopback; balances are read straight from the devnet's ledger.
 */
import { Keypair } from '@stellar/stellar-sdk';
import { startDevnet, type Devnet, type DevnetExtras, type StartDevnetExtraOptions } from '../../src/devnet/index.ts';
import type { DevnetNetwork } from '../../src/devnet/types.ts';
import { signingKeys } from '../../src/config.ts';
import { ExactStellarScheme, type ExactStellarSchemeOptions } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc, type ChainRpc } from '../../src/chains/stellar/rpc.ts';
import { LedgerTimeEstimator } from '../../src/chains/stellar/ledger-time.ts';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import { api } from '../helpers/contract.ts';

export interface LogLine {
  [key: string]: unknown;
}

export interface Facilitator {
  url: string;
  scheme: ExactStellarScheme;
  submitters: string[];
  feeBump: string | null;
  logs: LogLine[];
  verify(paymentPayload: unknown, paymentRequirements: unknown): Promise<{ status: number; body: any }>;
  settle(paymentPayload: unknown, paymentRequirements: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface FacilitatorOptions {
  submitters?: number;
  feeBump?: boolean;
  maxFee?: number;
  rpcTimeoutMs?: number;
  scheme?: Partial<ExactStellarSchemeOptions>;
}

export class SchemeHarness {
  private constructor(
    readonly devnet: Devnet & DevnetExtras,
    readonly rpc: ChainRpc,
    readonly ledgerTime: LedgerTimeEstimator,
    readonly network: DevnetNetwork,
  ) {}

  private servers: Facilitator[] = [];

  static async start(
    ledgerMs = 250,
    devnetOptions: Pick<StartDevnetExtraOptions, 'now' | 'ledgerLimits' | 'network'> = {},
  ): Promise<SchemeHarness> {
    const devnet = await startDevnet({ ledgerMs, ...devnetOptions });
    // The buyers' RPC (and the tests' chain reads): patient like a wallet, so a devnet slowed by a
    // loaded machine (it serves every buyer of a burst from the test's own process) delays a test
    // instead of failing it before svc is even asked.
    const rpc = createSdkRpc({ url: devnet.rpcUrl, timeoutMs: 10_000 });
    // A ledger-time estimate needs a span of close times: a devnet that closes ledgers starts with
    // 120 of them behind genesis (HISTORY_LEDGERS), so both sides measure its cadence at once.
    return new SchemeHarness(devnet, rpc, new LedgerTimeEstimator(rpc), devnetOptions.network ?? 'stellar:testnet');
  }

  async facilitator(options: FacilitatorOptions = {}): Promise<Facilitator> {
    const submitters = await Promise.all(
      Array.from({ length: options.submitters ?? 1 }, () => this.devnet.createAccount({ usdcTrustline: false })),
    );
    const feeBump = options.feeBump ? await this.devnet.createAccount({ usdcTrustline: false }) : undefined;
    const config = testConfig({
      NETWORK: this.network,
      SUBMITTER_SECRET: submitters.map((s) => s.secret).join(','),
      ...(feeBump ? { FEE_BUMP_SECRET: feeBump.secret } : {}),
      ...(options.maxFee ? { MAX_TRANSACTION_FEE_STROOPS: String(options.maxFee) } : {}),
      RPC_URL: this.devnet.rpcUrl,
    });
    const keys = signingKeys(config);
    const logs: LogLine[] = [];
    const scheme = new ExactStellarScheme({
      network: config.network,
      rpc: createSdkRpc({ url: this.devnet.rpcUrl, timeoutMs: options.rpcTimeoutMs ?? 2_000 }),
      submitters: keys.submitters,
      feeBump: keys.feeBump,
      maxTransactionFeeStroops: config.maxTransactionFeeStroops,
      logger: { info: (obj) => logs.push(obj) },
      ...options.scheme,
    });
    const server = await startTestServer({ config, scheme });
    const client = api(server.url);
    const facilitator: Facilitator = {
      url: server.url,
      scheme,
      submitters: config.submitters,
      feeBump: config.feeBumpAddress,
      logs,
      verify: (paymentPayload, paymentRequirements) => client.post('/verify', { x402Version: 2, paymentPayload, paymentRequirements }),
      settle: (paymentPayload, paymentRequirements) => client.post('/settle', { x402Version: 2, paymentPayload, paymentRequirements }),
      close: () => server.close(),
    };
    this.servers.push(facilitator);
    return facilitator;
  }

  /** A funded buyer and a fresh seller with a USDC trustline. */
  async parties(usdc = 10_000_000n): Promise<{ buyer: Keypair; seller: Keypair }> {
    const [buyer, seller] = await Promise.all([this.devnet.createAccount({ usdc }), this.devnet.createAccount({})]);
    return { buyer: Keypair.fromSecret(buyer.secret), seller: Keypair.fromSecret(seller.secret) };
  }

  requirements(payTo: string, overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
    return {
      scheme: 'exact',
      network: this.network,
      asset: this.devnet.usdc.contractId,
      amount: '100000',
      payTo,
      maxTimeoutSeconds: 30,
      extra: { areFeesSponsored: true },
      ...overrides,
    };
  }

  pay(requirements: PaymentRequirements, signer: Keypair, extra: { expirationLedger?: number } = {}): Promise<PaymentPayload> {
    return createStellarPayment({ requirements, signer, rpc: this.rpc, ledgerTime: this.ledgerTime, ...extra });
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
    await this.devnet.stop();
  }
}
