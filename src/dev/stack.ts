/**
 * The local stack behind `npm run dev` and the interop tests: the embedded devnet (HTTP and
 * HTTPS), funded accounts, and svc itself (real scheme, real catalog file) wired to the devnet
 * exactly as `npm start` would wire it to a real RPC. Nothing here reaches beyond loopback.
 *
 *   const stack = await startStack({ dataDir: './data/dev', svcPort: 4021 });
 *   ... stack.svc.url, stack.devnet.rpcUrl, stack.accounts.buyer ...
 *   await stack.stop();
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { startDevnet, type DevAccount, type Devnet, type DevnetExtras } from '../devnet/index.ts';
import type { RunningServer } from '../http/app.ts';
import { silentLogger, type Logger } from '../log.ts';
import { createService } from '../service.ts';
import { createDatabase, startEmbeddedPostgres } from './postgres.ts';
import { startRoundRobin } from './round-robin.ts';

export { DEV_PORTS } from './ports.ts';

/** 1 USDC in base units (7 decimals). */
export const USDC = 10_000_000n;

export interface StackOptions {
  /** Folder for the catalog file (created if missing); the catalog in it is replaced so every run starts fresh. */
  dataDir: string;
  /** svc port; 0 (default) picks a free one. */
  svcPort?: number;
  /** Devnet HTTP / HTTPS ports; 0 (default) picks free ones. */
  devnetPort?: number;
  devnetHttpsPort?: number;
  /** Ledger close interval (default 1000 ms; see main.ts for why not faster). */
  ledgerMs?: number;
  /** svc's logger (pino); silent by default. */
  logger?: Logger;
  /** Called as each piece comes up, for a visible start. */
  progress?: (step: string) => void;
  /**
   * Two svc instances on an embedded PostgreSQL behind a round-robin front on svc's port, sharing
   * the submitters (docs/SCALING.md); default: one instance on SQLite.
   */
  postgres?: boolean;
}

export interface StackAccounts {
  /** svc's submitter accounts (XLM only: they never hold the payment asset). */
  submitters: DevAccount[];
  /** svc's fee-bump account (XLM only). */
  feeBump: DevAccount;
  /** The demo seller's payee (USDC trustline, no USDC). */
  seller: DevAccount;
  /** The demo buyer (100 USDC). */
  buyer: DevAccount;
  /** A second buyer for the agent (100 USDC), so the two stories never race on one account. */
  agent: DevAccount;
}

export interface Stack {
  devnet: Devnet & DevnetExtras;
  /** Where clients reach svc: the one instance, or the round-robin front with --postgres. */
  svc: RunningServer;
  /** With --postgres: the instances behind the front, the requests each answered, the database (no credentials). */
  fleet?: { instances: RunningServer[]; served: number[]; database: string };
  config: Config;
  catalogPath: string;
  accounts: StackAccounts;
  /** Stops svc, closes the catalog, stops the devnet. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const progress = options.progress ?? (() => {});
  const logger = options.logger ?? silentLogger();
  const cleanups: Array<() => Promise<void> | void> = [];
  const stop = async () => {
    while (cleanups.length) await cleanups.pop()!();
  };
  try {
    progress('starting the devnet (HTTP and HTTPS)');
    const devnet = await startDevnet({
      ledgerMs: options.ledgerMs ?? 1000,
      https: true,
      port: options.devnetPort ?? 0,
      httpsPort: options.devnetHttpsPort ?? 0,
    });
    cleanups.push(() => devnet.stop());

    progress('funding accounts (submitters, fee-bump, seller, buyer, agent)');
    const xlmOnly = { usdcTrustline: false };
    const accounts: StackAccounts = {
      submitters: [await devnet.createAccount(xlmOnly), await devnet.createAccount(xlmOnly)],
      feeBump: await devnet.createAccount(xlmOnly),
      seller: await devnet.createAccount(),
      buyer: await devnet.createAccount({ usdc: 100n * USDC }),
      agent: await devnet.createAccount({ usdc: 100n * USDC }),
    };

    mkdirSync(options.dataDir, { recursive: true });
    const catalogPath = join(options.dataDir, 'catalog.sqlite');
    for (const suffix of ['', '-wal', '-shm']) rmSync(catalogPath + suffix, { force: true });

    let databaseUrl: string | undefined;
    if (options.postgres) {
      progress('starting an embedded PostgreSQL');
      const server = await startEmbeddedPostgres();
      cleanups.push(() => server.stop());
      databaseUrl = await createDatabase(server.url, 'svc_dev');
    }

    progress(options.postgres ? 'starting two svc instances on PostgreSQL and a round-robin front' : 'starting svc against the devnet');
    // The same variables an operator would set for `npm start`, checked by the same loader.
    const config = loadConfig({
      SUBMITTER_SECRET: accounts.submitters.map((a) => a.secret).join(','),
      FEE_BUMP_SECRET: accounts.feeBump.secret,
      NETWORK: 'stellar:testnet',
      RPC_URL: devnet.rpcUrl,
      // PORT must be 1–65535 for an operator; the ephemeral 0 is passed to listen() below.
      ...(options.svcPort ? { PORT: String(options.svcPort) } : {}),
      DB_PATH: catalogPath,
      LOG_LEVEL: logger.level,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      // svc shares this process's event loop with the devnet and the story: their work would count
      // as payment load and hold the story's searches (docs/OPERATIONS.md "Payments before discovery").
      DISCOVERY_YIELD_PERCENT: '100',
      // Every seller of the local stack is one host (127.0.0.1): the bound of one request per host
      // per interval (docs/SECURITY.md) would queue them all behind each other.
      PROBE_HOST_INTERVAL_SECONDS: '0',
    });
    // Readiness as `npm start` answers it (docs/OPERATIONS.md): the devnet's latest ledger, the
    // paying accounts' balances, the database, draining.
    const startInstance = async (port: number) => {
      const service = createService(config, { logger });
      cleanups.push(() => service.close());
      return service.listen(port, '127.0.0.1');
    };
    if (!options.postgres) {
      const svc = await startInstance(options.svcPort ?? 0);
      return { devnet, svc, config, catalogPath, accounts, stop };
    }
    const instances = [await startInstance(0), await startInstance(0)];
    const front = await startRoundRobin(
      instances.map((i) => i.url),
      options.svcPort ?? 0,
    );
    cleanups.push(() => front.close());
    const fleet = { instances, served: front.served, database: config.postgres! };
    return { devnet, svc: front, fleet, config, catalogPath, accounts, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
