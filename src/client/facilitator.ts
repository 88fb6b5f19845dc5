/**
 * Typed HTTP client for a facilitator, generated from our own openapi.yaml (openapi-fetch over
 * src/generated/openapi.ts): the published document is what our own client runs on. Used by the
 * seller toolkit (verify, settle) and the agent tool server (list, search).
 *
 *   const facilitator = createFacilitatorClient('http://127.0.0.1:4021');
 *   const page = await facilitator.search({ query: 'weather' });   // { ok, data } | { ok:false, status, code, reason }
 *
 * A facilitator that does not answer at transport level throws FacilitatorUnreachableError; every
 * HTTP answer is returned, never thrown.
 */
import createClient from 'openapi-fetch';
import type { components, operations, paths } from '../generated/openapi.ts';
import { X402_VERSION } from '../scheme/types.ts';

type Schemas = components['schemas'];
export type DiscoveryResource = Schemas['DiscoveryResource'];
export type DiscoveryListResponse = Schemas['DiscoveryListResponse'];
export type DiscoverySearchResponse = Schemas['DiscoverySearchResponse'];
export type SupportedResponse = Schemas['SupportedResponse'];
export type VerifyResponse = Schemas['VerifyResponse'];
export type SettleResponse = Schemas['SettleResponse'];
export type DelistRequest = Schemas['DelistRequest'];
export type DelistResponse = Schemas['DelistResponse'];
export type DelistText = Schemas['DelistText'];
export type DelistTextQuery = operations['getDelistText']['parameters']['query'];
export type ListQuery = NonNullable<operations['listDiscoveryResources']['parameters']['query']>;
export type SearchQuery = operations['searchDiscoveryResources']['parameters']['query'];

export const DEFAULT_FACILITATOR_TIMEOUT_MS = 30_000;

/** The facilitator did not answer at transport level (refused, reset, DNS, timeout). */
export class FacilitatorUnreachableError extends Error {
  constructor(
    readonly url: string,
    detail: string,
  ) {
    super(`The facilitator at ${url} did not answer: ${detail}`);
    this.name = 'FacilitatorUnreachableError';
  }
}

/** One facilitator answer: the 2xx body, or the status plus the `svc_*` code of an ErrorEnvelope (if it carried one). */
export type FacilitatorResult<T> = { ok: true; data: T } | { ok: false; status: number; code?: string; reason: string };

/** A /verify or /settle answer: the body for 200, 400 and 500 alike (all use the response shape). */
export interface PaymentAnswer<T> {
  status: number;
  body: T;
  /** Decoded EXTENSION-RESPONSES header of /settle, when present and decodable. */
  extensionResponses?: Record<string, unknown>;
}

export interface FacilitatorClient {
  readonly url: string;
  supported(): Promise<FacilitatorResult<SupportedResponse>>;
  list(query?: ListQuery): Promise<FacilitatorResult<DiscoveryListResponse>>;
  search(query: SearchQuery): Promise<FacilitatorResult<DiscoverySearchResponse>>;
  verify(paymentPayload: unknown, paymentRequirements: unknown): Promise<PaymentAnswer<VerifyResponse>>;
  settle(paymentPayload: unknown, paymentRequirements: unknown): Promise<PaymentAnswer<SettleResponse>>;
  /** GET /discovery/delist: the text to sign to withdraw a listing from this catalog. */
  delistText(query: DelistTextQuery): Promise<FacilitatorResult<DelistText>>;
  /** POST /discovery/delist with a signed body (src/client/delist.ts signs one). */
  delist(request: DelistRequest): Promise<FacilitatorResult<DelistResponse>>;
}

export interface FacilitatorClientOptions {
  /** Per-request timeout; default 30 s (a settlement waits for a ledger). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const describe = (err: unknown): string => {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err instanceof Error ? err.message : String(err)}${cause}`;
};

function envelopeCode(error: unknown): { code?: string; reason?: string } {
  const inner = (error as { error?: { code?: unknown; reason?: unknown } } | undefined)?.error;
  return {
    ...(typeof inner?.code === 'string' ? { code: inner.code } : {}),
    ...(typeof inner?.reason === 'string' ? { reason: inner.reason } : {}),
  };
}

function decodeHeaderJson(value: string | null): Record<string, unknown> | undefined {
  if (!value) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function createFacilitatorClient(baseUrl: string, options: FacilitatorClientOptions = {}): FacilitatorClient {
  const url = baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_FACILITATOR_TIMEOUT_MS;
  const baseFetch = options.fetch ?? fetch;
  const client = createClient<paths>({
    baseUrl: url,
    fetch: (request: Request) => baseFetch(request, { signal: AbortSignal.timeout(timeoutMs) }),
  });

  async function call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw new FacilitatorUnreachableError(url, describe(err));
    }
  }

  /** A discovery/supported answer. A non-JSON or unexpected body surfaces as a status without code. */
  function result<T>(answer: { data?: T; error?: unknown; response: Response }): FacilitatorResult<T> {
    if (answer.response.ok && answer.data !== undefined) return { ok: true, data: answer.data };
    const { code, reason } = envelopeCode(answer.error);
    return {
      ok: false,
      status: answer.response.status,
      ...(code ? { code } : {}),
      reason: reason ?? `The facilitator answered HTTP ${answer.response.status} without an error envelope.`,
    };
  }

  function payment<T>(answer: { data?: T; error?: unknown; response: Response }, withExtensions = false): PaymentAnswer<T> {
    const body = (answer.data ?? answer.error) as T;
    const extensionResponses = withExtensions ? decodeHeaderJson(answer.response.headers.get('extension-responses')) : undefined;
    return { status: answer.response.status, body, ...(extensionResponses ? { extensionResponses } : {}) };
  }

  const envelope = (paymentPayload: unknown, paymentRequirements: unknown) =>
    ({ x402Version: X402_VERSION, paymentPayload, paymentRequirements }) as Schemas['FacilitatorRequest'];

  return {
    url,
    supported: () => call(async () => result(await client.GET('/supported'))),
    list: (query = {}) => call(async () => result(await client.GET('/discovery/resources', { params: { query } }))),
    search: (query) => call(async () => result(await client.GET('/discovery/search', { params: { query } }))),
    verify: (paymentPayload, paymentRequirements) =>
      call(async () => payment(await client.POST('/verify', { body: envelope(paymentPayload, paymentRequirements) }))),
    settle: (paymentPayload, paymentRequirements) =>
      call(async () => payment(await client.POST('/settle', { body: envelope(paymentPayload, paymentRequirements) }), true)),
    delistText: (query) => call(async () => result(await client.GET('/discovery/delist', { params: { query } }))),
    delist: (request) => call(async () => result(await client.POST('/discovery/delist', { body: request }))),
  };
}
