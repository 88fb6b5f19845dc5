/**
 * Liveness records as both catalog stores keep them (docs/CATALOG.md "Liveness"; openapi.yaml,
 * ListingLiveness). Backend-neutral: the rules of a record (what a check does to it, when it hides
 * a listing, what a settlement does) and the listing's calling convention the checker probes with.
 * The checker itself (src/net/liveness.ts) paces the probes and asks the store for due listings.
 *
 * Columns on `listings` (both backends, identical):
 * - `liveness_status`, `liveness_checked_at`: the last check's status and time (null: never
 *   checked, or not since a settlement that followed failed checks);
 * - `liveness_failing_since`: when the current run of failed checks began (null while live);
 * - `liveness_basis_ms`: the time a listing's next check counts from (its last check, claim or
 *   settlement, epoch ms; 0 never checked). A listing is due once `intervalMs` has passed since.
 *   Claiming sets it to the claim's time, so another instance (Postgres) does not take it too.
 */
import type { components } from '../generated/openapi.ts';

export type ListingLiveness = components['schemas']['ListingLiveness'];
export type LivenessStatus = ListingLiveness['status'];

export interface LivenessRecord {
  status: LivenessStatus;
  /** RFC 3339 time of the check. */
  checkedAt: string;
  /** RFC 3339 time of the first failed check of the current run of failures; null while live. */
  failingSince: string | null;
}

/** What the checker needs of a listing: how a buyer calls it and who it pays. */
export interface LivenessListing {
  /** The listing's identity in its store (its id), opaque to the checker. */
  key: string;
  type: 'http' | 'mcp';
  resource: string;
  /** '' for http. */
  toolName: string;
  /** The declared HTTP method (GET when none). */
  method: string;
  /** A templated http listing's example path parameters (its URL keeps `:name`); absent when none. */
  pathParams?: Record<string, unknown>;
  payTo: string;
  /** The record before this check (absent: never checked). */
  previous?: LivenessRecord;
}

/** The record after a check with `status` at `now`: a run of failures keeps the time it began. */
export function nextRecord(previous: LivenessRecord | undefined, status: LivenessStatus, now: Date): LivenessRecord {
  const failing = status !== 'live';
  return {
    status,
    checkedAt: now.toISOString(),
    failingSince: failing ? (previous?.failingSince ?? now.toISOString()) : null,
  };
}

/**
 * Listings whose run of failures began before this time are hidden at `now` (failing for longer than
 * the grace period); undefined when nothing can be hidden.
 */
export function failingBefore(now: number, graceMs: number | undefined): string | undefined {
  return graceMs === undefined ? undefined : new Date(now - graceMs).toISOString();
}

/** A stored row's liveness columns as they are read with a listing. */
export interface LivenessColumns {
  liveness_status?: string | null;
  liveness_checked_at?: string | null;
  liveness_failing_since?: string | null;
}

/** The item's `liveness`: null when never checked (or reset by a settlement after failures). */
export function livenessOf(row: LivenessColumns): ListingLiveness | null {
  if (!row.liveness_status || !row.liveness_checked_at) return null;
  return { status: row.liveness_status as LivenessStatus, checkedAt: row.liveness_checked_at };
}

/** Whether a row is hidden by its failures (its run of failures began before `before`). */
export function hiddenByFailures(row: LivenessColumns, before: string | undefined): boolean {
  return before !== undefined && typeof row.liveness_failing_since === 'string' && row.liveness_failing_since < before;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a check needs of a stored listing: its declared method and a templated URL's path
 * parameters, as its bazaar `info.input` declares them; never its example input (svc's checks send
 * none: docs/SECURITY.md "Requests svc makes of sellers' hosts").
 */
export function livenessListingOf(row: {
  id: number | string;
  resource: string;
  type: string;
  tool_name: string;
  owner: string;
  body: string;
  liveness_status?: string | null;
  liveness_checked_at?: string | null;
  liveness_failing_since?: string | null;
}): LivenessListing {
  let input: Record<string, unknown> = {};
  try {
    const bazaar = (JSON.parse(row.body) as { extensions?: Record<string, unknown> }).extensions?.bazaar;
    const declared = isObject(bazaar) && isObject(bazaar.info) ? bazaar.info.input : undefined;
    if (isObject(declared)) input = declared;
  } catch {
    /* a body that is not JSON: GET, no path parameters */
  }
  const method = typeof input.method === 'string' ? input.method.toUpperCase() : 'GET';
  const previous =
    row.liveness_status && row.liveness_checked_at
      ? {
          status: row.liveness_status as LivenessStatus,
          checkedAt: row.liveness_checked_at,
          failingSince: row.liveness_failing_since ?? null,
        }
      : undefined;
  return {
    key: String(row.id),
    type: row.type === 'mcp' ? 'mcp' : 'http',
    resource: row.resource,
    toolName: row.tool_name,
    method,
    ...(row.type !== 'mcp' && isObject(input.pathParams) ? { pathParams: input.pathParams } : {}),
    payTo: row.owner,
    ...(previous ? { previous } : {}),
  };
}

/** Where liveness records live: both catalog stores (and the catalog's worker threads in front of them). */
export interface LivenessStorePort {
  /**
   * Claims up to `limit` listings due at `now` (basis at or before `dueBefore`), oldest basis
   * first, skipping rows another instance holds: their basis becomes `now`.
   */
  claimDue(now: number, dueBefore: number, limit: number): Promise<LivenessListing[]> | LivenessListing[];
  /**
   * Writes a check's record, unless a settlement (or another claim) touched the listing since
   * `claimedAt`; its next check counts from `basis` (default `claimedAt`: a failing listing's is later, its back-off).
   */
  writeLiveness(key: string, record: LivenessRecord, claimedAt: number, basis?: number): Promise<void> | void;
  /** Gives back claimed listings not probed now: they are due again with `basis` as their basis. */
  postponeLiveness(keys: string[], basis: number, claimedAt: number): Promise<void> | void;
  /** How many listings are due (basis at or before `dueBefore`): the /metrics gauge of checks waiting. */
  countDue(dueBefore: number): Promise<number> | number;
}
