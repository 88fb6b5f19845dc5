/** Builds the scheme the service mounts from its loaded configuration. */
import { signingKeys, type Config } from '../config.ts';
import { ExactStellarScheme, type PaymentLogger } from './exact.ts';
import { createSdkRpc } from './rpc.ts';

export function createSchemeFromConfig(config: Config, logger?: PaymentLogger): ExactStellarScheme {
  const keys = signingKeys(config);
  return new ExactStellarScheme({
    network: config.network,
    rpc: createSdkRpc({ url: config.rpcUrl }),
    submitters: keys.submitters,
    feeBump: keys.feeBump,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
    logger,
  });
}
