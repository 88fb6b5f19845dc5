/**
 * The composition root: `createService(config, overrides?)` builds the logger, the metrics, the
 * chain schemes, the catalog, the scheme registry (with the catalog as its `bazaar` extension),
 * the readiness probe and the HTTP app. `npm start`, `npm run dev`, the benches and every test
 * harness build the service here and nowhere else; tests inject fakes through `overrides`
 * (docs/ARCHITECTURE.md).
 */
import type Koa from 'koa';
import { openCatalog } from './catalog/index.ts';
import { bazaarExtension, catalogOpenedLater } from './catalog/extension.ts';
import { paymentIdentifierExtension } from './journal/payment-identifier.ts';
import type { CatalogOptions, CatalogPort } from './catalog/types.ts';
import {
  accountBalances,
  createSchemesFromConfig,
  networkMismatch,
  networkSuffix,
  stellarReadinessChecks,
  verifySignedMessage,
  type ExactStellarScheme,
} from './chains/stellar/index.ts';
import { databaseUrl, type Config } from './config.ts';
import { loadContract, type ApiContract } from './http/contract.ts';
import { PaymentPriority } from './http/payment-priority.ts';
import { tallyReaderCpu } from './catalog/threads/pool.ts';
import type { SvcState } from './http/middleware.ts';
import { createApp, listen, VALIDATED_OPERATIONS, type RunningServer } from './http/app.ts';
import { connectionCapAtStart } from './http/connections.ts';
import { SettlementJournal } from './journal/journal.ts';
import { PostgresSubmitterLeases } from './db/submitter-leases.ts';
import { PostgresJournalStore } from './journal/postgres/store.ts';
import { SqliteJournalStore } from './journal/sqlite/store.ts';
import type { JournalStore } from './journal/types.ts';
import { createLogger, type Logger } from './log.ts';
import { ServiceMetrics, instrumentCatalog, instrumentGate, instrumentRpc, instrumentScheme, schemeNetwork } from './ops/metrics.ts';
import { ReadinessProbe, databaseWritableCheck, drainingCheck, postgresWritableCheck } from './ops/readiness.ts';
import { PAYTO_NEAR_CAP_SHARE, registerStateGauges, type AccountBalance, type StateSources } from './ops/state-gauges.ts';
import { SchemeRegistry } from './scheme/registry.ts';
import { startLivenessChecks, type LivenessScheduler } from './net/liveness-scheduler.ts';
import { startOwnershipChecks, type OwnershipChecker } from './net/ownership.ts';
import { hostSlotsOf } from './net/host-slots.ts';
import { LifecycleScheduler } from './catalog/lifecycle.ts';
import type { FacilitatorExtension, PaymentScheme, SettlementTracking, SharedLeases } from './scheme/types.ts';
import type { StellarNetworkConfig } from './chains/stellar/index.ts';

export interface ServiceOverrides {
  /** Default: pino at config.logLevel on stdout. */
  logger?: Logger;
  /** Replace the schemes built from the configuration (tests: a scripted or test-only scheme). */
  schemes?: PaymentScheme[];
  /** Replace the catalog opened at config.dbPath; the caller keeps ownership (it is not closed). */
  catalog?: CatalogPort;
  /**
   * The deadlines and seller-schema bound of the catalog opened at config.dbPath (default: the
   * catalog's own); the test harnesses pass generous ones so a loaded machine cannot time a hook out.
   */
  catalogBounds?: Pick<CatalogOptions, 'readDeadlineMs' | 'writeDeadlineMs' | 'schemaWallMs' | 'schemaStandby'>;
  /** Further extensions after `bazaar`. */
  extensions?: FacilitatorExtension[];
  /**
   * The settlement journal every settle goes through (docs/OPERATIONS.md). Default: a SQLite
   * journal at config.dbPath when the schemes are the configured ones; none when a test injects
   * its own schemes (pass one to journal those). `null`: no journal.
   */
  journal?: SettlementJournal | null;
  metrics?: ServiceMetrics;
  /** Replace the readiness checks (RPC recent, balances, database writable, draining). */
  readiness?: ReadinessProbe;
  contract?: ApiContract;
  /** Payments before discovery on the main thread (src/http/payment-priority.ts); tests pass their own. */
  priority?: PaymentPriority;
  /**
   * svc's clock: the liveness checks' (docs/CATALOG.md "Liveness"; tests pass their catalog's test
   * clock) and the time a signed withdrawal is judged against (POST /discovery/delist).
   */
  clock?: () => Date;
  /** Time between liveness passes (default 10 s); tests that run passes themselves pass a long one. */
  livenessPassMs?: number;
}

export interface Service {
  config: Config;
  logger: Logger;
  metrics: ServiceMetrics;
  registry: SchemeRegistry;
  catalog: CatalogPort;
  journal: SettlementJournal | null;
  app: Koa<SvcState>;
  /** Binds the app (port 0 = ephemeral; default config.port) on `host` (default loopback). */
  listen(port?: number, host?: string): Promise<RunningServer>;
  /** From now on GET /ready reports `draining` (before a stop). */
  drain(): void;
  /** Resolves when no settle is in flight (the drain waits for it). */
  idle(): Promise<void>;
  /**
   * Why each network whose RPC answers getNetwork with another network's passphrase cannot be
   * served (empty when every one that answers serves its own); an RPC that does not answer is left
   * to readiness. `npm start` refuses to start on any (docs/OPERATIONS.md "Several networks").
   */
  wrongNetworks(): Promise<string[]>;
  /** The liveness checks of listed resources; null when off (LIVENESS_CHECKS_PER_MINUTE 0) or the catalog keeps no records. */
  liveness: LivenessScheduler | null;
  /** The checks of ownership claims; null when the catalog takes the first settlement as owner (LISTING_OWNERSHIP). */
  ownership: OwnershipChecker | null;
  /** Closes every server it bound, stops the reconciler, then the journal and catalog it opened. */
  close(): Promise<void>;
}

/**
 * Opens the catalog at config.dbPath; one that cannot open must not stop payments (logged,
 * discovery 503 `svc_catalog_unavailable`), and is opened again once it can be (catalogOpenedLater).
 */
function openConfiguredCatalog(
  config: Config,
  logger: Logger,
  metrics: ServiceMetrics,
  bounds: ServiceOverrides['catalogBounds'],
): { catalog: CatalogPort; close: () => Promise<void> } {
  const open = () =>
    openCatalog({
      ...bounds,
      dbPath: config.dbPath,
      databaseUrl: databaseUrl(config) ?? undefined,
      logger,
      listingTtlDays: config.listingTtlDays,
      listingPurgeDays: config.listingPurgeDays,
      livenessGraceMs: config.probe.liveness.graceMs,
      ownership: config.listingOwnership,
      onQueryPaths: metrics.queryPaths(databaseUrl(config) ? 'postgres' : 'sqlite'),
    });
  try {
    const catalog = open();
    return { catalog, close: () => catalog.close() };
  } catch (err) {
    logger.error({ err, dbPath: config.dbPath }, 'catalog could not open; settling without cataloging until it can');
    return catalogOpenedLater(open, logger);
  }
}

/**
 * The journal's store: Postgres when DATABASE_URL is set (shared by every instance; it connects
 * and migrates in the background), else SQLite at config.dbPath (its own tables beside the
 * catalog's). Neither fails here: a database that cannot be used yet refuses settles with
 * `svc_journal_unavailable` and fails GET /ready until it can (docs/OPERATIONS.md).
 */
function journalStoreFor(config: Config, logger: Logger): JournalStore {
  const url = databaseUrl(config);
  return url ? new PostgresJournalStore(url) : new SqliteJournalStore(config.dbPath, { openLater: true, logger });
}

/** The settlement journal; a first probe logs at once when it cannot write. */
function openConfiguredJournal(config: Config, logger: Logger, registry: SchemeRegistry): SettlementJournal {
  const journal = new SettlementJournal({
    store: journalStoreFor(config, logger),
    policy: config.settlement.policy,
    networkPolicies: config.settlement.networkPolicies,
    logger,
    onLanded: (settled) => registry.afterSettle(settled, logger),
    listingRetryBaseMs: config.settlement.reconcileIntervalMs,
    pendingRetryWaitMs: config.settleWaitSeconds * 1000,
  });
  void journal.writeCheck();
  return journal;
}

export function createService(config: Config, overrides: ServiceOverrides = {}): Service {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const metrics = overrides.metrics ?? new ServiceMetrics();
  let draining = false;

  // With DATABASE_URL every instance may use the same submitters: the database leases each one.
  const url = databaseUrl(config);
  const leases = overrides.schemes || !url ? undefined : new PostgresSubmitterLeases(url, { ttlMs: config.settlement.submitterLeaseTtlMs });
  const several = config.networks.length > 1;
  const stellar = overrides.schemes
    ? undefined
    : createSchemesFromConfig(
        config,
        logger,
        (rpc, network) => instrumentRpc(rpc, metrics, network),
        (network) => (leases && several ? leasesOf(leases, network) : leases),
      );
  const schemes: PaymentScheme[] = overrides.schemes ?? stellar!;

  const opened = overrides.catalog
    ? { catalog: overrides.catalog, close: () => Promise.resolve() }
    : openConfiguredCatalog(config, logger, metrics, overrides.catalogBounds);
  const catalog = instrumentCatalog(opened.catalog, metrics);

  const registry = new SchemeRegistry();
  for (const scheme of schemes) {
    registry.register(instrumentScheme(scheme, metrics));
    if (scheme.pool) metrics.watchPool(scheme.pool, schemeNetwork(scheme));
  }
  let ownership: OwnershipChecker | null = null;
  registry.extend(bazaarExtension(catalog, () => ownership?.wake()));
  for (const extension of overrides.extensions ?? []) registry.extend(extension);

  // Without a journal svc must not settle in production: an unjournaled settle could be submitted
  // twice or lost on a crash. The journal shares DB_PATH with the catalog (its own tables).
  const ownJournal = overrides.journal === undefined && stellar !== undefined ? openConfiguredJournal(config, logger, registry) : null;
  const journal = ownJournal ?? overrides.journal ?? null;
  // The payment-identifier id is honoured by the journal, so it is advertised only with one.
  if (journal) registry.journalWith(instrumentGate(journal, metrics)).extend(paymentIdentifierExtension);
  const stopReconciler =
    ownJournal && stellar
      ? ownJournal.startReconciler(trackingByNetwork(stellar), config.settlement.reconcileIntervalMs)
      : () => Promise.resolve();

  const chainChecks = stellarChecks(config, metrics, stellar);
  const readiness =
    overrides.readiness ??
    new ReadinessProbe({
      networks: chainChecks.networks,
      requireNetworks: config.readyNetworks,
      checks: {
        ...chainChecks.checks,
        // The write path itself: a probe write through the journal's own connection.
        database: journal ? () => journal.writeCheck() : url ? postgresWritableCheck(url) : databaseWritableCheck(config.dbPath),
        draining: drainingCheck(() => draining),
      },
    });

  registerStateGauges(metrics.registry, {
    readyMinBalanceStroops: config.networks.map((n) => ({ network: n.network, stroops: n.readyMinBalanceStroops })),
    ...(stellar
      ? { balances: balanceSource(config.networks.map((network, i) => ({ network, addresses: stellar[i]!.pool.addresses }))) }
      : {}),
    ...(journal ? journalSources(journal, config) : {}),
    ...catalogSources(opened.catalog, config),
  });

  const contract = overrides.contract ?? loadContract();
  const priority = overrides.priority ?? new PaymentPriority({ busyAbove: config.discoveryYieldPercent / 100, tally: tallyReaderCpu });
  const app = createApp({
    config,
    logger,
    registry,
    catalog,
    metrics,
    readiness,
    journal,
    priority,
    contract,
    verifyMessage: verifySignedMessage,
    wakeOwnershipChecks: () => ownership?.wake(),
    clock: overrides.clock ?? (() => new Date()),
  });
  const servers: RunningServer[] = [];
  const hostSlots = hostSlotsOf(opened.catalog, config.probe.hostIntervalMs);
  const liveness = startLivenessChecks(opened.catalog.liveness, config.probe, logger, {
    clock: overrides.clock,
    passMs: overrides.livenessPassMs,
    hostSlots,
  });
  ownership = startOwnershipChecks(opened.catalog.ownership, { ...config.probe, hostSlots }, logger, overrides.clock);
  const maintain = opened.catalog.maintainLifecycle?.bind(opened.catalog);
  const lifecycle = maintain
    ? new LifecycleScheduler(maintain, logger, (done) => {
        for (const action of ['hidden', 'restored', 'purged'] as const)
          if (done[action] > 0) metrics.catalogLifecycle.inc({ action }, done[action]);
      }).start()
    : null;
  return {
    config,
    logger,
    metrics,
    registry,
    catalog,
    journal,
    app,
    liveness,
    ownership,
    async listen(port = config.port, host = '127.0.0.1') {
      const cap = connectionCapAtStart(config.maxConnections);
      if (cap.warning) logger.warn({ maxConnections: cap.maxConnections, descriptorLimit: cap.descriptorLimit }, cap.warning);
      const { headersTimeoutMs, requestTimeoutMs, maxConnectionsPerAddress } = config;
      const limits = { headersTimeoutMs, requestTimeoutMs, maxConnectionsPerAddress, maxConnections: cap.maxConnections };
      const running = await listen(app, port, host, limits, contract.routes, {
        warn: (fields, message) => logger.warn(fields, message),
        watch: (table) => metrics.watchConnections(table),
      });
      servers.push(running);
      // Readiness's first round starts with the port (the first probe joins it), and the request
      // validators compile after it, not during it (docs/OPERATIONS.md "Startup"). A failed compile
      // is answered on the request that needs it (500, logged there).
      void readiness
        .evaluate()
        .then(() => contract.warmUp(VALIDATED_OPERATIONS))
        .catch(() => undefined);
      return running;
    },
    drain() {
      draining = true;
      void liveness?.stop();
      void ownership?.stop();
      void lifecycle?.stop();
    },
    idle: () => journal?.idle() ?? Promise.resolve(),
    async wrongNetworks() {
      const answers = await Promise.all(
        config.networks.map(({ network, rpcUrl }) =>
          networkMismatch(rpcUrl, network)().then(
            (wrong) =>
              wrong ? `the RPC of ${network} (${several ? `RPC_URL_${networkSuffix(network)}, else ` : ''}RPC_URL) ${wrong}` : null,
            () => null,
          ),
        ),
      );
      return answers.filter((a): a is string => a !== null);
    },
    async close() {
      await Promise.all(servers.splice(0).map((s) => s.close()));
      priority.close();
      await stopReconciler();
      await ownJournal?.listBeforeClose();
      await liveness?.stop();
      await ownership?.stop();
      await lifecycle?.stop();
      await ownJournal?.store.close();
      await leases?.close();
      await opened.close();
    },
  };
}

/**
 * GET /ready's chain checks: `rpc` and `balances` for one network; `rpc:<network>` and
 * `balances:<network>` for each of several (docs/OPERATIONS.md "Several networks"); `networks`
 * names each network's own.
 */
function stellarChecks(config: Config, metrics: ServiceMetrics, schemes: ExactStellarScheme[] | undefined) {
  const several = config.networks.length > 1;
  const checks: Record<string, () => Promise<{ ok: boolean; detail: string }>> = {};
  const networks: Record<string, string[]> = {};
  for (const [i, network] of config.networks.entries()) {
    const scheme = schemes?.[i];
    const { rpc, balances } = stellarReadinessChecks(network, {
      wrapRpc: (r) => instrumentRpc(r, metrics, network.network),
      ...(scheme ? { payingAccounts: () => payingAccounts(network, scheme) } : {}),
    });
    const names = several ? [`rpc:${network.network}`, `balances:${network.network}`] : ['rpc', 'balances'];
    checks[names[0]!] = rpc;
    checks[names[1]!] = balances;
    networks[network.network] = names;
  }
  return { checks, networks };
}

/** The accounts that pay a network's fees. Channel accounts hold only their reserve: the fee-bump account (or their funder) pays. */
function payingAccounts(network: StellarNetworkConfig, scheme: ExactStellarScheme): string[] {
  return [
    ...new Set([
      ...(network.channelAccounts > 0 ? [] : scheme.pool.addresses),
      ...(network.feeBumpAddress ? [network.feeBumpAddress] : []),
      ...(network.channelFunder ? [network.channelFunder] : []),
    ]),
  ];
}

/**
 * The reconciler's view of the chains: a record's transaction is looked up on the network it was
 * settled on (one scheme per network; identities and the replay code are the same for every one).
 */
function trackingByNetwork(schemes: ExactStellarScheme[]): SettlementTracking {
  const first = schemes[0]!.tracking;
  if (schemes.length === 1) return first;
  const byNetwork = new Map(schemes.map((scheme) => [scheme.network as string, scheme.tracking]));
  return {
    identity: (payload, requirements) => first.identity(payload, requirements),
    replayCode: first.replayCode,
    status: (transaction, validUntil, network) => (byNetwork.get(network ?? '') ?? first).status(transaction, validUntil, network),
  };
}

/**
 * Submitter leases of one of several networks: one account may submit on two networks, which are
 * two ledgers, so its leases are kept apart by the network's name.
 */
function leasesOf(leases: SharedLeases, network: string): SharedLeases {
  return { acquire: (account) => leases.acquire(`${network} ${account}`), close: () => Promise.resolve() };
}

/** Every account that signs or pays for settlements on each network, with its role, and its balance (the /metrics gauge). */
function balanceSource(networks: Array<{ network: StellarNetworkConfig; addresses: readonly string[] }>): () => Promise<AccountBalance[]> {
  const perNetwork = networks.map(({ network, addresses }) => {
    const accounts = new Map<string, AccountBalance['role']>();
    for (const a of addresses) accounts.set(a, network.channelAccounts > 0 ? 'channel' : 'submitter');
    if (network.feeBumpAddress) accounts.set(network.feeBumpAddress, 'fee_bump');
    if (network.channelFunder) accounts.set(network.channelFunder, 'channel_funder');
    return { name: network.network, read: accountBalances(network.rpcUrl, 1_500), list: [...accounts] };
  });
  return async () =>
    (
      await Promise.all(
        perNetwork.map(async ({ name, read, list }) => {
          const balances = await read(list.map(([a]) => a));
          return list.map(([account, role], i): AccountBalance => ({ network: name, account, role, stroops: balances[i] ?? null }));
        }),
      )
    ).flat();
}

/** Today's fee budgets and the pending outcomes, read from the journal (the /metrics gauges). */
function journalSources(journal: SettlementJournal, config: Config): Pick<StateSources, 'feeBudgets' | 'pending'> {
  return {
    async feeBudgets() {
      const now = Date.now();
      const dayStart = now - (now % 86_400_000);
      return Promise.all(
        config.networks.map(async ({ network }) => {
          const { dailyFeeCapStroops, newPayTosDailyFeeCapStroops, payToDailyFeeCapStroops } = journal.policyOf(network);
          const payToBounds = {
            cap: payToDailyFeeCapStroops,
            nearCap: payToDailyFeeCapStroops === null ? null : (payToDailyFeeCapStroops * BigInt(PAYTO_NEAR_CAP_SHARE * 100)) / 100n,
          };
          const [usage, spending] = await Promise.all([
            journal.store.budgetUsage({ payer: '', payTo: '', network }, { dayStart, failuresSince: now }),
            journal.store.payToSpending(network, dayStart, payToBounds),
          ]);
          return {
            network: network,
            daily: { spent: usage.total, cap: dailyFeeCapStroops },
            newPayTos: { spent: usage.newPayTos, cap: newPayTosDailyFeeCapStroops },
            payTo: { cap: payToDailyFeeCapStroops, spending },
          };
        }),
      );
    },
    async pending() {
      const records = await journal.store.unresolved(PENDING_COUNTED);
      return { count: records.length, oldestCreatedAt: records.length ? Math.min(...records.map((r) => r.createdAt)) : null };
    },
  };
}

/** The catalog's listings by state and the liveness checks due (the /metrics gauges), where the catalog offers them. */
function catalogSources(catalog: CatalogPort, config: Config): Pick<StateSources, 'listings' | 'livenessDue'> {
  const { perMinute, intervalMs } = config.probe.liveness;
  const countDue = catalog.liveness?.countDue?.bind(catalog.liveness);
  return {
    ...(catalog.listingCounts ? { listings: catalog.listingCounts.bind(catalog) } : {}),
    ...(countDue && perMinute > 0 ? { livenessDue: () => countDue(Date.now() - intervalMs) } : {}),
  };
}

/** The pending outcomes are counted up to this many (a journal with more has a problem the gauge already shows). */
const PENDING_COUNTED = 1_000;
