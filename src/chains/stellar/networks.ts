/**
 * The Stellar networks svc serves, defined once: CAIP-2 id, network passphrase and the public
 * Soroban RPC svc defaults to (none on pubnet: an operator names their own). The service
 * configuration, the exact scheme, the buyer and the MCP tool server all read this table.
 */
import { Asset } from '@stellar/stellar-sdk';
import type { AssetInfo } from '../../scheme/types.ts';

export const STELLAR_NETWORKS = {
  'stellar:testnet': {
    passphrase: 'Test SDF Network ; September 2015',
    defaultRpcUrl: 'https://soroban-testnet.stellar.org',
    // Circle's USDC as a Stellar Asset Contract (the embedded devnet deploys it under the same id).
    usdc: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
  },
  'stellar:pubnet': {
    passphrase: 'Public Global Stellar Network ; September 2015',
    defaultRpcUrl: null,
    usdc: 'CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75',
  },
} as const satisfies Record<string, { passphrase: string; defaultRpcUrl: string | null; usdc: string }>;

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

/**
 * The tokens whose code and decimals svc knows on `network` (for showing prices in units, not base
 * units): USDC and the native XLM contract. Both are Stellar Asset Contracts, which have 7 decimals.
 */
export function knownStellarAssets(network: StellarNetwork): AssetInfo[] {
  const { passphrase, usdc } = STELLAR_NETWORKS[network];
  return [
    { network, asset: usdc, code: 'USDC', decimals: 7 },
    { network, asset: Asset.native().contractId(passphrase), code: 'XLM', decimals: 7 },
  ];
}
