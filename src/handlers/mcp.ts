/**
 * POST /mcp: the hosted discovery tool server (src/mcp/hosted.ts, docs/MCP.md "Hosted discovery")
 * over stateless streamable HTTP. Each request gets its own server and transport (the SDK's web
 * standard transport, no session id, JSON answers instead of an SSE stream: the server sends
 * nothing but the answers). search_resources reads the catalog in-process with the query parser of
 * GET /discovery/search, so both find the same listings in the same order.
 *
 * Before this handler the route has checked the rate, read and validated a JSON body against
 * openapi.yaml, and waited for room beside payments (app.ts); the transport then checks `Accept`
 * (406; an absent one or `*\/*` is taken as both of its types) and `Content-Type` (415) and answers in JSON-RPC.
 */
import type { CatalogPort, Requester } from '../catalog/types.ts';
import { CatalogQueryError } from '../catalog/types.ts';
import type { DiscoverySearchResponse, FacilitatorResult, SearchQuery } from '../client/facilitator.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from '../http/middleware.ts';
import type { SearchPort } from '../mcp/search.ts';
import { parseDiscoveryQuery, requesterOf, searchCatalog } from './discovery.ts';

/** The request headers the transport reads; no other header of the client reaches it. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

/** What the transport requires a client to accept: svc answers only the first, never a stream. */
const BOTH_MEDIA_TYPES = 'application/json, text/event-stream';

/**
 * No `Accept`, or only `*\/*`: the client takes any media type (RFC 9110), so also svc's JSON
 * answer. The transport would refuse it (406), as it refuses an Accept that names types without
 * both of its own; generic HTTP clients and contract fuzzers send these, MCP clients never do.
 */
export function acceptsAnything(accept: string): boolean {
  return accept.split(',').every((range) => ['', '*/*'].includes((range.split(';')[0] ?? '').trim()));
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
let mcpServerModules:
  Promise<[typeof import('../mcp/hosted.ts'), typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]> | undefined;

export function mcpHandler(catalog: CatalogPort, network: string): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const [{ createHostedDiscoveryServer }, { WebStandardStreamableHTTPServerTransport }] = await (mcpServerModules ??= Promise.all([
      import('../mcp/hosted.ts'),
      import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    ]));
    const server = createHostedDiscoveryServer(catalogSearchPort(catalog, requesterOf(ctx)), network);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const headers = new Headers();
      for (const name of TRANSPORT_HEADERS) {
        const value = ctx.get(name);
        if (value !== '') headers.set(name, value);
      }
      if (acceptsAnything(ctx.get('accept'))) headers.set('accept', BOTH_MEDIA_TYPES);
      const request = new Request(new URL(ctx.originalUrl, 'http://svc.invalid'), { method: 'POST', headers });
      // The body was read (and checked) only when it is JSON; otherwise the transport refuses the request before reading one.
      const parsed = isJsonMediaType(ctx.get('Content-Type')) ? { parsedBody: ctx.request.body } : undefined;
      const response = await transport.handleRequest(request, parsed);
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
    } finally {
      await server.close();
    }
  };
}
