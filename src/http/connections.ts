/**
 * Connection hygiene for the HTTP server (docs/SECURITY.md "Held sockets and pipelining desync", docs/OPERATIONS.md reverse
 * proxy): how long a client may take to send its request, how many connections one client
 * address may hold, and what happens to a request the parser refuses or that times out.
 *
 * - A request head or body that does not arrive within its timeout is answered 408 and the socket
 *   is destroyed, so a client that never reads cannot keep the descriptor.
 * - A request the parser refuses is answered 400/404/431 (JSON ErrorEnvelope) and destroyed — but
 *   never written into a connection that still owes an earlier pipelined request its response:
 *   that response is finished first (with `Connection: close`), then the connection is closed, so
 *   a valid POST /settle followed by junk still gets its settlement receipt.
 * - Connections beyond the per-address cap are closed on accept, before any byte is read; at the
 *   total cap an idle connection of the busiest address makes room (connection-cap.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  LOW_DESCRIPTOR_LIMIT as LOW_LIMIT,
  capConnections,
  defaultConnectionCap,
  descriptorLimit,
  type ConnectionObservers,
} from './connection-cap.ts';
import { errorBody, shapeOf, type RouteShape } from './errors.ts';
import { SANE_REQUEST_ID } from './middleware.ts';

export interface ConnectionLimits {
  /** Time to receive the request line and headers. */
  headersTimeoutMs: number;
  /** Time to receive the whole request (head and body); not the time to answer it. */
  requestTimeoutMs: number;
  /** Open connections one client address may hold; more are closed on accept. */
  maxConnectionsPerAddress: number;
  /**
   * Open connections in all (MAX_CONNECTIONS); null or absent: below the open-file limit read at
   * start (connectionCapAtStart).
   */
  maxConnections?: number | null;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  maxConnectionsPerAddress: 256,
};

/** When the open-file limit cannot be read: the cap of a 4096 limit. */
const UNKNOWN_LIMIT_CAP = defaultConnectionCap(4096);

/**
 * The total connection cap: MAX_CONNECTIONS when set, else the open-file limit less its headroom
 * (connection-cap.ts defaultConnectionCap). `warning` is set when an operator should hear of it:
 * a low open-file limit, one that cannot be read, or a MAX_CONNECTIONS that leaves svc too few
 * descriptors of its own.
 */
export function connectionCapAtStart(
  configured: number | null | undefined,
  limit: number | null = descriptorLimit(),
): { maxConnections: number; descriptorLimit: number | null; warning?: string } {
  const derived = limit === null ? UNKNOWN_LIMIT_CAP : limit === Infinity ? Number.MAX_SAFE_INTEGER : defaultConnectionCap(limit);
  const maxConnections = configured ?? derived;
  const base = { maxConnections, descriptorLimit: limit };
  if (limit === null) return { ...base, warning: 'the open-file limit could not be read; connections are capped as for a limit of 4096' };
  if (configured != null && configured > derived) {
    return {
      ...base,
      warning: `MAX_CONNECTIONS leaves svc fewer than ${Math.max(128, Math.floor(limit / 8))} descriptors of its own below the open-file limit`,
    };
  }
  if (limit < LOW_LIMIT) {
    return {
      ...base,
      warning: `the open-file limit is low (below ${LOW_LIMIT}): raise it (ulimit -n, systemd LimitNOFILE) to hold more connections`,
    };
  }
  return base;
}

/** After the refusal is handed to the kernel the socket is destroyed; this bounds a peer that never reads. */
const LINGER_MS = 1_000;

type Refusal = {
  status: number;
  text: string;
  code: 'svc_malformed_request_body' | 'svc_unknown_route' | 'svc_request_timeout';
  reason: string;
};

function refusalFor(err: Error & { code?: string }, limits: ConnectionLimits): Refusal {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        text: 'Request Timeout',
        code: 'svc_request_timeout',
        reason: `The request was not received within ${limits.headersTimeoutMs / 1000} s (head) / ${limits.requestTimeoutMs / 1000} s (whole request).`,
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        text: 'Request Header Fields Too Large',
        code: 'svc_malformed_request_body',
        reason: 'The request head (request line and headers) exceeds 16 KiB or 1000 header fields.',
      };
    case 'HPE_INVALID_METHOD':
      return {
        status: 404,
        text: 'Not Found',
        code: 'svc_unknown_route',
        reason: 'The request method is not one svc serves; no route is mounted for it.',
      };
    default:
      return { status: 400, text: 'Bad Request', code: 'svc_malformed_request_body', reason: 'The HTTP request could not be parsed.' };
  }
}

/** An operation of openapi.yaml as the router lists it (ApiContract['routes']). */
export type RouteEntry = { method: string; path: string; operationId: string };

const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([^\s?#]+)\S* HTTP\/\d\.\d\r?\n/;
const REQUEST_ID_FIELD = /\nx-request-id:[ \t]*([^\r\n]*?)[ \t]*\r?\n/gi;

/**
 * What the refused bytes tell of the request, when they begin with its request line (a head that
 * reached svc in one piece): its route and its X-Request-Id (exactly one, and sane).
 */
function refusedHead(err: Error & { rawPacket?: unknown }): { method?: string; path?: string; requestId?: string } {
  if (!Buffer.isBuffer(err.rawPacket)) return {};
  const text = err.rawPacket.toString('latin1');
  const line = REQUEST_LINE.exec(text);
  if (!line) return {};
  const end = text.indexOf('\r\n\r\n');
  const ids = [...(end < 0 ? text : text.slice(0, end + 2)).matchAll(REQUEST_ID_FIELD)].map((m) => m[1]!);
  return { method: line[1]!, path: line[2]!, ...(ids.length === 1 && SANE_REQUEST_ID.test(ids[0]!) ? { requestId: ids[0]! } : {}) };
}

/**
 * The answer to a refused request: a 400 in its route's shape (VerifyResponse on /verify, …; the
 * only refusal a payment route declares in its own shape, openapi.yaml RequestUnparseable), every
 * other refusal (431, 404, 408) and any request whose route is unknown in the ErrorEnvelope; the
 * caller's sane X-Request-Id when it can be read, else a fresh one.
 */
function refusalBytes(refusal: Refusal, head: ReturnType<typeof refusedHead> = {}, routes: readonly RouteEntry[] = []): string {
  const route = routes.find((r) => r.method === head.method && r.path === head.path);
  const shape: RouteShape = refusal.status === 400 ? shapeOf(route?.operationId) : 'envelope';
  const body = JSON.stringify(errorBody(shape, refusal.code, refusal.reason));
  return (
    `HTTP/1.1 ${refusal.status} ${refusal.text}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${head.requestId ?? randomUUID()}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Destroys the socket once `data` is handed to the kernel, and after LINGER_MS in any case. */
function answerAndDestroy(socket: Duplex, data: string): void {
  const hardStop = setTimeout(() => socket.destroy(), LINGER_MS);
  hardStop.unref();
  socket.end(data, () => {
    clearTimeout(hardStop);
    socket.destroy();
  });
}

/** The response Node is still writing on this connection for an earlier request, if any. */
function pendingResponse(socket: Duplex): ServerResponse | undefined {
  const response = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  return response && !response.writableFinished ? response : undefined;
}

function onClientError(limits: ConnectionLimits, routes: readonly RouteEntry[]) {
  return (err: Error & { code?: string }, socket: Duplex): void => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const pending = pendingResponse(socket);
    // The request still being received is the one that timed out (its body never came): it is
    // answered 408, unless its handler already started a response.
    if (pending && err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !pending.req.complete) {
      if (pending.headersSent) socket.destroy();
      else answerAndDestroy(socket, refusalBytes(refusalFor(err, limits)));
      return;
    }
    if (pending) {
      // An earlier request on this connection is still being answered (e.g. a settle waiting on
      // the chain): let it finish, tell the client the connection closes, then close it. Nothing
      // is written for the unparseable bytes, so the client never reads a refusal as the answer
      // to its earlier request.
      pending.shouldKeepAlive = false;
      if (!pending.headersSent) pending.setHeader('Connection', 'close');
      pending.once('finish', () => answerAndDestroy(socket, ''));
      pending.once('close', () => socket.destroy());
      return;
    }
    answerAndDestroy(socket, refusalBytes(refusalFor(err, limits), refusedHead(err), routes));
  };
}

/**
 * Applies the limits to a server that is not listening yet (Node arms the timeout sweep on
 * 'listening', with the interval set here).
 */
export function guardConnections(
  server: Server,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  routes: readonly RouteEntry[] = [],
  observers: ConnectionObservers = {},
): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Node checks both timeouts on this sweep (default every 30 s, which is what let slow clients
  // hold sockets for that long): check often enough that a timeout is enforced within ~10 %.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    100,
    Math.min(1_000, Math.floor(limits.headersTimeoutMs / 10)),
  );
  server.on('clientError', onClientError(limits, routes));
  // An expectation other than 100-continue: Node would answer a bare 417, which no operation
  // declares; RFC 9110 §10.1.1 lets a server ignore it, so the request is served as usual.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  capConnections(server, limits.maxConnections ?? connectionCapAtStart(null).maxConnections, limits.maxConnectionsPerAddress, observers);
}
