/**
 * The request pipeline, one small middleware per concern:
 * requestContext → errorBoundary → routeMatcher → jsonBody (payment routes) → handler.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Middleware, Next, ParameterizedContext } from 'koa';
import bodyParser from 'koa-bodyparser';
import type { Operation } from 'openapi-backend';
import { defaultMessage } from '../codes.ts';
import type { DiscoveryFilters } from '../filters.ts';
import type { Logger } from '../log.ts';
import type { PaymentEnvelope } from '../scheme/registry.ts';
import { matchOperation, methodsForPath, mountedRoutes, type ApiContract } from './contract.ts';
import { BODY_LIMIT_BYTES, BODY_LIMIT_MESSAGE, errorBody, HttpError, shapeOf } from './errors.ts';

/** A discovery request's parameters, parsed from its query string (handlers/discovery.ts). */
export interface DiscoveryQuery {
  filters: DiscoveryFilters;
  limit: number;
  offset: number;
  query?: string;
  cursor?: string;
}

/** What the pipeline stores on `ctx.state`. */
export interface SvcState {
  requestId: string;
  /** Who the request is from: the peer, or the client a trusted proxy names (client-address.ts). */
  client: string;
  log: Logger;
  operation?: Operation;
  /** The CAIP-2 network of the request, once known (echoed in settle errors). */
  network?: string;
  /** /verify and /settle: the checked envelope (facilitatorEnvelope). */
  envelope?: PaymentEnvelope;
  /** Discovery routes: the parsed query (discoveryQuery). */
  discovery?: DiscoveryQuery;
}

/** The Koa context and middleware of this service: `ctx.state` is typed, never cast. */
export type SvcContext = ParameterizedContext<SvcState>;
export type SvcMiddleware = Middleware<SvcState>;
export type SvcNext = Next;

/** An incoming X-Request-Id svc keeps (openapi.yaml, XRequestId); anything else gets a UUID. */
export const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id (incoming if sane, else a UUID), a child logger, and one access line per request. */
export function requestContext(logger: Logger): SvcMiddleware {
  return async (ctx: SvcContext, next: Next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const state = ctx.state;
    state.requestId = requestId;
    state.log = logger.child({ reqId: requestId });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      state.log.info(
        {
          method: ctx.method,
          client: state.client,
          route: state.operation ? `${ctx.method} ${state.operation.path}` : 'unknown',
          operationId: state.operation?.operationId,
          status: ctx.status,
          durationMs: Math.round(durationMs * 100) / 100,
        },
        'request',
      );
    }
  };
}

/** Turns anything thrown below into a response in the route's shape; never leaks a stack. */
export function errorBoundary(): SvcMiddleware {
  return async (ctx: SvcContext, next: Next) => {
    const state = ctx.state;
    try {
      await next();
    } catch (err) {
      const shape = shapeOf(state.operation?.operationId);
      if (err instanceof HttpError) {
        if (err.status >= 500) state.log.error({ code: err.code, reason: err.message }, 'service fault');
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = errorBody(shape, err.code, err.message, state.network);
        return;
      }
      state.log.error({ err }, 'unhandled fault');
      ctx.status = 500;
      ctx.body = errorBody(shape, 'svc_internal_error', defaultMessage('svc_internal_error'), state.network);
    }
  };
}

/**
 * Finds the operation by method + path. A known path with a method it does not accept is 405
 * with `Allow` (RFC 9110 §15.5.6); an unknown path is 404. Both carry `svc_unknown_route`.
 */
export function routeMatcher(contract: ApiContract): SvcMiddleware {
  const mounted = mountedRoutes(contract).join(', ');
  return async (ctx: SvcContext, next: Next) => {
    await contract.ready;
    const operation = matchOperation(contract, ctx.method, ctx.path);
    if (!operation) {
      const accepted = methodsForPath(contract, ctx.path);
      if (accepted.length) {
        const allow = accepted.join(', ');
        throw new HttpError(405, 'svc_unknown_route', `${ctx.path} does not accept ${ctx.method}; it accepts ${allow}.`, { Allow: allow });
      }
      throw new HttpError(404, 'svc_unknown_route', `No route ${ctx.method} ${ctx.path}. Mounted routes: ${mounted}.`);
    }
    ctx.state.operation = operation;
    await next();
  };
}

/** The error @hapi/bourne (inside co-body) throws for a "__proto__" key. */
const FORBIDDEN_PROTOTYPE_KEY = 'Object contains forbidden prototype property';
export const FORBIDDEN_PROTOTYPE_KEY_MESSAGE = 'The request body contains a "__proto__" key at some depth; such keys are refused.';

const parseJson = bodyParser({
  enableTypes: ['json'],
  jsonLimit: `${BODY_LIMIT_BYTES}b`,
  strict: false,
  onerror: (err: Error & { status?: number; type?: string }) => {
    if (err.status === 413) throw new HttpError(413, 'svc_malformed_request_body', BODY_LIMIT_MESSAGE);
    if (err.status === 415)
      throw new HttpError(
        400,
        'svc_malformed_request_body',
        'The request body has an unsupported Content-Encoding; send identity, gzip or deflate.',
      );
    // co-body (@hapi/bourne) refuses a "__proto__" key anywhere in the body; that body is
    // valid JSON, so say what was refused rather than "not valid JSON" (found by the fuzzer).
    if (err.message === FORBIDDEN_PROTOTYPE_KEY) throw new HttpError(400, 'svc_malformed_request_body', FORBIDDEN_PROTOTYPE_KEY_MESSAGE);
    throw new HttpError(400, 'svc_malformed_request_body', 'The request body is not valid JSON.');
  },
});

/**
 * A key `__proto__` at any depth of a parsed JSON value (JSON.parse makes it an own property). The
 * walk keeps its own stack: a body may nest as deep as its size allows.
 */
export function hasProtoKey(value: unknown): boolean {
  const next: unknown[] = [value];
  while (next.length > 0) {
    const node = next.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const key of Object.keys(node)) {
      if (key === '__proto__') return true;
      next.push((node as Record<string, unknown>)[key]);
    }
  }
  return false;
}

const NOT_JSON = 'The request body is not valid JSON.';

/** The body text as co-body decodes it, and its JSON value ("" for nothing). */
function parseText(bytes: Buffer): { text: string; parsed: unknown } {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text === '') return { text, parsed: text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'svc_malformed_request_body', NOT_JSON);
  }
  // Only a text that spells the key (literally or with a \u escape) can carry it.
  if ((text.includes('__proto__') || text.includes('\\u')) && hasProtoKey(parsed)) {
    throw new HttpError(400, 'svc_malformed_request_body', FORBIDDEN_PROTOTYPE_KEY_MESSAGE);
  }
  return { text, parsed };
}

/**
 * The body of an identity-encoded request that declares its length (a fixed-length request, which
 * the HTTP parser ends at that length), read and parsed as co-body would: the bytes as UTF-8
 * whatever the charset, a leading byte-order mark dropped, JSON with no `__proto__` key, "" for
 * nothing. co-body with raw-body and koa-bodyparser took 4–6 % of a rejected /verify's busy time
 * in a profile (docs/BENCHMARKS.md "Verify and cheap requests against their floors"); compressed
 * and chunked bodies still go through it.
 */
function readDeclaredJson(req: IncomingMessage, length: number): Promise<{ text: string; parsed: unknown }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (err: HttpError | null) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('close', onAborted);
      req.off('error', onAborted);
      if (err) return reject(err);
      try {
        resolve(parseText(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)));
      } catch (thrown) {
        reject(thrown instanceof Error ? thrown : new Error(String(thrown)));
      }
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => done(received === length ? null : new HttpError(400, 'svc_malformed_request_body', NOT_JSON));
    const onAborted = () => done(new HttpError(400, 'svc_malformed_request_body', NOT_JSON));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('aborted', onAborted);
    req.once('close', onAborted);
    req.once('error', onAborted);
  });
}

/**
 * Reads a required JSON object body (≤ 256 KiB) into `ctx.request.body`. Absent, wrong
 * Content-Type, invalid JSON, or not an object: 400 `svc_malformed_request_body`; too large: 413.
 */
export function jsonObjectBody(): SvcMiddleware {
  return async (ctx: SvcContext, next: Next) => {
    const declared = Number(ctx.get('Content-Length') || NaN);
    if (declared > BODY_LIMIT_BYTES) throw new HttpError(413, 'svc_malformed_request_body', BODY_LIMIT_MESSAGE);
    const hasBody = declared > 0 || (Number.isNaN(declared) && ctx.get('Transfer-Encoding') !== '');
    if (!hasBody) throw new HttpError(400, 'svc_malformed_request_body', 'The request body is absent; send a JSON object.');
    if (!ctx.is('application/json')) {
      throw new HttpError(400, 'svc_malformed_request_body', 'The request body must be JSON with Content-Type application/json.');
    }
    const encoding = ctx.req.headers['content-encoding'];
    if (declared > 0 && (encoding === undefined || encoding === 'identity')) {
      const { text, parsed } = await readDeclaredJson(ctx.req, declared);
      ctx.request.body = parsed;
      ctx.request.rawBody = text;
    } else {
      await parseJson(ctx, () => Promise.resolve());
    }
    const body: unknown = ctx.request.body;
    if (ctx.request.rawBody === '' || ctx.request.rawBody === undefined) {
      throw new HttpError(400, 'svc_malformed_request_body', 'The request body is absent; send a JSON object.');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      const kind = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
      throw new HttpError(400, 'svc_malformed_request_body', `The request body must be a JSON object, got ${kind}.`);
    }
    await next();
  };
}
