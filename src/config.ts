/**
 * Configuration from the environment (README.md, Configuration). `loadConfig(env)` returns a typed,
 * validated config or throws a ConfigError naming the variable. Error messages never contain any
 * part of a secret value. Each chain parses its own section (src/chains/stellar/config.ts, which
 * keeps the parsed Keypairs out of serialization and logs); this module composes it with the
 * service's variables: port, storage, logging, HTTP limits and the settlement journal.
 */
import { ensureDbDirectory, removeDirectories } from './db/db-path.ts';
import {
  isContractAddress,
  loadStellarConfig,
  networkSuffix,
  stellarStandIns,
  type StellarConfig,
  type StellarNetwork,
} from './chains/stellar/index.ts';
import { ConfigError, parseInteger, parseOneOf, read, type Env } from './config-env.ts';
import { ALLOW_PRIVATE_TARGETS, parseAllowList } from './net/private-addresses.ts';
import { parseTrustedProxies, type TrustedProxies } from './http/client-address.ts';
import { DEFAULT_POLICY, type PaymentPolicy } from './journal/policy.ts';
import { loadProbeConfig, type ProbeConfig } from './net/probe-config.ts';
import { DEFAULT_RECONCILE_INTERVAL_MS } from './journal/journal.ts';
import { USD_ASSETS_VARIABLE, parseUsdAssets } from './filters.ts';

export { ConfigError } from './config-env.ts';
// The service configuration is the Stellar chain's with the service's fields added: its keys and
// signer addresses are read with the chain's functions.
import { OWNERSHIP_MODES, type OwnershipMode } from './catalog/ownership.ts';
export { signerAddresses, signingKeys, type SigningKeys } from './chains/stellar/index.ts';

export const DEFAULTS = {
  PORT: 4021,
  DB_PATH: './data/svc.sqlite',
  FEE_MODE: 'free',
  LOG_LEVEL: 'info',
  HEADERS_TIMEOUT_MS: 10_000,
  REQUEST_TIMEOUT_MS: 15_000,
  MAX_CONNECTIONS_PER_ADDRESS: 256,
  DISCOVERY_YIELD_PERCENT: 80,
  READY_NETWORKS: 'any',
  /** Days without a settlement after which a listing leaves list and search (docs/CATALOG.md "Lifecycle"). */
  LISTING_TTL_DAYS: 30,
  /** Days a hidden listing is kept before it is deleted with its owner binding (docs/CATALOG.md "Lifecycle"). */
  LISTING_PURGE_DAYS: 90,
  /** Who may own a listing: the payTo its resource's own server names (docs/CATALOG.md "Ownership and refresh"). */
  LISTING_OWNERSHIP: 'origin',
  /** POST /mcp requests one client address may make per minute (docs/MCP.md "Hosted discovery"). */
  MCP_RATE_PER_MINUTE: 120,
  /**
   * Time to live of a submitter lease in PostgreSQL: how long the submitters of an instance that
   * died stay taken. Short enough that the other instances get them back well inside the pool's
   * 30 s wait and a payment's validity; long enough that renewals every third of it survive a slow
   * database or a stalled event loop of a few seconds.
   */
  SUBMITTER_LEASE_TTL_MS: 10_000,
  /** POST /discovery/delist requests one client address may make per minute (docs/CATALOG.md "Withdrawing a listing"). */
  DELIST_RATE_PER_MINUTE: 10,
} as const;

export const READY_NETWORKS = ['any', 'all'] as const;
export type ReadyNetworks = (typeof READY_NETWORKS)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The Stellar chain's section (NETWORK, RPC_URL, the seeds…) and the service's own variables. */
export interface Config extends StellarConfig {
  port: number;
  /** SQLite file of the catalog and the journal when DATABASE_URL is unset. */
  dbPath: string;
  /**
   * DATABASE_URL without its credentials (postgres://host:port/database), or null for SQLite at
   * DB_PATH. The full URL may hold a password: read it with `databaseUrl(config)`.
   */
  postgres: string | null;
  feeMode: 'free';
  logLevel: LogLevel;
  /** Settlement journal, payment policy and fee budget (parsed in the journal block below). */
  settlement: SettlementConfig;
  /** Time a client has to send its request head, then its whole request (docs/SECURITY.md). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Open connections one client address may hold. */
  maxConnectionsPerAddress: number;
  /** Open connections in all (MAX_CONNECTIONS); null: derived from the open-file limit at start (src/http/connections.ts). */
  maxConnections: number | null;
  /**
   * Main-thread utilization (percent) above which discovery requests wait while payments are
   * served (src/http/payment-priority.ts); 100 never holds them.
   */
  discoveryYieldPercent: number;
  /**
   * READY_NETWORKS: GET /ready is 200 while `any` served network is ready (default), or only while
   * `all` are (docs/OPERATIONS.md "Several networks").
   */
  readyNetworks: ReadyNetworks;
  /** POST /discovery/delist requests one client address may make per minute; beyond it 429 svc_delist_rate_limited. */
  delistRatePerMinute: number;
  /** POST /discovery/validate's rate limits and the live-402 probe's bounds (src/net/probe-config.ts). */
  probe: ProbeConfig;
  /** A listing with no settlement for this many days leaves list and search until its next one. */
  listingTtlDays: number;
  listingPurgeDays: number;
  /** LISTING_OWNERSHIP: `origin` (the payTo the resource's server names) or `first-settlement`. */
  listingOwnership: OwnershipMode;
  /** POST /mcp requests one client address may make per minute; beyond it 429 svc_rate_limited. */
  mcpRatePerMinute: number;
  /** TRUSTED_PROXIES and TRUSTED_PROXY_HEADER: whose forwarding header names the client (src/http/client-address.ts). */
  trustedProxies: TrustedProxies;
  /** VERIFY_RATE_PER_MINUTE and SETTLE_RATE_PER_MINUTE: requests one client may make per minute; 0: no limit. */
  paymentRates: { verifyPerMinute: number; settlePerMinute: number };
  /** MCP_ALLOWED_ORIGINS: the browser origins POST /mcp answers (src/http/cors.ts); null: any. */
  mcpAllowedOrigins: string[] | null;
  /** MCP_ALLOWED_HOSTS: the `Host` names POST /mcp answers (src/handlers/mcp.ts); null: loopback names when bound to loopback, else any. */
  mcpAllowedHosts: string[] | null;
}

/**
 * A comma-separated list whose every item is its own canonical form (what `canonical` makes of it),
 * or null when unset; anything else stops svc at start, naming the item and what was `expected`.
 */
function parseCanonicalList(env: Env, variable: string, canonical: (item: string) => string | undefined, expected: string) {
  const raw = read(env, variable);
  if (raw === undefined) return null;
  const items = raw.split(',').map((item) => item.trim());
  for (const item of items) {
    let form: string | undefined;
    try {
      form = canonical(item);
    } catch {
      form = undefined;
    }
    if (form !== item) throw new ConfigError(variable, `${JSON.stringify(item.slice(0, 100))} is not ${expected}`);
  }
  return items;
}

/** MCP_ALLOWED_ORIGINS: origins (`scheme://host[:port]`, as a browser sends them in `Origin`), or unset for any origin. */
export const parseAllowedOrigins = (env: Env): string[] | null =>
  parseCanonicalList(
    env,
    'MCP_ALLOWED_ORIGINS',
    (origin) => new URL(origin).origin,
    'an origin; give scheme://host[:port] as a browser sends it in Origin (lowercase host, no path or trailing slash)',
  );

/**
 * MCP_ALLOWED_HOSTS: hostnames (no port; IPv6 in brackets) a request to POST /mcp may name in
 * `Host`, for svc behind a proxy that keeps the public name or on a non-loopback address; unset:
 * loopback names when svc listens on loopback, any otherwise.
 */
export const parseAllowedHosts = (env: Env): string[] | null =>
  parseCanonicalList(
    env,
    'MCP_ALLOWED_HOSTS',
    (host) => {
      const url = new URL(`http://${host}`);
      return url.port === '' ? url.host : undefined;
    },
    'a hostname; give lowercase names as sent in Host, without the port (svc.example.com, 127.0.0.1, [::1])',
  );

function parseFeeMode(env: Env): 'free' {
  const value = read(env, 'FEE_MODE') ?? DEFAULTS.FEE_MODE;
  if (value !== 'free') throw new ConfigError('FEE_MODE', `only "free" is supported; got ${JSON.stringify(value)}`);
  return 'free';
}

/** Validates every variable, the Stellar chain's first; throws the first ConfigError. Has no side effects. */
export function loadConfig(env: Env): Config {
  // The chain's object keeps its signing keys (non-enumerable): the service's fields join it.
  const stellar = loadStellarConfig(env);
  const database = parseDatabaseUrl(env);
  const config = Object.assign(stellar, {
    port: parseInteger(env, 'PORT', DEFAULTS.PORT, 1, 65_535),
    dbPath: loadStorageConfig(env).dbPath,
    postgres: database === null ? null : withoutCredentials(database),
    feeMode: parseFeeMode(env),
    logLevel: parseOneOf(env, 'LOG_LEVEL', LOG_LEVELS, DEFAULTS.LOG_LEVEL),
    headersTimeoutMs: parseInteger(env, 'HEADERS_TIMEOUT_MS', DEFAULTS.HEADERS_TIMEOUT_MS, 1_000, 120_000),
    requestTimeoutMs: parseInteger(env, 'REQUEST_TIMEOUT_MS', DEFAULTS.REQUEST_TIMEOUT_MS, 1_000, 300_000),
    maxConnectionsPerAddress: parseInteger(env, 'MAX_CONNECTIONS_PER_ADDRESS', DEFAULTS.MAX_CONNECTIONS_PER_ADDRESS, 1, 100_000),
    maxConnections: read(env, 'MAX_CONNECTIONS') === undefined ? null : parseInteger(env, 'MAX_CONNECTIONS', 0, 1, 1_000_000),
    discoveryYieldPercent: parseInteger(env, 'DISCOVERY_YIELD_PERCENT', DEFAULTS.DISCOVERY_YIELD_PERCENT, 1, 100),
    listingTtlDays: parseInteger(env, 'LISTING_TTL_DAYS', DEFAULTS.LISTING_TTL_DAYS, 1, 36_500),
    listingPurgeDays: parseInteger(env, 'LISTING_PURGE_DAYS', DEFAULTS.LISTING_PURGE_DAYS, 1, 36_500),
    listingOwnership: parseOneOf(env, 'LISTING_OWNERSHIP', OWNERSHIP_MODES, DEFAULTS.LISTING_OWNERSHIP),
    mcpRatePerMinute: parseInteger(env, 'MCP_RATE_PER_MINUTE', DEFAULTS.MCP_RATE_PER_MINUTE, 1, 100_000),
  }) as Config;
  // Node refuses a request timeout shorter than the head timeout.
  if (config.requestTimeoutMs < config.headersTimeoutMs) throw new ConfigError('REQUEST_TIMEOUT_MS', 'must be at least HEADERS_TIMEOUT_MS');
  // Read where a host is judged (the catalog's threads, src/net/private-addresses.ts); checked here
  // so that a mistyped allow-list stops svc at start instead of failing every listing.
  parseAllowList(env[ALLOW_PRIVATE_TARGETS]);
  // Read by the catalog's threads too (maxUsdPrice, src/filters.ts usdAssets): checked here for the same reason.
  const usd = parseUsdAssets(env[USD_ASSETS_VARIABLE]);
  if (typeof usd === 'string') throw new ConfigError(USD_ASSETS_VARIABLE, usd);
  if (usd.some(({ asset }) => !isContractAddress(asset)))
    throw new ConfigError(USD_ASSETS_VARIABLE, 'each asset must be a Stellar contract address (C…, 56 characters)');
  // Not enumerable: it holds bigints (which JSON cannot serialize) and is no part of the
  // /health projection; read it as config.settlement.
  Object.defineProperty(config, 'settlement', {
    value: parseSettlementConfig(
      env,
      config.networks.map((n) => n.network),
    ),
    enumerable: false,
  });
  Object.defineProperty(config, DATABASE_URL, { value: database, enumerable: false });
  // Not enumerable either: no part of the /health projection.
  Object.defineProperty(config, 'probe', { value: loadProbeConfig(env), enumerable: false });
  Object.defineProperty(config, 'trustedProxies', { value: parseTrustedProxies(env), enumerable: false });
  Object.defineProperty(config, 'paymentRates', {
    value: {
      verifyPerMinute: parseInteger(env, 'VERIFY_RATE_PER_MINUTE', 0, 0, 1_000_000),
      settlePerMinute: parseInteger(env, 'SETTLE_RATE_PER_MINUTE', 0, 0, 1_000_000),
    },
    enumerable: false,
  });
  Object.defineProperty(config, 'readyNetworks', {
    value: parseOneOf(env, 'READY_NETWORKS', READY_NETWORKS, DEFAULTS.READY_NETWORKS),
    enumerable: false,
  });
  Object.defineProperty(config, 'mcpAllowedOrigins', { value: parseAllowedOrigins(env), enumerable: false });
  Object.defineProperty(config, 'mcpAllowedHosts', { value: parseAllowedHosts(env), enumerable: false });
  Object.defineProperty(config, 'delistRatePerMinute', {
    value: parseInteger(env, 'DELIST_RATE_PER_MINUTE', DEFAULTS.DELIST_RATE_PER_MINUTE, 1, 100_000),
    enumerable: false,
  });
  return config;
}

const DATABASE_URL = Symbol('databaseUrl');

/** The full DATABASE_URL (credentials included) of a loaded config, or null for SQLite. Never log it. */
export function databaseUrl(config: Config): string | null {
  return (config as Config & { [DATABASE_URL]?: string | null })[DATABASE_URL] ?? null;
}

/** The exit status of an entry point refusing its configuration (sysexits' EX_CONFIG). */
export const EXIT_CONFIG = 78;

/**
 * Where svc stores its data, from the environment alone (no secret needed): what `npm run migrate`
 * reads. Same rules as loadConfig.
 */
export function loadStorageConfig(env: Env): { dbPath: string; databaseUrl: string | null } {
  return { dbPath: read(env, 'DB_PATH') ?? DEFAULTS.DB_PATH, databaseUrl: parseDatabaseUrl(env) };
}

/** DATABASE_URL: a postgres:// (or postgresql://) URL with a host and a database; unset → SQLite. */
function parseDatabaseUrl(env: Env): string | null {
  const value = read(env, 'DATABASE_URL');
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The value may hold a password: never echo it.
    throw new ConfigError('DATABASE_URL', 'must be a postgres://user:password@host:port/database URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError('DATABASE_URL', `must use the postgres:// scheme; got ${JSON.stringify(url.protocol)}`);
  if (!url.hostname || url.pathname.length <= 1)
    throw new ConfigError('DATABASE_URL', 'must name a host and a database (postgres://host/database)');
  return value;
}

function withoutCredentials(value: string): string {
  const url = new URL(value);
  return `${url.protocol}//${url.host}${url.pathname}`;
}

// ---- Settlement journal, payment policy and fee budget (docs/OPERATIONS.md) ----

export interface SettlementConfig {
  policy: PaymentPolicy;
  /** Every served network's policy: `policy` with the fee caps the network sets with its suffix (FEE_BUDGET_DAILY_STROOPS_PUBNET). */
  networkPolicies: ReadonlyMap<string, PaymentPolicy>;
  /** Pause between reconciliation passes over unresolved journal records. */
  reconcileIntervalMs: number;
  /** Longest wait for in-flight settles on SIGTERM/SIGINT before exiting anyway. */
  drainTimeoutMs: number;
  /** Time to live of a submitter lease in PostgreSQL (DATABASE_URL): how long a dead instance's submitters stay taken. */
  submitterLeaseTtlMs: number;
}

/** A stroop amount, or `off` for no cap. */
function parseCap(env: Env, name: string, fallback: bigint | null): bigint | null {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (value === 'off') return null;
  if (!/^[0-9]{1,18}$/.test(value))
    throw new ConfigError(name, `must be a non-negative integer number of stroops or "off"; got ${JSON.stringify(value.slice(0, 40))}`);
  return BigInt(value);
}

function parseBaseUnits(name: string, value: string): bigint {
  if (!/^[0-9]{1,39}$/.test(value))
    throw new ConfigError(name, `amounts must be non-negative integers in base units; got ${JSON.stringify(value.slice(0, 40))}`);
  return BigInt(value);
}

/**
 * `ASSET=AMOUNT,ASSET=AMOUNT`, each asset the contract address (C…) the requirements name, once: a
 * key no requirement can carry would never apply. The key is not quoted (it may be a seed pasted
 * in the wrong place).
 */
function parseMinAmounts(env: Env): Map<string, bigint> {
  const value = read(env, 'PAYMENT_MIN_AMOUNTS');
  const out = new Map<string, bigint>();
  if (value === undefined) return out;
  for (const [i, entry] of value.split(',').entries()) {
    const [asset, amount, extra] = entry.split('=').map((s) => s.trim());
    if (!asset || amount === undefined || extra !== undefined)
      throw new ConfigError('PAYMENT_MIN_AMOUNTS', `entry ${i + 1} is not ASSET=AMOUNT`);
    if (!isContractAddress(asset))
      throw new ConfigError('PAYMENT_MIN_AMOUNTS', `entry ${i + 1}: the asset must be a Stellar contract address (C…, 56 characters)`);
    if (out.has(asset)) throw new ConfigError('PAYMENT_MIN_AMOUNTS', `entry ${i + 1} repeats the asset of an earlier entry`);
    out.set(asset, parseBaseUnits('PAYMENT_MIN_AMOUNTS', amount));
  }
  return out;
}

function parseBoolean(env: Env, name: string, fallback: boolean): boolean {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ConfigError(name, `must be true or false; got ${JSON.stringify(value.slice(0, 40))}`);
}

/**
 * The sponsored-fee caps, each a variable a network may set for itself with its suffix
 * (`FEE_BUDGET_DAILY_STROOPS_PUBNET`): its XLM is its own, so a pubnet budget of real money and a
 * testnet one of free coins need not be the same number (docs/OPERATIONS.md "Several networks").
 */
export const PER_NETWORK_FEE_CAPS = {
  dailyFeeCapStroops: 'FEE_BUDGET_DAILY_STROOPS',
  payerDailyFeeCapStroops: 'FEE_BUDGET_PAYER_DAILY_STROOPS',
  payToDailyFeeCapStroops: 'FEE_BUDGET_PAYTO_DAILY_STROOPS',
  newAddressDailyFeeCapStroops: 'FEE_BUDGET_NEW_ADDRESS_DAILY_STROOPS',
  newPayTosDailyFeeCapStroops: 'FEE_BUDGET_NEW_PAYTOS_DAILY_STROOPS',
} as const;
type FeeCaps = Record<keyof typeof PER_NETWORK_FEE_CAPS, bigint | null>;

/** The caps from `NAME_SUFFIX` where set, else from `fallback` (the unsuffixed variables, or their defaults). */
function parseFeeCaps(env: Env, fallback: FeeCaps, suffix?: string): FeeCaps {
  const caps = {} as FeeCaps;
  for (const [field, name] of Object.entries(PER_NETWORK_FEE_CAPS) as [keyof FeeCaps, string][]) {
    const variable = suffix === undefined ? name : `${name}_${suffix}`;
    caps[field] = parseCap(env, variable, fallback[field]);
  }
  return caps;
}

function parseSettlementConfig(env: Env, networks: readonly StellarNetwork[]): SettlementConfig {
  const minAmount = read(env, 'PAYMENT_MIN_AMOUNT');
  const caps = parseFeeCaps(env, DEFAULT_POLICY);
  const policy: PaymentPolicy = {
    ...caps,
    payerFailureLimit: parseInteger(env, 'PAYER_FAILURE_LIMIT', DEFAULT_POLICY.payerFailureLimit, 0, 1_000_000),
    payerFailureWindowMs: 1000 * parseInteger(env, 'PAYER_FAILURE_WINDOW_SECONDS', DEFAULT_POLICY.payerFailureWindowMs / 1000, 1, 86_400),
    minAmount: minAmount === undefined ? DEFAULT_POLICY.minAmount : parseBaseUnits('PAYMENT_MIN_AMOUNT', minAmount),
    minAmountByAsset: parseMinAmounts(env),
    allowSelfPayment: parseBoolean(env, 'ALLOW_SELF_PAYMENT', DEFAULT_POLICY.allowSelfPayment),
  };
  return {
    policy,
    networkPolicies: new Map(networks.map((network) => [network, { ...policy, ...parseFeeCaps(env, caps, networkSuffix(network)) }])),
    reconcileIntervalMs: parseInteger(env, 'RECONCILE_INTERVAL_MS', DEFAULT_RECONCILE_INTERVAL_MS, 50, 3_600_000),
    drainTimeoutMs: parseInteger(env, 'DRAIN_TIMEOUT_MS', 330_000, 0, 3_600_000),
    submitterLeaseTtlMs: parseInteger(env, 'SUBMITTER_LEASE_TTL_MS', DEFAULTS.SUBMITTER_LEASE_TTL_MS, 3_000, 600_000),
  };
}

/**
 * Every invalid variable, not only the first: loadConfig stops at the first ConfigError, so the
 * variable it names is set aside (read as unset, i.e. its default) and the configuration read
 * again, until it loads. A required variable named again gets a stand-in value (the chain's
 * `stellarStandIns`) so that the variables after it are judged too; named once more, or without a
 * stand-in, the list ends there.
 */
export function configErrors(env: Env): ConfigError[] {
  const errors: ConfigError[] = [];
  const rest: Env = { ...env };
  let standIns: Env | undefined;
  const stoodIn = new Set<string>();
  for (;;) {
    try {
      const config = loadConfig(rest);
      // Checked only for a valid configuration, and what the check created removed again: this only reports.
      if (errors.length === 0) removeDirectories(ensureDbDirectory(config.dbPath, databaseUrl(config) === null));
      return errors;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      if (!errors.some((e) => e.variable === err.variable)) {
        errors.push(err);
        rest[err.variable] = undefined;
        continue;
      }
      standIns ??= stellarStandIns();
      const standIn = standIns[err.variable];
      if (standIn === undefined || stoodIn.has(err.variable)) return errors;
      stoodIn.add(err.variable);
      rest[err.variable] = standIn;
    }
  }
}
