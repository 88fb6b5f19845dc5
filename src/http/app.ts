/**
 * The Koa application: parse → validate (openapi-backend, from openapi.yaml) → route (by
 * operationId) → handler → shape. `createApp(deps)` builds it; `listen(app, port)` binds it.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import type { CatalogPort } from '../catalog/types.ts';
import type { ServiceCode } from '../codes.ts';
import type { Config } from '../config.ts';
import {
  apiReferenceDocumentHandler,
  apiReferencePageHandler,
  apiReferenceScriptHandler,
  explorerPageHandler,
  explorerScriptHandler,
  explorerStyleHandler,
} from '../handlers/pages.ts';
import { discoveryQuery, listHandler, searchHandler } from '../handlers/discovery.ts';
import { facilitatorEnvelope, settleHandler, verifyHandler } from '../handlers/payments.ts';
import { settlementHandler } from '../handlers/settlements.ts';
import { validateHandler } from '../handlers/validate.ts';
import { merchantHandler } from '../handlers/merchant.ts';
import { dnsRebindingGuard, mcpHandler, whenJsonBody } from '../handlers/mcp.ts';
import { delistHandler, delistTextHandler, type MessageVerifier } from '../handlers/delist.ts';
import { recheckHandler } from '../handlers/recheck.ts';
import { guardedFetch } from '../net/guarded-fetch.ts';
import { hostSlotsOf } from '../net/host-slots.ts';
import { allowListFromEnv } from '../net/private-addresses.ts';
import type { SettlementJournal } from '../journal/journal.ts';
import { healthHandler, manifestHandler, openApiHandler, readinessHandler, supportedHandler } from '../handlers/service.ts';
import type { Logger } from '../log.ts';
import type { ServiceMetrics } from '../ops/metrics.ts';
import type { ReadinessProbe } from '../ops/readiness.ts';
import type { SchemeRegistry } from '../scheme/registry.ts';
import type { PaymentPriority } from './payment-priority.ts';
import { loadContract, requestViolation, type ApiContract } from './contract.ts';
import type { ConnectionObservers } from './connection-cap.ts';
import { guardConnections, type ConnectionLimits, type RouteEntry } from './connections.ts';
import { cors, preflight } from './cors.ts';
import { HttpError } from './errors.ts';
import { serializeJsonBodies } from './json-bodies.ts';
import { rateLimited } from './rate-limit.ts';
import { clientAddress } from './client-address.ts';
import {
  errorBoundary,
  jsonObjectBody,
  requestContext,
  routeMatcher,
  type SvcContext,
  type SvcMiddleware,
  type SvcNext,
  type SvcState,
} from './middleware.ts';

/** What the HTTP layer serves; built by createService (src/service.ts), every part required. */
export interface AppDeps {
  config: Config;
  registry: SchemeRegistry;
  catalog: CatalogPort;
  logger: Logger;
  metrics: ServiceMetrics;
  readiness: ReadinessProbe;
  /** Read by GET /settlements/{transaction}; null when the service journals nothing. */
  journal: SettlementJournal | null;
  /** Holds discovery while payments keep the main thread busy (payment-priority.ts). */
  priority: PaymentPriority;
  contract?: ApiContract;
  /** Wakes the ownership checker (POST /discovery/recheck made a claim due); absent: the checker's timer takes it. */
  wakeOwnershipChecks?: () => void;
  /** Whether an address signed a message (the chain's SEP-53 check): POST /discovery/delist. */
  verifyMessage: MessageVerifier;
  clock: () => Date;
}

/**
 * Validates one part of the request against the operation in openapi.yaml; a violation is 400
 * with `code`. Payment routes validate the body only (a query string there means nothing and is
 * ignored); discovery routes validate the query (unknown parameters are refused, not ignored).
 */
function openApiValidation(contract: ApiContract, code: ServiceCode, part: 'body' | 'query'): SvcMiddleware {
  return async (ctx: SvcContext, next: SvcNext) => {
    const { operation } = ctx.state;
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
function chain(...steps: SvcMiddleware[]): SvcMiddleware {
  return async (ctx: SvcContext, next: SvcNext) => {
    const run = async (i: number): Promise<void> => {
      const step = steps[i];
      if (step) await step(ctx, () => run(i + 1));
      else await next();
    };
    await run(0);
  };
}

/** The operations whose requests openapi-backend validates (openApiValidation below); the others take no input to check. */
export const VALIDATED_OPERATIONS = [
  'verifyPayment',
  'settlePayment',
  'listDiscoveryResources',
  'searchDiscoveryResources',
  'getMerchantResources',
  'validateDiscoveryListing',
  'callHostedMcp',
  'delistDiscoveryListing',
  'getDelistText',
  'recheckOwnershipClaim',
  'getRecheckText',
  'getReadiness',
];

export function createApp(deps: AppDeps): Koa<SvcState> {
  const { config, logger, registry, catalog, metrics, priority } = deps;
  const contract = deps.contract ?? loadContract();
  // Optional per-client limits (off by default), before anything is read: answered in the route's shape.
  const paymentRate = (route: 'verify' | 'settle', perMinute: number | undefined): SvcMiddleware[] =>
    perMinute
      ? [
          rateLimited({
            perAddressPerMinute: perMinute,
            perAddressVariable: route === 'verify' ? 'VERIFY_RATE_PER_MINUTE' : 'SETTLE_RATE_PER_MINUTE',
            code: 'svc_rate_limited',
            requests: `${route} requests`,
            consequence: route === 'verify' ? 'nothing was verified.' : 'nothing was submitted.',
          }),
        ]
      : [];
  const paymentsSteps = [
    priority.payments(),
    jsonObjectBody(),
    facilitatorEnvelope(),
    openApiValidation(contract, 'svc_malformed_request_body', 'body'),
  ];
  // A malformed query is refused at once; a valid one may wait for payments (payment-priority.ts).
  const discoverySteps = (kind: 'list' | 'search') => [
    discoveryQuery(kind),
    openApiValidation(contract, 'svc_invalid_query_parameter', 'query'),
    priority.discovery(),
  ];
  const delistDeps = {
    catalog,
    verify: deps.verifyMessage,
    clock: deps.clock,
    network: config.network,
    ownership: config.listingOwnership,
  };
  // validate and re-check ask sellers' hosts for strangers: one budget for both.
  const probeRate = rateLimited({
    perAddressPerMinute: config.probe.validatePerAddressPerMinute,
    globalPerMinute: config.probe.validateGlobalPerMinute,
    perAddressVariable: 'VALIDATE_RATE_PER_MINUTE',
    globalVariable: 'VALIDATE_GLOBAL_PER_MINUTE',
    code: 'svc_validate_rate_limited',
    requests: 'validate and re-check requests',
    consequence: 'nothing was requested of the target.',
  });
  const operations: Record<string, SvcMiddleware> = {
    verifyPayment: chain(...paymentRate('verify', config.paymentRates?.verifyPerMinute), ...paymentsSteps, verifyHandler(registry)),
    settlePayment: chain(...paymentRate('settle', config.paymentRates?.settlePerMinute), ...paymentsSteps, settleHandler(registry)),
    getSettlement: settlementHandler(deps.journal),
    getSupported: supportedHandler(registry),
    getFacilitatorManifest: manifestHandler(registry),
    listDiscoveryResources: chain(...discoverySteps('list'), listHandler(catalog)),
    searchDiscoveryResources: chain(...discoverySteps('search'), searchHandler(catalog)),
    getMerchantResources: chain(
      openApiValidation(contract, 'svc_invalid_query_parameter', 'query'),
      priority.discovery(),
      merchantHandler(catalog),
    ),
    // Refused before the body is read when over the rate; the body is checked before anything is requested.
    validateDiscoveryListing: chain(
      probeRate,
      jsonObjectBody(),
      openApiValidation(contract, 'svc_malformed_request_body', 'body'),
      validateHandler({
        registry,
        catalog,
        fetchImpl: guardedFetch(allowListFromEnv()),
        timeoutMs: config.probe.timeoutMs,
        hostSlots: hostSlotsOf(catalog, config.probe.hostIntervalMs),
      }),
    ),
    // Refused before the body is read when over the rate; a JSON body is checked against the
    // JSON-RPC message schema and a malformed one refused at once; a valid request may wait for
    // payments, like the other discovery routes; the MCP transport checks Accept and Content-Type
    // (handlers/mcp.ts).
    callHostedMcp: chain(
      dnsRebindingGuard(config.mcpAllowedHosts, config.mcpAllowedOrigins),
      rateLimited({
        perAddressPerMinute: config.mcpRatePerMinute,
        perAddressVariable: 'MCP_RATE_PER_MINUTE',
        code: 'svc_rate_limited',
        requests: 'POST /mcp requests',
        consequence: 'the request was not read.',
      }),
      whenJsonBody(chain(jsonObjectBody(), openApiValidation(contract, 'svc_malformed_request_body', 'body'))),
      priority.discovery(),
      mcpHandler(catalog, config.network),
    ),
    // Refused before the body is read when over the rate; the signature is checked before the catalog is asked.
    delistDiscoveryListing: chain(
      rateLimited({
        perAddressPerMinute: config.delistRatePerMinute,
        perAddressVariable: 'DELIST_RATE_PER_MINUTE',
        code: 'svc_delist_rate_limited',
        requests: 'delist requests',
        consequence: 'nothing was changed.',
      }),
      jsonObjectBody(),
      openApiValidation(contract, 'svc_malformed_request_body', 'body'),
      delistHandler(delistDeps),
    ),
    // Pure text from the catalog's identifier (read once) and svc's clock: no rate limit.
    getDelistText: chain(openApiValidation(contract, 'svc_invalid_query_parameter', 'query'), delistTextHandler(delistDeps)),
    // Rate-limited with validate; the signature is checked before the catalog is asked.
    recheckOwnershipClaim: chain(
      probeRate,
      jsonObjectBody(),
      openApiValidation(contract, 'svc_malformed_request_body', 'body'),
      recheckHandler({
        ...delistDeps,
        wakeChecks: () => deps.wakeOwnershipChecks?.(),
        waitMs: config.probe.timeoutMs + 1_000,
      }),
    ),
    getRecheckText: chain(openApiValidation(contract, 'svc_invalid_query_parameter', 'query'), delistTextHandler(delistDeps, 'recheck')),
    getHealth: healthHandler(config),
    getReadiness: chain(openApiValidation(contract, 'svc_invalid_query_parameter', 'query'), readinessHandler(deps.readiness)),
    getMetrics: metrics.handler(),
    getOpenApiDocument: openApiHandler(contract.yaml),
    getApiReference: apiReferencePageHandler(),
    getApiReferenceDocument: apiReferenceDocumentHandler(contract.yaml, catalog),
    getApiReferenceScript: apiReferenceScriptHandler(),
    getExplorer: explorerPageHandler(registry.knownAssets()),
    getExplorerScript: explorerScriptHandler(),
    getExplorerStyle: explorerStyleHandler(),
  };
  const unhandled = contract.routes.filter((r) => !operations[r.operationId]).map((r) => r.operationId);
  const undocumented = Object.keys(operations).filter((id) => !contract.routes.some((r) => r.operationId === id));
  if (unhandled.length || undocumented.length) {
    throw new Error(
      `openapi.yaml and the handler table disagree: unhandled [${unhandled.join(', ')}], undocumented [${undocumented.join(', ')}]`,
    );
  }

  const app = new Koa<SvcState>();
  // Errors are answered by errorBoundary; Koa's default handler would print stacks to stderr.
  app.silent = true;
  serializeJsonBodies(app);
  app.use(clientAddress(config.trustedProxies ?? { ranges: [], header: 'x-forwarded-for' }));
  app.use(metrics.middleware());
  app.use(requestContext(logger));
  app.use(errorBoundary());
  // CORS preflights are not operations of openapi.yaml: answered before routing (src/http/cors.ts).
  app.use(preflight(contract, config.mcpAllowedOrigins));
  app.use(routeMatcher(contract));
  app.use(cors(contract, config.mcpAllowedOrigins));
  app.use(async (ctx: SvcContext, next: SvcNext) => {
    const operationId = ctx.state.operation?.operationId ?? '';
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

/**
 * Binds the app (port 0 = ephemeral) and resolves once it listens. `routes` (the contract's) let a
 * request the HTTP parser refuses be answered in its route's shape (connections.ts).
 */
export function listen(
  app: Koa<SvcState>,
  port: number,
  host = '127.0.0.1',
  limits?: ConnectionLimits,
  routes: readonly RouteEntry[] = [],
  observers: ConnectionObservers = {},
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    guardConnections(server, limits, routes, observers);
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
            // Already closed by the drain (src/lifecycle.ts): nothing left to wait for.
            if (!server.listening) return done();
            server.close((err) => (err ? fail(err) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
