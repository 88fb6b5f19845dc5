/**
 * A seller built only from the stock x402 pieces: `@x402/core`'s x402ResourceServer and
 * x402HTTPResourceServer, talking to a facilitator through the stock HTTPFacilitatorClient, with
 * the Stellar `exact` server scheme from `@x402/stellar` and the `bazaar` resource-server
 * extension. The only code of ours is the node:http adapter (upstream ships express/hono/next
 * adapters, which are not dependencies here). Test-only: these are devDependencies.
 *
 *   const seller = await startStockSeller({ facilitatorUrl, routes, handlers });
 *   seller.settlements // every settle result the seller received, with decoded extensionResponses
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  HTTPFacilitatorClient,
  x402HTTPResourceServer,
  x402ResourceServer,
  type HTTPAdapter,
  type HTTPRequestContext,
  type HTTPResponseInstructions,
  type RouteConfig,
} from '@x402/core/server';
import type { SchemeNetworkServer } from '@x402/core/types';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { ExactStellarScheme } from '@x402/stellar/exact/server';

/** What a paid route's handler sees and returns (JSON). */
export type SellerHandler = (request: { query: Record<string, string>; body: unknown }) => unknown;

/** One settlement as the seller's resource server received it from the facilitator. */
export interface SellerSettlement {
  route: string;
  success: boolean;
  transaction: string;
  payer?: string;
  errorReason?: string;
  /** The facilitator's EXTENSION-RESPONSES header, decoded by HTTPFacilitatorClient. */
  extensionResponses?: Record<string, unknown>;
}

export interface StockSellerOptions {
  facilitatorUrl: string;
  /** The stock client to use instead of a plain one at facilitatorUrl (e.g. one with a createAuthHeaders hook). */
  facilitatorClient?: HTTPFacilitatorClient;
  /** x402 route table, keyed "METHOD /path" (stock RoutesConfig). */
  routes: Record<string, RouteConfig>;
  /** One handler per key of `routes`. */
  handlers: Record<string, SellerHandler>;
  port?: number;
  /** Called for every verify and settle result (the demo prints them). */
  onVerify?: (route: string, result: { isValid: boolean; invalidReason?: string; payer?: string }) => void;
  onSettle?: (settlement: SellerSettlement) => void;
}

export interface StockSeller {
  url: string;
  settlements: SellerSettlement[];
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024;

class BadRequest extends Error {}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BadRequest(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadRequest('request body is not JSON');
  }
}

/** The stock HTTPAdapter over a node:http request. */
function nodeAdapter(req: IncomingMessage, url: URL, body: unknown): HTTPAdapter {
  const header = (name: string) => {
    const v = req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  const query = Object.fromEntries(url.searchParams);
  return {
    getHeader: header,
    getMethod: () => req.method ?? 'GET',
    getPath: () => url.pathname,
    getUrl: () => url.href,
    getAcceptHeader: () => header('accept') ?? '',
    getUserAgent: () => header('user-agent') ?? '',
    getQueryParams: () => query,
    getQueryParam: (name) => query[name],
    getBody: () => body,
  };
}

function send(res: ServerResponse, instructions: HTTPResponseInstructions): void {
  const body =
    instructions.body === undefined ? '' : typeof instructions.body === 'string' ? instructions.body : JSON.stringify(instructions.body);
  res.writeHead(instructions.status, { 'content-type': 'application/json', ...instructions.headers });
  res.end(body);
}

/**
 * The @x402/stellar 2.9.0 server scheme, given the two fields core 2.27 requires of every scheme
 * server and 2.9.0 predates (docs/INTEROP.md, incompatibility 2): the SDK's default asset
 * transfer method, paying in the `authorization` flow (verify before the handler, settle after),
 * which is exactly what 2.9.0 did implicitly. Nothing else of the scheme is touched.
 */
export function stellarServerSchemeForCore227(): SchemeNetworkServer {
  const flows: SchemeNetworkServer['paymentFlows'] = { default: { default: 'authorization', supported: ['authorization'] } };
  return Object.assign(new ExactStellarScheme(), { defaultAssetTransferMethod: 'default', paymentFlows: flows });
}

export async function startStockSeller(options: StockSellerOptions): Promise<StockSeller> {
  const settlements: SellerSettlement[] = [];
  const facilitator = options.facilitatorClient ?? new HTTPFacilitatorClient({ url: options.facilitatorUrl });
  const resourceServer = new x402ResourceServer(facilitator)
    .register('stellar:*', stellarServerSchemeForCore227())
    .registerExtension(bazaarResourceServerExtension);
  const httpServer = new x402HTTPResourceServer(resourceServer, options.routes);
  await httpServer.initialize(); // reads the facilitator's GET /supported

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    const route = `${req.method} ${url.pathname}`;
    const handler = options.handlers[route];
    if (!handler) return send(res, { status: 404, headers: {}, body: { error: `no route ${route}` } });
    let body: unknown;
    try {
      body = await readJsonBody(req);
    } catch (err) {
      if (err instanceof BadRequest) return send(res, { status: 400, headers: {}, body: { error: err.message } });
      throw err;
    }
    const adapter = nodeAdapter(req, url, body);
    const context: HTTPRequestContext = {
      adapter,
      path: url.pathname,
      method: req.method ?? 'GET',
      paymentHeader: adapter.getHeader('payment-signature') ?? adapter.getHeader('x-payment'),
    };
    const processed = await httpServer.processHTTPRequest(context);
    if (processed.type === 'payment-error') return send(res, processed.response);
    const result = await handler({ query: Object.fromEntries(url.searchParams), body });
    if (processed.type === 'no-payment-required') return send(res, { status: 200, headers: {}, body: result });

    const responseBody = Buffer.from(JSON.stringify(result));
    const settled = await httpServer.processSettlement(
      processed.paymentPayload,
      processed.paymentRequirements,
      processed.declaredExtensions,
      {
        request: context,
        responseBody,
      },
    );
    const settlement: SellerSettlement = {
      route,
      success: settled.success,
      transaction: settled.transaction,
      payer: settled.payer,
      errorReason: settled.success ? undefined : settled.errorReason,
      extensionResponses: settled.extensionResponses,
    };
    settlements.push(settlement);
    options.onSettle?.(settlement);
    if (!settled.success) return send(res, settled.response);
    res.writeHead(200, { 'content-type': 'application/json', ...settled.headers });
    res.end(responseBody);
  };

  if (options.onVerify) {
    const onVerify = options.onVerify;
    // Hooks must return nothing (a returned value is read as a directive).
    resourceServer.onAfterVerify(async (ctx) => {
      onVerify(String(ctx.paymentPayload.resource?.url ?? ''), ctx.result);
    });
    resourceServer.onVerifyFailure(async (ctx) => {
      const reason = (ctx.error as { invalidReason?: string }).invalidReason ?? ctx.error.message;
      onVerify(String(ctx.paymentPayload.resource?.url ?? ''), { isValid: false, invalidReason: reason });
    });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A seller fault is answered, never left hanging.
      if (!res.headersSent) send(res, { status: 500, headers: {}, body: { error: err instanceof Error ? err.message : String(err) } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    settlements,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
