/** GET /health, GET /supported and GET /openapi.yaml. */
import type { Context, Middleware } from 'koa';
import { defaultSupported, type Config } from '../config.ts';
import type { PaymentScheme } from '../scheme/types.ts';
import { SERVED_X402_VERSION } from './payments.ts';

/** Extensions with a reachable implementation: both discovery routes are mounted. */
export const SUPPORTED_EXTENSIONS = ['bazaar'];

/** The log-safe configuration projection of SPEC §2.10: public addresses only. */
export function healthBody(config: Config): Record<string, unknown> {
  return {
    status: 'ok',
    x402Version: SERVED_X402_VERSION,
    network: config.network,
    rpcUrl: config.rpcUrl,
    submitters: [...config.submitters],
    feeBumpAddress: config.feeBumpAddress,
    port: config.port,
    feeMode: config.feeMode,
    dbPath: config.dbPath,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
  };
}

export function healthHandler(config: Config): Middleware {
  return async (ctx: Context) => {
    ctx.status = 200;
    ctx.body = healthBody(config);
  };
}

export function supportedHandler(config: Config, scheme: PaymentScheme | undefined): Middleware {
  return async (ctx: Context) => {
    const { kinds, signers } = scheme ? scheme.supported() : defaultSupported(config);
    ctx.status = 200;
    ctx.body = { kinds, extensions: SUPPORTED_EXTENSIONS, signers };
  };
}

export function openApiHandler(yaml: string): Middleware {
  return async (ctx: Context) => {
    ctx.status = 200;
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.body = yaml;
  };
}
