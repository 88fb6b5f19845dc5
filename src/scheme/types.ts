/**
 * The narrow interface of a payment scheme component (x402 style): `supported`, `verify`, `settle`.
 * It knows nothing of HTTP. Shapes follow SPEC.md §2.1–2.5.
 */
import type { SchemeCode, SettleCode, SettlementCode, VerifyCode } from '../codes.ts';

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
  errorReason?: SchemeCode | SettleCode | SettlementCode;
  errorMessage?: string;
  /** Set when the transaction was submitted but its outcome could not be confirmed. */
  unconfirmed?: boolean;
}

/** A transaction about to be submitted: what the journal records and the policy judges. */
export interface SubmissionAttempt {
  transaction: string;
  submitter: string;
  feeStroops: bigint;
  payer: string;
  payTo: string;
  asset: string;
  amount: string;
  /** Unix seconds after which the transaction can no longer land. */
  validUntil: number;
}

/** Called by a scheme's settle between building and submitting; a refusal stops the submission. */
export interface SettleHooks {
  beforeSubmit(attempt: SubmissionAttempt): Promise<{ code: SettlementCode; message: string } | null>;
}

/** The on-chain state of a journaled transaction, as far as the chain can tell now. */
export type ChainStatus = 'settled' | 'failed' | 'expired' | 'pending';

/** What a scheme offers the settlement journal (chain-specific knowledge, chain-agnostic shape). */
export interface SettlementTracking {
  /** A stable identity of the payment (one per authorization), or null when undecodable. */
  identity(payload: PaymentPayload, requirements: PaymentRequirements): string | null;
  /** The code a copy of an already-submitted payment gets (the chain would refuse it the same way). */
  replayCode: SchemeCode;
  /** Looks a transaction up; `expired` = never included and now never can be. */
  status(transaction: string, validUntil: number): Promise<ChainStatus>;
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
  settle(payload: PaymentPayload, requirements: PaymentRequirements, hooks?: SettleHooks): Promise<SettleResult>;
  /** Present on schemes whose settlements can be journaled and reconciled. */
  tracking?: SettlementTracking;
}
