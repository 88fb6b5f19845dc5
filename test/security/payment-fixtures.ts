/**
 * A well-formed facilitator envelope and a scheme that settles at once (the named PaymentScheme
 * boundary), for the security tests that measure svc's own thread and sockets, not the chain.
 */
import type { PaymentScheme } from '../../src/scheme/types.ts';
import { FAKE_HASH, FAKE_PAYER, FAKE_REQUIREMENTS } from '../helpers/fake-scheme.ts';

export const HASH = FAKE_HASH;
export const PAYER = FAKE_PAYER;
export const requirements = FAKE_REQUIREMENTS;

/** The JSON body of POST /verify or /settle; `payloadExtra` adds to paymentPayload (resource, extensions). */
export function envelopeBody(payloadExtra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction: 'AAAA' }, ...payloadExtra },
    paymentRequirements: requirements,
  });
}

/** Verifies and settles everything, after `settleDelayMs` (a settlement waiting on the chain). */
export function instantScheme(settleDelayMs = 0): PaymentScheme {
  return {
    supported: () => ({
      kinds: [{ x402Version: 2, scheme: 'exact', network: 'stellar:testnet', extra: { areFeesSponsored: true } }],
      signers: { 'stellar:*': [PAYER] },
    }),
    verify: async () => ({ isValid: true, payer: PAYER }),
    settle: async () => {
      if (settleDelayMs > 0) await new Promise((r) => setTimeout(r, settleDelayMs));
      return { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER };
    },
  };
}
