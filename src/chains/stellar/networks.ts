/**
 * The Stellar networks svc serves, defined once: CAIP-2 id, network passphrase and the public
 * Soroban RPC svc defaults to (none on pubnet: an operator names their own). The service
 * configuration, the exact scheme, the buyer and the MCP tool server all read this table.
 */
export const STELLAR_NETWORKS = {
  'stellar:testnet': { passphrase: 'Test SDF Network ; September 2015', defaultRpcUrl: 'https://soroban-testnet.stellar.org' },
  'stellar:pubnet': { passphrase: 'Public Global Stellar Network ; September 2015', defaultRpcUrl: null },
} as const satisfies Record<string, { passphrase: string; defaultRpcUrl: string | null }>;

export type StellarNetwork = keyof typeof STELLAR_NETWORKS;

/** Every served network id, in table order. */
export const NETWORKS = Object.keys(STELLAR_NETWORKS) as StellarNetwork[];

/** The network svc runs on when NETWORK is unset. */
export const DEFAULT_NETWORK: StellarNetwork = 'stellar:testnet';

/** The CAIP-2 family under which the Stellar signers are advertised in /supported. */
export const STELLAR_SIGNER_FAMILY = 'stellar:*';

export function isStellarNetwork(value: unknown): value is StellarNetwork {
  return typeof value === 'string' && Object.hasOwn(STELLAR_NETWORKS, value);
}

/** The passphrase of a served network, undefined for any other value. */
export function networkPassphrase(network: unknown): string | undefined {
  return isStellarNetwork(network) ? STELLAR_NETWORKS[network].passphrase : undefined;
}

/** The RPC svc uses on `network` when none is configured (null: one must be configured). */
export function defaultRpcUrl(network: StellarNetwork): string | null {
  return STELLAR_NETWORKS[network].defaultRpcUrl;
}
