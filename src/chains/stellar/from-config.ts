/** Builds the schemes the service mounts from the loaded Stellar configuration, one per served network. */
import { signerAddresses, signingKeys, type StellarConfig, type StellarNetworkConfig } from './config.ts';
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
  config: StellarNetworkConfig,
  logger?: Logger,
  wrapRpc: (rpc: ChainRpc) => ChainRpc = (rpc) => rpc,
  /** Submitter leases shared with other instances (DATABASE_URL, docs/SCALING.md). */
  sharedLeases?: SharedLeases,
  several?: { others: readonly StellarNetworkConfig[] },
): ExactStellarScheme {
  const keys = signingKeys(config);
  return new ExactStellarScheme({
    ...(several
      ? {
          signerFamily: config.network,
          otherFacilitatorAddresses: several.others.flatMap((other) => [
            ...signerAddresses(other),
            ...(other.channelFunder ? [other.channelFunder] : []),
          ]),
        }
      : {}),
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

/**
 * One scheme per network of `config.networks` (NETWORK's order). With several, each advertises its
 * signers under its own network id and refuses every svc account of the other networks too.
 * `wrapRpc` and `sharedLeases` are asked per network (metrics label, lease keys).
 */
export function createSchemesFromConfig(
  config: StellarConfig,
  logger: Logger | undefined,
  wrapRpc: (rpc: ChainRpc, network: string) => ChainRpc,
  sharedLeases?: (network: string) => SharedLeases | undefined,
): ExactStellarScheme[] {
  const several = config.networks.length > 1;
  return config.networks.map((network) =>
    createSchemeFromConfig(
      network,
      logger,
      (rpc) => wrapRpc(rpc, network.network),
      sharedLeases?.(network.network),
      several ? { others: config.networks.filter((n) => n !== network) } : undefined,
    ),
  );
}
