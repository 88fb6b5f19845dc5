/**
 * The Koa application: parse → validate (openapi-backend, from openapi.yaml) → route (by
 * operationId) → handler → shape. `createApp(deps)` builds it; `listen(app, port)` binds it.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa, { type Context, type Middleware, type Next } from 'koa';
import type { CatalogPort } from '../catalog/types.ts';
import type { ServiceCode } from '../codes.ts';
import type { Config } from '../config.ts';
import { discoveryQuery, listHandler, searchHandler } from '../handlers/discovery.ts';
import { facilitatorEnvelope, settleHandler, verifyHandler } from '../handlers/payments.ts';
import { settlementHandler } from '../handlers/settlements.ts';
import type { SettlementJournal } from '../journal/journal.ts';
import { healthHandler, openApiHandler, readinessHandler, supportedHandler } from '../handlers/service.ts';
import type { Logger } from '../log.ts';
import type { PaymentScheme } from '../scheme/types.ts';
import { instrumentCatalog, instrumentScheme, ServiceMetrics, type PoolGauge } from '../ops/metrics.ts';
import type { ReadinessProbe } from '../ops/readiness.ts';
import { loadContract, requestViolation, type ApiContract } from './contract.ts';
import { guardConnections, type ConnectionLimits } from './connections.ts';
import { HttpError } from './errors.ts';
import { errorBoundary, jsonObjectBody, requestContext, routeMatcher, type SvcState } from './middleware.ts';

export interface AppDeps {
  config: Config;
  scheme?: PaymentScheme;
  catalog?: CatalogPort;
  logger: Logger;
  journal?: SettlementJournal;
  /** Counted at the scheme, catalog and request level; a fresh registry when absent. */
  metrics?: ServiceMetrics;
  /** GET /ready; without one the instance reports ready with no checks. */
  readiness?: ReadinessProbe;
}

/**
 * Validates one part of the request against the operation in openapi.yaml; a violation is 400
 * with `code`. Payment routes validate the body only (a query string there means nothing and is
 * ignored); discovery routes validate the query (unknown parameters are refused, not ignored).
 */
function openApiValidation(contract: ApiContract, code: ServiceCode, part: 'body' | 'query'): Middleware {
  return async (ctx: Context, next: Next) => {
    const { operation } = ctx.state as SvcState;
    if (!operation) throw new Error('openApiValidation mounted before routeMatcher');
    const violation = requestViolation(contract, operation, {
      method: ctx.method,
      path: ctx.path,
      query: part === 'query' ? ctx.querystring : '',
      headers: ctx.headers,
      body: part === 'body' ? ctx.request.body : undefined,
    });
    if (violation) throw new HttpError(400, code, `The request does not match the API: ${violation}.`);
    await next();
  };
}

/** Runs middleware in order (a tiny koa-compose for per-operation chains). */
function chain(...steps: Middleware[]): Middleware {
  return async (ctx: Context, next: Next) => {
    const run = async (i: number): Promise<void> => {
      const step = steps[i];
      if (step) await step(ctx, () => run(i + 1));
      else await next();
    };
    await run(0);
  };
}

export function createApp(deps: AppDeps, contract: ApiContract = loadContract()): Koa {
  const { config, logger } = deps;
  const metrics = deps.metrics ?? new ServiceMetrics();
  const scheme = deps.scheme && instrumentScheme(deps.scheme, metrics);
  const catalog = deps.catalog && instrumentCatalog(deps.catalog, metrics);
  const pool = (deps.scheme as { pool?: PoolGauge } | undefined)?.pool;
  if (pool) metrics.watchPool(pool);
  const { journal } = deps;
  const paymentsSteps = [jsonObjectBody(), facilitatorEnvelope(), openApiValidation(contract, 'svc_malformed_request_body', 'body')];
  const operations: Record<string, Middleware> = {
    verifyPayment: chain(...paymentsSteps, verifyHandler({ scheme, catalog })),
    settlePayment: chain(...paymentsSteps, settleHandler({ scheme, catalog, journal })),
    getSettlement: settlementHandler(journal),
    getSupported: supportedHandler(config, scheme),
    listDiscoveryResources: chain(discoveryQuery('list'), openApiValidation(contract, 'svc_invalid_query_parameter', 'query'), listHandler(catalog)),
    searchDiscoveryResources: chain(discoveryQuery('search'), openApiValidation(contract, 'svc_invalid_query_parameter', 'query'), searchHandler(catalog)),
    getHealth: healthHandler(config),
    getReadiness: readinessHandler(deps.readiness),
    getMetrics: metrics.handler(),
    getOpenApiDocument: openApiHandler(contract.yaml),
  };
  const unhandled = contract.routes.filter((r) => !operations[r.operationId]).map((r) => r.operationId);
  const undocumented = Object.keys(operations).filter((id) => !contract.routes.some((r) => r.operationId === id));
  if (unhandled.length || undocumented.length) {
    throw new Error(`openapi.yaml and the handler table disagree: unhandled [${unhandled}], undocumented [${undocumented}]`);
  }

  const app = new Koa();
  // Errors are answered by errorBoundary; Koa's default handler would print stacks to stderr.
  app.silent = true;
  app.use(metrics.middleware());
  app.use(requestContext(logger));
  app.use(errorBoundary());
  app.use(routeMatcher(contract));
  app.use(async (ctx: Context, next: Next) => {
    const operationId = (ctx.state as SvcState).operation?.operationId ?? '';
    const handle = operations[operationId];
    if (!handle) throw new Error(`no handler for operation ${operationId}`);
    await handle(ctx, next);
  });
  return app;
}

export interface RunningServer {
  server: Server;
  /** e.g. http://127.0.0.1:4021 */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Binds the app (port 0 = ephemeral) and resolves once it listens. */
export function listen(app: Koa, port: number, host = '127.0.0.1', limits?: ConnectionLimits): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    guardConnections(server, limits);
    server.once('error', reject);
    server.once('listening', () => {
      const address = server.address() as AddressInfo;
      const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({
        server,
        url: `http://${urlHost}:${address.port}`,
        port: address.port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((err) => (err ? fail(err) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
