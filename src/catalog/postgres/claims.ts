/**
 * Ownership claims on PostgreSQL (../claims.ts runs them, ../ownership.ts explains them): how
 * the store runs the claims engines. A settlement's claim and a claim's resolution run under the
 * identity's advisory lock (the one every write of the listing takes, store.ts), so they are
 * serialized with settlements and withdrawals of that listing on every instance; a checker's take
 * runs statement by statement, each lease a compare-and-set, so of several instances one takes a
 * claim.
 */
import type { ListingDraft } from '../ingest/settlement.ts';
import { claimsPort as enginePort } from '../claims.ts';
import type { PaymentFacts } from '../quality.ts';
import { runAsync } from '../statements.ts';
import type { Identity, OwnershipStorePort, WriteOutcome } from '../types.ts';
import { postgresSql, type Db } from './queries.ts';
import { removeListing } from './withdraw.ts';

/** What the claims port needs of the store: its identity lock and its write under that lock (store.ts). */
export interface LockedWrites {
  underIdentityLock<T>(identity: Identity, work: (db: Db) => Promise<T>): Promise<T>;
  writeLocked(db: Db, draft: ListingDraft, now: Date, payment: PaymentFacts): Promise<WriteOutcome>;
}

/** The store's OwnershipStorePort over `pool`, each call after `ready` (the catalog's schema). */
export function claimsPort(pool: Db, ready: () => Promise<unknown>, store: LockedWrites): OwnershipStorePort {
  return enginePort(async (how, engine) => {
    await ready();
    const on = (db: Db) =>
      runAsync(
        engine({
          sql: postgresSql(db),
          write: (draft, now, payment) => store.writeLocked(db, draft, now, payment),
          remove: (id) => removeListing(db, id),
        }),
      );
    if (typeof how === 'string') return on(pool);
    // The identity whose lock a claim's resolution takes; a claim gone meanwhile is found gone without it.
    const identity =
      'identity' in how
        ? how.identity
        : (await pool.query<Identity>('SELECT resource, type, tool_name AS "toolName" FROM listing_claims WHERE id = $1', [how.claim]))
            .rows[0];
    return identity ? store.underIdentityLock(identity, on) : on(pool);
  });
}
