/**
 * The chain-agnostic core of the facilitator: the narrow interface a payment scheme implements
 * (`supported`, `verify`, `settle`) and the extension hook that runs after a settlement. Every
 * shape is the generated OpenAPI type (openapi.yaml, `npm run codegen`), so a scheme that answers
 * a field the contract does not declare is a compile error. Nothing here knows HTTP or a chain.
 */
import type { PolicyCode, SchemeCode, ServiceCode, SettlementCode } from '../codes.ts';
import type { components } from '../generated/openapi.ts';

type Schemas = components['schemas'];

/**
 * The x402 protocol version this facilitator serves: `PaymentPayload.x402Version` is the
 * constant 2 in openapi.yaml, and routing keys on it (docs/ARCHITECTURE.md).
 */
export const X402_VERSION: Schemas['PaymentPayload']['x402Version'] = 2;

export type PaymentRequirements = Schemas['PaymentRequirements'];
/**
 * The client payload. openapi.yaml (PaymentPayload) leaves `resource`, `accepted`, `payload` and
 * `extensions` to the scheme and the catalog, so the envelope checks do not type them; this is
 * the shape a buyer builds and a scheme reads, each scheme checking what it relies on.
 */
export interface PaymentPayload {
  x402Version: number;
  resource?: { url?: string; description?: string; mimeType?: string; [key: string]: unknown };
  accepted?: Partial<PaymentRequirements> & Record<string, unknown>;
  payload?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}
export type FacilitatorRequest = Schemas['FacilitatorRequest'];
export type VerifyResponse = Schemas['VerifyResponse'];
export type SettleResponse = Schemas['SettleResponse'];
export type SupportedKind = Schemas['SupportedKind'];
export type SupportedResponse = Schemas['SupportedResponse'];
/** A scheme's verdict is the VerifyResponse itself (the registry fills a missing message). */
/**
 * A scheme's verification result: the VerifyResponse (the registry drops everything else), plus
 * `feeStroops` on a valid payment: the fee settle would declare for it now, so /verify judges the
 * fee budget as settle will (docs/OPERATIONS.md "Sponsorship").
 */
export type VerifyResult = VerifyResponse & { feeStroops?: bigint };
/**
 * A scheme's settlement result: the SettleResponse (the registry fills a missing message and drops
 * everything else), plus `unconfirmed` when the transaction was submitted but its outcome could
 * not be confirmed (the journal records it as `unknown` and reconciles it).
 */
export type SettleResult = SettleResponse & { unconfirmed?: boolean };

/** What one scheme instance serves: its kinds and the public addresses that source its settlements. */
export interface SchemeSupport {
  kinds: SupportedKind[];
  /** CAIP-2 pattern (e.g. `stellar:*`) → public addresses. */
  signers: Record<string, string[]>;
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

/**
 * Leases on source accounts shared by every instance of svc (docs/SCALING.md): a chain takes one
 * pending transaction per source account, and with several instances the local pool alone cannot
 * guarantee that. Implemented by a database every instance reaches; a lease expires on its own
 * when the instance holding it dies.
 */
export interface SharedLeases {
  /** Takes `account` for this instance; null while another instance holds it. */
  acquire(account: string): Promise<SharedLease | null>;
  close(): Promise<void>;
}

export interface SharedLease {
  /** No other instance held the account since this instance last did: a locally tracked sequence is still right. */
  readonly continuous: boolean;
  release(): Promise<void>;
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
  /** Looks a transaction up on `network` (the record's); `expired` = never included and now never can be. */
  status(transaction: string, validUntil: number, network?: string): Promise<ChainStatus>;
}

/**
 * Runs a settle through the settlement journal (idempotency, policy, fee budget); implemented by
 * src/journal. `fresh` is true when this request submitted the transaction, so the after-settle
 * hooks run now; `identity` names the journal record (null: not journaled).
 */
export interface SettlementGate {
  settle(request: {
    scheme: PaymentScheme;
    payload: PaymentPayload;
    requirements: PaymentRequirements;
    idempotencyKey: string | null;
    /** The idempotency key an extension carries in the payload (`payment-identifier`), null when none. */
    paymentId?: string | null;
  }): Promise<{
    result: SettleResult;
    fresh: boolean;
    identity: string | null;
  }>;
  /** The after-settle hooks of the payment `identity` have run. */
  markListed(identity: string): Promise<void>;
  /**
   * For /verify of a payment the scheme found valid: the policy or budget refusal settle would
   * answer now (same code), or null. Verify and settle agree on what is refused.
   */
  verifyRefusal(
    /** `network`: the requirements' (each network's budget is counted apart). */
    payment: Pick<SubmissionAttempt, 'payer' | 'payTo' | 'asset' | 'amount'> & { network: string },
    /** The fee settle would pay, when the scheme knows it; unknown: a cap refuses once nothing of it is left. */
    feeStroops?: bigint,
  ): Promise<{ code: PolicyCode; message: string } | null>;
}

export interface PaymentScheme {
  /** The (x402Version, scheme, network) kinds this instance serves; read once, when registered. */
  supported(): SchemeSupport;
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements, hooks?: SettleHooks): Promise<SettleResult>;
  /** Present on schemes whose settlements can be journaled and reconciled. */
  readonly tracking?: SettlementTracking;
  /** The accounts that sign settlements, when the scheme pools them (read by the pool gauges of GET /metrics). */
  readonly pool?: { readonly busy: number; readonly waiting: number };
  /** Tokens whose code and decimals the scheme knows on its networks (the explorer shows prices in units). */
  knownAssets?(): AssetInfo[];
  /**
   * Why this scheme could never settle these requirements, judged without any network call (an
   * asset or amount of the wrong form), or null: POST /discovery/validate asks it of each accept.
   */
  requirementsDefect?(requirements: PaymentRequirements): string | null;
}

/** A token as people name it: `amount` base units are amount / 10^decimals `code`. */
export interface AssetInfo {
  network: string;
  /** The asset as PaymentRequirements.asset names it (a contract id on Stellar). */
  asset: string;
  code: string;
  decimals: number;
}

/** A payment that settled: the request as received and the response about to be sent. */
export interface SettledPayment {
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
  response: SettleResponse;
}

/** The log calls the core makes (a pino Logger satisfies it). */
export interface CoreLogger {
  error(obj: object, msg: string): void;
}

/**
 * An x402 extension (e.g. `bazaar`, the discovery catalog). Its `name` is advertised in
 * /supported `extensions`; `afterSettle` runs after every successful settlement and its non-null
 * answer becomes the `name` entry of the EXTENSION-RESPONSES header (openapi.yaml,
 * ExtensionResponses). It can only decorate: a throw or null means no entry, never a changed body.
 * A fault must reject (not resolve null): the settlement journal then keeps the payment unlisted
 * and its reconciler runs the hook again (docs/OPERATIONS.md).
 */
export interface FacilitatorExtension {
  readonly name: string;
  afterSettle?(settled: SettledPayment, log: CoreLogger): Promise<unknown>;
  /**
   * A settlement of this payload is about to be attempted (it passed the payload refusals): an
   * extension may start what its afterSettle will need, without waiting. Must not throw.
   */
  beforeSettle?(payload: PaymentPayload): void;
  /**
   * Why this extension's part of a payload is malformed, or null: /verify and /settle both refuse
   * such a payload with the code, before the scheme sees it.
   */
  payloadRefusal?(payload: PaymentPayload): { code: ServiceCode; message: string } | null;
  /** The idempotency key this extension carries in a payload, or null; the settlement journal binds it. */
  paymentId?(payload: PaymentPayload): string | null;
}
