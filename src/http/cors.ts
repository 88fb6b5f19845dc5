/**
 * Cross-origin access for browser pages (openapi.yaml "Browsers on other origins"): the operations
 * marked `x-svc-cors` answer any origin, without credentials, and their paths answer CORS
 * preflights (the OPTIONS operations of openapi.yaml). POST /mcp alone checks the `Origin` a
 * browser sends against MCP_ALLOWED_ORIGINS when that is set, as the MCP streamable HTTP transport
 * asks of servers against DNS rebinding. Every other operation (/verify and /settle are called by
 * servers) carries no CORS header, so a browser keeps them to their own origin.
 */
import type { ApiContract } from './contract.ts';
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
    const origin = ctx.get('Origin');
    if (allowedOrigins !== null && ctx.path === ORIGIN_CHECKED_PATH && origin !== '') {
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
    ctx.set('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
    await next();
  };
}

/** The answer to a CORS preflight: 204, the path's cross-origin methods and the headers a caller may send. */
export function preflightHandler(contract: ApiContract): SvcMiddleware {
  return (ctx: SvcContext) => {
    // The preflight's own operation is matched, so its path is the document's path of the route asked about.
    const methods = contract.routes.filter((r) => r.cors && r.path === ctx.state.operation?.path && r.method !== 'OPTIONS');
    ctx.set('Access-Control-Allow-Methods', methods.map((r) => r.method).join(', '));
    ctx.set('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
    ctx.set('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
    ctx.status = 204;
    return Promise.resolve();
  };
}
