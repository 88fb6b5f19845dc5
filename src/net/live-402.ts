/**
 * A listing's live 402, fetched without paying (docs/CATALOG.md "Checking a listing", docs/MCP.md):
 * an unpaid request — HTTP: check-request.ts's, a buyer's (paid_call: the listing's method on its
 * URL, its example input as the query or a JSON body) or svc's own check request; MCP: svc's check,
 * an unpaid tools/call over streamable HTTP naming the tool, with svc's neutral arguments — and the
 * payment requirements it answers with, decoded with @x402/core's decoders. Used by POST
 * /discovery/validate, the ownership and liveness checks and paid_call (src/mcp/targets.ts), so
 * all of them read a target the same way.
 *
 * Bounds: every connection goes through the address guard given as `fetchImpl`
 * (src/net/guarded-fetch.ts), a redirect is followed only within the target's origin and at most
 * `maxRedirects` times (off-origin it is refused, never followed), the whole exchange has one
 * deadline and at most `maxBytes` of any body are read. Nothing here ever sends a payment.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { parsePaymentRequired } from '@x402/core/schemas';
import { PAYMENT_REQUIRED_HEADER } from '../client/seller.ts';
import {
  TemplateEscapeError,
  checkHttpRequest,
  checkToolArguments,
  checkedUrl,
  refusedSafeRequest,
  unpaidHttpRequest,
  type LiveTarget,
} from './check-request.ts';
import { forbiddenCause } from './guarded-fetch.ts';
import { PROBE_MAX_HEADER_BYTES } from './probe-config.ts';

export type { LiveTarget } from './check-request.ts';

/** A PaymentRequired as @x402/core's schema accepts it (v2: resource, accepts, extensions). */
export interface LivePaymentRequired {
  x402Version: number;
  error?: string;
  resource: { url: string; [key: string]: unknown };
  accepts: Array<{
    scheme: string;
    network: string;
    amount: string;
    asset: string;
    payTo: string;
    maxTimeoutSeconds: number;
    extra?: Record<string, unknown> | null;
  }>;
  extensions?: Record<string, unknown> | null;
}

/** A body as read: JSON when declared so (and parseable), else text; `cut` when maxBytes stopped the read. */
export interface BoundedBody {
  status: number;
  contentType: string | null;
  body: unknown;
  cut: boolean;
}

export type LiveProbe =
  /** It asks for payment: the decoded requirements. */
  | { kind: 'payment'; required: LivePaymentRequired }
  /** It answered without asking for payment (HTTP 1xx–3xx, or an MCP result that is not an error). */
  | { kind: 'free'; answer: BoundedBody | Record<string, unknown> }
  /** It answered a 402 (or an MCP error result) without a decodable PaymentRequired, or another 4xx/5xx. */
  | { kind: 'error'; status?: number; reason: string; answer?: BoundedBody | Record<string, unknown> }
  /** No answer: connection refused, DNS, timeout, a non-MCP endpoint. */
  | { kind: 'unreachable'; reason: string }
  /** The address guard refused a hop; the reason names ALLOW_PRIVATE_TARGETS. */
  | { kind: 'forbidden'; reason: string }
  /** A redirect left the target's origin (not followed) or went on too long; a check follows none. */
  | { kind: 'redirect'; reason: string }
  /** svc sent nothing: the filled URL would leave its template (bazaar_path_params_invalid). */
  | { kind: 'refused'; code: 'bazaar_path_params_invalid'; reason: string }
  /** A check's safe request met a route that answers only its declared method: the next check sends that, without a body. */
  | { kind: 'deferred'; reason: string };

export interface ProbeOptions {
  /** The address-guarded fetch (src/net/guarded-fetch.ts). */
  fetchImpl: typeof fetch;
  timeoutMs: number;
  maxBytes: number;
  /** Same-origin redirects followed; 0 makes a 3xx the target's answer (paid_call, and every check). */
  maxRedirects: number;
  /** A check of svc's (checkHttpRequest), not a buyer's call: a safe request without body or example query. */
  check?: boolean;
  /** Awaited just before the first request is sent (the host's slot then runs from now: host-slots.ts); its failure is ignored. */
  onSend?: () => Promise<unknown>;
}

/** A redirect the probe does not follow. */
export class RedirectRefusedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'RedirectRefusedError';
  }
}

/** Whether a fetch failed because the answer's headers were over PROBE_MAX_HEADER_BYTES (undici's code). */
function headersOverflow(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === 'UND_ERR_HEADERS_OVERFLOW') return true;
  }
  return false;
}

function redirectCause(err: unknown): RedirectRefusedError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof RedirectRefusedError) return e;
  }
  return undefined;
}

const messageOf = (err: unknown) => {
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${err instanceof Error ? err.message : String(err)}${cause}`;
};

/**
 * `fetchImpl` following redirects only within the first request's origin, at most `maxRedirects`
 * times (303, and 301/302 after a POST, become a GET without a body, as browsers and fetch do).
 * With maxRedirects 0 the 3xx itself is returned.
 */
export function sameOriginFetch(fetchImpl: typeof fetch, maxRedirects: number): typeof fetch {
  return async (input, init) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    const origin = url.origin;
    let current: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const res = await fetchImpl(url.href, current);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status > 399 || location === null || maxRedirects === 0) return res;
      await res.body?.cancel().catch(() => undefined);
      const next = new URL(location, url);
      if (next.origin !== origin)
        throw new RedirectRefusedError(
          `${url.href} redirects to ${next.origin}, another origin; a redirect off the origin is not followed.`,
        );
      if (hop + 1 > maxRedirects) throw new RedirectRefusedError(`${origin} redirected more than ${maxRedirects} times.`);
      const method = (current.method ?? 'GET').toUpperCase();
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        const { body: _body, ...rest } = current;
        current = { ...rest, method: 'GET' };
      }
      url = next;
    }
  };
}

/** Reads at most `maxBytes` of the body (then stops reading), as JSON when declared so. */
export async function readBounded(res: Response, maxBytes: number): Promise<BoundedBody> {
  const contentType = res.headers.get('content-type');
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  if (res.body) {
    const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
      if (size > maxBytes) {
        cut = true;
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  }
  const text = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
  if (cut) return { status: res.status, contentType, body: `${text}… [cut at ${maxBytes} bytes]`, cut };
  if (contentType?.includes('json')) {
    try {
      return { status: res.status, contentType, body: JSON.parse(text), cut };
    } catch {
      /* keep the text */
    }
  }
  return { status: res.status, contentType, body: text, cut };
}

/** The PaymentRequired in a value, by @x402/core's schema; the schema's complaint otherwise. */
export function decodePaymentRequired(value: unknown): { ok: true; required: LivePaymentRequired } | { ok: false; reason: string } {
  const parsed = parsePaymentRequired(value);
  if (parsed.success) return { ok: true, required: parsed.data as LivePaymentRequired };
  const issue = parsed.error.issues[0];
  return { ok: false, reason: issue ? `${issue.path.join('.') || 'PaymentRequired'}: ${issue.message}` : 'not a PaymentRequired' };
}

/** The PaymentRequired of a 402: the PAYMENT-REQUIRED header, else a JSON body; why not otherwise. */
export async function paymentRequiredOf(
  res: Response,
  maxBytes: number,
): Promise<{ ok: true; required: LivePaymentRequired } | { ok: false; reason: string; answer: BoundedBody }> {
  const header = res.headers.get(PAYMENT_REQUIRED_HEADER);
  let headerReason: string | undefined;
  if (header !== null) {
    try {
      const decoded = decodePaymentRequired(decodePaymentRequiredHeader(header.trim()));
      if (decoded.ok) return decoded;
      headerReason = `the ${PAYMENT_REQUIRED_HEADER} header is not a valid PaymentRequired (${decoded.reason})`;
    } catch (err) {
      headerReason = `the ${PAYMENT_REQUIRED_HEADER} header is not base64 JSON (${messageOf(err)})`;
    }
  }
  const answer = await readBounded(res, maxBytes);
  let body = answer.body;
  if (typeof body === 'string' && !answer.cut) {
    try {
      body = JSON.parse(body);
    } catch {
      /* not JSON */
    }
  }
  const decoded = decodePaymentRequired(body);
  if (decoded.ok) return decoded;
  return {
    ok: false,
    reason: headerReason ?? `it carries no ${PAYMENT_REQUIRED_HEADER} header and its body is not a PaymentRequired (${decoded.reason})`,
    answer,
  };
}

/** The PaymentRequired an MCP tool's error result carries (structuredContent, else the first text block). */
export function paymentRequiredOfTool(result: CallToolResult): LivePaymentRequired | undefined {
  const structured = decodePaymentRequired(result.structuredContent);
  if (structured.ok) return structured.required;
  const first = result.content?.[0];
  if (first?.type === 'text') {
    try {
      const parsed = decodePaymentRequired(JSON.parse(first.text));
      if (parsed.ok) return parsed.required;
    } catch {
      /* not a PaymentRequired */
    }
  }
  return undefined;
}

/** A failed exchange as a probe outcome: the guard's refusal, a refused redirect, else unreachable. */
export function transportOutcome(err: unknown, what: string): LiveProbe {
  const forbidden = forbiddenCause(err);
  if (forbidden) return { kind: 'forbidden', reason: forbidden.message };
  const redirect = redirectCause(err);
  if (redirect) return { kind: 'redirect', reason: redirect.message };
  if (headersOverflow(err))
    return {
      kind: 'error',
      reason: `${what} answered with headers larger than svc's limit of ${PROBE_MAX_HEADER_BYTES} bytes (a PAYMENT-REQUIRED header counts; a stock Node buyer reads no more): shorten the header, e.g. a smaller bazaar declaration.`,
    };
  return { kind: 'unreachable', reason: `${what} did not answer: ${messageOf(err)}` };
}

async function probeHttp(target: Extract<LiveTarget, { type: 'http' }>, options: ProbeOptions): Promise<LiveProbe> {
  let request: { url: string; method: string; init: RequestInit };
  try {
    request = options.check ? checkHttpRequest(target) : { ...unpaidHttpRequest(target), method: target.method.toUpperCase() };
  } catch (err) {
    if (err instanceof TemplateEscapeError) return { kind: 'refused', code: 'bazaar_path_params_invalid', reason: err.message };
    throw err;
  }
  const { url, init, method } = request;
  const asked = `${method} ${url}`;
  const signal = AbortSignal.timeout(options.timeoutMs);
  await options.onSend?.().catch(() => undefined);
  let res: Response;
  try {
    res = await sameOriginFetch(options.fetchImpl, options.maxRedirects)(url, { ...init, signal });
  } catch (err) {
    return transportOutcome(err, asked);
  }
  try {
    if (res.status === 402) {
      const found = await paymentRequiredOf(res, options.maxBytes);
      if (found.ok) return { kind: 'payment', required: found.required };
      return { kind: 'error', status: 402, reason: `${url} answered 402 but ${found.reason}.`, answer: found.answer };
    }
    const answer = await readBounded(res, options.maxBytes);
    const declared = target.method.toUpperCase();
    if (options.check && refusedSafeRequest(declared, method, url, res.status))
      return {
        kind: 'deferred',
        reason: `svc asked ${asked} (a safe request, without a body) and it answered HTTP ${res.status}, as a route that answers only ${declared} does; the next check sends ${declared} without a body.`,
      };
    const location = res.headers.get('location');
    if (options.check && res.status >= 300 && res.status <= 399 && location !== null)
      return {
        kind: 'redirect',
        reason: `${asked} answered HTTP ${res.status} to ${new URL(location, url).href}; svc's checks follow no redirect (each hop would be another request of the host).`,
      };
    if (res.status >= 400) return { kind: 'error', status: res.status, reason: `${asked} answered HTTP ${res.status}.`, answer };
    return { kind: 'free', answer };
  } catch (err) {
    return transportOutcome(err, asked);
  }
}

/** Why an MCP check's call may fail where a buyer's succeeds, and the fix. */
const NEUTRAL_ARGUMENTS =
  'svc\'s check calls the tool with svc\'s own neutral arguments (each required property of the tool\'s inputSchema from tools/list as null, false, 0, "", [] or {}; never an example, default or enum value: docs/SECURITY.md "Requests svc makes of sellers\' hosts"): a paid tool must answer an unpaid call with its PaymentRequired before it validates or uses its arguments.';

/**
 * svc's check of an MCP tool (docs/SECURITY.md "Requests svc makes of sellers' hosts"): the
 * endpoint as the catalog identifies it (checkedUrl: no query), initialize, tools/list (one page:
 * the tool's own inputSchema, as its server declares it), then one tools/call naming the tool with
 * svc's neutral arguments built from that schema (check-request.ts checkToolArguments), never the
 * listing's example or schema (a stranger wrote them). An x402 seller answers an unpaid call of a
 * paid tool with its PaymentRequired before it runs the tool (x402's MCP transport, docs/MCP.md),
 * so the answer names the payTo as the example's would; the neutral arguments get a stock server
 * that validates arguments first (the MCP SDK's McpServer) past its validation to that wrapper.
 * A tool missing from the list's first page, or a list that fails, gets `{}`.
 */
async function probeMcp(target: Extract<LiveTarget, { type: 'mcp' }>, options: ProbeOptions): Promise<LiveProbe> {
  const endpoint = checkedUrl(target.url);
  const signal = AbortSignal.timeout(options.timeoutMs);
  const bounded = sameOriginFetch(options.fetchImpl, options.maxRedirects);
  // The MCP client is loaded on the first MCP probe, not at start-up (docs/OPERATIONS.md "Startup").
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  // MCP 2026-07-28 with a seller that speaks it, else its 2025 revision (docs/MCP.md "Protocol
  // revisions"). The probe offers no x402 extension, so every seller answers in the tool-result binding.
  const client = new Client({ name: 'svc-probe', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
    fetch: async (input, init) => {
      const res = await bounded(input, { ...init, signal: AbortSignal.any([signal, ...(init?.signal ? [init.signal] : [])]) });
      return capped(res, options.maxBytes);
    },
  });
  await options.onSend?.().catch(() => undefined);
  try {
    try {
      await client.connect(transport, { timeout: options.timeoutMs });
    } catch (err) {
      const outcome = transportOutcome(err, `The MCP endpoint ${endpoint}`);
      if (outcome.kind !== 'unreachable' || err instanceof TypeError || (err as Error)?.name === 'TimeoutError') return outcome;
      return { kind: 'unreachable', reason: `${endpoint} is not a working MCP streamable-HTTP endpoint: ${messageOf(err)}` };
    }
    const listed = await client.listTools(undefined, { timeout: options.timeoutMs }).catch(() => undefined);
    const inputSchema = listed?.tools.find((tool) => tool.name === target.toolName)?.inputSchema ?? { type: 'object' as const };
    // The definition is given, not looked up: the client then mirrors the arguments into headers
    // from it and never lists and calls again on a header mismatch (one tools/call per check); no
    // outputSchema, so a tool's output schema cannot fail the check before the call.
    const toolDefinition = { name: target.toolName, inputSchema };
    let result: CallToolResult;
    try {
      result = await client.callTool(
        { name: target.toolName, arguments: checkToolArguments(inputSchema) },
        { timeout: options.timeoutMs, toolDefinition },
      );
    } catch (err) {
      const outcome = transportOutcome(err, `tools/call ${target.toolName} at ${endpoint}`);
      return outcome.kind === 'unreachable' ? { kind: 'error', reason: `${outcome.reason}; ${NEUTRAL_ARGUMENTS}` } : outcome;
    }
    const answer = {
      content: result.content,
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    };
    if (!result.isError) return { kind: 'free', answer };
    const required = paymentRequiredOfTool(result);
    if (required) return { kind: 'payment', required };
    return {
      kind: 'error',
      reason: `The tool ${target.toolName} answered with an error that carries no PaymentRequired: ${JSON.stringify(result.content ?? []).slice(0, 300)}. ${NEUTRAL_ARGUMENTS}`,
      answer,
    };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** A Response whose body errors once more than `maxBytes` arrive (the MCP client reads bodies itself). */
function capped(res: Response, maxBytes: number): Response {
  // A Response with one of these statuses cannot be built with a body.
  if (!res.body || [101, 204, 205, 304].includes(res.status)) return res;
  let size = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.length;
      if (size > maxBytes) controller.error(new Error(`the answer is larger than ${maxBytes} bytes`));
      else controller.enqueue(chunk);
    },
  });
  return new Response(res.body.pipeThrough(limit), { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** The target's live answer to an unpaid request; never throws for anything the target does. */
export function probeLive402(target: LiveTarget, options: ProbeOptions): Promise<LiveProbe> {
  return target.type === 'http' ? probeHttp(target, options) : probeMcp(target, options);
}
