/**
 * A listing withdrawn by its owner (CatalogStorePort.withdraw; docs/CATALOG.md "Withdrawing a listing"), written once
 * for both stores as an engine over their statements (statements.ts). Inside the store's transaction: the owner check,
 * the replay check against `listing_withdrawals` (the time of the last withdrawal accepted per listing identity, kept
 * WITHDRAWAL_MEMORY_MS), then the store removes every row of the listing (its removeListing) and the withdrawal's time
 * is remembered. Each store keeps the transaction around it: SQLite's write transaction, Postgres's identity lock
 * (sqlite/withdraw.ts, postgres/withdraw.ts).
 */
import { PRUNE_BATCH } from './listing.ts';
import { changes, rows, step, type Engine, type Sql } from './statements.ts';
import { WITHDRAWAL_MEMORY_MS, type Awaitable, type Withdrawal, type WithdrawalOutcome } from './types.ts';

export function* withdrawListing(
  sql: Sql,
  removeListing: (id: number | string) => Awaitable<unknown>,
  w: Withdrawal,
  now: Date,
): Engine<WithdrawalOutcome> {
  const { p } = sql;
  const identity = [w.resource, w.type, w.toolName];
  const identityIs = `resource = ${p(1)} AND type = ${p(2)} AND tool_name = ${p(3)}`;
  const [listing] = yield* rows<{ id: number | string; owner: string }>(
    sql,
    `SELECT id, owner FROM listings WHERE ${identityIs}`,
    identity,
  );
  if (!listing) return { status: 'unknown' };
  if (listing.owner !== w.owner) return { status: 'not_owner', owner: listing.owner };
  const [last] = yield* rows<{ issued_at_ms: number | string }>(
    sql,
    `SELECT issued_at_ms FROM listing_withdrawals WHERE ${identityIs}`,
    identity,
  );
  if (last && Number(last.issued_at_ms) >= w.issuedAtMs) return { status: 'replayed', lastIssuedAtMs: Number(last.issued_at_ms) };

  yield* step(() => removeListing(listing.id));
  yield* changes(
    sql,
    `INSERT INTO listing_withdrawals (resource, type, tool_name, issued_at_ms) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})
     ON CONFLICT (resource, type, tool_name) DO UPDATE SET issued_at_ms = excluded.issued_at_ms`,
    [...identity, w.issuedAtMs],
  );
  yield* changes(
    sql,
    `DELETE FROM listing_withdrawals WHERE (resource, type, tool_name) IN (
       SELECT resource, type, tool_name FROM listing_withdrawals WHERE issued_at_ms < ${p(1)} LIMIT ${p(2)})`,
    [now.getTime() - WITHDRAWAL_MEMORY_MS, PRUNE_BATCH],
  );
  return { status: 'delisted' };
}
