/**
 * The narrow interface of a payment scheme component (x402 style): `supported`, `verify`, `settle`.
 * It knows nothing of HTTP. Shapes follow SPEC.md §2.1–2.5.
 */
import type { SchemeCode, SettleCode, VerifyCode } from '../codes.ts';

export interface PaymentRequirements {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface PaymentPayload {
  x402Version: number;
  resource?: { url?: string; description?: string; mimeType?: string; [key: string]: unknown };
  accepted?: Partial<PaymentRequirements> & Record<string, unknown>;
  payload?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface VerifyResult {
  isValid: boolean;
  /** Present exactly when isValid is false. */
  invalidReason?: VerifyCode;
  invalidMessage?: string;
  payer?: string;
}

export interface SettleResult {
  success: boolean;
  /** 64-hex hash on success, "" on failure. */
  transaction: string;
  network: string;
  payer?: string;
  /** Present exactly when success is false: a settle code or a verify code from re-verification. */
  errorReason?: SchemeCode | SettleCode;
  errorMessage?: string;
}

export interface SupportedKind {
  x402Version: number;
  scheme: string;
  network: string;
  extra?: Record<string, unknown>;
}

export interface PaymentScheme {
  /** The kinds this scheme serves and the public addresses that source settlements. */
  supported(): { kinds: SupportedKind[]; signers: Record<string, string[]> };
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResult>;
}
