/**
 * The x402 `payment-identifier` extension (openapi.yaml /settle, docs/OPERATIONS.md "Idempotent
 * /settle"): a client-chosen id in the payment payload's `extensions`, the protocol's own
 * idempotency key. svc advertises it in GET /supported (only with a journal, which honours it),
 * refuses a malformed one at /verify and /settle alike, and the settlement journal binds the id
 * like an Idempotency-Key. The extension is checked with @x402/extensions' own validator, given only
 * the extension's `info`: the payload's `schema` is the client's copy of the seller's declaration,
 * and compiling a client-supplied JSON Schema on every request would hand any caller a CPU lever
 * (the id's own rules — 16-128 characters of letters, digits, `-` and `_` — are the library's).
 */
import { PAYMENT_IDENTIFIER, extractAndValidatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import type { FacilitatorExtension, PaymentPayload } from '../scheme/types.ts';

export const paymentIdentifierExtension: FacilitatorExtension = {
  name: PAYMENT_IDENTIFIER,
  payloadRefusal(payload) {
    const found = paymentIdentifierOf(payload);
    if (!('invalid' in found)) return null;
    return {
      code: 'svc_payment_identifier_invalid',
      message: `The payment-identifier extension is malformed: ${found.invalid}. Nothing was verified or submitted.`,
    };
  },
  paymentId(payload) {
    const found = paymentIdentifierOf(payload);
    return 'id' in found ? found.id : null;
  },
};

/** The payload's payment-identifier id (null when it carries none), or why the extension is malformed. */
export function paymentIdentifierOf(payload: PaymentPayload): { id: string | null } | { invalid: string } {
  const extensions = payload.extensions;
  const extension = typeof extensions === 'object' && extensions !== null ? extensions[PAYMENT_IDENTIFIER] : undefined;
  // Absent (or null, false, ''), as the library's own extraction reads it: no id.
  if (!extension) return { id: null };
  const info = typeof extension === 'object' && extension !== null ? (extension as { info?: unknown }).info : undefined;
  const { id, validation } = extractAndValidatePaymentIdentifier({ ...payload, extensions: { [PAYMENT_IDENTIFIER]: { info } } } as never);
  if (!validation.valid) return { invalid: (validation.errors ?? ['malformed']).join('; ') };
  return { id };
}
