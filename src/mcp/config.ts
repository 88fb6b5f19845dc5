/**
 * The tool server's configuration from the environment (docs/MCP.md). `loadMcpConfig(env)` returns
 * a validated config or throws a ConfigError naming the variable; messages never contain any part
 * of the wallet seed. The wallet Keypair is non-enumerable, so serializing the config cannot leak it.
 *
 * | Variable | Default | Rule |
 * |---|---|---|
 * | FACILITATOR_URL | http://127.0.0.1:4021 | absolute http(s) URL |
 * | CLIENT_STELLAR_PRIVATE_KEY | (absent: search-only) | an ed25519 secret seed S…; empty counts as absent |
 * | SVC_MCP_MAX_AMOUNT | 10000000 | positive integer, base units |
 * | NETWORK | stellar:testnet | stellar:testnet or stellar:pubnet: the only network paid on |
 * | RPC_URL | testnet: https://soroban-testnet.stellar.org; pubnet: none | http(s) URL; required on pubnet when a wallet is set |
 * | SVC_MCP_TIMEOUT_MS | 30000 | per request to the facilitator, a target or the RPC, 1000..300000 |
 * | ALLOW_PRIVATE_TARGETS | (none) | dev only: CIDRs paid_call may reach although not public (docs/SECURITY.md) |
 */
import {
  DEFAULT_NETWORK,
  NETWORKS,
  defaultRpcUrl,
  isStellarNetwork,
  keypairFromSeed,
  type Keypair,
  type StellarNetwork,
} from '../chains/stellar/index.ts';
import { ConfigError } from '../config.ts';
import { ALLOW_PRIVATE_TARGETS, parseAllowList } from '../net/private-addresses.ts';

export const MCP_DEFAULTS = {
  FACILITATOR_URL: 'http://127.0.0.1:4021',
  SVC_MCP_MAX_AMOUNT: 10_000_000n,
  SVC_MCP_TIMEOUT_MS: 30_000,
} as const;

export interface McpConfig {
  facilitatorUrl: string;
  network: StellarNetwork;
  /** Spend cap per payment, in base units. */
  maxAmount: bigint;
  /** The RPC the buyer simulates on; null when no wallet is configured (search-only or free calls). */
  rpcUrl: string | null;
  timeoutMs: number;
  /** Public address of the wallet, or null (search-only). */
  walletAddress: string | null;
}

const WALLET = Symbol('wallet');

/** The wallet of a loaded config, or null. */
export function walletOf(config: McpConfig): Keypair | null {
  return (config as McpConfig & { [WALLET]?: Keypair })[WALLET] ?? null;
}

function httpUrl(variable: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(variable, 'must be an absolute http(s) URL.');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new ConfigError(variable, 'must be an http(s) URL without credentials.');
  }
  return raw.replace(/\/+$/, '');
}

export function loadMcpConfig(env: Record<string, string | undefined>): McpConfig {
  const facilitatorUrl = httpUrl('FACILITATOR_URL', env.FACILITATOR_URL?.trim() || MCP_DEFAULTS.FACILITATOR_URL);

  const network = env.NETWORK?.trim() || DEFAULT_NETWORK;
  if (!isStellarNetwork(network)) throw new ConfigError('NETWORK', `must be one of ${NETWORKS.join(', ')}.`);

  const rawMax = env.SVC_MCP_MAX_AMOUNT?.trim();
  let maxAmount: bigint = MCP_DEFAULTS.SVC_MCP_MAX_AMOUNT;
  if (rawMax !== undefined && rawMax !== '') {
    if (!/^[0-9]{1,39}$/.test(rawMax) || BigInt(rawMax) <= 0n)
      throw new ConfigError('SVC_MCP_MAX_AMOUNT', 'must be a positive integer in base units (e.g. 10000000 = 1 USDC).');
    maxAmount = BigInt(rawMax);
  }

  const rawTimeout = env.SVC_MCP_TIMEOUT_MS?.trim();
  let timeoutMs: number = MCP_DEFAULTS.SVC_MCP_TIMEOUT_MS;
  if (rawTimeout !== undefined && rawTimeout !== '') {
    timeoutMs = Number(rawTimeout);
    if (!/^[0-9]+$/.test(rawTimeout) || timeoutMs < 1000 || timeoutMs > 300_000)
      throw new ConfigError('SVC_MCP_TIMEOUT_MS', 'must be an integer from 1000 to 300000.');
  }

  const seed = env.CLIENT_STELLAR_PRIVATE_KEY?.trim();
  let wallet: Keypair | null = null;
  if (seed) {
    // The message never repeats the value, not even its length or first character.
    wallet = keypairFromSeed(seed) ?? null;
    if (!wallet) throw new ConfigError('CLIENT_STELLAR_PRIVATE_KEY', 'is not a valid Stellar ed25519 secret seed (S…, 56 characters).');
  }

  let rpcUrl: string | null = null;
  const rawRpc = env.RPC_URL?.trim();
  if (rawRpc) rpcUrl = httpUrl('RPC_URL', rawRpc);
  else if (wallet && defaultRpcUrl(network) !== null) rpcUrl = defaultRpcUrl(network);
  else if (wallet) throw new ConfigError('RPC_URL', `is required on ${network} when CLIENT_STELLAR_PRIVATE_KEY is set.`);

  parseAllowList(env[ALLOW_PRIVATE_TARGETS]);

  const config: McpConfig = { facilitatorUrl, network, maxAmount, rpcUrl, timeoutMs, walletAddress: wallet?.publicKey() ?? null };
  if (wallet) Object.defineProperty(config, WALLET, { value: wallet, enumerable: false });
  return config;
}
