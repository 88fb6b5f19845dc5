/**
 * The Stellar chain's section of the configuration (README.md, Configuration): NETWORK, RPC_URL,
 * SUBMITTER_SECRET, FEE_BUMP_SECRET, CHANNEL_ACCOUNTS, MAX_TRANSACTION_FEE_STROOPS and the
 * READY_* thresholds of its readiness checks. `loadStellarConfig(env)` returns the public fields
 * or throws a ConfigError naming the variable; no message contains any part of a seed. The parsed
 * Keypairs live in a non-enumerable property, reached only through `signingKeys()`, so that
 * serializing or logging the config cannot leak them.
 *
 * NETWORK may list several networks (`stellar:testnet,stellar:pubnet`): each network reads its
 * own variables first, named with its suffix (`RPC_URL_PUBNET`, `SUBMITTER_SECRET_PUBNET`; see
 * PER_NETWORK_VARIABLES), and the unsuffixed one otherwise. The first network's section is the
 * config's own fields (what a single NETWORK has always been); `networks` holds every network's.
 */
import { randomBytes } from 'node:crypto';
import { StrKey } from '@stellar/stellar-sdk';
import { ConfigError, parseInteger, read, type Env } from '../../config-env.ts';
import { MAX_CHANNEL_ACCOUNTS, deriveChannelKeys } from './channels.ts';
import { keypairFromSeed, type Keypair } from './keys.ts';
import { DEFAULT_NETWORK, NETWORKS, defaultRpcUrl, type StellarNetwork } from './networks.ts';

export const STELLAR_DEFAULTS = {
  CHANNEL_ACCOUNTS: 0,
  READY_MIN_BALANCE_STROOPS: 50_000_000,
  READY_MAX_LEDGER_AGE_SECONDS: 30,
  SETTLE_WAIT_SECONDS: 60,
} as const;

/**
 * MAX_TRANSACTION_FEE_STROOPS by network: above the dearest settlement the devnet's model of that
 * network's costs produces (about 1,025,640 declared on testnet, 513,220 on pubnet: a payment creating a
 * payee's balance in the transfer that extends a token instance from its last ledgers), so the
 * ceiling refuses no valid payment; the fee budgets bound what they cost (docs/OPERATIONS.md
 * "Real-network costs and the fee ceiling").
 */
export const DEFAULT_MAX_TRANSACTION_FEE_STROOPS: Record<StellarNetwork, number> = {
  'stellar:testnet': 1_100_000,
  'stellar:pubnet': 550_000,
};

/** The signing keys. Never serialized: see `signingKeys()`. */
export interface SigningKeys {
  /** The settlement sources: the configured submitters, or the derived channel accounts. */
  submitters: Keypair[];
  feeBump: Keypair | null;
  /** With CHANNEL_ACCOUNTS: the configured submitter, which creates the channels. */
  channelFunder: Keypair | null;
}

/** The variables a network reads with its suffix first (docs/OPERATIONS.md "Several networks"). */
export const PER_NETWORK_VARIABLES = [
  'RPC_URL',
  'SUBMITTER_SECRET',
  'FEE_BUMP_SECRET',
  'CHANNEL_ACCOUNTS',
  'MAX_TRANSACTION_FEE_STROOPS',
  'READY_MIN_BALANCE_STROOPS',
] as const;

/** The suffix of a network's own variables: `stellar:pubnet` → `PUBNET` (RPC_URL_PUBNET). */
export function networkSuffix(network: StellarNetwork): string {
  return network.slice(network.indexOf(':') + 1).toUpperCase();
}

/** One network's section: what one svc serving that network alone is configured with. */
export interface StellarNetworkConfig {
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

/** The first network's section, and every served network's in NETWORK's order (the first included). */
export interface StellarConfig extends StellarNetworkConfig {
  networks: StellarNetworkConfig[];
}

const KEYS = Symbol('signingKeys');

/** The Keypairs of a loaded config (the only way to reach them). */
export function signingKeys(config: StellarNetworkConfig): SigningKeys {
  const keys = (config as StellarNetworkConfig & { [KEYS]?: SigningKeys })[KEYS];
  if (!keys) throw new Error('config has no signing keys (not produced by loadConfig)');
  return keys;
}

/**
 * The signer addresses advertised in /supported (`signers["stellar:*"]`): every submitter, then
 * the fee-bump account when configured. One place, reused by the scheme.
 */
export function signerAddresses(config: Pick<StellarNetworkConfig, 'submitters' | 'feeBumpAddress'>): string[] {
  return config.feeBumpAddress ? [...config.submitters, config.feeBumpAddress] : [...config.submitters];
}

/** The variable `network` reads `name` from: its own (`NAME_SUFFIX`) when set, else `NAME`. */
function variableFor(env: Env, name: (typeof PER_NETWORK_VARIABLES)[number], network: StellarNetwork): string {
  const own = `${name}_${networkSuffix(network)}`;
  return read(env, own) === undefined ? name : own;
}

function parseRpcUrl(env: Env, network: StellarNetwork, several: boolean): string {
  const variable = variableFor(env, 'RPC_URL', network);
  const value = read(env, variable);
  if (value === undefined) {
    const fallback = defaultRpcUrl(network);
    if (fallback === null && several)
      throw new ConfigError(`RPC_URL_${networkSuffix(network)}`, `(or RPC_URL) is required when NETWORK includes ${network}`);
    if (fallback === null) throw new ConfigError('RPC_URL', `is required when NETWORK is ${network}`);
    return fallback;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(variable, `must be an http(s) URL; got scheme ${JSON.stringify(url.protocol)}`);
  }
  // Credentials in the URL would end up in /health and logs.
  if (url.username || url.password) throw new ConfigError(variable, 'must not contain credentials');
  return value;
}

/** Parses one seed; the message never quotes the value, not even partly. */
function parseSeed(variable: string, value: string, position?: number): Keypair {
  const where = position === undefined ? '' : ` (entry ${position})`;
  const keypair = keypairFromSeed(value);
  if (!keypair) throw new ConfigError(variable, `is not a valid Stellar secret seed${where} (expected 56 characters starting with S)`);
  return keypair;
}

function parseSubmitters(env: Env, variable: string): Keypair[] {
  const value = read(env, variable);
  if (value === undefined) {
    throw new ConfigError(
      variable,
      'is required: the secret seed (S…) of a funded account, or a comma-separated list; for testnet, create and fund one at https://lab.stellar.org/account/create (Friendbot), or run `npm run dev` for a local devnet that needs none (README.md)',
    );
  }
  const entries = value.split(',').map((s) => s.trim());
  const keypairs = entries.map((seed, i) => {
    if (seed === '') throw new ConfigError(variable, `entry ${i + 1} is empty`);
    return parseSeed(variable, seed, entries.length > 1 ? i + 1 : undefined);
  });
  const seen = new Set<string>();
  keypairs.forEach((kp, i) => {
    if (seen.has(kp.publicKey())) throw new ConfigError(variable, `entry ${i + 1} duplicates an earlier entry`);
    seen.add(kp.publicKey());
  });
  return keypairs;
}

function parseFeeBump(env: Env, variable: string, submitters: Keypair[]): Keypair | null {
  const value = read(env, variable);
  if (value === undefined) return null;
  if (value.includes(',')) throw new ConfigError(variable, 'must be a single Stellar secret seed, not a list');
  const keypair = parseSeed(variable, value);
  if (submitters.some((s) => s.publicKey() === keypair.publicKey())) {
    throw new ConfigError(variable, 'must differ from every SUBMITTER_SECRET entry');
  }
  return keypair;
}

/** NETWORK: one served network or a comma-separated list of them, each once. */
function parseNetworks(env: Env): StellarNetwork[] {
  const value = read(env, 'NETWORK') ?? DEFAULT_NETWORK;
  const entries = value.split(',').map((s) => s.trim());
  const networks: StellarNetwork[] = [];
  for (const [i, entry] of entries.entries()) {
    const where = entries.length > 1 ? ` (entry ${i + 1})` : '';
    if (!(NETWORKS as readonly string[]).includes(entry))
      throw new ConfigError(
        'NETWORK',
        `must be one of ${NETWORKS.join(', ')} or a comma-separated list of them${where}; got ${JSON.stringify(entry)}`,
      );
    if (networks.includes(entry as StellarNetwork)) throw new ConfigError('NETWORK', `entry ${i + 1} repeats an earlier network`);
    networks.push(entry as StellarNetwork);
  }
  return networks;
}

/** Validates every Stellar variable of every network in NETWORK; throws the first ConfigError. Has no side effects. */
export function loadStellarConfig(env: Env): StellarConfig {
  const served = parseNetworks(env);
  const networks = served.map((network) => loadNetworkConfig(env, network, served.length > 1));
  const first = networks[0]!;
  const config = { ...first } as StellarConfig;
  Object.defineProperty(config, KEYS, { value: signingKeys(first), enumerable: false });
  // Not enumerable: the config's own fields stay the first network's projection, as with one network.
  Object.defineProperty(config, 'networks', { value: networks, enumerable: false });
  return config;
}

/** One network's section, from its own variables or the unsuffixed ones. */
function loadNetworkConfig(env: Env, network: StellarNetwork, several: boolean): StellarNetworkConfig {
  const rpcUrl = parseRpcUrl(env, network, several);
  const configuredKeys = parseSubmitters(env, variableFor(env, 'SUBMITTER_SECRET', network));
  const configuredFeeBump = parseFeeBump(env, variableFor(env, 'FEE_BUMP_SECRET', network), configuredKeys);
  const channelsVariable = variableFor(env, 'CHANNEL_ACCOUNTS', network);
  const channelAccounts = parseInteger(env, channelsVariable, STELLAR_DEFAULTS.CHANNEL_ACCOUNTS, 0, MAX_CHANNEL_ACCOUNTS);
  if (channelAccounts > 0 && configuredKeys.length !== 1) {
    throw new ConfigError(channelsVariable, 'derives the channel accounts from one SUBMITTER_SECRET; configure exactly one seed');
  }
  // With channels, the one submitter funds them and (without FEE_BUMP_SECRET) pays every fee.
  const channelFunder = channelAccounts > 0 ? configuredKeys[0]! : null;
  const submitterKeys = channelFunder ? deriveChannelKeys(channelFunder, channelAccounts) : configuredKeys;
  const feeBumpKey = configuredFeeBump ?? channelFunder;
  const config: StellarNetworkConfig = {
    network,
    rpcUrl,
    submitters: submitterKeys.map((k) => k.publicKey()),
    feeBumpAddress: feeBumpKey?.publicKey() ?? null,
    channelAccounts,
    channelFunder: channelFunder?.publicKey() ?? null,
    maxTransactionFeeStroops: parseInteger(
      env,
      variableFor(env, 'MAX_TRANSACTION_FEE_STROOPS', network),
      DEFAULT_MAX_TRANSACTION_FEE_STROOPS[network],
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    readyMinBalanceStroops: parseInteger(
      env,
      variableFor(env, 'READY_MIN_BALANCE_STROOPS', network),
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
  const seed = StrKey.encodeEd25519SecretSeed(randomBytes(32));
  const stand: Env = { SUBMITTER_SECRET: seed, RPC_URL: 'http://127.0.0.1/' };
  // A network's own required variables (NETWORK a list) stand in the same way.
  for (const network of NETWORKS)
    Object.assign(stand, {
      [`SUBMITTER_SECRET_${networkSuffix(network)}`]: seed,
      [`RPC_URL_${networkSuffix(network)}`]: 'http://127.0.0.1/',
    });
  return stand;
}
