/**
 * Ownership claims on SQLite (../ownership.ts explains them; postgres/claims.ts does the same):
 * the migration, a settlement's claim, a checker's claim of due checks, a check's resolution and
 * what validate shows. Every write runs in the store's write transaction (BEGIN IMMEDIATE), so a
 * claim's resolution and a settlement of the same listing never interleave.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement, inWriteTransaction } from '../../db/sqlite.ts';
import type { BazaarCode } from '../../codes.ts';
import type { ListingDraft } from '../ingest/settlement.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { sqliteProbeHosts } from '../probe-hosts.ts';
import {
  CLAIM_CANDIDATES_PER_SLOT,
  CLAIM_LEASE_MS,
  FAIR_DUE_CLAIMS_SQL,
  POSTPONE_CLAIMS_SQL,
  pickClaims,
  COUNT_PENDING_SQL,
  MAX_CHECKS_SHOWN,
  NEXT_DUE_SQL,
  CLAIM_BACKLOG_SQL,
  MAX_PENDING_CLAIMS_PER_PAYTO,
  PENDING_OF_PAYTO_SQL,
  backlogFull,
  RECHECK_SQL,
  REJECTED_MEMORY_MS,
  claimsTableSql,
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
  type OwnershipCheck,
  type OwnershipClaim,
  type OwnershipVerdict,
} from '../ownership.ts';
import type { PaymentFacts } from '../quality.ts';
import type { OwnershipStorePort, WriteOutcome } from '../types.ts';
import { removeListing } from './withdraw.ts';

export function migrateToClaims(db: DatabaseSync): void {
  db.exec(claimsTableSql('sqlite'));
}

const IDENTITY = 'resource = ? AND type = ? AND tool_name = ?';

function ownerOf(db: DatabaseSync, resource: string, type: string, toolName: string): string | undefined {
  return (
    cachedStatement(db, `SELECT owner FROM listings WHERE ${IDENTITY}`).get(resource, type, toolName) as { owner: string } | undefined
  )?.owner;
}

/**
 * A settlement whose payTo does not own the listing (or there is none), inside the write
 * transaction: a remembered failed check answers `rejected` until it may be retried; otherwise the
 * claim waits (pending) with this draft and payment for a checker.
 */
export function recordClaim(db: DatabaseSync, draft: ListingDraft, now: Date, payment: PaymentFacts): ClaimOutcome {
  const row = cachedStatement(db, `SELECT * FROM listing_claims WHERE ${IDENTITY} AND pay_to = ?`).get(
    draft.resource,
    draft.type,
    draft.toolName,
    draft.owner,
  ) as ClaimRow | undefined;
  const nowMs = now.getTime();
  const again = row ? rejectedAgain(row, nowMs) : undefined;
  if (again) return again;
  const payments = JSON.stringify(withPayment(row?.status === 'pending' ? row.payments : undefined, payment));
  if (row) {
    // A pending claim keeps its checker's lease; a rejected one is due at once.
    cachedStatement(
      db,
      `UPDATE listing_claims SET draft = ?, payments = ?, settled_at = ?,
         check_after_ms = CASE WHEN status = 'pending' THEN check_after_ms ELSE 0 END, status = 'pending' WHERE id = ?`,
    ).run(JSON.stringify(draft), payments, now.toISOString(), row.id);
  } else {
    const waiting = Number(
      (
        cachedStatement(
          db,
          PENDING_OF_PAYTO_SQL(() => '?'),
        ).get(draft.owner) as { n: number }
      ).n,
    );
    if (waiting >= MAX_PENDING_CLAIMS_PER_PAYTO) return backlogFull(draft.owner);
    cachedStatement(
      db,
      `INSERT INTO listing_claims (resource, type, tool_name, pay_to, status, draft, payments, settled_at, check_after_ms)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, 0)`,
    ).run(draft.resource, draft.type, draft.toolName, draft.owner, JSON.stringify(draft), payments, now.toISOString());
  }
  const forgotten = cachedStatement(db, "SELECT id FROM listing_claims WHERE status = 'rejected' AND check_after_ms < ? LIMIT ?").all(
    nowMs - REJECTED_MEMORY_MS,
    PRUNE_BATCH,
  ) as Array<{ id: number }>;
  for (const f of forgotten) cachedStatement(db, 'DELETE FROM listing_claims WHERE id = ?').run(f.id);
  return { status: 'pending' };
}

/** A remembered failed check of this payTo for the identity that still answers `rejected` at `nowMs`. */
export function rememberedRejection(
  db: DatabaseSync,
  identity: { resource: string; type: string; toolName: string },
  payTo: string,
  nowMs: number,
): { code: BazaarCode; reason: string } | undefined {
  const row = cachedStatement(db, `SELECT * FROM listing_claims WHERE ${IDENTITY} AND pay_to = ? AND status = 'rejected'`).get(
    identity.resource,
    identity.type,
    identity.toolName,
    payTo,
  ) as ClaimRow | undefined;
  const again = row ? rejectedAgain(row, nowMs) : undefined;
  return again ? { code: again.code, reason: again.reason } : undefined;
}

/**
 * Takes up to `limit` pending checks due at `now`, in fair order with each host's slot taken
 * (../ownership.ts pickClaims): a lease of CLAIM_LEASE_MS is theirs.
 */
export function claimChecks(db: DatabaseSync, now: number, limit: number, pick?: ClaimPick): OwnershipClaim[] {
  return inWriteTransaction(db, () => {
    const q = (n: number) => (void n, '?');
    const candidates = cachedStatement(db, FAIR_DUE_CLAIMS_SQL(q)).all(now, limit * CLAIM_CANDIDATES_PER_SLOT) as Array<{
      id: number;
      pay_to: string;
      resource: string;
    }>;
    const hosts = sqliteProbeHosts(db, () => {});
    const lease = cachedStatement(db, 'UPDATE listing_claims SET check_after_ms = ? WHERE id = ? AND check_after_ms <= ?');
    const postpone = cachedStatement(
      db,
      POSTPONE_CLAIMS_SQL((n) => `?${n}`, 'SELECT value FROM json_each(?2)'),
    );
    const steps = pickClaims(candidates, limit, now, pick);
    let step = steps.next();
    while (!step.done) {
      const s = step.value;
      if (s.op === 'lease') step = steps.next(Number(lease.run(now + CLAIM_LEASE_MS, s.id, now).changes) > 0);
      else if (s.op === 'reserve') step = steps.next(hosts.reserve(s.host, now, pick!.hostIntervalMs) as number);
      else step = steps.next((postpone.run(s.untilMs, JSON.stringify(s.ids), now, now + CLAIM_LEASE_MS), undefined));
    }
    const taken = step.value;
    const byId = cachedStatement(db, 'SELECT * FROM listing_claims WHERE id = ?');
    return taken.map((id) => {
      const row = byId.get(id) as unknown as ClaimRow;
      return ownershipClaimOf(row, ownerOf(db, row.resource, row.type, row.tool_name));
    });
  });
}

/**
 * A checker's verdict on a claim it took at `claimedAt` (nothing if the lease passed to another):
 * rejected, the failure is remembered; passed, the listing is written for the claimant from the
 * claim's draft, once per payment it kept (the previous owner's listing removed first), and the
 * claim is deleted. `write` is the store's write of a listing, in this transaction.
 */
export function resolveClaim(
  db: DatabaseSync,
  key: string,
  claimedAt: number,
  verdict: OwnershipVerdict,
  now: Date,
  write: (draft: ListingDraft, payment: PaymentFacts) => WriteOutcome,
): ClaimResolution {
  return inWriteTransaction(db, () => {
    const row = cachedStatement(db, "SELECT * FROM listing_claims WHERE id = ? AND status = 'pending' AND check_after_ms = ?").get(
      Number(key),
      claimedAt + CLAIM_LEASE_MS,
    ) as ClaimRow | undefined;
    if (!row?.draft) return 'gone';
    const retryAt = pendingRetryAt(verdict, Number(row.failures), now.getTime());
    if (!verdict.passed && retryAt !== undefined) {
      // Perhaps a server restarting (a failure counted), or a safe request deferred (none): asked again soon, still pending.
      cachedStatement(db, 'UPDATE listing_claims SET failures = failures + ?, checked_at = ?, check_after_ms = ? WHERE id = ?').run(
        'deferred' in verdict ? 0 : 1,
        now.toISOString(),
        retryAt,
        row.id,
      );
      return 'retried';
    }
    if (!verdict.passed && !('deferred' in verdict)) {
      const failures = Number(row.failures) + 1;
      cachedStatement(
        db,
        `UPDATE listing_claims SET status = 'rejected', code = ?, reason = ?, checked_at = ?,
           failures = ?, check_after_ms = ? WHERE id = ?`,
      ).run(verdict.code, verdict.reason, now.toISOString(), failures, retryAfterMs(now.getTime(), failures), row.id);
      return 'rejected';
    }
    const draft = JSON.parse(row.draft) as ListingDraft;
    const listing = cachedStatement(db, `SELECT id, owner FROM listings WHERE ${IDENTITY}`).get(row.resource, row.type, row.tool_name) as
      { id: number; owner: string } | undefined;
    if (listing && listing.owner !== row.pay_to) removeListing(db, Number(listing.id));
    const payments = JSON.parse(row.payments) as PaymentFacts[];
    for (const payment of payments.length > 0 ? payments : [{}]) write(draft, payment);
    cachedStatement(db, 'DELETE FROM listing_claims WHERE id = ?').run(row.id);
    return 'listed';
  });
}

/** The claims of an identity, latest settlement first, as validate shows them. */
export function checksOf(db: DatabaseSync, identity: { resource: string; type: string; toolName: string }): OwnershipCheck[] {
  const rows = cachedStatement(db, `SELECT * FROM listing_claims WHERE ${IDENTITY} ORDER BY settled_at DESC, id DESC LIMIT ?`).all(
    identity.resource,
    identity.type,
    identity.toolName,
    MAX_CHECKS_SHOWN,
  ) as unknown as ClaimRow[];
  return rows.map(ownershipCheckOf);
}

/** The store's OwnershipStorePort over `db`: `usable` throws when the file cannot serve (or, for a write, take writes). */
export function claimsPort(
  db: DatabaseSync,
  usable: (forWrite: boolean) => void,
  writeListing: (draft: ListingDraft, now: Date, payment: PaymentFacts) => WriteOutcome,
): OwnershipStorePort {
  return {
    writeOrClaim: (draft, now, payment) => {
      usable(true);
      return inWriteTransaction(db, () =>
        ownerOf(db, draft.resource, draft.type, draft.toolName) === draft.owner
          ? writeListing(draft, now, payment)
          : recordClaim(db, draft, now, payment),
      );
    },
    rememberedRejection: (identity, payTo, nowMs) => (usable(false), rememberedRejection(db, identity, payTo, nowMs)),
    claimChecks: (now, limit, pick) => (usable(true), claimChecks(db, now, limit, pick)),
    resolve: (key, claimedAt, verdict, now) => {
      usable(true);
      return resolveClaim(db, key, claimedAt, verdict, now, (draft, payment) => writeListing(draft, now, payment));
    },
    checksOf: (identity) => (usable(false), checksOf(db, identity)),
    reserveHost: (host, nowMs, intervalMs, sent) => sqliteProbeHosts(db, () => usable(true)).reserve(host, nowMs, intervalMs, sent),
    recheck: (identity, payTo) => {
      usable(true);
      const q = (n: number) => `?${n}`;
      return Number(cachedStatement(db, RECHECK_SQL(q)).run(identity.resource, identity.type, identity.toolName, payTo).changes) > 0;
    },
    backlog: () => {
      usable(false);
      const row = cachedStatement(db, CLAIM_BACKLOG_SQL).get() as { n: number; oldest: string | null };
      return { pending: Number(row.n), oldestSettledAt: row.oldest };
    },
    nextDue: () => {
      usable(false);
      const at = (cachedStatement(db, NEXT_DUE_SQL).get() as { at: number | null }).at;
      return at === null ? null : Number(at);
    },
    countPending: () => (usable(false), Number((cachedStatement(db, COUNT_PENDING_SQL).get() as { n: number }).n)),
  };
}
