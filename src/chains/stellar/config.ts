/**
 * The Stellar chain's section of the configuration (README.md, Configuration): NETWORK, RPC_URL,
 * SUBMITTER_SECRET, FEE_BUMP_SECRET, CHANNEL_ACCOUNTS, MAX_TRANSACTION_FEE_STROOPS and the
 * READY_* thresholds of its readiness checks. `loadStellarConfig(env)` returns the public fields
 * or throws a ConfigError naming the variable; no message contains any part of a seed. The parsed
 * Keypairs live in a non-enumerable property, reached only through `signingKeys()`, so that
 * serializing or logging the config cannot leak them.
 */
import { ConfigError, parseInteger, parseOneOf, read, type Env } from '../../config-env.ts';
import { MAX_CHANNEL_ACCOUNTS, deriveChannelKeys } from './channels.ts';
import { Keypair as StellarKeypair } from '@stellar/stellar-sdk';
import { keypairFromSeed, type Keypair } from './keys.ts';
import { DEFAULT_NETWORK, NETWORKS, defaultRpcUrl, type StellarNetwork } from './networks.ts';

export const STELLAR_DEFAULTS = {
  CHANNEL_ACCOUNTS: 0,
  MAX_TRANSACTION_FEE_STROOPS: 50_000,
  READY_MIN_BALANCE_STROOPS: 50_000_000,
  READY_MAX_LEDGER_AGE_SECONDS: 30,
  SETTLE_WAIT_SECONDS: 60,
} as const;

/** The signing keys. Never serialized: see `signingKeys()`. */
export interface SigningKeys {
  /** The settlement sources: the configured submitters, or the derived channel accounts. */
  submitters: Keypair[];
  feeBump: Keypair | null;
  /** With CHANNEL_ACCOUNTS: the configured submitter, which creates the channels. */
  channelFunder: Keypair | null;
}

export interface StellarConfig {
  network: StellarNetwork;
  rpcUrl: string;
  /** Public addresses (G…) of the submitter accounts, in configured order. */
  submitters: string[];
  /** Public address of the fee-bump account, or null. */
  feeBumpAddress: string | null;
  /** CHANNEL_ACCOUNTS: how many channel accounts settle (0: the submitters themselves). */
  channelAccounts: number;
  /** With channels: the account that creates them (the one SUBMITTER_SECRET), else null. */
  channelFunder: string | null;
  maxTransactionFeeStroops: number;
  /**
   * The longest a POST /settle waits for its transaction's outcome before answering
   * `settlement_pending` (below the stock x402 client's 90 s timeout; docs/OPERATIONS.md).
   */
  settleWaitSeconds: number;
  /** GET /ready: the least native balance, in stroops, of every account that pays for settlements. */
  readyMinBalanceStroops: number;
  /** GET /ready: the oldest the RPC's latest ledger may be, in seconds. */
  readyMaxLedgerAgeSeconds: number;
}

const KEYS = Symbol('signingKeys');

/** The Keypairs of a loaded config (the only way to reach them). */
export function signingKeys(config: StellarConfig): SigningKeys {
  const keys = (config as StellarConfig & { [KEYS]?: SigningKeys })[KEYS];
  if (!keys) throw new Error('config has no signing keys (not produced by loadConfig)');
  return keys;
}

/**
 * The signer addresses advertised in /supported (`signers["stellar:*"]`): every submitter, then
 * the fee-bump account when configured. One place, reused by the scheme.
 */
export function signerAddresses(config: Pick<StellarConfig, 'submitters' | 'feeBumpAddress'>): string[] {
  return config.feeBumpAddress ? [...config.submitters, config.feeBumpAddress] : [...config.submitters];
}

function parseRpcUrl(env: Env, network: StellarNetwork): string {
  const value = read(env, 'RPC_URL');
  if (value === undefined) {
    const fallback = defaultRpcUrl(network);
    if (fallback === null) throw new ConfigError('RPC_URL', `is required when NETWORK is ${network}`);
    return fallback;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('RPC_URL', 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('RPC_URL', `must be an http(s) URL; got scheme ${JSON.stringify(url.protocol)}`);
  }
  // Credentials in the URL would end up in /health and logs.
  if (url.username || url.password) throw new ConfigError('RPC_URL', 'must not contain credentials');
  return value;
}

/** Parses one seed; the message never quotes the value, not even partly. */
function parseSeed(variable: string, value: string, position?: number): Keypair {
  const where = position === undefined ? '' : ` (entry ${position})`;
  const keypair = keypairFromSeed(value);
  if (!keypair) throw new ConfigError(variable, `is not a valid Stellar secret seed${where} (expected 56 characters starting with S)`);
  return keypair;
}

function parseSubmitters(env: Env): Keypair[] {
  const value = read(env, 'SUBMITTER_SECRET');
  if (value === undefined) {
    throw new ConfigError('SUBMITTER_SECRET', 'is required (one Stellar secret seed or a comma-separated list)');
  }
  const entries = value.split(',').map((s) => s.trim());
  const keypairs = entries.map((seed, i) => {
    if (seed === '') throw new ConfigError('SUBMITTER_SECRET', `entry ${i + 1} is empty`);
    return parseSeed('SUBMITTER_SECRET', seed, entries.length > 1 ? i + 1 : undefined);
  });
  const seen = new Set<string>();
  keypairs.forEach((kp, i) => {
    if (seen.has(kp.publicKey())) throw new ConfigError('SUBMITTER_SECRET', `entry ${i + 1} duplicates an earlier entry`);
    seen.add(kp.publicKey());
  });
  return keypairs;
}

function parseFeeBump(env: Env, submitters: Keypair[]): Keypair | null {
  const value = read(env, 'FEE_BUMP_SECRET');
  if (value === undefined) return null;
  if (value.includes(',')) throw new ConfigError('FEE_BUMP_SECRET', 'must be a single Stellar secret seed, not a list');
  const keypair = parseSeed('FEE_BUMP_SECRET', value);
  if (submitters.some((s) => s.publicKey() === keypair.publicKey())) {
    throw new ConfigError('FEE_BUMP_SECRET', 'must differ from every SUBMITTER_SECRET entry');
  }
  return keypair;
}

/** Validates every Stellar variable; throws the first ConfigError. Has no side effects. */
export function loadStellarConfig(env: Env): StellarConfig {
  const network = parseOneOf(env, 'NETWORK', NETWORKS, DEFAULT_NETWORK);
  const rpcUrl = parseRpcUrl(env, network);
  const configuredKeys = parseSubmitters(env);
  const configuredFeeBump = parseFeeBump(env, configuredKeys);
  const channelAccounts = parseInteger(env, 'CHANNEL_ACCOUNTS', STELLAR_DEFAULTS.CHANNEL_ACCOUNTS, 0, MAX_CHANNEL_ACCOUNTS);
  if (channelAccounts > 0 && configuredKeys.length !== 1) {
    throw new ConfigError('CHANNEL_ACCOUNTS', 'derives the channel accounts from one SUBMITTER_SECRET; configure exactly one seed');
  }
  // With channels, the one submitter funds them and (without FEE_BUMP_SECRET) pays every fee.
  const channelFunder = channelAccounts > 0 ? configuredKeys[0]! : null;
  const submitterKeys = channelFunder ? deriveChannelKeys(channelFunder, channelAccounts) : configuredKeys;
  const feeBumpKey = configuredFeeBump ?? channelFunder;
  const config: StellarConfig = {
    network,
    rpcUrl,
    submitters: submitterKeys.map((k) => k.publicKey()),
    feeBumpAddress: feeBumpKey?.publicKey() ?? null,
    channelAccounts,
    channelFunder: channelFunder?.publicKey() ?? null,
    maxTransactionFeeStroops: parseInteger(
      env,
      'MAX_TRANSACTION_FEE_STROOPS',
      STELLAR_DEFAULTS.MAX_TRANSACTION_FEE_STROOPS,
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    readyMinBalanceStroops: parseInteger(
      env,
      'READY_MIN_BALANCE_STROOPS',
      STELLAR_DEFAULTS.READY_MIN_BALANCE_STROOPS,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    settleWaitSeconds: parseInteger(env, 'SETTLE_WAIT_SECONDS', STELLAR_DEFAULTS.SETTLE_WAIT_SECONDS, 1, 300),
    readyMaxLedgerAgeSeconds: parseInteger(env, 'READY_MAX_LEDGER_AGE_SECONDS', STELLAR_DEFAULTS.READY_MAX_LEDGER_AGE_SECONDS, 1, 86_400),
  };
  Object.defineProperty(config, KEYS, { value: { submitters: submitterKeys, feeBump: feeBumpKey, channelFunder }, enumerable: false });
  return config;
}

/**
 * Values that stand in for a required Stellar variable that is missing or invalid, only so that
 * the configuration's other variables can still be judged and every invalid one reported at once
 * (src/config.ts `configErrors`); never used to run. The seed is a fresh random one.
 */
export function stellarStandIns(): Env {
  return { SUBMITTER_SECRET: StellarKeypair.random().secret(), RPC_URL: 'http://127.0.0.1/' };
}
