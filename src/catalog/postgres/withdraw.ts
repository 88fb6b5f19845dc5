/**
 * A listing withdrawn by its owner, on PostgreSQL (CatalogStorePort.withdraw; docs/CATALOG.md
 * "Withdrawing a listing"), as sqlite/withdraw.ts does it: under the listing identity's advisory
 * lock (the one a settlement's write takes, so a withdrawal and a settlement of one listing are
 * serialized across instances), the owner check, the replay check against `listing_withdrawals`,
 * then every row of the listing goes, its list keys uncounted from their totals and blocks.
 */
import { removePrices } from './price-index.ts';
import type pg from 'pg';
import { nextSeq, type Db } from './queries.ts';
import { removeQualitySignals } from './quality.ts';
import { lockIdentity } from './identity-lock.ts';
import { inTransaction } from '../../db/postgres.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { WITHDRAWAL_MEMORY_MS, type Withdrawal, type WithdrawalOutcome } from '../types.ts';

/** Migration (sqlite/withdraw.ts migrateToWithdrawals). */
export const WITHDRAWALS_MIGRATION = `
  CREATE TABLE listing_withdrawals (
    resource TEXT COLLATE "C" NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    tool_name TEXT COLLATE "C" NOT NULL,
    issued_at_ms BIGINT NOT NULL,
    PRIMARY KEY (resource, type, tool_name)
  );
  CREATE INDEX listing_withdrawals_by_time ON listing_withdrawals (issued_at_ms);
  CREATE INDEX search_revisions_by_listing ON search_revisions (listing_id);`;

/** Thrown inside the transaction to roll it back with an outcome. */
class Refused extends Error {
  constructor(readonly outcome: WithdrawalOutcome) {
    super(outcome.status);
  }
}

export async function withdrawListing(pool: pg.Pool, w: Withdrawal, now: Date): Promise<WithdrawalOutcome> {
  try {
    return await inTransaction(pool, async (db) => {
      // The settlement write's lock (store.ts writeListing); past its timeout (another instance's
      // write) the withdrawal fails (a 500).
      await lockIdentity(db, w);
      const key = [w.resource, w.type, w.toolName];
      const listing = (
        await db.query<{ id: string; owner: string }>(
          'SELECT id, owner FROM listings WHERE resource = $1 AND type = $2 AND tool_name = $3',
          key,
        )
      ).rows[0];
      if (!listing) throw new Refused({ status: 'unknown' });
      if (listing.owner !== w.owner) throw new Refused({ status: 'not_owner', owner: listing.owner });
      const last = (
        await db.query<{ issued_at_ms: string }>(
          'SELECT issued_at_ms FROM listing_withdrawals WHERE resource = $1 AND type = $2 AND tool_name = $3',
          key,
        )
      ).rows[0];
      if (last && Number(last.issued_at_ms) >= w.issuedAtMs)
        throw new Refused({ status: 'replayed', lastIssuedAtMs: Number(last.issued_at_ms) });

      await removeListing(db, listing.id);
      await db.query(
        `INSERT INTO listing_withdrawals (resource, type, tool_name, issued_at_ms) VALUES ($1, $2, $3, $4)
         ON CONFLICT (resource, type, tool_name) DO UPDATE SET issued_at_ms = excluded.issued_at_ms`,
        [...key, w.issuedAtMs],
      );
      await db.query(
        `DELETE FROM listing_withdrawals WHERE (resource, type, tool_name) IN (
           SELECT resource, type, tool_name FROM listing_withdrawals WHERE issued_at_ms < $1 LIMIT $2)`,
        [now.getTime() - WITHDRAWAL_MEMORY_MS, PRUNE_BATCH],
      );
      return { status: 'delisted' } as const;
    });
  } catch (err) {
    if (err instanceof Refused) return err.outcome;
    throw err;
  }
}

/**
 * Every row of listing `id` goes, inside the caller's transaction (under the identity's advisory
 * lock), as sqlite/withdraw.ts removeListing: a withdrawal, or a takeover by the payTo the
 * resource's origin names (postgres/claims.ts).
 */
export async function removeListing(db: Db, id: string | number): Promise<void> {
  // A write like any other: it takes its place in the sequence (store.ts).
  await nextSeq(db);
  const keys = await db.query<{ kind: string; value: string; last_updated: string }>(
    'SELECT kind, value, last_updated FROM listing_keys WHERE listing_id = $1',
    [id],
  );
  for (const k of keys.rows) await db.query('SELECT catalog_block_remove($1, $2, $3, $4)', [k.kind, k.value, k.last_updated, id]);
  await db.query('DELETE FROM listing_keys WHERE listing_id = $1', [id]);
  await removePrices(db, id);
  await removeQualitySignals(db, id);
  await db.query('DELETE FROM search_terms WHERE rev IN (SELECT rev FROM search_revisions WHERE listing_id = $1)', [id]);
  await db.query('DELETE FROM search_revisions WHERE listing_id = $1', [id]);
  await db.query('DELETE FROM listings WHERE id = $1', [id]);
}
