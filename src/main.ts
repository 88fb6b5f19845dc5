/**
 * The service entry point (`npm start`). An invalid configuration prints one line naming the
 * variable to stderr and exits 78 before any port is bound (SPEC §7.1). Secrets never appear.
 */
import { ConfigError, ensureDbDirectory, loadConfig, type Config } from './config.ts';
import { createApp, listen } from './http/app.ts';
import { createLogger } from './log.ts';
import { createSchemeFromConfig } from './chains/stellar/from-config.ts';
import { openCatalog, type Catalog } from './catalog/index.ts';
import { SettlementJournal } from './journal/journal.ts';
import { SqliteJournalStore } from './journal/store-sqlite.ts';
import { installDrain, lifecycle } from './lifecycle.ts';
import { ServiceMetrics, instrumentRpc } from './ops/metrics.ts';
import { ReadinessProbe, databaseWritableCheck, drainingCheck } from './ops/readiness.ts';
import { stellarReadinessChecks } from './chains/stellar/health.ts';

export const EXIT_CONFIG = 78;

function configOrExit(): Config {
  try {
    const config = loadConfig(process.env);
    ensureDbDirectory(config);
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw err;
  }
}

const config = configOrExit();
const logger = createLogger(config.logLevel);
// A catalog that cannot open must not stop payments: settle runs without it (no header) and
// discovery answers 500 until the database is fixed.
let catalog: Catalog | undefined;
try {
  catalog = openCatalog({ dbPath: config.dbPath, logger });
} catch (err) {
  logger.error({ err, dbPath: config.dbPath }, 'catalog could not open; settling without cataloging');
}
// The settlement journal shares DB_PATH with the catalog (its own tables). Without it svc must
// not settle: an unjournaled settle could be submitted twice or lost on a crash.
const journal = new SettlementJournal({
  store: new SqliteJournalStore(config.dbPath),
  policy: config.settlement.policy,
  logger,
  onLanded: catalog
    ? (paymentPayload, paymentRequirements) =>
        catalog.recordSettlement({ paymentPayload, paymentRequirements })
    : undefined,
});
const metrics = new ServiceMetrics();
const wrapRpc = <R extends object>(rpc: R) => instrumentRpc(rpc, metrics);
const scheme = createSchemeFromConfig(config, logger, wrapRpc);
const stopReconciler = journal.startReconciler(scheme.tracking, config.settlement.reconcileIntervalMs);
const readiness = new ReadinessProbe({
  checks: {
    ...stellarReadinessChecks(config, { wrapRpc, payingAccounts: () => [...scheme.pool.addresses, ...(config.feeBumpAddress ? [config.feeBumpAddress] : [])] }),
    database: databaseWritableCheck(config.dbPath),
    draining: drainingCheck(() => lifecycle.draining),
  },
});
const app = createApp({ config, logger, scheme, catalog, metrics, readiness, journal });
try {
  const running = await listen(app, config.port, '0.0.0.0', config);
  logger.info({ url: running.url, network: config.network, submitters: config.submitters }, 'svc listening');
  installDrain({
    server: running.server,
    idle: () => journal.idle(),
    timeoutMs: config.settlement.drainTimeoutMs,
    log: (obj, msg) => logger.info(obj, msg),
    cleanup: async () => {
      stopReconciler();
      await journal.store.close();
      catalog?.close();
    },
  });
} catch (err) {
  logger.fatal({ err }, 'svc could not listen');
  process.exit(1);
}
