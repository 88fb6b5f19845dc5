/**
 * What makes two settle requests "the same request" for idempotency (docs/OPERATIONS.md
 * "Idempotent /settle"): the digest of the payment payload and the requirements together, over
 * their canonical JSON (object keys sorted), so a retry that serializes the same objects in another
 * key order is the same request, and any other change — another amount, payTo, asset, timeout,
 * resource or extension — is not.
 */
import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import type { PaymentPayload, PaymentRequirements, PaymentScheme } from '../scheme/types.ts';
import type { KeyBinding, RequestKey } from './types.ts';

const canonical = configure({ deterministic: true, bigint: true });

export function requestDigest(payload: unknown, requirements: unknown): string {
  return createHash('sha256')
    .update(canonical({ payload: payload ?? null, requirements: requirements ?? null }) ?? 'null')
    .digest('hex');
}

/** Whether a key's binding stands for this request (a binding without a digest: for its payment). */
export function bindingMatches(binding: KeyBinding, identity: string, digest: string): boolean {
  return binding.identity === identity && (binding.digest === null || binding.digest === digest);
}

/** The keys a settle request carries: its Idempotency-Key header and its `payment-identifier` id. */
export function requestKeys({ idempotencyKey, paymentId }: { idempotencyKey: string | null; paymentId?: string | null }): RequestKey[] {
  const keys: RequestKey[] = [];
  if (idempotencyKey !== null) keys.push({ kind: 'header', key: idempotencyKey });
  if (paymentId) keys.push({ kind: 'payment-identifier', key: paymentId });
  return keys;
}

/** The scheme's identity, or a hash of the whole payment when the scheme cannot decode it. */
export function identityOf({
  scheme,
  payload,
  requirements,
}: {
  scheme: PaymentScheme;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
}): string {
  const own = scheme.tracking?.identity(payload, requirements);
  if (own) return own;
  return createHash('sha256')
    .update(JSON.stringify([payload?.payload ?? null, requirements?.network ?? null]))
    .digest('hex');
}
