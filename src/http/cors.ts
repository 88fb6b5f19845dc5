/**
 * Cross-origin access for browser pages (openapi.yaml "Browsers on other origins"): the operations
 * marked `x-svc-cors` answer any origin, without credentials, and their paths answer CORS
 * preflights (openapi.yaml `x-svc-cors-preflight`: answered before routing, since a preflight is
 * not an operation of the document, so generated clients have none). POST /mcp alone checks the `Origin` a
 * browser sends against MCP_ALLOWED_ORIGINS when that is set, as the MCP streamable HTTP transport
 * asks of servers against DNS rebinding. Every other operation (/verify and /settle are called by
 * servers) carries no CORS header, so a browser keeps them to their own origin.
 */
import type { Operation } from 'openapi-backend';
import { templateOf, type ApiContract } from './contract.ts';
import { HttpError } from './errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from './middleware.ts';

/** The request headers a cross-origin caller may send (the MCP transport's of both revisions, the request id, a JSON body's type). */
export const CORS_ALLOWED_HEADERS = [
  'Content-Type',
  'Accept',
  'MCP-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Mcp-Session-Id',
  'Last-Event-ID',
  'X-Request-Id',
];
/** The response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'Mcp-Session-Id', 'Allow'];
/** How long a browser may reuse a preflight's answer, seconds. */
export const CORS_MAX_AGE_SECONDS = 600;

/** The operation that checks `Origin` against MCP_ALLOWED_ORIGINS when it is set. */
const ORIGIN_CHECKED_PATH = '/mcp';

/**
 * Sets `Access-Control-Allow-Origin` for a page of `Origin` on `path`: `*`, or on POST /mcp with
 * MCP_ALLOWED_ORIGINS set the origin itself, when listed (403 `svc_origin_not_allowed` otherwise).
 */
function allowOrigin(ctx: SvcContext, path: string, allowedOrigins: readonly string[] | null): void {
  const origin = ctx.get('Origin');
  if (allowedOrigins !== null && path === ORIGIN_CHECKED_PATH && origin !== '') {
    if (!allowedOrigins.includes(origin))
      throw new HttpError(
        403,
        'svc_origin_not_allowed',
        `The Origin ${JSON.stringify(origin.slice(0, 200))} is not in MCP_ALLOWED_ORIGINS; POST /mcp answers pages of the origins listed there.`,
      );
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.vary('Origin');
  } else {
    ctx.set('Access-Control-Allow-Origin', '*');
  }
}

/**
 * The CORS middleware, mounted after the route is matched (so an error answer carries its headers
 * too: the error boundary keeps them). `allowedOrigins`: MCP_ALLOWED_ORIGINS
 * (null: any origin may call POST /mcp).
 */
export function cors(contract: ApiContract, allowedOrigins: readonly string[] | null): SvcMiddleware {
  const marked = new Set(contract.routes.filter((r) => r.cors).map((r) => r.operationId));
  return async (ctx: SvcContext, next: SvcNext) => {
    const { operation } = ctx.state;
    if (!marked.has(operation?.operationId ?? '')) {
      await next();
      return;
    }
    allowOrigin(ctx, ctx.path, allowedOrigins);
    ctx.set('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
    await next();
  };
}

/**
 * Answers a CORS preflight (OPTIONS on a path with an `x-svc-cors` operation) before routing: 204,
 * the path's cross-origin methods and the headers a caller may send. Any other OPTIONS goes on to
 * the router (405 with `Allow`, or 404). The request is labelled `OPTIONS <path>` in the access log
 * and metrics, as an operation would be.
 */
export function preflight(contract: ApiContract, allowedOrigins: readonly string[] | null): SvcMiddleware {
  const byPath = new Map<string, { methods: string; label: Operation }>();
  for (const route of contract.routes.filter((r) => r.cors)) {
    const entry = byPath.get(route.path);
    if (entry) entry.methods += `, ${route.method}`;
    else byPath.set(route.path, { methods: route.method, label: { method: 'options', path: route.path } });
  }
  return async (ctx: SvcContext, next: SvcNext) => {
    const path = ctx.method === 'OPTIONS' ? templateOf(contract, ctx.path) : undefined;
    const entry = path === undefined ? undefined : byPath.get(path);
    if (!entry) {
      await next();
      return;
    }
    ctx.state.operation = entry.label;
    allowOrigin(ctx, ctx.path, allowedOrigins);
    ctx.set('Access-Control-Allow-Methods', entry.methods);
    ctx.set('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
    ctx.set('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
    ctx.status = 204;
  };
}
