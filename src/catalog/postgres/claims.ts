/**
 * Ownership claims on PostgreSQL, as sqlite/claims.ts keeps them (../ownership.ts explains them).
 * A settlement's claim and a claim's resolution run under the identity's advisory lock (the one
 * every write of the listing takes, store.ts), so they are serialized with settlements and
 * withdrawals of that listing on every instance; checkers on several instances take due checks
 * with `FOR UPDATE SKIP LOCKED`, so one claim is probed by one instance.
 */
import type { BazaarCode } from '../../codes.ts';
import type { ListingDraft } from '../ingest/settlement.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { postgresProbeHosts } from '../probe-hosts.ts';
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
import type { Db } from './queries.ts';
import type { OwnershipStorePort, WriteOutcome } from '../types.ts';
import { removeListing } from './withdraw.ts';

export const CLAIMS_MIGRATION = claimsTableSql('postgres');

const IDENTITY = 'resource = $1 AND type = $2 AND tool_name = $3';
/**
 * A claim's columns (ClaimRow), named rather than `*`: the statements of a write are prepared on their connection
 * (queries.ts preparedDb), and a prepared `SELECT *` fails ("cached plan must not change result type") once a newer
 * instance's migration adds a column.
 */
const CLAIM_COLUMNS =
  'id, resource, type, tool_name, pay_to, status, draft, payments, settled_at, check_after_ms, failures, code, reason, checked_at';
type Identity = { resource: string; type: string; toolName: string };

/** Inside the write's transaction, under the identity's lock (sqlite/claims.ts recordClaim). */
export async function recordClaim(db: Db, draft: ListingDraft, now: Date, payment: PaymentFacts): Promise<ClaimOutcome> {
  const row = (
    await db.query<ClaimRow>(`SELECT ${CLAIM_COLUMNS} FROM listing_claims WHERE ${IDENTITY} AND pay_to = $4`, [
      draft.resource,
      draft.type,
      draft.toolName,
      draft.owner,
    ])
  ).rows[0];
  const nowMs = now.getTime();
  const again = row ? rejectedAgain(row, nowMs) : undefined;
  if (again) return again;
  const payments = JSON.stringify(withPayment(row?.status === 'pending' ? row.payments : undefined, payment));
  if (row) {
    await db.query(
      `UPDATE listing_claims SET draft = $1, payments = $2, settled_at = $3,
         check_after_ms = CASE WHEN status = 'pending' THEN check_after_ms ELSE 0 END, status = 'pending' WHERE id = $4`,
      [JSON.stringify(draft), payments, now.toISOString(), row.id],
    );
  } else {
    const waiting = Number(
      (
        await db.query<{ n: string }>(
          PENDING_OF_PAYTO_SQL((n) => `$${n}`),
          [draft.owner],
        )
      ).rows[0]!.n,
    );
    if (waiting >= MAX_PENDING_CLAIMS_PER_PAYTO) return backlogFull(draft.owner);
    await db.query(
      `INSERT INTO listing_claims (resource, type, tool_name, pay_to, status, draft, payments, settled_at, check_after_ms)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, 0)`,
      [draft.resource, draft.type, draft.toolName, draft.owner, JSON.stringify(draft), payments, now.toISOString()],
    );
  }
  await db.query(
    `DELETE FROM listing_claims WHERE id IN (
       SELECT id FROM listing_claims WHERE status = 'rejected' AND check_after_ms < $1 LIMIT $2)`,
    [nowMs - REJECTED_MEMORY_MS, PRUNE_BATCH],
  );
  return { status: 'pending' };
}

/** sqlite/claims.ts rememberedRejection. */
export async function rememberedRejection(
  db: Db,
  identity: Identity,
  payTo: string,
  nowMs: number,
): Promise<{ code: BazaarCode; reason: string } | undefined> {
  const row = (
    await db.query<ClaimRow>(`SELECT ${CLAIM_COLUMNS} FROM listing_claims WHERE ${IDENTITY} AND pay_to = $4 AND status = 'rejected'`, [
      identity.resource,
      identity.type,
      identity.toolName,
      payTo,
    ])
  ).rows[0];
  const again = row ? rejectedAgain(row, nowMs) : undefined;
  return again ? { code: again.code, reason: again.reason } : undefined;
}

/**
 * sqlite/claims.ts claimChecks: the fair take (../ownership.ts pickClaims), each lease a
 * compare-and-set on the claim's due time, so of several instances one takes a claim, and each
 * host's slot from the one table every instance shares.
 */
export async function claimChecks(db: Db, now: number, limit: number, pick?: ClaimPick): Promise<OwnershipClaim[]> {
  const candidates = (
    await db.query<{ id: string; pay_to: string; resource: string }>(
      FAIR_DUE_CLAIMS_SQL((n) => `$${n}`),
      [now, limit * CLAIM_CANDIDATES_PER_SLOT],
    )
  ).rows;
  const hosts = postgresProbeHosts(db, async () => {});
  const steps = pickClaims(candidates, limit, now, pick);
  let step = steps.next();
  while (!step.done) {
    const s = step.value;
    if (s.op === 'lease')
      step = steps.next(
        ((
          await db.query('UPDATE listing_claims SET check_after_ms = $1 WHERE id = $2 AND check_after_ms <= $3', [
            now + CLAIM_LEASE_MS,
            s.id,
            now,
          ])
        ).rowCount ?? 0) > 0,
      );
    else if (s.op === 'reserve') step = steps.next(await hosts.reserve(s.host, now, pick!.hostIntervalMs));
    else
      step = steps.next(
        (await db.query(
          POSTPONE_CLAIMS_SQL((n) => `$${n}`, 'SELECT unnest($2::bigint[])'),
          [s.untilMs, s.ids, now, now + CLAIM_LEASE_MS],
        ),
        undefined),
      );
  }
  if (step.value.length === 0) return [];
  const rows = (
    await db.query<ClaimRow & { owner: string | null }>(
      `SELECT ${CLAIM_COLUMNS.replace(/(\w+)/g, 'c.$1')},
         (SELECT owner FROM listings l WHERE l.resource = c.resource AND l.type = c.type AND l.tool_name = c.tool_name) AS owner
       FROM listing_claims c WHERE c.id = ANY($1::bigint[])`,
      [step.value],
    )
  ).rows;
  const order = new Map(step.value.map((id, i) => [String(id), i]));
  return rows
    .sort((a, b) => order.get(String(a.id))! - order.get(String(b.id))!)
    .map((row) => ownershipClaimOf(row, row.owner ?? undefined));
}

/**
 * sqlite/claims.ts resolveClaim, inside a transaction holding the identity's lock (store.ts).
 * `write` is the store's write of a listing in that transaction.
 */
export async function resolveClaim(
  db: Db,
  key: string,
  claimedAt: number,
  verdict: OwnershipVerdict,
  now: Date,
  write: (draft: ListingDraft, payment: PaymentFacts) => Promise<unknown>,
): Promise<ClaimResolution> {
  const row = (
    await db.query<ClaimRow>(
      `SELECT ${CLAIM_COLUMNS} FROM listing_claims WHERE id = $1 AND status = 'pending' AND check_after_ms = $2 FOR UPDATE`,
      [key, claimedAt + CLAIM_LEASE_MS],
    )
  ).rows[0];
  if (!row?.draft) return 'gone';
  const retryAt = pendingRetryAt(verdict, Number(row.failures), now.getTime());
  if (!verdict.passed && retryAt !== undefined) {
    // Perhaps a server restarting (a failure counted), or a safe request deferred (none): asked again soon, still pending.
    await db.query('UPDATE listing_claims SET failures = failures + $4, checked_at = $1, check_after_ms = $2 WHERE id = $3', [
      now.toISOString(),
      retryAt,
      row.id,
      'deferred' in verdict ? 0 : 1,
    ]);
    return 'retried';
  }
  if (!verdict.passed && !('deferred' in verdict)) {
    const failures = Number(row.failures) + 1;
    await db.query(
      `UPDATE listing_claims SET status = 'rejected', code = $1, reason = $2, checked_at = $3,
         failures = $4, check_after_ms = $5 WHERE id = $6`,
      [verdict.code, verdict.reason, now.toISOString(), failures, retryAfterMs(now.getTime(), failures), row.id],
    );
    return 'rejected';
  }
  const draft = JSON.parse(row.draft) as ListingDraft;
  const listing = (
    await db.query<{ id: string; owner: string }>(`SELECT id, owner FROM listings WHERE ${IDENTITY}`, [
      row.resource,
      row.type,
      row.tool_name,
    ])
  ).rows[0];
  if (listing && listing.owner !== row.pay_to) await removeListing(db, listing.id);
  const payments = JSON.parse(row.payments) as PaymentFacts[];
  for (const payment of payments.length > 0 ? payments : [{}]) await write(draft, payment);
  await db.query('DELETE FROM listing_claims WHERE id = $1', [row.id]);
  return 'listed';
}

/** The identity a claim is about (to take its advisory lock before resolving it). */
export async function claimIdentity(db: Db, key: string): Promise<Identity | undefined> {
  const row = (
    await db.query<{ resource: string; type: string; tool_name: string }>(
      'SELECT resource, type, tool_name FROM listing_claims WHERE id = $1',
      [key],
    )
  ).rows[0];
  return row ? { resource: row.resource, type: row.type, toolName: row.tool_name } : undefined;
}

/** sqlite/claims.ts checksOf. */
export async function checksOf(db: Db, identity: Identity): Promise<OwnershipCheck[]> {
  const rows = (
    await db.query<ClaimRow>(`SELECT ${CLAIM_COLUMNS} FROM listing_claims WHERE ${IDENTITY} ORDER BY settled_at DESC, id DESC LIMIT $4`, [
      identity.resource,
      identity.type,
      identity.toolName,
      MAX_CHECKS_SHOWN,
    ])
  ).rows;
  return rows.map(ownershipCheckOf);
}

/** What the claims port needs of the store: its identity lock and its write under that lock (store.ts). */
export interface LockedWrites {
  underIdentityLock<T>(identity: Identity, work: (db: Db) => Promise<T>): Promise<T>;
  writeLocked(db: Db, draft: ListingDraft, now: Date, payment: PaymentFacts): Promise<WriteOutcome>;
}

/** The store's OwnershipStorePort over `pool`, each call after `ready` (the catalog's migrations). */
export function claimsPort(pool: Db, ready: () => Promise<unknown>, store: LockedWrites): OwnershipStorePort {
  return {
    writeOrClaim: async (draft, now, payment) => {
      await ready();
      return store.underIdentityLock<WriteOutcome | ClaimOutcome>(draft, async (db) => {
        const owner = (
          await db.query<{ owner: string }>(`SELECT owner FROM listings WHERE ${IDENTITY}`, [draft.resource, draft.type, draft.toolName])
        ).rows[0]?.owner;
        return owner === draft.owner ? store.writeLocked(db, draft, now, payment) : recordClaim(db, draft, now, payment);
      });
    },
    rememberedRejection: async (identity, payTo, nowMs) => (await ready(), rememberedRejection(pool, identity, payTo, nowMs)),
    claimChecks: async (now, limit, pick) => (await ready(), claimChecks(pool, now, limit, pick)),
    resolve: async (key, claimedAt, verdict, now) => {
      await ready();
      const identity = await claimIdentity(pool, key);
      if (!identity) return 'gone';
      return store.underIdentityLock(identity, (db) =>
        resolveClaim(db, key, claimedAt, verdict, now, (draft, payment) => store.writeLocked(db, draft, now, payment)),
      );
    },
    checksOf: async (identity) => (await ready(), checksOf(pool, identity)),
    reserveHost: (host, nowMs, intervalMs, sent) => postgresProbeHosts(pool, ready).reserve(host, nowMs, intervalMs, sent),
    recheck: async (identity, payTo) => {
      await ready();
      const done = await pool.query(
        RECHECK_SQL((n) => `$${n}`),
        [identity.resource, identity.type, identity.toolName, payTo],
      );
      return (done.rowCount ?? 0) > 0;
    },
    backlog: async () => {
      await ready();
      const row = (await pool.query<{ n: string; oldest: string | null }>(CLAIM_BACKLOG_SQL)).rows[0]!;
      return { pending: Number(row.n), oldestSettledAt: row.oldest };
    },
    nextDue: async () => {
      await ready();
      const at = (await pool.query<{ at: string | null }>(NEXT_DUE_SQL)).rows[0]?.at;
      return at === null || at === undefined ? null : Number(at);
    },
    countPending: async () => (await ready(), Number((await pool.query<{ n: string }>(COUNT_PENDING_SQL)).rows[0]!.n)),
  };
}
