/**
 * The service entry point (`npm start`). An invalid configuration prints one line naming the
 * variable to stderr and exits 78 before any port is bound (docs/OPERATIONS.md). Secrets never appear.
 */
import { ConfigError, EXIT_CONFIG, ensureDbDirectory, loadConfig, type Config } from './config.ts';
import { installDrain } from './lifecycle.ts';
import { createService } from './service.ts';

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
const service = createService(config);
const { logger } = service;
try {
  const running = await service.listen(config.port, '0.0.0.0');
  logger.info({ url: running.url, network: config.network, submitters: config.submitters }, 'svc listening');
  installDrain({
    server: running.server,
    idle: () => service.idle(),
    timeoutMs: config.settlement.drainTimeoutMs,
    log: (obj, msg) => logger.info(obj, msg),
    onDraining: () => service.drain(),
    cleanup: () => service.close(),
  });
} catch (err) {
  logger.fatal({ err }, 'svc could not listen');
  process.exit(1);
}
