/** GET /health, GET /ready, GET /supported and GET /openapi.yaml. */
import type { Config } from '../config.ts';
import type { components } from '../generated/openapi.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import type { ReadinessProbe } from '../ops/readiness.ts';
import type { SchemeRegistry } from '../scheme/registry.ts';
import { X402_VERSION, type SupportedResponse } from '../scheme/types.ts';

type HealthResponse = components['schemas']['HealthResponse'];
type ReadinessResponse = components['schemas']['ReadinessResponse'];

/**
 * The public configuration projection (openapi.yaml, HealthResponse): public addresses only, no
 * internal URL or path (the RPC URL may name private infrastructure), and the port actually bound.
 * `network` and `submitters` name every served network's, as NETWORK lists them.
 */
export function healthBody(config: Config, boundPort: number): HealthResponse {
  return {
    status: 'ok',
    x402Version: X402_VERSION,
    ...servedNetworks(config),
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

/** Every served network (comma-separated, as NETWORK lists them) and every one's submitters: /health and the start-up line. */
export function servedNetworks(config: Config): { network: string; submitters: string[] } {
  return {
    network: config.networks.map((n) => n.network).join(','),
    submitters: [...new Set(config.networks.flatMap((n) => n.submitters))],
  };
}

/** Liveness: no network or database call, so it answers whatever the dependencies do. */
export function healthHandler(config: Config): SvcMiddleware {
  return (ctx: SvcContext) => {
    ctx.status = 200;
    ctx.body = healthBody(config, ctx.req.socket.localPort ?? config.port);
  };
}

/**
 * Readiness: 200 when the probe is ready (the shared checks and, by READY_NETWORKS, any or every
 * network's), else 503 with each check's detail and each network's state. `?network=` answers for
 * that network alone (a load balancer that routes by network); a network this instance does not
 * serve is not ready here. The query is checked against openapi.yaml before.
 */
export function readinessHandler(probe: ReadinessProbe): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const query = new URLSearchParams(ctx.querystring);
    const other = [...query.keys()].find((key) => key !== 'network');
    if (other !== undefined)
      throw new HttpError(400, 'svc_invalid_query_parameter', `${JSON.stringify(other.slice(0, 100))} is not a parameter of GET /ready.`);
    const given = query.getAll('network');
    if (given.length > 1) throw new HttpError(400, 'svc_invalid_query_parameter', 'network may be given once.');
    const network = given[0];
    // A probe that knows no networks (a test's own) cannot tell them apart: its whole answer serves each.
    const readiness =
      network === undefined || probe.networkNames.length === 0
        ? await probe.evaluate()
        : ((await probe.evaluateNetwork(network)) ?? {
            ready: false,
            checks: {},
            networks: { [network]: { status: 'not_ready' as const } },
          });
    const { ready, checks, networks } = readiness;
    const body: ReadinessResponse = { status: ready ? 'ready' : 'not_ready', checks, ...(networks ? { networks } : {}) };
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
