/**
 * The service entry point (`npm start`). An invalid configuration prints one line per invalid
 * variable to stderr and exits 78 before any port is bound; a port that cannot be bound prints one
 * line and exits 75 when another process holds it, 71 otherwise (docs/OPERATIONS.md "Startup").
 * A refused start leaves nothing behind: the database file and directories it created are removed.
 * Secrets never appear.
 */
import { existsSync, rmSync } from 'node:fs';
import { ConfigError } from './config-env.ts';
import { EXIT_CONFIG, configErrors, databaseUrl, loadConfig, type Config } from './config.ts';
import { ensureDbDirectory, removeDirectories } from './db/db-path.ts';

/** The port is held by another process (sysexits' EX_TEMPFAIL: a supervisor may retry, e.g. while an old instance drains). */
export const EXIT_PORT_IN_USE = 75;
/** Any other failure to bind (sysexits' EX_OSERR). */
export const EXIT_LISTEN_FAILED = 71;

function configOrExit(): Config {
  const errors = configErrors(process.env);
  if (errors.length > 0) {
    for (const err of errors) process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  return loadConfig(process.env);
}

/** The directories ensureDbDirectory created (configErrors checked DB_PATH, and removed them again). */
function dbDirectoryOrExit(config: Config): string[] {
  try {
    return ensureDbDirectory(config.dbPath, databaseUrl(config) === null);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
    process.exit(EXIT_CONFIG);
  }
}

const config = configOrExit();
const createdDirs = dbDirectoryOrExit(config);
const sqliteFile = databaseUrl(config) === null && config.dbPath !== ':memory:' ? config.dbPath : null;
const createdFile = sqliteFile !== null && !existsSync(sqliteFile);

/** Before a refused start exits: the service closed (bounded), then the database file and directories this start created removed. */
async function removeWhatThisStartCreated(): Promise<void> {
  await Promise.race([service.close().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  if (createdFile) for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${sqliteFile}${suffix}`, { force: true });
  removeDirectories(createdDirs);
}

// Loaded once the configuration is valid: the bundle splits the service into chunks of its own, so
// a start-up refused for its configuration reads and parses only the configuration's code.
const [{ createService }, { installDrain }, { servedNetworks }] = await Promise.all([
  import('./service.ts'),
  import('./lifecycle.ts'),
  import('./handlers/service.ts'),
]);
const service = createService(config);
const { logger } = service;
// An RPC of another network would fail every payment while looking healthy: refused at start.
const wrongNetworks = await service.wrongNetworks();
if (wrongNetworks.length > 0) {
  for (const wrong of wrongNetworks) process.stderr.write(`svc: invalid configuration: ${wrong}\n`);
  await service.close();
  process.exit(EXIT_CONFIG);
}
try {
  const running = await service.listen(config.port, '0.0.0.0');
  logger.info({ url: running.url, ...servedNetworks(config) }, 'svc listening');
  installDrain({
    server: running.server,
    idle: () => service.idle(),
    timeoutMs: config.settlement.drainTimeoutMs,
    log: (obj, msg) => logger.info(obj, msg),
    onDraining: () => service.drain(),
    cleanup: () => service.close(),
  });
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  await removeWhatThisStartCreated();
  if (code === 'EADDRINUSE') {
    process.stderr.write(`svc: port ${config.port} is in use by another process; stop it or set PORT to a free port\n`);
    process.exit(EXIT_PORT_IN_USE);
  }
  process.stderr.write(`svc: cannot listen on port ${config.port} (${code ?? (err as Error).message})\n`);
  process.exit(EXIT_LISTEN_FAILED);
}
