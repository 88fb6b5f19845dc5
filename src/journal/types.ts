/**
 * The settlement journal's records and its store interface. The store is async so that a
 * networked implementation (e.g. Postgres) can stand in for the SQLite one (sqlite/store.ts).
 * Everything recorded here is public: addresses, amounts, hashes and the signed payment itself
 * (which the chain publishes once it lands). No key or seed ever reaches the journal.
 */
import type { PolicyCode } from '../codes.ts';
import type { PaymentPayload, PaymentRequirements, PaymentScheme, SettleResult, SubmissionAttempt } from '../scheme/types.ts';

export type SettlementState = 'submitted' | 'settled' | 'failed' | 'unknown';

export interface StateChange {
  state: SettlementState;
  /** Unix milliseconds. */
  at: number;
  detail: string;
}

/**
 * Where a caller's idempotency key came from: the `Idempotency-Key` header, or the id of the x402
 * `payment-identifier` extension in the payment payload (docs/OPERATIONS.md "Idempotent /settle").
 */
export type KeyKind = 'header' | 'payment-identifier';

export interface RequestKey {
  kind: KeyKind;
  key: string;
}

/**
 * The payment a key was first reserved with: its identity and the digest of the whole request
 * (payload and requirements). Null `digest`: bound before digests were kept; it stands for its
 * payment.
 */
export interface KeyBinding {
  identity: string;
  digest: string | null;
}

/** What is known about an attempt before it is submitted. */
export interface NewSettlement extends SubmissionAttempt {
  /** The payment's identity (see `SettlementTracking.identity`): one record per payment. */
  identity: string;
  idempotencyKey: string | null;
  /** The digest of this request's payload and requirements (request-digest.ts). */
  requestDigest: string;
  /** The keys this request carries; each is bound to (identity, requestDigest) unless bound already. */
  keys: RequestKey[];
  network: string;
  /** The request as received (public data), replayed into the catalog after reconciliation. */
  paymentPayload: string;
  paymentRequirements: string;
}

export interface SettlementRecord extends Omit<NewSettlement, 'requestDigest' | 'keys'> {
  state: SettlementState;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: number;
  updatedAt: number;
  /** How often the catalog hook has faulted for this settled payment (its retries back off). */
  listFailures: number;
  /**
   * The digest of a request that was answered `settlement_pending` and is owed the outcome: its
   * retry (the SDKs send the same payload again, without a key) gets it once (journal.ts).
   */
  owedDigest: string | null;
  history: StateChange[];
}

/** The two parties whose budgets a payment draws on. */
export interface BudgetParties {
  payer: string;
  payTo: string;
  /** Each network's fees are counted apart: its XLM is its own (docs/OPERATIONS.md "Several networks"). */
  network: string;
}

/** Where the budget counts from: today's fees since `dayStart`, the payer's failures since `failuresSince` (unix ms). */
export interface BudgetWindow {
  dayStart: number;
  failuresSince: number;
}

/**
 * What the journal counts against a payment's budgets (policy.ts judges it): the declared fees of
 * every attempt since the window's day start, in all, by the payer, to the payTo, and to payTo
 * addresses that had no history when they were paid; whether each party has history (a settled
 * payment in its role before today); the payer's settlements that failed on chain in the window.
 */
export interface BudgetUsage {
  total: bigint;
  payer: bigint;
  payTo: bigint;
  newPayTos: bigint;
  payerHasHistory: boolean;
  payToHasHistory: boolean;
  payerFailures: number;
}

/**
 * Today's sponsored fees by payTo, summed up for the /metrics gauges (docs/OPERATIONS.md
 * "Metrics"): how many payTos were sponsored since `dayStart`, how many of them reached `nearCap`
 * and `cap` (0 when that bound is null), and the most any one of them was sponsored. A summary,
 * not one series per payTo: payTos are unbounded and chosen by whoever pays.
 */
export interface PayToSpending {
  payTos: number;
  nearCap: number;
  atCap: number;
  largest: bigint;
}

/** A policy or budget refusal, judged inside the reserve's write transaction. */
export interface BudgetRefusal {
  code: PolicyCode;
  message: string;
}

/** How reserve judges the budget: the window it counts in, and the judgement of the usage it read (null admits). */
export interface BudgetRule {
  window: BudgetWindow;
  judge(usage: BudgetUsage): BudgetRefusal | null;
}

export type ReserveResult =
  | { ok: true }
  | { ok: false; reason: 'duplicate' }
  | { ok: false; reason: 'refused'; refusal: BudgetRefusal }
  /** A key of the request is bound to another payment or another request digest. */
  | { ok: false; reason: 'key_conflict' };

/** The error code of a settlement that failed on chain (or was never included): it counts against its payer. */
export const ON_CHAIN_FAILURE_CODE = 'settle_exact_stellar_transaction_failed';

export interface JournalStore {
  get(identity: string): Promise<SettlementRecord | null>;
  getByTransaction(transaction: string): Promise<SettlementRecord | null>;
  /** The payment `key` was first reserved with, if any. */
  keyBinding(key: RequestKey): Promise<KeyBinding | null>;
  /** The request with `digest` was answered `settlement_pending` for this payment. */
  markOwed(identity: string, digest: string): Promise<void>;
  /** Takes the owed outcome for the request with `digest`: true for exactly one caller. */
  claimOwed(identity: string, digest: string): Promise<boolean>;
  /**
   * Inserts a `submitted` record unless the identity exists, a key of the request is bound to
   * another payment or request digest, or `budget.judge` refuses the usage read in the same write
   * transaction (so caps hold across concurrent requests and instances); binds the request's keys
   * that are not bound yet (a bound key is never re-bound, also when an attempt failed).
   */
  reserve(attempt: NewSettlement, budget: BudgetRule, now: number): Promise<ReserveResult>;
  /** The usage reserve judges, read now (/verify judges it with the same rules). */
  budgetUsage(parties: BudgetParties, window: BudgetWindow): Promise<BudgetUsage>;
  /** Today's sponsored fees by payTo on `network` since `dayStart`, against the per-payTo bounds (PayToSpending). */
  payToSpending(network: string, dayStart: number, bounds: { nearCap: bigint | null; cap: bigint | null }): Promise<PayToSpending>;
  /** Moves an unresolved record (submitted/unknown) to `state`; false when it was already final. */
  resolve(
    identity: string,
    state: SettlementState,
    detail: { errorCode?: string; errorMessage?: string; note: string },
    now: number,
  ): Promise<boolean>;
  /** The catalog hook ran for this settled payment (or there was none to run). */
  markListed(identity: string): Promise<void>;
  /**
   * Settled records whose catalog hook has not run, last changed before `before` and due at `now`
   * (ms), the longest due first: a record whose hook keeps faulting waits behind the others.
   */
  unlisted(limit: number, before: number, now: number): Promise<SettlementRecord[]>;
  /**
   * Takes a due unlisted record for one catalog attempt: not due again before `until` (ms), so no
   * other instance sharing the store lists it meanwhile. False when it was not due (taken already).
   */
  claimListing(identity: string, now: number, until: number): Promise<boolean>;
  /** The catalog hook faulted for this record: one more failure, and not due again before `until` (ms). */
  deferListing(identity: string, until: number): Promise<void>;
  /** Records still in `submitted` or `unknown`, oldest first. */
  unresolved(limit: number): Promise<SettlementRecord[]>;
  /**
   * A small real write through the store's own connection (SQLite: and the file at DB_PATH is still
   * the one open). Rejects, with a JournalStorageError saying why, while the journal cannot take
   * writes (docs/OPERATIONS.md "When the journal cannot write").
   */
  probe(): Promise<void>;
  close(): Promise<void>;
}

/** The journal's storage cannot take a write now; the message says why and never names a path or URL. */
export class JournalStorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JournalStorageError';
  }
}

/**
 * Why a storage call failed, in words fit for a response or /ready: a JournalStorageError's own
 * message, SQLite's message (it names no file), or a system or SQLSTATE code (a system error's
 * message would name the path, a driver's the host).
 */
export function storageReason(err: unknown): string {
  if (err instanceof JournalStorageError) return err.message;
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (code === 'ERR_SQLITE_ERROR' && typeof message === 'string') return message;
  if (typeof code === 'string' && code !== '') return code;
  return 'storage error';
}

/**
 * One journal_settlements row as a store reads it (both stores use the same columns); numbers
 * arrive as numbers (SQLite) or as decimal strings (Postgres BIGINT).
 */
export interface SettlementRow {
  identity: string;
  idempotency_key: string | null;
  network: string;
  tx_hash: string;
  submitter: string;
  fee_stroops: number | bigint | string;
  payer: string;
  pay_to: string;
  asset: string;
  amount: string;
  valid_until: number | string;
  state: SettlementState;
  error_code: string | null;
  error_message: string | null;
  created_at: number | string;
  updated_at: number | string;
  payment_payload: string;
  payment_requirements: string;
  list_failures: number | string;
  owed_digest: string | null;
}

/** A row and its history (in order) as the record the journal works with. */
export function settlementRecord(
  row: SettlementRow,
  history: ReadonlyArray<{ state: SettlementState; at: number | string; detail: string }>,
): SettlementRecord {
  return {
    identity: row.identity,
    idempotencyKey: row.idempotency_key,
    network: row.network,
    transaction: row.tx_hash,
    submitter: row.submitter,
    feeStroops: BigInt(row.fee_stroops),
    payer: row.payer,
    payTo: row.pay_to,
    asset: row.asset,
    amount: row.amount,
    validUntil: Number(row.valid_until),
    state: row.state,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    paymentPayload: row.payment_payload,
    paymentRequirements: row.payment_requirements,
    listFailures: Number(row.list_failures),
    owedDigest: row.owed_digest ?? null,
    history: history.map((h) => ({ state: h.state, at: Number(h.at), detail: h.detail })),
  };
}

/** One POST /settle through the journal (SettlementJournal.settle). */
export interface SettleRequest {
  scheme: PaymentScheme;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  idempotencyKey: string | null;
  /** The id of the payload's `payment-identifier` extension, already validated; null when absent. */
  paymentId?: string | null;
}

/** `fresh` is true when this request submitted the transaction (so the catalog hook runs now). */
export interface JournaledOutcome {
  result: SettleResult;
  fresh: boolean;
  identity: string;
}
