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
import { changes, rows, step, type Engine, type Sql } from './statements.ts';
import type { Awaitable } from './steps.ts';

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

/**
 * The SET clause a settlement adds to its listing's row (`basis`: its parameter, the settlement's time): the next check
 * counts from it, and a run of failures ends, except a `terms_changed` one: the resource's own server no longer names the
 * owner, which a payment to the owner does not disprove (a squatter could keep its listing visible by paying itself), so
 * the record stays and the listing is checked again at once.
 */
export const settledLivenessSql = (basis: string): string =>
  `liveness_basis_ms = CASE WHEN liveness_status = 'terms_changed' THEN CAST(0 AS BIGINT) ELSE CAST(${basis} AS BIGINT) END,
  liveness_status = CASE WHEN liveness_failing_since IS NULL OR liveness_status = 'terms_changed' THEN liveness_status END,
  liveness_checked_at = CASE WHEN liveness_failing_since IS NULL OR liveness_status = 'terms_changed' THEN liveness_checked_at END,
  liveness_failing_since = CASE WHEN liveness_status = 'terms_changed' THEN liveness_failing_since END`;

/**
 * What the liveness engines run on: the store's statements, and its putting back in the search index of a listing that
 * passed its check after a lifecycle pass took it out (lifecycle.ts).
 */
export interface LivenessStore {
  sql: Sql;
  restore: (key: string) => Awaitable<unknown>;
}

/**
 * The store's LivenessStorePort: `claimDue` the store's own (how it takes rows so that one instance probes a listing);
 * the rest engines the store runs (`write`: in its write transaction on SQLite).
 */
export function livenessPort(
  run: <T>(write: boolean, engine: (store: LivenessStore) => Engine<T>) => Awaitable<T>,
  claimDue: LivenessStorePort['claimDue'],
): LivenessStorePort {
  return {
    claimDue,
    writeLiveness: (key, record, claimedAt, basis = claimedAt) =>
      run(true, function* ({ sql, restore }) {
        const p = sql.p;
        const text = `UPDATE listings SET liveness_status = ${p(1)}, liveness_checked_at = ${p(2)}, liveness_failing_since = ${p(3)},
          liveness_basis_ms = ${p(4)} WHERE id = ${p(5)} AND liveness_basis_ms = ${p(6)}`;
        yield* changes(sql, text, [record.status, record.checkedAt, record.failingSince, basis, Number(key), claimedAt]);
        if (record.failingSince === null) yield* step(() => restore(key));
      }),
    postponeLiveness: (keys, basis, claimedAt) =>
      run(true, function* ({ sql }) {
        const text = `UPDATE listings SET liveness_basis_ms = ${sql.p(1)} WHERE id IN (${sql.idList(2)}) AND liveness_basis_ms = ${sql.p(3)}`;
        yield* changes(sql, text, [basis, sql.ids(keys), claimedAt]);
      }),
    // A range count of the index claimDue walks.
    countDue: (dueBefore) =>
      run(false, function* ({ sql }) {
        const [row] = yield* rows<{ n: number | string }>(
          sql,
          `SELECT count(*) AS n FROM listings WHERE liveness_basis_ms <= ${sql.p(1)}`,
          [dueBefore],
        );
        return Number(row!.n);
      }),
  };
}

/**
 * Entries of one list key hidden by failures and not already hidden by age (the list's total of one key): the key's
 * entries among the hidden listings, read from its primary key (Sql inSubquery), so a wide key reads about one entry per
 * hidden listing, a narrow one its own few. Joined, Postgres may hash every entry of a wide key, or read a narrow key's
 * every entry per hidden listing (docs/BENCHMARKS.md "Filter combinations"). The age is compared as an expression
 * (`|| ''`) to keep it a filter on the entries found: as an index condition SQLite would read the key's page-order
 * index over every visible entry.
 */
export function* hiddenByFailuresCount(
  sql: Sql,
  key: { kind: string; value: string },
  before: string,
  visibleSince: string | undefined,
): Engine<number> {
  const p = sql.p;
  // Only the listings still in the list index's range: a lifecycle pass moved the others' entries out of it.
  const hidden = sql.inSubquery(
    'k.listing_id',
    `SELECT h.id FROM listings h WHERE h.liveness_failing_since < ${p(3)} AND h.search_stash IS NULL`,
  );
  const text = `SELECT count(*) AS n FROM listing_keys k WHERE k.kind = ${p(1)} AND k.value = ${p(2)} AND ${hidden}${
    visibleSince === undefined ? '' : ` AND (k.last_updated || '') >= ${p(4)}`
  }`;
  const params = [key.kind, key.value, before, ...(visibleSince === undefined ? [] : [visibleSince])];
  return Number((yield* rows<{ n: number | string }>(sql, text, params))[0]!.n);
}
