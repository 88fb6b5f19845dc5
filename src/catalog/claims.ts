/**
 * Ownership claims, written once for both stores (ownership.ts explains them): a settlement's claim,
 * a checker's take of due checks, a check's resolution and what validate shows, as engines over a
 * store's statements (statements.ts). Each store runs them in its own transaction (ClaimsRun):
 * SQLite's write transaction (BEGIN IMMEDIATE), so a claim's resolution and a settlement of the same
 * listing never interleave; on Postgres a settlement's claim and a claim's resolution hold the
 * identity's advisory lock (the one every write of the listing takes, postgres/store.ts), and a
 * take's leases are each a compare-and-set on the claim's due time, so of several instances one
 * takes a claim (and one probes it).
 */
import type { ListingDraft } from './ingest/settlement.ts';
import { PRUNE_BATCH } from './listing.ts';
import {
  CLAIMS_PER_PAYTO_AT_ONCE,
  CLAIM_LEASE_MS,
  MAX_CHECKS_SHOWN,
  MAX_PENDING_CLAIMS_PER_PAYTO,
  REJECTED_MEMORY_MS,
  backlogFull,
  ownershipCheckOf,
  ownershipClaimOf,
  pendingRetryAt,
  rejectedAgain,
  retryAfterMs,
  withPayment,
  type ClaimOutcome,
  type ClaimPick,
  type ClaimResolution,
  type ClaimRow,
  type OwnershipClaim,
  type OwnershipVerdict,
} from './ownership.ts';
import { probeHostOf, reserveHost } from './probe-hosts.ts';
import type { PaymentFacts } from './quality.ts';
import { changes, rows, step, type Engine, type Sql } from './statements.ts';
import type { Awaitable, Identity, OwnershipStorePort, WriteOutcome } from './types.ts';

/** What a claims engine runs on: the store's statements and its own steps, inside the engine's transaction. */
export interface ClaimsStore {
  sql: Sql;
  /** The store's write of a settlement's listing. */
  write(draft: ListingDraft, now: Date, payment: PaymentFacts): Awaitable<WriteOutcome>;
  /** Removes a listing with everything of it, as a withdrawal removes it. */
  remove(id: number | string): Awaitable<unknown>;
}

/**
 * How a store runs an engine: `read` and `write` (one statement), a checker's `take` of due claims,
 * a settlement of `identity` (under its lock) and the resolution of `claim` (under its identity's lock).
 */
type ClaimsRun = 'read' | 'write' | 'take' | { identity: Identity } | { claim: string };
export type RunClaims = <T>(how: ClaimsRun, engine: (store: ClaimsStore) => Engine<T>) => Awaitable<T>;

/**
 * A claim's columns (ClaimRow), named rather than `*`: Postgres prepares a write's statements on their connection
 * (postgres/queries.ts preparedDb), and a prepared `SELECT *` fails ("cached plan must not change result type") once a
 * newer instance's migration adds a column.
 */
const COLUMNS =
  'id, resource, type, tool_name, pay_to, status, draft, payments, settled_at, check_after_ms, failures, code, reason, checked_at';
const identityIs = (p: Sql['p']) => `resource = ${p(1)} AND type = ${p(2)} AND tool_name = ${p(3)}`;
const identityOf = (i: Identity) => [i.resource, i.type, i.toolName];

/** The store's OwnershipStorePort: each call an engine the store runs as `run` says. */
export function claimsPort(run: RunClaims): OwnershipStorePort {
  return {
    writeOrClaim: (draft, now, payment) => run({ identity: draft }, (store) => writeOrClaim(store, draft, now, payment)),
    rememberedRejection: (identity, payTo, nowMs) =>
      run('read', function* ({ sql }) {
        const [row] = yield* claimOf(sql, identity, payTo);
        const again = row ? rejectedAgain(row, nowMs) : undefined;
        return again ? { code: again.code, reason: again.reason } : undefined;
      }),
    claimChecks: (now, limit, pick) => run('take', (store) => claimChecks(store, now, limit, pick)),
    resolve: (key, claimedAt, verdict, now) => run({ claim: key }, (store) => resolveClaim(store, key, claimedAt, verdict, now)),
    checksOf: (identity) =>
      run('read', function* ({ sql }) {
        const text = `SELECT ${COLUMNS} FROM listing_claims WHERE ${identityIs(sql.p)} ORDER BY settled_at DESC, id DESC LIMIT ${sql.p(4)}`;
        return (yield* rows<ClaimRow>(sql, text, [...identityOf(identity), MAX_CHECKS_SHOWN])).map(ownershipCheckOf);
      }),
    reserveHost: (host, nowMs, intervalMs, sent) => run('write', ({ sql }) => reserveHost(sql, host, nowMs, intervalMs, sent)),
    // The claim (kept with its draft when rejected) pending and due at once (POST /discovery/recheck).
    recheck: (identity, payTo) =>
      run('write', function* ({ sql }) {
        const text = `UPDATE listing_claims SET status = 'pending', check_after_ms = 0
          WHERE ${identityIs(sql.p)} AND pay_to = ${sql.p(4)} AND draft IS NOT NULL`;
        return (yield* changes(sql, text, [...identityOf(identity), payTo])) > 0;
      }),
    backlog: () =>
      run('read', function* ({ sql }) {
        const text = "SELECT COUNT(*) AS n, MIN(settled_at) AS oldest FROM listing_claims WHERE status = 'pending'";
        const [row] = yield* rows<{ n: number | string; oldest: string | null }>(sql, text);
        return { pending: Number(row!.n), oldestSettledAt: row!.oldest };
      }),
    // The earliest due time of a pending claim (the due index's first entry).
    nextDue: () =>
      run('read', function* ({ sql }) {
        const [row] = yield* rows<{ at: number | string | null }>(
          sql,
          "SELECT MIN(check_after_ms) AS at FROM listing_claims WHERE status = 'pending'",
        );
        return row?.at === null || row?.at === undefined ? null : Number(row.at);
      }),
    // Identities with a pending claim and no listing.
    countPending: () =>
      run('read', function* ({ sql }) {
        const text = `SELECT COUNT(*) AS n FROM (SELECT DISTINCT resource, type, tool_name FROM listing_claims c WHERE c.status = 'pending'
          AND NOT EXISTS (SELECT 1 FROM listings l WHERE l.resource = c.resource AND l.type = c.type AND l.tool_name = c.tool_name)) AS p`;
        return Number((yield* rows<{ n: number | string }>(sql, text))[0]!.n);
      }),
  };
}

/** The claim of `payTo` for an identity (at most one: they are unique). */
const claimOf = (sql: Sql, identity: Identity, payTo: string) =>
  rows<ClaimRow>(sql, `SELECT ${COLUMNS} FROM listing_claims WHERE ${identityIs(sql.p)} AND pay_to = ${sql.p(4)}`, [
    ...identityOf(identity),
    payTo,
  ]);

const ownerOf = function* (sql: Sql, identity: Identity): Engine<string | undefined> {
  return (yield* rows<{ owner: string }>(sql, `SELECT owner FROM listings WHERE ${identityIs(sql.p)}`, identityOf(identity)))[0]?.owner;
};

/**
 * A settlement: written when its payTo owns the listing; otherwise a remembered failed check answers `rejected` until it
 * may be retried, and else the claim waits (pending) with this draft and payment for a checker.
 */
function* writeOrClaim(store: ClaimsStore, draft: ListingDraft, now: Date, payment: PaymentFacts): Engine<WriteOutcome | ClaimOutcome> {
  const { sql } = store;
  const p = sql.p;
  if ((yield* ownerOf(sql, draft)) === draft.owner) return yield* step(() => store.write(draft, now, payment));
  const [row] = yield* claimOf(sql, draft, draft.owner);
  const nowMs = now.getTime();
  const again = row ? rejectedAgain(row, nowMs) : undefined;
  if (again) return again;
  const payments = JSON.stringify(withPayment(row?.status === 'pending' ? row.payments : undefined, payment));
  if (row) {
    // A pending claim keeps its checker's lease; a rejected one is due at once.
    const text = `UPDATE listing_claims SET draft = ${p(1)}, payments = ${p(2)}, settled_at = ${p(3)},
      check_after_ms = CASE WHEN status = 'pending' THEN check_after_ms ELSE 0 END, status = 'pending' WHERE id = ${p(4)}`;
    yield* changes(sql, text, [JSON.stringify(draft), payments, now.toISOString(), row.id]);
  } else {
    const text = `SELECT COUNT(*) AS n FROM listing_claims WHERE pay_to = ${p(1)} AND status = 'pending'`;
    const waiting = Number((yield* rows<{ n: number | string }>(sql, text, [draft.owner]))[0]!.n);
    if (waiting >= MAX_PENDING_CLAIMS_PER_PAYTO) return backlogFull(draft.owner);
    const insert = `INSERT INTO listing_claims (resource, type, tool_name, pay_to, status, draft, payments, settled_at, check_after_ms)
      VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, 'pending', ${p(5)}, ${p(6)}, ${p(7)}, 0)`;
    yield* changes(sql, insert, [...identityOf(draft), draft.owner, JSON.stringify(draft), payments, now.toISOString()]);
  }
  // Rejections past their memory are forgotten a few at a time.
  const forget = `DELETE FROM listing_claims WHERE id IN (
    SELECT id FROM listing_claims WHERE status = 'rejected' AND check_after_ms < ${p(1)} LIMIT ${p(2)})`;
  yield* changes(sql, forget, [nowMs - REJECTED_MEMORY_MS, PRUNE_BATCH]);
  return { status: 'pending' };
}

/** Candidates one take reads per claim it may take (the rest are skipped payTos or postponed hosts). */
const CLAIM_CANDIDATES_PER_SLOT = 8;
const NO_PICK: ClaimPick = { hostIntervalMs: 0, inFlight: {} };

/**
 * A checker's take of up to `limit` pending checks due at `now` (ownership.ts ClaimPick): the due claims in fair order
 * (each payTo's first, then each one's second, …, oldest first within a round); each skipped when its payTo has its share
 * in flight; set aside when its host's slot is taken (by this take or before it); else leased for CLAIM_LEASE_MS (a
 * compare-and-set on its due time, so of several instances one takes it) and its host's slot taken. The claims set aside
 * are postponed to their host's next slot, without counting a failure, after every slot is taken, so a request follows its
 * slot closely (a claim another instance leased meanwhile keeps its lease).
 */
function* claimChecks(store: ClaimsStore, now: number, limit: number, pick: ClaimPick = NO_PICK): Engine<OwnershipClaim[]> {
  const { sql } = store;
  const p = sql.p;
  const due = `SELECT id, pay_to, resource FROM (
      SELECT id, pay_to, resource, check_after_ms, ROW_NUMBER() OVER (PARTITION BY pay_to ORDER BY check_after_ms, id) AS turn
      FROM listing_claims WHERE status = 'pending' AND check_after_ms <= ${p(1)}
    ) due ORDER BY turn, check_after_ms, id LIMIT ${p(2)}`;
  const candidates = yield* rows<{ id: number | string; pay_to: string; resource: string }>(sql, due, [
    now,
    limit * CLAIM_CANDIDATES_PER_SLOT,
  ]);
  const lease = `UPDATE listing_claims SET check_after_ms = ${p(1)} WHERE id = ${p(2)} AND check_after_ms <= ${p(3)}`;
  const taken: Array<number | string> = [];
  const inFlight = { ...pick.inFlight };
  /** Hosts whose slot is not free, with when it frees (Infinity: this take has it), and the claims waiting for them. */
  const busy = new Map<string, { until: number; ids: Array<number | string> }>();
  for (const row of candidates) {
    if (taken.length >= limit) break;
    if ((inFlight[row.pay_to] ?? 0) >= CLAIMS_PER_PAYTO_AT_ONCE) continue;
    const host = probeHostOf(row.resource);
    const waiting = busy.get(host);
    if (waiting) {
      waiting.ids.push(row.id);
      continue;
    }
    if ((yield* changes(sql, lease, [now + CLAIM_LEASE_MS, row.id, now])) === 0) continue;
    if (pick.hostIntervalMs > 0) {
      const next = yield* reserveHost(sql, host, now, pick.hostIntervalMs);
      if (next !== 0) {
        busy.set(host, { until: next, ids: [row.id] });
        continue;
      }
      busy.set(host, { until: Infinity, ids: [] });
    }
    inFlight[row.pay_to] = (inFlight[row.pay_to] ?? 0) + 1;
    taken.push(row.id);
  }
  // Those this take leased, and due ones no checker holds.
  const postpone = `UPDATE listing_claims SET check_after_ms = ${p(1)}
    WHERE id IN (${sql.idList(2)}) AND (check_after_ms <= ${p(3)} OR check_after_ms = ${p(4)})`;
  for (const { until, ids } of busy.values()) {
    // A host this take asks now frees one interval from now.
    const untilMs = until === Infinity ? now + pick.hostIntervalMs : until;
    if (ids.length > 0) yield* changes(sql, postpone, [untilMs, sql.ids(ids), now, now + CLAIM_LEASE_MS]);
  }
  if (taken.length === 0) return [];
  const read = `SELECT ${COLUMNS.replace(/(\w+)/g, 'c.$1')},
      (SELECT owner FROM listings l WHERE l.resource = c.resource AND l.type = c.type AND l.tool_name = c.tool_name) AS owner
    FROM listing_claims c WHERE c.id IN (${sql.idList(1)})`;
  const claims = yield* rows<ClaimRow & { owner: string | null }>(sql, read, [sql.ids(taken)]);
  const order = new Map(taken.map((id, i) => [String(id), i]));
  return claims
    .sort((a, b) => order.get(String(a.id))! - order.get(String(b.id))!)
    .map((row) => ownershipClaimOf(row, row.owner ?? undefined));
}

/**
 * A checker's verdict on a claim it took at `claimedAt` (`gone` if the lease passed to another): rejected, the failure is
 * remembered; passed, the listing is written for the claimant from the claim's draft, once per payment it kept (the
 * previous owner's listing removed first), and the claim is deleted.
 */
function* resolveClaim(store: ClaimsStore, key: string, claimedAt: number, verdict: OwnershipVerdict, now: Date): Engine<ClaimResolution> {
  const { sql } = store;
  const p = sql.p;
  const text = `SELECT ${COLUMNS} FROM listing_claims WHERE id = ${p(1)} AND status = 'pending' AND check_after_ms = ${p(2)}${sql.lockRows}`;
  const [row] = yield* rows<ClaimRow>(sql, text, [Number(key), claimedAt + CLAIM_LEASE_MS]);
  if (!row?.draft) return 'gone';
  const retryAt = pendingRetryAt(verdict, Number(row.failures), now.getTime());
  if (!verdict.passed && retryAt !== undefined) {
    // Perhaps a server restarting (a failure counted), or a safe request deferred (none): asked again soon, still pending.
    const retry = `UPDATE listing_claims SET failures = failures + ${p(1)}, checked_at = ${p(2)}, check_after_ms = ${p(3)} WHERE id = ${p(4)}`;
    yield* changes(sql, retry, ['deferred' in verdict ? 0 : 1, now.toISOString(), retryAt, row.id]);
    return 'retried';
  }
  if (!verdict.passed && !('deferred' in verdict)) {
    const failures = Number(row.failures) + 1;
    const reject = `UPDATE listing_claims SET status = 'rejected', code = ${p(1)}, reason = ${p(2)}, checked_at = ${p(3)},
      failures = ${p(4)}, check_after_ms = ${p(5)} WHERE id = ${p(6)}`;
    const params = [verdict.code, verdict.reason, now.toISOString(), failures, retryAfterMs(now.getTime(), failures), row.id];
    yield* changes(sql, reject, params);
    return 'rejected';
  }
  const draft = JSON.parse(row.draft) as ListingDraft;
  const identity = { resource: row.resource, type: row.type, toolName: row.tool_name };
  const [listing] = yield* rows<{ id: number | string; owner: string }>(
    sql,
    `SELECT id, owner FROM listings WHERE ${identityIs(p)}`,
    identityOf(identity),
  );
  if (listing && listing.owner !== row.pay_to) yield* step(() => store.remove(listing.id));
  const payments = JSON.parse(row.payments) as PaymentFacts[];
  for (const payment of payments.length > 0 ? payments : [{}]) yield* step(() => store.write(draft, now, payment));
  yield* changes(sql, `DELETE FROM listing_claims WHERE id = ${p(1)}`, [row.id]);
  return 'listed';
}
