/** GET /health, GET /ready, GET /supported and GET /openapi.yaml. */
import type { Config } from '../config.ts';
import type { components } from '../generated/openapi.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import type { ReadinessProbe } from '../ops/readiness.ts';
import type { SchemeRegistry } from '../scheme/registry.ts';
import { X402_VERSION, type SupportedResponse } from '../scheme/types.ts';

type HealthResponse = components['schemas']['HealthResponse'];
type ReadinessResponse = components['schemas']['ReadinessResponse'];

/**
 * The public configuration projection (openapi.yaml, HealthResponse): public addresses only, no
 * internal URL or path (the RPC URL may name private infrastructure), and the port actually bound.
 */
export function healthBody(config: Config, boundPort: number): HealthResponse {
  return {
    status: 'ok',
    x402Version: X402_VERSION,
    network: config.network,
    submitters: [...config.submitters],
    feeBumpAddress: config.feeBumpAddress,
    port: boundPort,
    feeMode: config.feeMode,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
    ...(config.networks.length > 1
      ? {
          networks: config.networks.map((n) => ({
            network: n.network,
            submitters: [...n.submitters],
            feeBumpAddress: n.feeBumpAddress,
            maxTransactionFeeStroops: n.maxTransactionFeeStroops,
          })),
        }
      : {}),
  };
}

/** Liveness: no network or database call, so it answers whatever the dependencies do. */
export function healthHandler(config: Config): SvcMiddleware {
  return (ctx: SvcContext) => {
    ctx.status = 200;
    ctx.body = healthBody(config, ctx.req.socket.localPort ?? config.port);
  };
}

/** Readiness: 200 when every check passes, else 503 with each check's detail. */
export function readinessHandler(probe: ReadinessProbe): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const { ready, checks } = await probe.evaluate();
    const body: ReadinessResponse = { status: ready ? 'ready' : 'not_ready', checks };
    ctx.status = ready ? 200 : 503;
    ctx.body = body;
  };
}

type FacilitatorManifest = components['schemas']['FacilitatorManifest'];

/** GET /.well-known/x402 (openapi.yaml, experimental): the routes, and GET /supported's answer of this moment. */
export function manifestHandler(registry: SchemeRegistry): SvcMiddleware {
  return (ctx: SvcContext) => {
    const body: FacilitatorManifest = {
      x402Version: X402_VERSION,
      experimental: true,
      role: 'facilitator',
      endpoints: {
        verify: '/verify',
        settle: '/settle',
        supported: '/supported',
        discovery: '/discovery/resources',
        search: '/discovery/search',
        openapi: '/openapi.yaml',
      },
      supported: registry.supported(),
    };
    ctx.status = 200;
    ctx.body = body;
  };
}

export function supportedHandler(registry: SchemeRegistry): SvcMiddleware {
  return (ctx: SvcContext) => {
    const body: SupportedResponse = registry.supported();
    ctx.status = 200;
    ctx.body = body;
  };
}

export function openApiHandler(yaml: string): SvcMiddleware {
  return (ctx: SvcContext) => {
    ctx.status = 200;
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.body = yaml;
  };
}
