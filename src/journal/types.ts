/**
 * The settlement journal's records and its store interface. The store is async so that a
 * networked implementation (e.g. Postgres) can stand in for the SQLite one (store-sqlite.ts).
 * Everything recorded here is public: addresses, amounts, hashes and the signed payment itself
 * (which the chain publishes once it lands). No key or seed ever reaches the journal.
 */
import type { SubmissionAttempt } from '../scheme/types.ts';

export type SettlementState = 'submitted' | 'settled' | 'failed' | 'unknown';

export interface StateChange {
  state: SettlementState;
  /** Unix milliseconds. */
  at: number;
  detail: string;
}

/** What is known about an attempt before it is submitted. */
export interface NewSettlement extends SubmissionAttempt {
  /** The payment's identity (see `SettlementTracking.identity`): one record per payment. */
  identity: string;
  idempotencyKey: string | null;
  network: string;
  /** The request as received (public data), replayed into the catalog after reconciliation. */
  paymentPayload: string;
  paymentRequirements: string;
}

export interface SettlementRecord extends NewSettlement {
  state: SettlementState;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: number;
  updatedAt: number;
  history: StateChange[];
}

/** Fee caps checked atomically with the insert (null = no cap). */
export interface FeeCaps {
  dailyStroops: bigint | null;
  perPayerDailyStroops: bigint | null;
  /** Start of the current budget day, unix milliseconds. */
  dayStart: number;
}

export type ReserveResult = { ok: true } | { ok: false; reason: 'duplicate' | 'daily_cap' | 'payer_cap'; spent: bigint };

export interface JournalStore {
  get(identity: string): Promise<SettlementRecord | null>;
  getByTransaction(transaction: string): Promise<SettlementRecord | null>;
  /** Inserts a `submitted` record unless the identity exists or a fee cap would be exceeded. */
  reserve(attempt: NewSettlement, caps: FeeCaps, now: number): Promise<ReserveResult>;
  /** Moves an unresolved record (submitted/unknown) to `state`; false when it was already final. */
  resolve(
    identity: string,
    state: SettlementState,
    detail: { errorCode?: string; errorMessage?: string; note: string },
    now: number,
  ): Promise<boolean>;
  /** The catalog hook ran for this settled payment (or there was none to run). */
  markListed(identity: string): Promise<void>;
  /** Settled records whose catalog hook has not run, last changed before `before` (ms). */
  unlisted(limit: number, before: number): Promise<SettlementRecord[]>;
  /** Records still in `submitted` or `unknown`, oldest first. */
  unresolved(limit: number): Promise<SettlementRecord[]>;
  close(): Promise<void>;
}
