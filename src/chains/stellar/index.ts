/** The exact Stellar scheme: what the service, the client and the tools consume. */
export { ExactStellarScheme, type ExactStellarSchemeOptions, type PaymentLogger } from './exact/facilitator.ts';
export { INCLUSION_FEE_STROOPS } from './exact/verify.ts';
export {
  createSdkRpc,
  RpcError,
  type ChainRpc,
  type Simulation,
  type Submission,
  type TransactionStatus,
  type LedgerStamp,
} from './rpc.ts';
export { LedgerTimeEstimator, FALLBACK_LEDGER_SECONDS, expiryLedgerBound } from './ledger-time.ts';
export { SubmitterPool, SignerSelectionError, type SubmitterLease } from './submitters.ts';
export {
  loadStellarConfig,
  stellarStandIns,
  signingKeys,
  signerAddresses,
  networkSuffix,
  PER_NETWORK_VARIABLES,
  type SigningKeys,
  type StellarConfig,
  type StellarNetworkConfig,
} from './config.ts';
export { createSchemeFromConfig, createSchemesFromConfig } from './from-config.ts';
export { accountBalances, networkMismatch, stellarReadinessChecks } from './health.ts';
export {
  STELLAR_NETWORKS,
  NETWORKS,
  DEFAULT_NETWORK,
  STELLAR_SIGNER_FAMILY,
  isStellarNetwork,
  networkPassphrase,
  defaultRpcUrl,
  type StellarNetwork,
} from './networks.ts';
export { keypairFromSeed, type Keypair } from './keys.ts';
export { isContractAddress } from './addresses.ts';
export { ChannelOpener, deriveChannelKeys, MAX_CHANNEL_ACCOUNTS } from './channels.ts';
export { createStellarPayment, StellarPaymentError, type CreateStellarPaymentOptions } from './exact/buyer.ts';
export { verifySignedMessage, signMessage } from './signed-message.ts';
