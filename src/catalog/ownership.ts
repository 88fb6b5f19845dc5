/**
 * Ownership from the origin (docs/CATALOG.md "Ownership and refresh"), backend-neutral: a
 * settlement that would create a listing, or give it to another payTo, is kept as a **claim**
 * until the resource's own server, asked with svc's check request (src/net/ownership.ts, the
 * unpaid probe of POST /discovery/validate), answers a 402 naming the settled payTo. Claims live
 * in `listing_claims` (both stores, identical), one row per (identity, payTo):
 *
 * - `pending`: the listing draft and the payments waiting for it; `check_after_ms` is when a
 *   checker may take it (0: now; a checker's claim moves it CLAIM_LEASE_MS ahead, so another
 *   instance does not probe it too, and a checker that died leaves it to be taken again);
 * - `rejected`: the check failed, with its code and reason; until `check_after_ms` a settlement
 *   to that payTo answers `rejected` at once (no probe), after it one asks the origin again. The
 *   wait doubles with each failure in a row, from REJECTED_RETRY_BASE_MS up to REJECTED_RETRY_MAX_MS.
 *
 * A claim that passes writes the listing (the previous owner's listing, if any, is removed with
 * everything of it, as a withdrawal removes it) and is deleted; the listing then shows it.
 */
import type { BazaarCode } from '../codes.ts';
import type { components } from '../generated/openapi.ts';
import type { ListingDraft } from './ingest/settlement.ts';
import { livenessListingOf, type LivenessListing } from './liveness.ts';
import type { PaymentFacts } from './quality.ts';
import { columnTypes } from './statements.ts';

/**
 * Who may own a listing: `origin` (the default of svc: the payTo the resource's own server names,
 * checked after the settlement) or `first-settlement` (the payTo of the first settlement, for a
 * catalog whose sellers svc cannot reach; LISTING_OWNERSHIP in README.md).
 */
export type OwnershipMode = 'origin' | 'first-settlement';
export const OWNERSHIP_MODES: readonly OwnershipMode[] = ['origin', 'first-settlement'];

/** A checker holds a pending claim this long (more than a probe's deadline); then another may take it. */
export const CLAIM_LEASE_MS = 60_000;
/** After a first failed check, a settlement to that payTo asks the origin again after this long … */
export const REJECTED_RETRY_BASE_MS = 60_000;
/** … doubling with each failure in a row, up to this. */
const REJECTED_RETRY_MAX_MS = 24 * 3_600_000;
/**
 * A check that found the origin unreachable or without a usable 402 (a server restarting, a proxy's
 * 502) is tried again this many times, PENDING_RETRY_BASE_MS and then twice as long apart, before
 * the claim is rejected; a 402 that names other payTos is an answer, rejected at once.
 */
const PENDING_RETRIES = 2;
export const PENDING_RETRY_BASE_MS = 5_000;

/** Whether a failed check leaves the claim pending for another try, and when it is due then. */
export function pendingRetryAt(verdict: OwnershipVerdict, failures: number, nowMs: number): number | undefined {
  if (verdict.passed) return undefined;
  if ('deferred' in verdict) return nowMs;
  const final: BazaarCode[] = ['bazaar_origin_names_other_payee', 'bazaar_listing_owned_by_other_payee', 'bazaar_path_params_invalid'];
  if (final.includes(verdict.code)) return undefined;
  return failures < PENDING_RETRIES ? nowMs + PENDING_RETRY_BASE_MS * 2 ** failures : undefined;
}

/** A rejected claim is forgotten this long after it may be retried (pruned a few at a time by writes). */
export const REJECTED_MEMORY_MS = 7 * 24 * 3_600_000;
/**
 * Claims of one payTo waiting for their checks at most: its next new claim is refused
 * (bazaar_claims_backlog_full), so one payTo's flood cannot grow the backlog without bound (each
 * claim is a paid settlement, and the fee budgets bound the payTos).
 */
export const MAX_PENDING_CLAIMS_PER_PAYTO = 256;
export const backlogFull = (payTo: string): Extract<ClaimOutcome, { status: 'rejected' }> => ({
  status: 'rejected',
  code: 'bazaar_claims_backlog_full',
  reason: `${payTo} already has ${MAX_PENDING_CLAIMS_PER_PAYTO} claims waiting for their resources' servers to be asked (one request per host per PROBE_HOST_INTERVAL_SECONDS); this settlement was settled but its claim was not recorded. Settle again once they are checked (POST /discovery/validate shows a claim's state).`,
});
/** The /metrics backlog: pending claims, and the settlement time of the oldest. */
export interface ClaimBacklog {
  pending: number;
  /** RFC 3339 settlement time of the oldest pending claim; null when none. */
  oldestSettledAt: string | null;
}

/** Payments a pending claim keeps for the listing's quality signals (later ones are still settled, not counted). */
const MAX_CLAIM_PAYMENTS = 16;
/** Claims of one identity validate shows at most (latest first). */
export const MAX_CHECKS_SHOWN = 16;

/** When a settlement to a payTo whose check failed `failures` times in a row asks the origin again. */
export function retryAfterMs(checkedAtMs: number, failures: number): number {
  return checkedAtMs + Math.min(REJECTED_RETRY_MAX_MS, REJECTED_RETRY_BASE_MS * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

/** What a checker probes: the claimed listing's calling convention, the claimant and the owner now. */
export interface OwnershipClaim extends Omit<LivenessListing, 'previous'> {
  /** The listing's owner when the claim was taken (absent: no listing). */
  currentOwner?: string;
}

/**
 * A checker's verdict on a claim; `deferred`: the check's safe request met a route that answers only
 * its declared method (src/net/check-request.ts checkHttpRequest), so the claim is due again at once
 * (the host's next slot) without counting a failure.
 */
export type OwnershipVerdict =
  { passed: true } | { passed: false; code: BazaarCode; reason: string } | { passed: false; deferred: true; reason: string };

/**
 * What a checker's take of due claims respects (docs/CATALOG.md "Ownership and refresh"): each
 * payTo's claims in turn (a payTo's second claim after every payTo's first), at most
 * CLAIMS_PER_PAYTO_AT_ONCE in flight for one payTo (`inFlight`, this checker's), and one request
 * per host per `hostIntervalMs` (src/catalog/probe-hosts.ts): a claim whose host was asked
 * recently is postponed to the host's next slot, without counting a failure.
 */
export interface ClaimPick {
  hostIntervalMs: number;
  inFlight: Record<string, number>;
}
export const CLAIMS_PER_PAYTO_AT_ONCE = 2;

/** What resolving a claim did. */
export type ClaimResolution = 'listed' | 'retried' | 'rejected' | 'gone';

/** One claim as POST /discovery/validate shows it (openapi.yaml OwnershipCheck). */
export type OwnershipCheck = components['schemas']['OwnershipCheck'];

/** What the write of a settlement did in `origin` mode, beyond a plain write. */
export type ClaimOutcome = { status: 'pending' } | { status: 'rejected'; code: BazaarCode; reason: string };

/** A claim row as both stores keep it. */
export interface ClaimRow {
  id: number | string;
  resource: string;
  type: string;
  tool_name: string;
  pay_to: string;
  status: string;
  draft: string | null;
  payments: string;
  settled_at: string;
  check_after_ms: number | string;
  failures: number | string;
  code: string | null;
  reason: string | null;
  checked_at: string | null;
}

/** The claim's probe target, from its draft (the calling convention liveness checks use). */
export function ownershipClaimOf(row: ClaimRow, currentOwner: string | undefined): OwnershipClaim {
  const draft = JSON.parse(row.draft ?? '{}') as Partial<ListingDraft>;
  const { previous: _previous, ...listing } = livenessListingOf({
    id: row.id,
    resource: row.resource,
    type: row.type,
    tool_name: row.tool_name,
    owner: row.pay_to,
    body: JSON.stringify({ extensions: { bazaar: draft.bazaar ?? {} } }),
  });
  return { ...listing, ...(currentOwner !== undefined ? { currentOwner } : {}) };
}

/**
 * A settlement's answer while a failed check is remembered (`rejected` until `check_after_ms`):
 * the check's code and its reason (what the origin answered), with when svc asks the origin again.
 */
export function rejectedAgain(row: ClaimRow, nowMs: number): Extract<ClaimOutcome, { status: 'rejected' }> | undefined {
  if (row.status !== 'rejected' || Number(row.check_after_ms) <= nowMs || !row.code) return undefined;
  const retry = new Date(Number(row.check_after_ms)).toISOString();
  return {
    status: 'rejected',
    code: row.code as BazaarCode,
    reason:
      `${row.reason ?? ''} (checked ${row.checked_at ?? 'earlier'}; a settlement to this payTo after ${retry} has the resource's server asked again.)`.trim(),
  };
}

/** A claim row as validate shows it. */
export function ownershipCheckOf(row: ClaimRow): OwnershipCheck {
  const rejected = row.status === 'rejected';
  return {
    payTo: row.pay_to,
    status: rejected ? 'rejected' : 'processing',
    settledAt: row.settled_at,
    checkedAt: row.checked_at,
    ...(rejected && row.code ? { code: row.code as BazaarCode } : {}),
    ...(rejected && row.reason ? { reason: row.reason } : {}),
    ...(rejected ? { retryAfter: new Date(Number(row.check_after_ms)).toISOString() } : {}),
  };
}

/** The payments a pending claim keeps, this one added (deduplicated by id, at most MAX_CLAIM_PAYMENTS). */
export function withPayment(stored: string | null | undefined, payment: PaymentFacts): PaymentFacts[] {
  let payments: PaymentFacts[] = [];
  try {
    const parsed = JSON.parse(stored ?? '[]') as unknown;
    if (Array.isArray(parsed)) payments = parsed as PaymentFacts[];
  } catch {
    /* start again */
  }
  if (payment.id !== undefined && payments.some((p) => p.id === payment.id)) return payments;
  return payments.length >= MAX_CLAIM_PAYMENTS ? payments : [...payments, payment];
}

/**
 * The SQL of the claims table (the same columns on both stores; Postgres adds COLLATE "C" and BIGINT).
 */
export function claimsTableSql(dialect: 'sqlite' | 'postgres'): string {
  const { text, int } = columnTypes(dialect);
  const id = dialect === 'postgres' ? 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY' : 'INTEGER PRIMARY KEY';
  return `
    CREATE TABLE listing_claims (
      id ${id},
      resource ${text} NOT NULL,
      type ${text} NOT NULL,
      tool_name ${text} NOT NULL,
      pay_to ${text} NOT NULL,
      status ${text} NOT NULL,
      draft TEXT,
      payments TEXT NOT NULL DEFAULT '[]',
      settled_at ${text} NOT NULL,
      check_after_ms ${int} NOT NULL,
      failures ${int} NOT NULL DEFAULT 0,
      code ${text},
      reason TEXT,
      checked_at ${text},
      UNIQUE (resource, type, tool_name, pay_to)
    )${dialect === 'sqlite' ? ' STRICT' : ''};
    CREATE INDEX listing_claims_due ON listing_claims (status, check_after_ms);`;
}
