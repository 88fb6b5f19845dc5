/**
 * The lock every write of a listing holds (settlements, claims, withdrawals: store.ts): a transaction-scoped advisory
 * lock keyed on the listing's canonical identity, so writes of one listing from every instance are serialized, and the
 * refusals a write answers with instead of writing.
 */
import type { WriteOutcome } from '../types.ts';
import type { Db } from './queries.ts';

/** A write waits at most this long for a lock (another instance's write): then it fails and the hook answers null. */
export const LOCK_TIMEOUT_MS = 1_000;

/** Thrown inside a write transaction to roll it back with an outcome (nothing of it is kept). */
export class Outcome extends Error {
  readonly value: WriteOutcome;
  constructor(value: WriteOutcome) {
    super(value.status);
    this.value = value;
  }
}

/** An Outcome's answer; any other error goes on. */
export function refusal<T = WriteOutcome>(err: unknown): T {
  if (err instanceof Outcome) return err.value as T;
  throw err;
}

/**
 * Takes the advisory lock of a listing's identity (resource, type, toolName) until the transaction ends. Both statements
 * go out together on a pipelined pool (the catalog store's): one round trip.
 */
export async function lockIdentity(db: Db, key: { resource: string; type: string; toolName: string }): Promise<void> {
  await Promise.all([
    db.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`),
    db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [identityLockKey(key)]),
  ]);
}

/** The advisory lock's key of a listing's identity: `hashtextextended` of it names the lock. */
export const identityLockKey = (key: { resource: string; type: string; toolName: string }) =>
  JSON.stringify(['svc:catalog:listing', key.resource, key.type, key.toolName]);
