/**
 * HTTP seller middleware over plain node:http, speaking the x402 v2 headers: a request without
 * PAYMENT-SIGNATURE gets 402 with PAYMENT-REQUIRED (base64 PaymentRequired, also the JSON body);
 * a retry with PAYMENT-SIGNATURE is verified through the facilitator, served, settled, and
 * answered with PAYMENT-RESPONSE (base64 SettleResponse). A refused or unsettled payment is a 402
 * whose PaymentRequired `error` is the facilitator's code; the content is never delivered then.
 * A handler answer of 400 or more is returned as is and nothing is settled.
 *
 *   const seller = await startPaidHttpServer({ facilitator, routes: [{ method: 'GET', path: '/weather',
 *     accepts, description: 'Weather by city', inputSchema, example: { city: 'Lisbon' },
 *     handle: ({ query }) => ({ status: 200, body: { city: query.get('city'), temperature: 21 } }) }] });
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PaymentPayload, PaymentRequirements } from '../scheme/types.ts';
import type { FacilitatorClient } from './facilitator.ts';
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
  httpBazaar,
  isBodyMethod,
  paymentRequired,
  settleOffer,
  verifyOffer,
  type HttpMethod,
  type JsonSchema,
  type PaidOffer,
} from './seller.ts';

export interface HttpAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface PaidHttpRoute {
  method: HttpMethod;
  path: string;
  /** Payment terms; an empty list makes the route free. */
  accepts: PaymentRequirements[];
  description?: string;
  mimeType?: string;
  serviceName?: string;
  tags?: string[];
  /** JSON Schema of the query parameters (GET/HEAD/DELETE) or the JSON body (POST/PUT/PATCH). */
  inputSchema?: JsonSchema;
  /** Example input declared in the bazaar extension. */
  example?: Record<string, unknown>;
  handle(request: { query: URLSearchParams; body: unknown }): HttpAnswer | Promise<HttpAnswer>;
}

export const MAX_SELLER_BODY_BYTES = 64 * 1024;

function send(res: ServerResponse, answer: HttpAnswer): void {
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? null);
  res.writeHead(answer.status, {
    'content-type': typeof answer.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    ...answer.headers,
  });
  res.end(text);
}

async function readJsonBody(req: IncomingMessage): Promise<{ ok: true; body: unknown } | { ok: false; reason: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_SELLER_BODY_BYTES) return { ok: false, reason: `The body is larger than ${MAX_SELLER_BODY_BYTES} bytes.` };
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { ok: true, body: undefined };
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch {
    return { ok: false, reason: 'The body is not valid JSON.' };
  }
}

/** The offer (terms, resource info, bazaar extension) a route makes at a public URL. */
export function routeOffer(route: PaidHttpRoute, facilitator: FacilitatorClient, url: string): PaidOffer {
  return {
    facilitator,
    accepts: route.accepts,
    resource: {
      url,
      ...(route.description ? { description: route.description } : {}),
      mimeType: route.mimeType ?? 'application/json',
      ...(route.serviceName ? { serviceName: route.serviceName } : {}),
      ...(route.tags ? { tags: route.tags } : {}),
    },
    bazaar: httpBazaar({
      method: route.method,
      inputSchema: route.inputSchema ?? { type: 'object' },
      ...(route.example ? { example: route.example } : {}),
    }),
  };
}

/** One request through a paid route. */
export async function servePaidRoute(route: PaidHttpRoute, offer: PaidOffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://seller.invalid').searchParams;
  const read = isBodyMethod(route.method) ? await readJsonBody(req) : { ok: true as const, body: undefined };
  if (!read.ok) return send(res, { status: 400, body: { error: read.reason } });
  const request = { query, body: read.body };
  if (offer.accepts.length === 0) return send(res, await route.handle(request));

  const refuse = (error?: string, extraHeaders: Record<string, string> = {}) => {
    const required = paymentRequired(offer, error);
    send(res, { status: 402, body: required, headers: { [PAYMENT_REQUIRED_HEADER]: encodeX402Header(required), ...extraHeaders } });
  };
  const signature = req.headers[PAYMENT_SIGNATURE_HEADER.toLowerCase()];
  if (signature === undefined) return refuse();
  const payload = decodeX402Header(Array.isArray(signature) ? signature[0] : signature) as PaymentPayload | undefined;
  if (!payload) return refuse('svc_malformed_request_body');

  const verified = await verifyOffer(offer, payload);
  if (!verified.ok) return refuse(verified.error);
  let answer: HttpAnswer;
  try {
    answer = await route.handle(request);
  } catch (err) {
    return send(res, { status: 500, body: { error: `The resource failed: ${err instanceof Error ? err.message : String(err)}` } });
  }
  if (answer.status >= 400) return send(res, answer); // nothing served, nothing settled
  const settled = await settleOffer(offer, payload, verified.requirements);
  if (!settled.ok) return refuse(settled.error, settled.receipt ? { [PAYMENT_RESPONSE_HEADER]: encodeX402Header(settled.receipt) } : {});
  send(res, { ...answer, headers: { ...answer.headers, [PAYMENT_RESPONSE_HEADER]: encodeX402Header(settled.receipt) } });
}

export interface PaidHttpServer {
  /** http://host:port */
  url: string;
  /** The public URL of a route path. */
  urlOf(path: string): string;
  close(): Promise<void>;
}

/** A node:http server with the given paid (and free) routes; unknown routes are 404. */
export async function startPaidHttpServer(options: {
  facilitator: FacilitatorClient;
  routes: PaidHttpRoute[];
  host?: string;
  port?: number;
}): Promise<PaidHttpServer> {
  const host = options.host ?? '127.0.0.1';
  let base = '';
  const offers = new Map<PaidHttpRoute, PaidOffer>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://seller.invalid').pathname;
    const route = options.routes.find((r) => r.path === path && r.method === req.method);
    if (!route) return send(res, { status: 404, body: { error: `No route ${req.method} ${path}.` } });
    let offer = offers.get(route);
    if (!offer) offers.set(route, (offer = routeOffer(route, options.facilitator, base + route.path)));
    servePaidRoute(route, offer, req, res).catch((err) => {
      if (!res.headersSent) send(res, { status: 500, body: { error: err instanceof Error ? err.message : String(err) } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  base = `http://${host}:${port}`;
  return {
    url: base,
    urlOf: (path) => base + path,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
