/**
 * POST /mcp: the hosted discovery tool server (src/mcp/hosted.ts, docs/MCP.md "Hosted discovery")
 * over stateless streamable HTTP, to clients of MCP 2026-07-28 and of 2025-11-25 (docs/MCP.md
 * "Protocol revisions"). Each request gets its own server (no session id, JSON answers instead of
 * an SSE stream: the server sends nothing but the answers). search_resources reads the catalog
 * in-process with the query parser of GET /discovery/search, so both find the same listings in the
 * same order.
 *
 * Before this handler the route has checked `Host` and `Origin` against DNS rebinding
 * (dnsRebindingGuard below), checked the rate, read and validated a JSON body against
 * openapi.yaml, and waited for room beside payments (app.ts); the transport then checks `Accept`
 * (406; one that takes JSON is taken as both of its types) and `Content-Type` (415) and answers in JSON-RPC.
 */
import type { Server as NetServer, Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Server } from '@modelcontextprotocol/server';
import type { CatalogPort, Requester } from '../catalog/types.ts';
import { CatalogQueryError } from '../catalog/types.ts';
import type { DiscoverySearchResponse, FacilitatorResult, SearchQuery } from '../client/facilitator.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from '../http/middleware.ts';
import type { SearchPort } from '../mcp/search.ts';
import { parseDiscoveryQuery, requesterOf, searchCatalog } from './discovery.ts';

/** The request headers the transport reads; no other header of the client reaches it. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name'] as const;

/** What the transport requires a client to accept: svc answers only the first, never a stream. */
const BOTH_MEDIA_TYPES = 'application/json, text/event-stream';

/**
 * Whether the client takes svc's answer, always `application/json` (RFC 9110): no `Accept`, or one
 * with a range matching it (`application/json`, `application/*`, `*\/*`) at a weight above 0. The
 * transport would refuse (406) every Accept without both of its types, as MCP clients send them;
 * generic HTTP clients, contract fuzzers and the reference page's Test Request send these.
 */
export function acceptsJson(accept: string): boolean {
  if (accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const weight = params.find((p) => p.replace(/\s/g, '').startsWith('q='));
    return ['application/json', 'application/*', '*/*'].includes(type) && (weight === undefined || Number(weight.split('=')[1]) > 0);
  });
}

/** Whether the body is JSON by its media type (parameters aside), the transport's own test. */
export function isJsonMediaType(contentType: string): boolean {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase() === 'application/json';
}

/**
 * GET /discovery/search answered in-process: the query is parsed and checked by the route's own
 * parser (same refusals, same codes) and the same catalog call gives the same page.
 */
export function catalogSearchPort(catalog: CatalogPort, requester: Requester): SearchPort {
  return {
    async search(query: SearchQuery): Promise<FacilitatorResult<DiscoverySearchResponse>> {
      const pairs = Object.entries(query).flatMap(([k, v]): [string, string][] => (v === undefined ? [] : [[k, String(v)]]));
      try {
        const parsed = parseDiscoveryQuery(
          new URLSearchParams(pairs).toString(),
          'search',
          pairs.map(([k]) => k),
        );
        return { ok: true, data: await searchCatalog(catalog, parsed, requester) };
      } catch (err) {
        if (err instanceof HttpError || err instanceof CatalogQueryError) {
          return { ok: false, status: err.status, code: err.code, reason: err.message };
        }
        throw err;
      }
    },
  };
}

/** Runs `json` (read and validate the body) when the body is JSON; otherwise the transport answers 415 or 406. */
export function whenJsonBody(json: SvcMiddleware): SvcMiddleware {
  return async (ctx: SvcContext, next: SvcNext) => {
    if (isJsonMediaType(ctx.get('Content-Type'))) await json(ctx, next);
    else await next();
  };
}

/**
 * The MCP server SDK, loaded on the first /mcp request rather than at start-up: nothing before
 * /ready needs it (docs/OPERATIONS.md "Startup").
 */
let mcpServerModules: Promise<[typeof import('../mcp/hosted.ts'), ServerSdk]> | undefined;

/**
 * The SDK's HTTP entry serves a 2026-07-28 request (its `_meta` names the revision) by a fresh
 * server per request; any other (an `initialize`, a 2025-11-25 client's request) goes to the SDK's
 * streamable HTTP transport, stateless, also with a fresh server. Both answer one JSON body: the
 * entry's own 2025 path would answer in an event stream.
 */
type ServerSdk = typeof import('@modelcontextprotocol/server');
type McpHttpHandler = ReturnType<ServerSdk['createMcpHandler']>;

async function legacyAnswer(sdk: ServerSdk, server: Server, request: Request, parsedBody: unknown): Promise<Response> {
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  } finally {
    await server.close();
  }
}

/** The revision a request without the 2026-07-28 envelope is answered in. */
const LEGACY_REVISION = '2025-11-25';
/** The revision the SDK's modern entry serves (a request naming it goes there only with its envelope). */
const MODERN_REVISION = '2026-07-28';

/**
 * Whether a JSON-RPC message (or batch) claims MCP 2026-07-28 on every request: its `params._meta` envelope names the
 * protocol version (`claimKey`, the SDK's PROTOCOL_VERSION_META_KEY), as the SDK's own classification asks. A `_meta`
 * without that key (a progress token alone) is no claim: such a request is a 2025-11-25 one.
 */
function carriesEnvelope(body: unknown, claimKey: string): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.every((m) => {
    if (typeof m !== 'object' || m === null || !('method' in m)) return true; // responses and notifications' shapes aside
    const params = (m as { params?: unknown }).params;
    const meta = typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined;
    return typeof meta === 'object' && meta !== null && claimKey in meta;
  });
}

export function mcpHandler(catalog: CatalogPort, network: string): SvcMiddleware {
  // The factory is called with the Request the entry serves; its catalog port carries the caller.
  const ports = new WeakMap<Request, SearchPort>();
  let modern: McpHttpHandler | undefined;
  return async (ctx: SvcContext) => {
    const [{ createHostedDiscoveryServer }, sdk] = await (mcpServerModules ??= Promise.all([
      import('../mcp/hosted.ts'),
      import('@modelcontextprotocol/server'),
    ]));
    modern ??= sdk.createMcpHandler(({ requestInfo }) => createHostedDiscoveryServer(ports.get(requestInfo!)!, network), {
      // No responseMode 'json' (it warns on stderr): 'auto' answers in JSON, as nothing precedes a result.
      legacy: 'reject',
    });
    const headers = new Headers();
    for (const name of TRANSPORT_HEADERS) {
      const value = ctx.get(name);
      if (value !== '') headers.set(name, value);
    }
    if (acceptsJson(ctx.get('accept'))) headers.set('accept', BOTH_MEDIA_TYPES);
    // The body was read (and checked) only when it is JSON; otherwise the SDK refuses the request
    // (415) before reading one.
    const parsedBody: unknown = isJsonMediaType(ctx.get('Content-Type')) ? ctx.request.body : undefined;
    const request = new Request(new URL(ctx.originalUrl, 'http://svc.invalid'), { method: 'POST', headers });
    const search = catalogSearchPort(catalog, requesterOf(ctx));
    let response: Response;
    const claimsModern = parsedBody !== undefined && carriesEnvelope(parsedBody, sdk.PROTOCOL_VERSION_META_KEY);
    if (parsedBody !== undefined && !(await sdk.isLegacyRequest(request, parsedBody)) && claimsModern) {
      ports.set(request, search);
      response = await modern.fetch(request, { parsedBody });
    } else {
      // A message that names 2026-07-28 in its header but is not a 2026-07-28 request (no `_meta` envelope, or a JSON-RPC
      // response) is answered as the 2025-11-25 message its body is, not refused: every message openapi.yaml's
      // JsonRpcMessage admits gets an answer.
      if (parsedBody !== undefined && (!claimsModern || headers.get('mcp-protocol-version') === MODERN_REVISION))
        headers.set('mcp-protocol-version', LEGACY_REVISION);
      response = await legacyAnswer(sdk, createHostedDiscoveryServer(search, network), new Request(request, { headers }), parsedBody);
    }
    const text = await response.text();
    if (text === '') {
      // 202 for notifications and responses: no body, no Content-Type (Koa would answer 204 or a text body).
      ctx.body = null;
      ctx.status = response.status;
    } else {
      ctx.status = response.status;
      ctx.type = response.headers.get('content-type') ?? 'application/json';
      ctx.body = text;
    }
  };
}

/** Whether the server that accepted this connection listens on a loopback address only. */
function boundToLoopback(socket: Socket): boolean {
  // `socket.server` is the listening server (its address is what svc was bound to).
  const address = (socket as Socket & { server?: NetServer }).server?.address();
  const host = address && typeof address === 'object' ? address.address : socket.localAddress;
  return typeof host === 'string' && ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}

/**
 * POST /mcp's guard against DNS rebinding (docs/MCP.md "DNS rebinding"): a page on another site
 * whose name resolves to svc's loopback address reaches it with a `Host` (and `Origin`) naming that
 * site. When svc listens on loopback, or MCP_ALLOWED_HOSTS is set, the `Host` must name a hostname
 * allowed (MCP_ALLOWED_HOSTS, else localhost, 127.0.0.1 and [::1]): else 403 svc_host_not_allowed.
 * A browser's `Origin` must then name one of those hostnames too (403 svc_origin_not_allowed),
 * unless MCP_ALLOWED_ORIGINS lists the origins itself (src/http/cors.ts checks those).
 */
export function dnsRebindingGuard(allowedHosts: readonly string[] | null, allowedOrigins: readonly string[] | null): SvcMiddleware {
  return async (ctx: SvcContext, next: SvcNext) => {
    if (allowedHosts === null && !boundToLoopback(ctx.req.socket)) {
      await next();
      return;
    }
    const { localhostAllowedHostnames, validateHostHeader, validateOriginHeader } = await import('@modelcontextprotocol/server');
    const hostnames = allowedHosts ? [...allowedHosts] : localhostAllowedHostnames();
    const host = validateHostHeader(ctx.get('host'), hostnames);
    if (!host.ok)
      throw new HttpError(
        403,
        'svc_host_not_allowed',
        `The Host ${JSON.stringify(ctx.get('host').slice(0, 200))} is not ${allowedHosts ? 'in MCP_ALLOWED_HOSTS' : 'a loopback name (svc listens on loopback)'}; POST /mcp answers requests for ${hostnames.join(', ')} only (DNS-rebinding protection, docs/MCP.md).`,
      );
    if (allowedOrigins === null && !validateOriginHeader(ctx.get('origin'), hostnames).ok)
      throw new HttpError(
        403,
        'svc_origin_not_allowed',
        `The Origin ${JSON.stringify(ctx.get('origin').slice(0, 200))} is not a page of ${hostnames.join(', ')}; set MCP_ALLOWED_ORIGINS to let pages of other origins call POST /mcp (docs/MCP.md).`,
      );
    await next();
  };
}
