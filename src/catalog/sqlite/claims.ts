/**
 * Ownership claims on SQLite (../claims.ts runs them, ../ownership.ts explains them): how the store
 * runs the claims engines. A settlement's claim, a checker's take and a claim's
 * resolution each run in the store's write transaction (BEGIN IMMEDIATE), so a claim's resolution
 * and a settlement of the same listing never interleave.
 */
import type { DatabaseSync } from 'node:sqlite';
import { inWriteTransaction } from '../../db/sqlite.ts';
import type { ListingDraft } from '../ingest/settlement.ts';
import { claimsPort as enginePort, type ClaimsStore } from '../claims.ts';
import type { PaymentFacts } from '../quality.ts';
import { runSync } from '../statements.ts';
import type { OwnershipStorePort, WriteOutcome } from '../types.ts';
import { sqliteSql } from './queries.ts';
import { removeListing } from './withdraw.ts';

/** The store's OwnershipStorePort over `db`: `usable` throws when the file cannot serve (or, for a write, take writes). */
export function claimsPort(
  db: DatabaseSync,
  usable: (forWrite: boolean) => void,
  writeListing: (draft: ListingDraft, now: Date, payment: PaymentFacts) => WriteOutcome,
): OwnershipStorePort {
  const store: ClaimsStore = {
    sql: sqliteSql(db),
    write: writeListing,
    remove: (id) => removeListing(db, Number(id)),
  };
  return enginePort((how, engine) => {
    usable(how !== 'read');
    return how === 'read' || how === 'write' ? runSync(engine(store)) : inWriteTransaction(db, () => runSync(engine(store)));
  });
}
