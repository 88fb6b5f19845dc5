/**
 * The buyer side of the two x402 transports, as paid_call uses them: probe a target unpaid (its
 * live 402 or its free answer), then retry it with a PaymentPayload and read the receipt.
 * - http: PAYMENT-REQUIRED on the 402, retry with PAYMENT-SIGNATURE, receipt in PAYMENT-RESPONSE;
 * - mcp (streamable HTTP, MCP 2026-07-28 or 2025-11-25 as the target speaks): the client offers
 *   the `org.x402/payment` extension, so a seller that has it too answers the unpaid call with a
 *   `payment_required` result; any other seller with an isError result whose structuredContent is
 *   the PaymentRequired (the tool-result binding). Either way the retry carries
 *   params._meta["x402/payment"] and the receipt is in result._meta["x402/payment-response"].
 * Every failure is a ToolFailure with its agent tool code (see docs/MCP.md for the mapping).
 */
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import type { SettleResponse } from '../client/facilitator.ts';
import {
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  X402_MCP_EXTENSION,
  X402_PAYMENT_REQUIRED_RESULT,
  isPaymentRequired,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
  type PaymentRequired,
} from '../client/seller.ts';
import type { PaymentPayload } from '../scheme/types.ts';
import { forbiddenCause } from '../net/guarded-fetch.ts';
import { unpaidHttpRequest } from '../net/check-request.ts';
import { paymentRequiredOf, paymentRequiredOfTool, probeLive402, readBounded, type BoundedBody } from '../net/live-402.ts';
import { ToolFailure, isFacilitatorCode, isPlainObject } from './results.ts';

export type TargetSpec =
  | { type: 'http'; url: string; method: string; input?: Record<string, unknown>; pathParams?: Record<string, unknown> }
  | { type: 'mcp'; url: string; toolName: string; input?: Record<string, unknown> };

/** How an MCP seller signalled payment: the `org.x402/payment` extension or the tool-result binding. */
export type X402Binding = 'org.x402/payment' | 'tool-result';

export type Probe = { kind: 'free'; result: unknown } | { kind: 'payment'; required: PaymentRequired; binding?: X402Binding };

export interface Target {
  probe(): Promise<Probe>;
  /** The target's result and the successful receipt; a ToolFailure otherwise. */
  pay(payload: PaymentPayload): Promise<{ result: unknown; receipt: SettleResponse }>;
  close(): Promise<void>;
}

/** After a target's error answer: where the input it expects is described. */
const INPUT_HINT = " If the input was wrong, search_resources shows the listing's input schema and example.";

/** Longest target body read into a result (the rest is not read; the result says it was cut). */
export const MAX_RESULT_BYTES = 256 * 1024;

const message = (err: unknown) => {
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${err instanceof Error ? err.message : String(err)}${cause}`;
};

/** A refused payment: the facilitator's code verbatim, else svc_mcp_payment_not_settled. */
function refusedPayment(required: PaymentRequired | undefined, fallback: string): never {
  const code = required?.error;
  if (isFacilitatorCode(code)) throw new ToolFailure(code, `The target refused the payment with ${code}; nothing was settled.`);
  throw new ToolFailure('svc_mcp_payment_not_settled', code ? `${fallback} The target reported ${JSON.stringify(code)}.` : fallback);
}

function checkReceipt(receipt: unknown, where: string): SettleResponse {
  const r = receipt as Partial<SettleResponse> | undefined;
  if (!isPlainObject(r) || r.success !== true || typeof r.transaction !== 'string' || !/^[0-9a-f]{64}$/.test(r.transaction)) {
    const code = isPlainObject(r) ? r.errorReason : undefined;
    if (isFacilitatorCode(code)) throw new ToolFailure(code, `The settlement failed with ${code}: ${String(r?.errorMessage ?? '')}`.trim());
    throw new ToolFailure('svc_mcp_payment_not_settled', `The target answered without a successful receipt in ${where}.`);
  }
  return r as SettleResponse;
}

// ---------------------------------------------------------------- http

/** The target's answer as a tool result: status, content type and the (bounded) body. */
const resultOf = ({ status, contentType, body }: BoundedBody) => ({ status, contentType, body });

/** A connection refused by the address guard is its own code; anything else is `fallback`. */
function transportFailure(err: unknown, fallback: ToolFailure): ToolFailure {
  const forbidden = forbiddenCause(err);
  return forbidden ? new ToolFailure('svc_mcp_target_forbidden', `${forbidden.message}; nothing was paid.`) : fallback;
}

function httpTarget(spec: Extract<TargetSpec, { type: 'http' }>, timeoutMs: number, fetchImpl: typeof fetch): Target {
  const send = async (headers?: Record<string, string>) => {
    const { url, init } = unpaidHttpRequest(spec, headers);
    // Redirects are not followed: a 3xx is the target's answer.
    return fetchImpl(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  };
  return {
    async probe() {
      const live = await probeLive402(spec, { fetchImpl, timeoutMs, maxBytes: MAX_RESULT_BYTES, maxRedirects: 0 });
      switch (live.kind) {
        case 'payment':
          return { kind: 'payment', required: live.required as PaymentRequired };
        case 'free':
          return { kind: 'free', result: resultOf(live.answer as BoundedBody) };
        case 'forbidden':
          throw new ToolFailure('svc_mcp_target_forbidden', `${live.reason}; nothing was paid.`);
        case 'refused':
          throw new ToolFailure(live.code, `${live.reason} Nothing was requested or paid.`);
        case 'error':
          if (live.status === 402)
            throw new ToolFailure(
              'svc_mcp_resource_error',
              `${spec.url} answered 402 without a PaymentRequired (PAYMENT-REQUIRED header or JSON body); nothing was paid.`,
            );
          throw new ToolFailure(
            'svc_mcp_resource_error',
            `${spec.method} ${spec.url} answered HTTP ${live.status}; nothing was paid.${INPUT_HINT} Body: ${JSON.stringify((live.answer as BoundedBody | undefined)?.body).slice(0, 500)}`,
          );
        default:
          throw new ToolFailure('svc_mcp_resource_unreachable', live.reason);
      }
    },
    async pay(payload) {
      let res: Response;
      try {
        res = await send({ [PAYMENT_SIGNATURE_HEADER]: encodeX402Header(payload) });
      } catch (err) {
        throw transportFailure(
          err,
          new ToolFailure(
            'svc_mcp_payment_not_settled',
            `${spec.url} did not answer the paid request (${message(err)}); no receipt was returned.`,
          ),
        );
      }
      if (res.status === 402) {
        const found = await paymentRequiredOf(res, MAX_RESULT_BYTES);
        refusedPayment(found.ok ? (found.required as PaymentRequired) : undefined, `${spec.url} answered the paid request with 402.`);
      }
      const result = resultOf(await readBounded(res, MAX_RESULT_BYTES));
      if (res.status >= 400) {
        // A seller settles a payment only with the answer it serves (docs/MCP.md): an error answer
        // without a receipt means the signed payment was never submitted.
        throw new ToolFailure(
          'svc_mcp_resource_error',
          `${spec.url} answered the paid request with HTTP ${res.status} and no receipt, so nothing was paid.${INPUT_HINT} Body: ${JSON.stringify(result.body).slice(0, 500)}`,
        );
      }
      const receipt = checkReceipt(decodeX402Header(res.headers.get(PAYMENT_RESPONSE_HEADER)), `the ${PAYMENT_RESPONSE_HEADER} header`);
      return { result, receipt };
    },
    close: () => Promise.resolve(),
  };
}

// ---------------------------------------------------------------- mcp

const toolResult = (r: CallToolResult) => ({
  content: r.content,
  ...(r.structuredContent !== undefined ? { structuredContent: r.structuredContent } : {}),
});

/**
 * The client transport, watching answers for the extension's `payment_required` result: the SDK's
 * client knows only MCP's own result types and refuses it (UnsupportedResultType) without its
 * content, so the PaymentRequired is taken here as it arrives and read after the refusal.
 */
function watchPaymentRequired(transport: Transport): { transport: Transport; take(): unknown } {
  let seen: unknown;
  const watched = new Proxy(transport, {
    set(target, property, value: unknown) {
      if (property !== 'onmessage' || typeof value !== 'function') return Reflect.set(target, property, value);
      const deliver = value as (message: JSONRPCMessage, extra?: unknown) => void;
      target.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
        const result = (message as { result?: { resultType?: unknown; paymentRequired?: unknown } }).result;
        if (result?.resultType === X402_PAYMENT_REQUIRED_RESULT) seen = result.paymentRequired;
        deliver(message, extra);
      };
      return true;
    },
  });
  return {
    transport: watched,
    take() {
      const taken = seen;
      seen = undefined;
      return taken;
    },
  };
}

function mcpTarget(spec: Extract<TargetSpec, { type: 'mcp' }>, timeoutMs: number, fetchImpl: typeof fetch): Target {
  // 'auto': a 2026-07-28 seller is spoken to in 2026-07-28, any other in its 2025 revision.
  const client = new Client(
    { name: 'svc-mcp', version: '0.1.0' },
    { capabilities: { extensions: { [X402_MCP_EXTENSION]: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  const watched = watchPaymentRequired(
    new StreamableHTTPClientTransport(new URL(spec.url), {
      fetch: (input, init) =>
        fetchImpl(input, { ...init, signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(init?.signal ? [init.signal] : [])]) }),
    }),
  );
  let connected = false;
  const connect = async () => {
    if (connected) return;
    try {
      await client.connect(watched.transport, { timeout: timeoutMs });
      connected = true;
    } catch (err) {
      const transportLevel = err instanceof TypeError || (err instanceof Error && err.name === 'TimeoutError') || transportCause(err);
      if (forbiddenCause(err)) throw transportFailure(err, new ToolFailure('svc_mcp_target_forbidden', message(err)));
      throw new ToolFailure(
        transportLevel ? 'svc_mcp_resource_unreachable' : 'svc_mcp_resource_error',
        `${spec.url} ${transportLevel ? 'did not answer' : 'is not a working MCP streamable-HTTP endpoint'}: ${message(err)}; nothing was paid.`,
      );
    }
  };
  /** The tool's result, or the PaymentRequired of a `payment_required` answer (extension binding). */
  const call = async (meta?: Record<string, unknown>, paid = false): Promise<CallToolResult | { paymentRequired: unknown }> => {
    watched.take();
    try {
      return await client.callTool(
        { name: spec.toolName, arguments: spec.input ?? {}, ...(meta ? { _meta: meta } : {}) },
        { timeout: timeoutMs },
      );
    } catch (err) {
      const required = watched.take();
      if (err instanceof SdkError && err.code === SdkErrorCode.UnsupportedResultType && required !== undefined)
        return { paymentRequired: required };
      if (err instanceof ProtocolError || !paid) {
        throw new ToolFailure(
          'svc_mcp_tool_call_failed',
          `tools/call ${spec.toolName} at ${spec.url} failed: ${message(err)}${paid ? '; no receipt was returned' : '; nothing was paid'}.`,
        );
      }
      throw new ToolFailure(
        'svc_mcp_payment_not_settled',
        `tools/call ${spec.toolName} at ${spec.url} did not answer the paid call (${message(err)}); no receipt was returned.`,
      );
    }
  };
  /** The PaymentRequired an answer carries, in either binding, and which binding it came in. */
  const requiredOf = (
    answer: CallToolResult | { paymentRequired: unknown },
  ): { required: PaymentRequired; binding: X402Binding } | null => {
    if ('paymentRequired' in answer && !('content' in answer)) {
      if (isPaymentRequired(answer.paymentRequired)) return { required: answer.paymentRequired, binding: X402_MCP_EXTENSION };
      throw new ToolFailure(
        'svc_mcp_resource_error',
        `The tool ${spec.toolName} answered payment_required without a PaymentRequired (x402Version, accepts); nothing was paid.`,
      );
    }
    const result = answer;
    if (!result.isError) return null;
    const required = paymentRequiredOfTool(result) as PaymentRequired | undefined;
    return required ? { required, binding: 'tool-result' } : null;
  };
  return {
    async probe() {
      await connect();
      const answer = await call();
      const found = requiredOf(answer);
      if (found) return { kind: 'payment', required: found.required, binding: found.binding };
      const result = answer as CallToolResult;
      if (!result.isError) return { kind: 'free', result: toolResult(result) };
      throw new ToolFailure(
        'svc_mcp_resource_error',
        `The tool ${spec.toolName} answered with an error; nothing was paid: ${JSON.stringify(result.content ?? []).slice(0, 500)}`,
      );
    },
    async pay(payload) {
      await connect();
      const answer = await call({ [MCP_PAYMENT_META]: payload }, true);
      const found = requiredOf(answer);
      if (found) refusedPayment(found.required, `The tool ${spec.toolName} refused the paid call.`);
      const result = answer as CallToolResult;
      if (result.isError) {
        throw new ToolFailure(
          'svc_mcp_tool_call_failed',
          `The tool ${spec.toolName} failed on the paid call and returned no receipt, so nothing was paid.${INPUT_HINT} Result: ${JSON.stringify(result.content ?? []).slice(0, 500)}`,
        );
      }
      const receipt = checkReceipt(result._meta?.[MCP_PAYMENT_RESPONSE_META], `result._meta["${MCP_PAYMENT_RESPONSE_META}"]`);
      return { result: toolResult(result), receipt };
    },
    close: async () => {
      if (connected) await client.close().catch(() => undefined);
    },
  };
}

/** A connect failure caused by the network (the SDK wraps fetch's TypeError). */
function transportCause(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof TypeError || e.name === 'TimeoutError' || e.name === 'AbortError') return true;
  }
  return false;
}

/** `fetchImpl` is the address-guarded fetch in paid_call (src/net/guarded-fetch.ts). */
export function openTarget(spec: TargetSpec, timeoutMs: number, fetchImpl: typeof fetch = fetch): Target {
  return spec.type === 'http' ? httpTarget(spec, timeoutMs, fetchImpl) : mcpTarget(spec, timeoutMs, fetchImpl);
}
