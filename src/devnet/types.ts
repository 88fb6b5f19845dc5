/**
 * Public surface of the embedded devnet (docs/DEVNET.md). This file is the contract between
 * the devnet and everything that runs on it (scheme tests, client, demo, benchmarks):
 * change it only together with its consumers.
 */

/** JSON-RPC methods the devnet serves. */
export type RpcMethod =
  | 'getHealth'
  | 'getNetwork'
  | 'getLatestLedger'
  | 'getLedgers'
  | 'getLedgerEntries'
  | 'getFeeStats'
  | 'simulateTransaction'
  | 'sendTransaction'
  | 'getTransaction';

export interface StartDevnetOptions {
  /** Ledger close interval in ms; 0 = ledgers close only through `closeLedger()`. Default 5000. */
  ledgerMs?: number;
  /** Also serve JSON-RPC over HTTPS with a generated self-signed certificate. Default false. */
  https?: boolean;
  /** Bind address; always loopback. Default 127.0.0.1. */
  host?: string;
  /** HTTP port; 0 (default) picks a free one. */
  port?: number;
  /** HTTPS port; 0 (default) picks a free one. */
  httpsPort?: number;
  /** Number of funded demo accounts to create at start (XLM + USDC trustline + USDC). Default 0. */
  demoAccounts?: number;
  /**
   * The network it plays: its passphrase, and USDC under that network's issuer and contract id
   * (DEVNET_NETWORKS). Default `stellar:testnet`.
   */
  network?: DevnetNetwork;
}

/** The networks a devnet can play. */
export type DevnetNetwork = 'stellar:testnet' | 'stellar:pubnet';

/**
 * What a devnet takes from the network it plays: the passphrase (so signatures and hashes are the
 * network's) and Circle's USDC issuer there (so the USDC contract id is the network's). Public
 * facts of each network, not svc's configuration.
 */
export const DEVNET_NETWORKS: Record<DevnetNetwork, { passphrase: string; usdcIssuer: string }> = {
  'stellar:testnet': {
    passphrase: 'Test SDF Network ; September 2015',
    usdcIssuer: 'GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5',
  },
  'stellar:pubnet': {
    passphrase: 'Public Global Stellar Network ; September 2015',
    usdcIssuer: 'GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN',
  },
};

/** A funded account the devnet created. Secrets are dev-only. */
export interface DevAccount {
  publicKey: string;
  secret: string;
}

export interface FundOptions {
  /** XLM in stroops. Default 10_000 XLM. */
  xlmStroops?: bigint;
  /** Add the USDC trustline (authorized). Default true. */
  usdcTrustline?: boolean;
  /** USDC to mint, in base units (7 decimals). Default 0. */
  usdc?: bigint;
}

/** One injected fault, consumed `times` times (default: until cleared). */
export type Fault =
  | { kind: 'rpcError'; code?: number; message?: string } // JSON-RPC error object
  | { kind: 'timeout' } // never answers (the connection is held open until the client gives up)
  | { kind: 'delay'; ms: number } // answers correctly after a delay
  | { kind: 'httpError'; status: number } // non-JSON-RPC HTTP failure
  | { kind: 'garbage'; result?: unknown }; // a well-formed JSON-RPC answer whose result is nonsense (default null)

export interface FaultSwitches {
  /** Make every call to `method` fail in the given way. */
  set(method: RpcMethod, fault: Fault, opts?: { times?: number }): void;
  /** sendTransaction answers this status without accepting the transaction. */
  sendStatus(status: 'TRY_AGAIN_LATER' | 'ERROR', opts?: { times?: number }): void;
  /** sendTransaction answers PENDING but the transaction is silently dropped (never applied). */
  dropSubmissions(opts?: { times?: number }): void;
  /** getLatestLedger / getLedgers / getHealth report a ledger `ledgers` behind the real one. */
  lagLedger(ledgers: number): void;
  /** Remove every fault. */
  clear(): void;
}

export interface LedgerInfo {
  sequence: number;
  /** Unix seconds. */
  closeTime: number;
}

export interface Devnet {
  /** http://127.0.0.1:PORT — JSON-RPC 2.0 at POST / (also at /rpc). */
  rpcUrl: string;
  /** https://localhost:PORT when `https` was requested. */
  httpsRpcUrl?: string;
  /** PEM of the self-signed certificate (trust it with NODE_EXTRA_CA_CERTS or an https.Agent). */
  caCertPem?: string;
  /** GET {friendbotUrl}?addr=G… creates and funds an account (XLM, USDC trustline, optional &usdc=base-units). */
  friendbotUrl: string;
  /** The played network's passphrase (Networks.TESTNET by default). */
  networkPassphrase: string;
  network: DevnetNetwork;
  usdc: { contractId: string; code: 'USDC'; issuer: string; decimals: 7 };
  /** A plain (non-SAC) SEP-41 token whose transfer event has 3 topics. */
  customToken: { contractId: string; decimals: 7 };
  /** Accounts created by `demoAccounts`. */
  demoAccounts: DevAccount[];
  /** Close a ledger now (applies pending transactions). */
  closeLedger(): Promise<LedgerInfo>;
  latestLedger(): LedgerInfo;
  /** Create (or top up) an account; returns its keypair strings. */
  createAccount(opts?: FundOptions): Promise<DevAccount>;
  fund(publicKey: string, opts?: FundOptions): Promise<void>;
  /** Mint `amount` base units of the custom token to a G or C address. */
  mintCustomToken(address: string, amount: bigint): Promise<void>;
  /** Read balances straight from ledger state (base units / stroops). */
  balances(address: string): { xlm: bigint; usdc: bigint | null; custom: bigint };
  /** Deauthorize / reauthorize an account's USDC trustline (issuer action). */
  setUsdcAuthorized(publicKey: string, authorized: boolean): void;
  faults: FaultSwitches;
  stop(): Promise<void>;
}
