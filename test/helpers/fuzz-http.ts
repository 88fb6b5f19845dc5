/**
 * The HTTP side of the contract fuzzer: a request value that prints readably (fast-check shows
 * it as the shrunk counterexample), a raw sender (node:http, so any method, a GET with a body,
 * an unencoded query, a body without Content-Type), and the per-response oracle built on the
 * contract helper (test/helpers/contract.ts) plus the rules the schemas cannot express.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import fc from 'fast-check';
import { checkContract, declaredResponse, openapiDocument, templateOf } from './contract.ts';
import { fieldBytes, REQUEST_RULES, ResourceHistory } from './fuzz-checks.ts';

export interface FuzzRequest {
  method: string;
  /** Path with the raw query string, exactly as put on the request line. */
  target: string;
  headers: Record<string, string>;
  /**
   * Header fields sent after `headers`, in order: names may repeat, and a name or value may hold
   * what node:http refuses to send (a control character, a character above U+00FF: sent as
   * UTF-8 bytes), so it goes onto the wire as is (`send`).
   */
  moreHeaders?: [string, string][];
  body?: Buffer;
  /** Send the body with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
  /** What the generator meant to send (e.g. "mutated body: wrongType"); for the stats and the report. */
  kind: string;
}

const PRINT_BODY_CHARS = 1_500;

/** A curl-like rendering of a request: what a failing case prints. */
export function describeRequest(r: FuzzRequest): string {
  const lines = [`${r.method} ${r.target}   [${r.kind}${r.chunked ? ', chunked' : ''}]`];
  // A field with anything but printable ASCII is shown JSON-escaped, so every byte is visible.
  const shown = (t: string) => (/^[\x20-\x7e]*$/.test(t) ? t : JSON.stringify(t));
  for (const [k, v] of [...Object.entries(r.headers), ...(r.moreHeaders ?? [])]) lines.push(`${shown(k)}: ${shown(v)}`);
  if (r.body) {
    const text = r.body.toString('utf8');
    const shown = text.length > PRINT_BODY_CHARS ? `${text.slice(0, PRINT_BODY_CHARS)}… (${r.body.length} bytes)` : text;
    lines.push('', JSON.stringify(shown));
  }
  return lines.join('\n');
}

/** Attaches the readable rendering fast-check uses when it prints a counterexample. */
export function fuzzRequest(r: FuzzRequest): FuzzRequest {
  Object.defineProperty(r, fc.toStringMethod, { value: () => `\n${describeRequest(r)}\n`, enumerable: false });
  return r;
}

export const jsonBody = (value: unknown): Buffer | undefined => {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : Buffer.from(text, 'utf8');
};

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

const REQUEST_TIMEOUT_MS = 20_000;

/** What node:http sends as is (RFC 9110 tokens and field values); anything else goes through `rawHeaderConnection`. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * A connection that writes the `moreHeaders` node:http would refuse: node:http validates every
 * header it is given, so each such field is sent as a placeholder field and the placeholder is
 * replaced by the field's bytes on their way into the socket. The response is still read by
 * node:http's own parser.
 */
function rawHeaderConnection(url: URL, fields: Map<string, Buffer>): () => Duplex {
  return () => {
    const socket = netConnect(Number(url.port), url.hostname);
    const write = socket.write.bind(socket);
    type Done = (err?: Error | null) => void;
    socket.write = (chunk: string | Uint8Array, encoding?: BufferEncoding | Done, callback?: Done): boolean => {
      const done = typeof encoding === 'function' ? encoding : callback;
      const text = typeof encoding === 'string' ? encoding : 'utf8';
      if (typeof chunk !== 'string' || ![...fields.keys()].some((p) => chunk.includes(p))) return write(chunk, text, done);
      let bytes = Buffer.from(chunk, text);
      for (const [placeholder, field] of fields) {
        const at = bytes.indexOf(placeholder, 0, 'latin1');
        if (at >= 0) bytes = Buffer.concat([bytes.subarray(0, at), field, bytes.subarray(at + placeholder.length)]);
      }
      return write(bytes, done);
    };
    return socket;
  };
}

/**
 * The last large body received, as bytes and as the text they decode to. svc answers GET
 * /docs/api-reference.js (4.3 MB) and GET /openapi.yaml (140 KB) with the same bytes every time:
 * joining and decoding them again cost about 2 CPU-s of the fuzz file. A body whose bytes equal the
 * last one's (compared chunk by chunk) gets the same text; any other is joined and decoded.
 */
let lastLargeBody: { bytes: Buffer; text: string } | undefined;
const LARGE_BODY = 64 * 1024;
function decodedBody(chunks: Buffer[]): string {
  const length = chunks.reduce((n, c) => n + c.length, 0);
  if (length < LARGE_BODY) return Buffer.concat(chunks, length).toString('utf8');
  if (lastLargeBody?.bytes.length === length) {
    let offset = 0;
    const same = chunks.every((c) => {
      const equal = c.equals(lastLargeBody!.bytes.subarray(offset, offset + c.length));
      offset += c.length;
      return equal;
    });
    if (same) return lastLargeBody.text;
  }
  const bytes = Buffer.concat(chunks, length);
  lastLargeBody = { bytes, text: bytes.toString('utf8') };
  return lastLargeBody.text;
}

/** Sends the request as is over loopback; rejects on a transport failure or a hang. */
export function send(baseUrl: string, r: FuzzRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  // A flat list of fields, so names may repeat; node:http then adds no Host of its own.
  const headers: string[] = [];
  const raw = new Map<string, Buffer>();
  const given = [...Object.keys(r.headers), ...(r.moreHeaders ?? []).map(([k]) => k)];
  for (const [k, v] of [
    ...(given.some((k) => k.toLowerCase() === 'host') ? [] : ([['host', url.host]] as [string, string][])),
    ...Object.entries(r.headers),
    ...(r.body && !r.chunked ? ([['content-length', String(r.body.length)]] as [string, string][]) : []),
    ...(r.moreHeaders ?? []),
  ]) {
    if (TOKEN.test(k) && FIELD_VALUE.test(v)) headers.push(k, v);
    else {
      const placeholder = `x-fuzz-raw-${raw.size}-${randomUUID()}`;
      raw.set(`${placeholder}: v`, Buffer.concat([fieldBytes(k), Buffer.from(': '), fieldBytes(v)]));
      headers.push(placeholder, 'v');
    }
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.target,
        headers,
        ...(raw.size ? { createConnection: rawHeaderConnection(url, raw) } : { agent: false }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
            else if (v !== undefined) headers.set(k, v);
          }
          resolve({ status: res.statusCode ?? 0, headers, text: decodedBody(chunks) });
        });
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no response within ${REQUEST_TIMEOUT_MS} ms (a hang)`)));
    req.on('error', reject);
    if (r.chunked && r.body) {
      // Two chunks, so the body really arrives chunked.
      const half = Math.floor(r.body.length / 2);
      req.write(r.body.subarray(0, half));
      req.end(r.body.subarray(half));
    } else {
      req.end(r.body);
    }
  });
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The operationId for method + path in openapi.yaml, or undefined for an unknown route. */
export function operationIdOf(method: string, target: string): string | undefined {
  return openapiDocument.paths?.[templateOf(target.split('?')[0]!)]?.[method.toLowerCase()]?.operationId;
}

/**
 * The code and reason of a rejection in any of the four shapes, or null when not a rejection: the
 * ErrorEnvelope, VerifyResponse, SettleResponse, and a JSON-RPC error of POST /mcp (openapi.yaml
 * JsonRpcErrorAnswer), whose code is the JSON-RPC integer and whose reason is its `message`.
 */
export function rejectionOf(body: any): { code: unknown; reason: unknown } | null {
  if (!body || typeof body !== 'object') return null;
  if (body.jsonrpc === '2.0' && body.error !== undefined) return { code: body.error?.code, reason: body.error?.message };
  if (body.error !== undefined) return { code: body.error?.code, reason: body.error?.reason };
  if (body.isValid === false) return { code: body.invalidReason, reason: body.invalidMessage };
  if (body.success === false) return { code: body.errorReason, reason: body.errorMessage };
  return null;
}

/**
 * The oracle for one exchange. Throws with the request and the response when:
 * - the status is 5xx (a healthy svc on a healthy devnet and catalog has no fault to report);
 * - the status is not declared for the operation (unknown path: anything but 404; known path with
 *   an undeclared method: anything but 405 with Allow);
 * - a header, the Content-Type or the body does not match openapi.yaml (contract helper);
 * - a rejection lacks a code or a non-empty reason, or is an `unexpected_*` scheme failure;
 * - X-Request-Id is not the caller's sane id or a fresh UUID;
 * - a request-side rule of fuzz-checks.ts fires (negative_data_rejection, positive_data_acceptance,
 *   missing_required_header, ignored_auth).
 * Each failure names the Schemathesis check it implements (docs/TESTING.md has the table).
 * Returns the parsed body (undefined for HEAD, which has none).
 */
export function checkExchange(r: FuzzRequest, res: RawResponse): unknown {
  const fail = (why: string): never => {
    throw new Error(
      `${why}\n--- request\n${describeRequest(r)}\n--- response ${res.status}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${res.text.slice(0, 2_000)}`,
    );
  };
  if (res.status >= 500) fail(`not_a_server_error: 5xx answer`);
  let body: unknown;
  try {
    if (r.method === 'HEAD') {
      // No body on HEAD by definition; the status and headers still follow the contract.
      const { node: declared } = declaredResponse(r.method, r.target, res.status);
      const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
      if (!Object.keys(declared.content ?? {}).includes(mediaType))
        fail(`content_type_conformance: HEAD answer's Content-Type ${JSON.stringify(mediaType)} is not declared for GET`);
      if (res.status === 405 && !res.headers.get('allow')) fail('unsupported_method: a 405 without Allow');
    } else {
      body = checkContract({ method: r.method, path: r.target }, res);
    }
  } catch (err) {
    const message = (err as Error).message;
    fail(message.includes(': ') && /^[a-z_]+: /.test(message) ? message : `${schemathesisCheckOf(message)}: ${message}`);
  }
  const rejection = rejectionOf(body);
  if ((res.status >= 400 && r.method !== 'HEAD') || rejection) {
    if (!rejection) fail('a 4xx without a rejection body');
    const jsonRpc = (body as { jsonrpc?: unknown }).jsonrpc === '2.0';
    if (jsonRpc ? !Number.isInteger(rejection!.code) : typeof rejection!.code !== 'string' || rejection!.code === '')
      fail('rejection without a code');
    if (typeof rejection!.reason !== 'string' || rejection!.reason.trim() === '') fail('rejection without a reason');
    // unexpected_verify_error / unexpected_settle_error mean the scheme threw: on a healthy devnet
    // (the fuzzer injects no RPC fault) that is a defect, however well-formed the answer.
    if (typeof rejection!.code === 'string' && rejection!.code.startsWith('unexpected_'))
      fail(`the scheme failed unexpectedly (${rejection!.code})`);
  }
  if (res.status === 200 && body) {
    const violation = discoveryViolation(r, body);
    if (violation) fail(violation);
  }
  const sent = Object.entries(r.headers).find(([k]) => k.toLowerCase() === 'x-request-id')?.[1];
  const echoed = res.headers.get('x-request-id') ?? '';
  if (sent !== undefined && SANE_REQUEST_ID.test(sent) ? echoed !== sent : !UUID.test(echoed)) {
    fail(`X-Request-Id ${JSON.stringify(echoed)} for a sent ${JSON.stringify(sent)}`);
  }
  for (const rule of REQUEST_RULES) {
    const violation = rule(r, res);
    if (violation) fail(violation);
  }
  return body;
}

/** The Schemathesis check a contract-helper failure belongs to (the helper's messages are stable). */
export function schemathesisCheckOf(message: string): string {
  if (/must answer 405|Allow /.test(message)) return 'unsupported_method';
  if (/does not declare|must answer 404/.test(message)) return 'status_code_conformance';
  if (/Content-Type/.test(message)) return 'content_type_conformance';
  if (/header /.test(message)) return 'response_headers_conformance';
  return 'response_schema_conformance';
}

/**
 * What a 200 discovery page must satisfy beyond its schema (openapi.yaml, docs/CATALOG.md): the
 * limit is clamped to [1, 100], the page fits it, offset and total agree with the page length,
 * a cursor comes with partialResults, and every item matches every filter of the request.
 */
export function discoveryViolation(r: FuzzRequest, body: any): string | null {
  const op = operationIdOf(r.method, r.target);
  if (op !== 'listDiscoveryResources' && op !== 'searchDiscoveryResources') return null;
  const params = new URLSearchParams(r.target.split('?').slice(1).join('?'));
  const raw = params.get('limit');
  const requested = raw === null ? 20 : Math.min(100, Math.max(1, Number(raw)));
  const items: any[] = op === 'listDiscoveryResources' ? body.items : body.resources;
  const { pagination } = body;
  if (op === 'listDiscoveryResources') {
    if (pagination.limit !== requested) return `pagination.limit ${pagination.limit}, expected ${requested}`;
    const offset = Number(params.get('offset') ?? 0);
    if (pagination.offset !== offset) return `pagination.offset ${pagination.offset}, expected ${offset}`;
    const expected = Math.max(0, Math.min(requested, pagination.total - offset));
    if (items.length !== expected) return `${items.length} items for total ${pagination.total}, offset ${offset}, limit ${requested}`;
  } else {
    if (pagination.limit !== requested)
      return `pagination.limit ${pagination.limit}, expected ${requested} (the page size, as on the list)`;
    if (items.length > requested) return `${items.length} results for limit ${requested}`;
    if (pagination.cursor !== null && body.partialResults !== true) return 'a cursor without partialResults';
  }
  for (const item of items) {
    const accepts: any[] = item.accepts ?? [];
    const filters: [string, (v: string) => boolean][] = [
      ['type', (v) => item.type === v],
      ['payTo', (v) => accepts.some((a) => a.payTo === v)],
      ['scheme', (v) => accepts.some((a) => a.scheme === v)],
      ['network', (v) => accepts.some((a) => a.network === v)],
      ['extensions', (v) => item.extensions !== null && typeof item.extensions === 'object' && v in item.extensions],
    ];
    for (const [name, matches] of filters) {
      const value = params.get(name);
      if (value !== null && !matches(value)) return `item ${item.resource} does not match the filter ${name}=${JSON.stringify(value)}`;
    }
  }
  return null;
}

/** Counts by operation: requests, statuses, codes, request kinds. */
export class FuzzStats {
  readonly byOperation = new Map<string, { requests: number; statuses: Map<number, number>; codes: Map<string, number> }>();
  started = performance.now();

  record(r: FuzzRequest, res: RawResponse, body: unknown): void {
    const op = operationIdOf(r.method, r.target) ?? '(unknown route)';
    let entry = this.byOperation.get(op);
    if (!entry) this.byOperation.set(op, (entry = { requests: 0, statuses: new Map(), codes: new Map() }));
    entry.requests++;
    entry.statuses.set(res.status, (entry.statuses.get(res.status) ?? 0) + 1);
    const b = body as { isValid?: unknown; success?: unknown } | undefined;
    // Acceptances are counted next to the codes: they show how deep the generated requests reach.
    const code = b?.isValid === true ? '(isValid:true)' : b?.success === true ? '(success:true)' : rejectionOf(body)?.code;
    if (typeof code === 'string') entry.codes.set(code, (entry.codes.get(code) ?? 0) + 1);
  }

  get total(): number {
    return [...this.byOperation.values()].reduce((n, e) => n + e.requests, 0);
  }

  /** A markdown table for docs/TESTING.md. */
  table(): string {
    const rows = [...this.byOperation.entries()].map(([op, e]) => {
      const statuses = [...e.statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(', ');
      const codes = [...e.codes.entries()]
        .sort(([, a], [, b]) => b - a)
        .map(([c, n]) => `${c}×${n}`)
        .join(', ');
      return `| ${op} | ${e.requests} | ${statuses} | ${e.codes.size} | ${codes} |`;
    });
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
    return [
      `${this.total} requests in ${seconds} s`,
      '',
      '| operation | requests | statuses seen | distinct codes | codes seen |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  }
}

/** Sends, checks and records one request; the property body of every fuzz run. */
const histories = new Map<string, ResourceHistory>();

export async function exchange(baseUrl: string, r: FuzzRequest, stats?: FuzzStats): Promise<unknown> {
  const res = await send(baseUrl, r);
  const body = checkExchange(r, res);
  let history = histories.get(baseUrl);
  if (!history) histories.set(baseUrl, (history = new ResourceHistory()));
  const violation = history.observe(r, res);
  if (violation) throw new Error(`${violation}\n--- request\n${describeRequest(r)}`);
  stats?.record(r, res, body);
  return body;
}
