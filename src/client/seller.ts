/**
 * The seller side of an x402 v2 exchange, independent of transport: the PaymentRequired a seller
 * answers with, the `bazaar` discovery extension it declares (so a settlement catalogs it), the
 * base64-JSON codec of the PAYMENT-* headers, and verify → serve → settle through a facilitator.
 * seller-http.ts (PAYMENT-* headers) and seller-mcp.ts (x402 MCP transport) are the two transports.
 */
import { X402_VERSION, type PaymentPayload, type PaymentRequirements } from '../scheme/types.ts';

export { X402_VERSION };
import { FacilitatorUnreachableError, type FacilitatorClient, type SettleResponse } from './facilitator.ts';

export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';
export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';
/** x402 MCP transport: the payment rides in params._meta, the receipt in result._meta. */
export const MCP_PAYMENT_META = 'x402/payment';
export const MCP_PAYMENT_RESPONSE_META = 'x402/payment-response';
/** The x402 MCP extension (MCP 2026-07-28): capability name; its payment-required result type. */
export const X402_MCP_EXTENSION = 'org.x402/payment';
export const X402_PAYMENT_REQUIRED_RESULT = 'payment_required';

export type JsonSchema = Record<string, unknown>;

export interface ResourceInfo {
  url: string;
  description?: string;
  mimeType?: string;
  serviceName?: string;
  tags?: string[];
  [key: string]: unknown;
}

export interface PaymentRequired {
  x402Version: number;
  /** Set when a payment was presented and refused: the facilitator's code. */
  error?: string;
  resource: ResourceInfo;
  accepts: PaymentRequirements[];
  extensions?: Record<string, unknown>;
}

export interface BazaarExtension {
  info: Record<string, unknown>;
  schema: JsonSchema;
}

const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';
type QueryMethod = 'GET' | 'HEAD' | 'DELETE';
const BODY_METHODS = ['POST', 'PUT', 'PATCH'] as const;
export type HttpMethod = QueryMethod | (typeof BODY_METHODS)[number];

export const isBodyMethod = (method: string): boolean => (BODY_METHODS as readonly string[]).includes(method.toUpperCase());

/**
 * The bazaar extension of an HTTP resource: `info.input` {type:'http', method, queryParams | bodyType+body}
 * with example values, and a `schema` that validates `info` and carries the input's JSON Schema.
 */
export function httpBazaar(options: {
  method: HttpMethod;
  inputSchema: JsonSchema;
  example?: Record<string, unknown>;
  output?: Record<string, unknown>;
}): BazaarExtension {
  const method = options.method;
  const example = options.example ?? {};
  const body = isBodyMethod(method);
  const input: Record<string, unknown> = body
    ? { type: 'http', method, bodyType: 'json', body: example }
    : { type: 'http', method, queryParams: example };
  const inputProperties: Record<string, unknown> = {
    type: { type: 'string', const: 'http' },
    method: { type: 'string', enum: [method] },
    ...(body ? { bodyType: { type: 'string', enum: ['json'] }, body: options.inputSchema } : { queryParams: options.inputSchema }),
  };
  return bazaarExtension(
    { input, ...(options.output ? { output: options.output } : {}) },
    {
      type: 'object',
      properties: inputProperties,
      required: body ? ['type', 'method', 'bodyType', 'body'] : ['type', 'method'],
      additionalProperties: false,
    },
    { output: { type: 'object' } },
  );
}

/** `info` and the 2020-12 schema that validates it: `{input: inputSchema, ...others}`, input required. */
function bazaarExtension(info: Record<string, unknown>, inputSchema: JsonSchema, others: Record<string, JsonSchema> = {}): BazaarExtension {
  return {
    info,
    schema: { $schema: SCHEMA_DIALECT, type: 'object', properties: { input: inputSchema, ...others }, required: ['input'] },
  };
}

/** The bazaar extension of an MCP tool: `info.input` {type:'mcp', toolName, inputSchema, transport}. */
export function mcpBazaar(options: {
  toolName: string;
  inputSchema: JsonSchema;
  description?: string;
  example?: Record<string, unknown>;
}): BazaarExtension {
  const input: Record<string, unknown> = {
    type: 'mcp',
    toolName: options.toolName,
    transport: 'streamable-http',
    inputSchema: options.inputSchema,
    ...(options.description ? { description: options.description } : {}),
    ...(options.example ? { example: options.example } : {}),
  };
  return bazaarExtension(
    { input },
    {
      type: 'object',
      properties: {
        type: { type: 'string', const: 'mcp' },
        toolName: { type: 'string', const: options.toolName },
        transport: { type: 'string', enum: ['streamable-http', 'sse'] },
        inputSchema: { type: 'object' },
        description: { type: 'string' },
        example: { type: 'object' },
      },
      required: ['type', 'toolName', 'inputSchema'],
    },
  );
}

/** base64(JSON) as the PAYMENT-* headers carry it. */
export function encodeX402Header(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** The JSON object inside a PAYMENT-* header, or undefined when it is not base64 JSON of an object. */
export function decodeX402Header(value: string | null | undefined): Record<string, unknown> | undefined {
  if (typeof value !== 'string' || value.length === 0 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value.trim())) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value.trim(), 'base64').toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** True for a PaymentRequired as buyers recognize it (x402Version + accepts array). */
export function isPaymentRequired(value: unknown): value is PaymentRequired {
  const v = value as Partial<PaymentRequired> | null;
  return !!v && typeof v === 'object' && typeof v.x402Version === 'number' && Array.isArray(v.accepts);
}

export interface PaidOffer {
  facilitator: FacilitatorClient;
  accepts: PaymentRequirements[];
  resource: ResourceInfo;
  bazaar?: BazaarExtension;
}

export function paymentRequired(offer: PaidOffer, error?: string): PaymentRequired {
  return {
    x402Version: X402_VERSION,
    ...(error ? { error } : {}),
    resource: offer.resource,
    accepts: offer.accepts,
    ...(offer.bazaar ? { extensions: { bazaar: offer.bazaar } } : {}),
  };
}

const TERMS = ['scheme', 'network', 'asset', 'amount', 'payTo'] as const;

/** The offered terms the payload says it accepted; the first offer when none matches (the facilitator then names the mismatch). */
export function selectAccepted(offer: PaidOffer, payload: PaymentPayload): PaymentRequirements {
  const accepted = payload.accepted ?? {};
  return offer.accepts.find((terms) => TERMS.every((k) => terms[k] === accepted[k])) ?? offer.accepts[0]!;
}

export type Refusal = { ok: false; error: string; message: string; receipt?: SettleResponse };

function facilitatorFault(err: unknown): Refusal {
  if (err instanceof FacilitatorUnreachableError) return { ok: false, error: 'svc_internal_error', message: err.message };
  throw err;
}

/** POST /verify; a refusal carries the facilitator's code verbatim. */
export async function verifyOffer(
  offer: PaidOffer,
  payload: PaymentPayload,
): Promise<{ ok: true; requirements: PaymentRequirements } | Refusal> {
  const requirements = selectAccepted(offer, payload);
  try {
    const { body } = await offer.facilitator.verify(payload, requirements);
    if (body && typeof body === 'object' && body.isValid === true) return { ok: true, requirements };
    const error = typeof body?.invalidReason === 'string' ? body.invalidReason : 'svc_internal_error';
    return { ok: false, error, message: body?.invalidMessage ?? 'The facilitator refused the payment.' };
  } catch (err) {
    return facilitatorFault(err);
  }
}

/**
 * POST /settle; success means a 64-hex transaction came back. A `settlement_pending` carrying the
 * broadcast hash is sent again once, unchanged, as the stock x402 SDKs do: the facilitator answers
 * that retry from the transaction it already broadcast (docs/OPERATIONS.md "Outcomes the RPC
 * cannot tell").
 */
export async function settleOffer(
  offer: PaidOffer,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<{ ok: true; receipt: SettleResponse } | Refusal> {
  try {
    let { body } = await offer.facilitator.settle(payload, requirements);
    if (body?.success === false && body.errorReason === 'settlement_pending' && /^[0-9a-f]{64}$/.test(body.transaction))
      ({ body } = await offer.facilitator.settle(payload, requirements));
    if (body && typeof body === 'object' && body.success === true && /^[0-9a-f]{64}$/.test(body.transaction))
      return { ok: true, receipt: body };
    const error = typeof body?.errorReason === 'string' ? body.errorReason : 'svc_internal_error';
    return {
      ok: false,
      error,
      message: body?.errorMessage ?? 'The facilitator did not settle the payment.',
      ...(body && typeof body === 'object' ? { receipt: body } : {}),
    };
  } catch (err) {
    return facilitatorFault(err);
  }
}
