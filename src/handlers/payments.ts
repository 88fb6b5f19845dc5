/**
 * POST /verify and POST /settle. The service adds only envelope validation; kind routing, the
 * response shaping and the extension hooks belong to the scheme registry (src/scheme/registry.ts),
 * and every payment rule to the scheme (docs/ARCHITECTURE.md).
 */
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext, SvcState } from '../http/middleware.ts';
import type { PaymentEnvelope, SchemeRegistry } from '../scheme/registry.ts';
import { X402_VERSION, type PaymentPayload, type PaymentRequirements, type SettleResponse, type VerifyResponse } from '../scheme/types.ts';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Envelope checks in the order openapi.yaml documents them: payload object, requirements object,
 * served version. The body is already known to be a JSON object (jsonObjectBody).
 */
export function facilitatorEnvelope(): SvcMiddleware {
  return async (ctx: SvcContext, next: SvcNext) => {
    const body = ctx.request.body as Record<string, unknown>;
    const { paymentPayload, paymentRequirements } = body;
    if (isObject(paymentRequirements) && typeof paymentRequirements.network === 'string') {
      ctx.state.network = paymentRequirements.network;
    }
    if (!isObject(paymentPayload)) {
      throw new HttpError(
        400,
        'svc_missing_payment_payload',
        `The request has no paymentPayload object (got ${describe(paymentPayload)}).`,
      );
    }
    if (!isObject(paymentRequirements)) {
      throw new HttpError(
        400,
        'svc_missing_payment_requirements',
        `The request has no paymentRequirements object (got ${describe(paymentRequirements)}).`,
      );
    }
    if (paymentPayload.x402Version !== X402_VERSION) {
      throw new HttpError(
        400,
        'svc_unsupported_x402_version',
        `paymentPayload.x402Version is ${describe(paymentPayload.x402Version)}; this facilitator serves x402Version ${X402_VERSION}.`,
      );
    }
    // The shapes themselves are checked next, against openapi.yaml (openApiValidation).
    ctx.state.envelope = {
      paymentPayload: paymentPayload as PaymentPayload,
      paymentRequirements: paymentRequirements as PaymentRequirements,
    };
    await next();
  };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return `a ${typeof value}`;
}

function envelopeOf(state: SvcState): PaymentEnvelope {
  if (!state.envelope) throw new Error('payment handler mounted before facilitatorEnvelope');
  return state.envelope;
}

/**
 * One log line per payment decision; public data only. `transaction` is the hash the scheme
 * reported, even on a failure where the response carries "" (an operator can look it up).
 */
function logDecision(
  state: SvcState,
  route: string,
  body: VerifyResponse | SettleResponse,
  code: string | undefined,
  transaction: string | null,
): void {
  const { paymentRequirements } = envelopeOf(state);
  state.log.info(
    {
      route,
      code: code ?? null,
      payer: body.payer ?? null,
      amount: paymentRequirements.amount ?? null,
      network: paymentRequirements.network ?? null,
      transaction,
    },
    'payment decision',
  );
}

export function verifyHandler(registry: SchemeRegistry): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const body = await registry.verify(envelopeOf(ctx.state));
    logDecision(ctx.state, 'POST /verify', body, body.invalidReason, null);
    ctx.status = 200;
    ctx.body = body;
  };
}

export function settleHandler(registry: SchemeRegistry): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const { response, extensionResponses, reportedTransaction } = await registry.settle(
      envelopeOf(ctx.state),
      ctx.state.log,
      ctx.get('Idempotency-Key') || null,
    );
    logDecision(ctx.state, 'POST /settle', response, response.errorReason, reportedTransaction);
    if (extensionResponses) ctx.set('EXTENSION-RESPONSES', Buffer.from(JSON.stringify(extensionResponses), 'utf8').toString('base64'));
    // A key reused for another payment or request is a conflict, as the payment-identifier
    // extension's spec has it (openapi.yaml /settle 409); every other decision is a 200.
    ctx.status = response.errorReason === 'svc_idempotency_key_conflict' ? 409 : 200;
    ctx.body = response;
  };
}
