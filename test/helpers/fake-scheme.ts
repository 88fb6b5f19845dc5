/**
 * The one scripted payment scheme of the test suite (the named boundary: PaymentScheme in
 * src/scheme/types.ts). It answers what the test sets, records what it was asked, and serves the
 * kinds it is given (by default `exact` on stellar:testnet, as the real Stellar scheme would).
 */
import type { PaymentScheme, SchemeSupport, SettleResult, SupportedKind, VerifyResult } from '../../src/scheme/types.ts';

export const FAKE_HASH = 'ab'.repeat(32);
export const FAKE_PAYER = 'GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG';
export const FAKE_SIGNER = 'GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3';

/** Well-formed `exact` requirements on stellar:testnet (the envelope checks pass; nothing is on chain). */
export const FAKE_REQUIREMENTS = {
  scheme: 'exact',
  network: 'stellar:testnet',
  asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
  amount: '100000',
  payTo: 'GBZXN7PIRZGNMHGA7MUUUF4GWPY5AYPV6LY4UV2GL6VJGIQRXFDNMADI',
  maxTimeoutSeconds: 60,
  extra: { areFeesSponsored: true },
};
export const FAKE_PAYLOAD = { x402Version: 2, accepted: FAKE_REQUIREMENTS, payload: { transaction: 'AAAA' } };
/** The body of POST /verify or /settle for the fake requirements. */
export const FAKE_ENVELOPE = { x402Version: 2, paymentPayload: FAKE_PAYLOAD, paymentRequirements: FAKE_REQUIREMENTS };

export const exactKind = (network = 'stellar:testnet'): SupportedKind => ({
  x402Version: 2,
  scheme: 'exact',
  network,
  extra: { areFeesSponsored: true },
});

type Scripted<T> = T | Error | ((call: { payload: unknown; requirements: unknown }) => T | Promise<T>);

export interface FakeSchemeOptions {
  kinds?: SupportedKind[];
  signers?: Record<string, string[]>;
  verify?: Scripted<VerifyResult>;
  settle?: Scripted<SettleResult>;
  pool?: { busy: number; waiting: number };
}

export class FakeScheme implements PaymentScheme {
  verifyResult: Scripted<VerifyResult>;
  settleResult: Scripted<SettleResult>;
  /** 'verify' / 'settle', in call order. */
  calls: string[] = [];
  /** The requests the scheme received. */
  received: Array<{ payload: unknown; requirements: unknown }> = [];
  readonly pool?: { busy: number; waiting: number };
  private readonly support: SchemeSupport;

  constructor(options: FakeSchemeOptions = {}) {
    const network = options.kinds?.[0]?.network ?? 'stellar:testnet';
    this.support = { kinds: options.kinds ?? [exactKind()], signers: options.signers ?? { 'stellar:*': [FAKE_SIGNER] } };
    this.verifyResult = options.verify ?? { isValid: true, payer: FAKE_PAYER };
    this.settleResult = options.settle ?? { success: true, transaction: FAKE_HASH, network, payer: FAKE_PAYER };
    if (options.pool) this.pool = options.pool;
  }

  supported(): SchemeSupport {
    return this.support;
  }

  verify(payload: unknown, requirements: unknown): Promise<VerifyResult> {
    this.calls.push('verify');
    return this.answer(this.verifyResult, payload, requirements);
  }

  settle(payload: unknown, requirements: unknown): Promise<SettleResult> {
    this.calls.push('settle');
    return this.answer(this.settleResult, payload, requirements);
  }

  private async answer<T>(scripted: Scripted<T>, payload: unknown, requirements: unknown): Promise<T> {
    this.received.push({ payload, requirements });
    if (scripted instanceof Error) throw scripted;
    if (typeof scripted === 'function')
      return (scripted as (call: { payload: unknown; requirements: unknown }) => T | Promise<T>)({ payload, requirements });
    return scripted;
  }
}
