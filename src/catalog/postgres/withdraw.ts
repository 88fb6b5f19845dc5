/**
 * A listing withdrawn by its owner, on PostgreSQL (CatalogStorePort.withdraw; docs/CATALOG.md
 * "Withdrawing a listing"): the engine (../withdraw.ts) under the listing identity's advisory lock
 * (the one a settlement's write takes, so a withdrawal and a settlement of one listing are
 * serialized across instances), and the removal of every row of a listing, its list keys uncounted
 * from their blocks.
 */
import { removePrices } from './price-index.ts';
import type pg from 'pg';
import { nextSeq, postgresSql, type Db } from './queries.ts';
import { removeQualitySignals } from './quality.ts';
import { lockIdentity } from './identity-lock.ts';
import { inTransaction } from '../../db/postgres.ts';
import type { Withdrawal, WithdrawalOutcome } from '../types.ts';
import { runAsync } from '../statements.ts';
import { withdrawListing as withdrawEngine } from '../withdraw.ts';

/**
 * The withdrawal (../withdraw.ts) in one transaction, under the settlement write's lock (store.ts writeListing); past its
 * timeout (another instance's write) the withdrawal fails (a 500).
 */
export const withdrawListing = (pool: pg.Pool, w: Withdrawal, now: Date): Promise<WithdrawalOutcome> =>
  inTransaction(pool, async (db) => {
    await lockIdentity(db, w);
    return runAsync(withdrawEngine(postgresSql(db), (id) => removeListing(db, id), w, now));
  });

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
