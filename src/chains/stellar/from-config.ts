/** Builds the scheme the service mounts from the loaded Stellar configuration. */
import { signingKeys, type StellarConfig } from './config.ts';
import type { Logger } from '../../log.ts';
import { ExactStellarScheme } from './exact/facilitator.ts';
import { createSdkRpc, type ChainRpc } from './rpc.ts';
import type { SharedLeases } from '../../scheme/types.ts';

/**
 * Inside the service the HTTP handlers already write the one `info` line per payment decision,
 * so the scheme's own decision lines go to `debug` (they add the scheme-internal view, e.g. the
 * re-verification inside settle) instead of doubling the info log.
 */
export function createSchemeFromConfig(
  config: StellarConfig,
  logger?: Logger,
  wrapRpc: (rpc: ChainRpc) => ChainRpc = (rpc) => rpc,
  /** Submitter leases shared with other instances (DATABASE_URL, docs/SCALING.md). */
  sharedLeases?: SharedLeases,
): ExactStellarScheme {
  const keys = signingKeys(config);
  return new ExactStellarScheme({
    network: config.network,
    rpc: wrapRpc(createSdkRpc({ url: config.rpcUrl })),
    submitters: keys.submitters,
    feeBump: keys.feeBump,
    channelFunder: keys.channelFunder,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
    settleWaitMs: config.settleWaitSeconds * 1000,
    ...(sharedLeases ? { pool: { shared: sharedLeases } } : {}),
    ...(logger ? { logger: { info: (obj: Record<string, unknown>, msg?: string) => logger.debug(obj, msg) } } : {}),
  });
}
