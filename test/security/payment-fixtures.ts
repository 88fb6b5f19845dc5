/**
 * A well-formed facilitator envelope and a scheme that settles at once (the named PaymentScheme
 * boundary), for the security tests that measure svc's own thread and sockets, not the chain.
 */
import type { PaymentScheme } from '../../src/scheme/types.ts';

export const HASH = 'ab'.repeat(32);
export const PAYER = 'GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG';
export const requirements = {
  scheme: 'exact',
  network: 'stellar:testnet',
  asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
  amount: '100000',
  payTo: 'GBZXN7PIRZGNMHGA7MUUUF4GWPY5AYPV6LY4UV2GL6VJGIQRXFDNMADI',
  maxTimeoutSeconds: 60,
  extra: { areFeesSponsored: true },
};

/** The JSON body of POST /verify or /settle; `payloadExtra` adds to paymentPayload (resource, extensions). */
export function envelopeBody(payloadExtra: Record<string, unknown> = {}): string {
  return JSON.stringify({ x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction: 'AAAA' }, ...payloadExtra }, paymentRequirements: requirements });
}

/** Verifies and settles everything, after `settleDelayMs` (a settlement waiting on the chain). */
export function instantScheme(settleDelayMs = 0): PaymentScheme {
  return {
    supported: () => ({ kinds: [{ x402Version: 2, scheme: 'exact', network: 'stellar:testnet', extra: { areFeesSponsored: true } }], signers: { 'stellar:*': [PAYER] } }),
    verify: async () => ({ isValid: true, payer: PAYER }),
    settle: async () => {
      if (settleDelayMs > 0) await new Promise((r) => setTimeout(r, settleDelayMs));
      return { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER };
    },
  };
}
