/** GET /health, GET /ready, GET /supported and GET /openapi.yaml. */
import type { Context, Middleware } from 'koa';
import { defaultSupported, type Config } from '../config.ts';
import type { PaymentScheme } from '../scheme/types.ts';
import type { ReadinessProbe } from '../ops/readiness.ts';
import { SERVED_X402_VERSION } from './payments.ts';

/** Extensions with a reachable implementation: both discovery routes are mounted. */
export const SUPPORTED_EXTENSIONS = ['bazaar'];

/**
 * The public configuration projection (openapi.yaml, HealthResponse): public addresses only, no
 * internal URL or path (the RPC URL may name private infrastructure), and the port actually bound.
 */
export function healthBody(config: Config, boundPort: number): Record<string, unknown> {
  return {
    status: 'ok',
    x402Version: SERVED_X402_VERSION,
    network: config.network,
    submitters: [...config.submitters],
    feeBumpAddress: config.feeBumpAddress,
    port: boundPort,
    feeMode: config.feeMode,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
  };
}

/** Liveness: no network or database call, so it answers whatever the dependencies do. */
export function healthHandler(config: Config): Middleware {
  return async (ctx: Context) => {
    ctx.status = 200;
    ctx.body = healthBody(config, ctx.req.socket.localPort ?? config.port);
  };
}

/** Readiness: 200 when every check passes, else 503 with each check's detail. */
export function readinessHandler(probe: ReadinessProbe | undefined): Middleware {
  return async (ctx: Context) => {
    const { ready, checks } = probe ? await probe.evaluate() : { ready: true, checks: {} };
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks };
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
