/**
 * POST /verify and POST /settle. The service adds only envelope validation, kind routing and the
 * catalog hook (SPEC §1); every payment rule belongs to the scheme.
 */
import type { Context, Middleware, Next } from 'koa';
import type { CatalogPort } from '../catalog/types.ts';
import { defaultMessage } from '../codes.ts';
import type { SettlementJournal } from '../journal/journal.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcState } from '../http/middleware.ts';
import type { PaymentPayload, PaymentRequirements, PaymentScheme, SettleResult, VerifyResult } from '../scheme/types.ts';

/** The x402 protocol version this facilitator serves. */
export const SERVED_X402_VERSION = 2;

export interface FacilitatorEnvelope {
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

type PaymentState = SvcState & { envelope: FacilitatorEnvelope };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Envelope checks in SPEC order (§7.4): payload object, requirements object, served version.
 * The body is already known to be a JSON object (jsonObjectBody).
 */
export function facilitatorEnvelope(): Middleware {
  return async (ctx: Context, next: Next) => {
    const state = ctx.state as PaymentState;
    const body = ctx.request.body as Record<string, unknown>;
    const { paymentPayload, paymentRequirements } = body;
    if (isObject(paymentRequirements) && typeof paymentRequirements.network === 'string') {
      state.network = paymentRequirements.network;
    }
    if (!isObject(paymentPayload)) {
      throw new HttpError(400, 'svc_missing_payment_payload', `The request has no paymentPayload object (got ${describe(paymentPayload)}).`);
    }
    if (!isObject(paymentRequirements)) {
      throw new HttpError(400, 'svc_missing_payment_requirements', `The request has no paymentRequirements object (got ${describe(paymentRequirements)}).`);
    }
    if (paymentPayload.x402Version !== SERVED_X402_VERSION) {
      throw new HttpError(
        400,
        'svc_unsupported_x402_version',
        `paymentPayload.x402Version is ${describe(paymentPayload.x402Version)}; this facilitator serves x402Version ${SERVED_X402_VERSION}.`,
      );
    }
    state.envelope = { paymentPayload: paymentPayload as PaymentPayload, paymentRequirements: paymentRequirements as PaymentRequirements };
    await next();
  };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return `${typeof value} ${String(value)}`;
}

/** Without a scheme nothing can be decided: a 500, never a fake success. */
function requireScheme(scheme: PaymentScheme | undefined): PaymentScheme {
  if (!scheme) throw new HttpError(500, 'svc_internal_error', 'No payment scheme is mounted; this says nothing about payment validity.');
  return scheme;
}

/** Is (scheme, network) advertised for this protocol version? */
function isAdvertisedKind(scheme: PaymentScheme, envelope: FacilitatorEnvelope): boolean {
  const { scheme: name, network } = envelope.paymentRequirements;
  return scheme
    .supported()
    .kinds.some((k) => k.scheme === name && k.network === network && k.x402Version === envelope.paymentPayload.x402Version);
}

const UNSUPPORTED_KIND = 'svc_unsupported_kind' as const;

function optionalObjects(result: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['extensions', 'extra'] as const) {
    const value = (result as Record<string, unknown>)[key];
    if (isObject(value)) out[key] = value;
  }
  return out;
}

/** Shapes a scheme verdict as a VerifyResponse (§2.3), filling the message when empty. */
export function shapeVerifyResponse(result: VerifyResult): Record<string, unknown> {
  const payer = typeof result.payer === 'string' && result.payer !== '' ? { payer: result.payer } : {};
  if (result.isValid === true) return { isValid: true, ...payer, ...optionalObjects(result) };
  // A scheme that rejects without a code is a scheme defect; the rejection still needs a code.
  const code = result.invalidReason ?? 'unexpected_verify_error';
  const message = result.invalidMessage || defaultMessage(code);
  return { isValid: false, invalidReason: code, invalidMessage: message, ...payer, ...optionalObjects(result) };
}

const TX_HASH = /^[0-9a-f]{64}$/;

/** Shapes a scheme result as a SettleResponse (§2.4). A success without a hash is a fault. */
export function shapeSettleResponse(result: SettleResult, requestedNetwork: string): Record<string, unknown> {
  const network = typeof result.network === 'string' && result.network !== '' ? result.network : requestedNetwork;
  const payer = typeof result.payer === 'string' && result.payer !== '' ? { payer: result.payer } : {};
  if (result.success === true) {
    if (!TX_HASH.test(result.transaction)) throw new Error('scheme reported success without a 64-hex transaction hash');
    return { success: true, transaction: result.transaction, network, ...payer, ...optionalObjects(result) };
  }
  const code = result.errorReason ?? 'unexpected_settle_error';
  const message = result.errorMessage || defaultMessage(code);
  return { success: false, transaction: '', network, errorReason: code, errorMessage: message, ...payer, ...optionalObjects(result) };
}

export interface PaymentDeps {
  scheme?: PaymentScheme;
  catalog?: CatalogPort;
  /** When present, every settle goes through the journal (idempotency, policy, fee budget). */
  journal?: SettlementJournal;
}

/**
 * One log line per payment decision; public data only. `transaction` is the hash the scheme
 * reported, even on a failure where the response carries "" (an operator can look it up).
 */
function logDecision(state: PaymentState, route: string, body: Record<string, unknown>, code: unknown, transaction?: string): void {
  state.log.info(
    {
      route,
      code: code ?? null,
      payer: body.payer ?? null,
      amount: state.envelope.paymentRequirements.amount ?? null,
      network: state.envelope.paymentRequirements.network ?? null,
      transaction: transaction || null,
    },
    'payment decision',
  );
}

export function verifyHandler(deps: PaymentDeps): Middleware {
  return async (ctx: Context) => {
    const state = ctx.state as PaymentState;
    const scheme = requireScheme(deps.scheme);
    const { paymentPayload, paymentRequirements } = state.envelope;
    const body = isAdvertisedKind(scheme, state.envelope)
      ? shapeVerifyResponse(await scheme.verify(paymentPayload, paymentRequirements))
      : { isValid: false, invalidReason: UNSUPPORTED_KIND, invalidMessage: unsupportedKindMessage(state.envelope) };
    logDecision(state, 'POST /verify', body, body.invalidReason);
    ctx.status = 200;
    ctx.body = body;
  };
}

export function settleHandler(deps: PaymentDeps): Middleware {
  return async (ctx: Context) => {
    const state = ctx.state as PaymentState;
    const scheme = requireScheme(deps.scheme);
    const { paymentPayload, paymentRequirements } = state.envelope;
    const network = typeof paymentRequirements.network === 'string' ? paymentRequirements.network : '';
    const outcome = isAdvertisedKind(scheme, state.envelope) ? await settleOnce(deps, scheme, state.envelope, ctx.get('idempotency-key') || null) : null;
    const result = outcome?.result ?? null;
    const body = result
      ? shapeSettleResponse(result, network)
      : { success: false, transaction: '', network, errorReason: UNSUPPORTED_KIND, errorMessage: unsupportedKindMessage(state.envelope) };
    logDecision(state, 'POST /settle', body, body.errorReason, typeof result?.transaction === 'string' ? result.transaction : undefined);
    if (body.success === true && outcome?.fresh) {
      const header = await catalogOutcomeHeader(deps.catalog, state);
      if (outcome?.identity) await deps.journal?.markListed(outcome.identity);
      if (header) ctx.set('EXTENSION-RESPONSES', header);
    }
    ctx.status = 200;
    ctx.body = body;
  };
}

/** Through the journal when one is mounted; `fresh` = this request submitted the transaction. */
async function settleOnce(deps: PaymentDeps, scheme: PaymentScheme, envelope: FacilitatorEnvelope, idempotencyKey: string | null) {
  const { paymentPayload: payload, paymentRequirements: requirements } = envelope;
  if (deps.journal) return deps.journal.settle({ scheme, payload, requirements, idempotencyKey });
  return { result: await scheme.settle(payload, requirements), fresh: true, identity: null };
}

function unsupportedKindMessage(envelope: FacilitatorEnvelope): string {
  const { scheme, network } = envelope.paymentRequirements;
  return `The (scheme, network) pair (${JSON.stringify(scheme)}, ${JSON.stringify(network)}) is not advertised; check GET /supported.`;
}

/**
 * The catalog hook after a successful settlement. It can only decorate the response: a null
 * outcome or a throw means no header (the throw is logged), and the body is never touched.
 */
async function catalogOutcomeHeader(catalog: CatalogPort | undefined, state: PaymentState): Promise<string | null> {
  if (!catalog) return null;
  try {
    const outcome = await catalog.recordSettlement({
      paymentPayload: state.envelope.paymentPayload as Record<string, unknown>,
      paymentRequirements: state.envelope.paymentRequirements as Record<string, unknown>,
    });
    if (!outcome) return null;
    return Buffer.from(JSON.stringify({ bazaar: outcome }), 'utf8').toString('base64');
  } catch (err) {
    state.log.error({ err }, 'catalog hook threw; EXTENSION-RESPONSES omitted');
    return null;
  }
}
