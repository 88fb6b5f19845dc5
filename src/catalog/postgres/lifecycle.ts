/**
 * The end of a listing's life on PostgreSQL (../lifecycle.ts explains it), as sqlite/lifecycle.ts
 * runs it on SQLite. Several instances share the catalog and each runs the pass: a batch's
 * candidates are read without locks, then each listing is handled in its own transaction under its
 * identity's advisory lock (the one every write of it takes, store.ts), taken with a try (another
 * instance's write of it is left alone, this pass skips it) and with its condition read again
 * under the lock, so two passes never act on one listing twice and a settlement between the read
 * and the lock wins.
 */
import type pg from 'pg';
import { inTransaction } from '../../db/postgres.ts';
import { stashText, type LifecycleBatch, type LifecycleCuts, type LifecycleStorePort } from '../lifecycle.ts';
export type { LifecycleStorePort };
import { SCORE_UNITS } from './migrations.ts';
import { nextSeq, type Db } from './queries.ts';
import { pruneRevisions, restoreStashed } from './revisions.ts';
import { removeListing } from './withdraw.ts';

type Row = { id: string; resource: string; type: string; tool_name: string; last_updated: string; since: string | null };
const COLUMNS = 'id, resource, type, tool_name, last_updated, liveness_failing_since AS since';

/**
 * `work` on one listing in its own transaction under its identity's lock, if the lock is free and
 * `still` (a condition on the listing's row, with `params` from `$2`) holds under it; whether it ran.
 */
async function underLock(pool: pg.Pool, row: Row, still: string, params: unknown[], work: (db: Db) => Promise<unknown>): Promise<boolean> {
  return inTransaction(pool, async (db) => {
    const identity = JSON.stringify(['svc:catalog:listing', row.resource, row.type, row.tool_name]);
    const locked = await db.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok', [identity]);
    if (!locked.rows[0]?.ok) return false;
    if ((await db.query(`SELECT 1 FROM listings WHERE id = $1 AND ${still}`, [row.id, ...params])).rows.length === 0) return false;
    await work(db);
    return true;
  });
}

/** Takes a listing out of the search index (sqlite/lifecycle.ts hide): its revision closed and stashed (its URL keys among its terms). */
async function hide(db: Db, id: string, hiddenAt: string): Promise<void> {
  const seq = await nextSeq(db);
  const current = (
    await db.query<{ rev: string; text_hash: string; from_seq: string }>(
      'SELECT rev, text_hash, from_seq FROM search_revisions WHERE listing_id = $1 AND to_seq IS NULL',
      [id],
    )
  ).rows[0];
  let scores: Array<[string, number]> = [];
  if (current) {
    const rows = await db.query<{ term: string; units: string }>('SELECT term, units FROM search_terms WHERE rev = $1', [current.rev]);
    // units = score × 2^53 exactly (migrations.ts): the division gives the score back bit for bit.
    scores = rows.rows.map((r) => [r.term, Number(r.units) / SCORE_UNITS]);
    await db.query('UPDATE search_revisions SET to_seq = $1, superseded_at = $2 WHERE rev = $3', [seq, hiddenAt, current.rev]);
    await db.query('UPDATE search_terms SET to_seq = $1 WHERE rev = $2', [seq, current.rev]);
  }
  const span = current ? { from: Number(current.from_seq), to: seq } : undefined;
  await db.query('UPDATE listings SET search_stash = $1 WHERE id = $2', [stashText(current?.text_hash ?? '', scores, span), id]);
}

/** Puts a stashed listing back in the search index (revisions.ts restoreStashed) under a write sequence of its own. */
export async function restore(db: Db, id: string | number): Promise<boolean> {
  const row = (await db.query<{ id: string }>('SELECT id FROM listings WHERE id = $1 AND search_stash IS NOT NULL FOR UPDATE', [id]))
    .rows[0];
  if (!row) return false;
  return restoreStashed(db, Number(id), await nextSeq(db));
}

/** The store's lifecycle port (../lifecycle.ts), each batch after `ready` (the catalog's migrations). */
export const lifecyclePort = (pool: pg.Pool, ready: () => Promise<unknown>): LifecycleStorePort => ({
  maintain: async (cuts, now, limit) => (await ready(), maintain(pool, cuts, now, limit)),
});

/** A passing liveness check of a stashed listing: back in the index at once, under its identity's lock. */
export const restoreAfterCheck = (pool: pg.Pool) => async (id: string) => {
  const row = (await pool.query<Row>(`SELECT ${COLUMNS} FROM listings WHERE id = $1 AND search_stash IS NOT NULL`, [id])).rows[0];
  if (row) await underLock(pool, row, 'search_stash IS NOT NULL', [], (db) => restore(db, id));
};

/** One batch of a pass (../lifecycle.ts): purge, then hide, then put back; then prune. */
export async function maintain(pool: pg.Pool, cuts: LifecycleCuts, now: Date, limit: number): Promise<LifecycleBatch> {
  const nowMs = now.getTime();
  const ttlMs = nowMs - Date.parse(cuts.visibleSince);
  const graceMs = cuts.failingBefore === undefined ? 0 : nowMs - Date.parse(cuts.failingBefore);
  const select = async (where: string, order: string, ...params: unknown[]) =>
    (await pool.query<Row>(`SELECT ${COLUMNS} FROM listings WHERE ${where} ORDER BY ${order} LIMIT ${limit}`, params)).rows;
  const done = { hidden: 0, restored: 0, purged: 0 };

  const purging = new Map<string, Row>();
  for (const row of await select('last_updated < $1', 'last_updated', cuts.purgeSettledBefore)) purging.set(row.id, row);
  if (cuts.purgeFailingBefore !== undefined)
    for (const row of await select('liveness_failing_since < $1', 'liveness_failing_since', cuts.purgeFailingBefore))
      purging.set(row.id, row);
  const purgeCut = '(last_updated < $2 OR liveness_failing_since < $3)';
  for (const row of purging.values())
    if (await underLock(pool, row, purgeCut, [cuts.purgeSettledBefore, cuts.purgeFailingBefore ?? null], (db) => removeListing(db, row.id)))
      done.purged++;

  // Newly hidden, and when each hid: the later of the cuts it crossed.
  const hiding = new Map<string, { row: Row; at: number }>();
  const since = (row: Row, at: number) => hiding.set(row.id, { row, at: Math.max(hiding.get(row.id)?.at ?? 0, Math.min(nowMs, at)) });
  for (const row of await select('search_stash IS NULL AND last_updated < $1', 'last_updated, id', cuts.visibleSince))
    since(row, Date.parse(row.last_updated) + ttlMs);
  if (cuts.failingBefore !== undefined)
    for (const row of await select(
      'search_stash IS NULL AND liveness_failing_since < $1',
      'liveness_failing_since, id',
      cuts.failingBefore,
    ))
      since(row, Date.parse(row.since!) + graceMs);
  for (const { row, at } of hiding.values())
    if (await underLock(pool, row, 'search_stash IS NULL', [], (db) => hide(db, row.id, new Date(at).toISOString()))) done.hidden++;

  // Hidden before and visible now (a longer TTL or grace since, or a clock set back).
  const visible = (since: string, failing: string) =>
    `search_stash IS NOT NULL AND last_updated >= ${since} AND (${failing}::text IS NULL OR liveness_failing_since IS NULL OR liveness_failing_since >= ${failing})`;
  const cutsNow = [cuts.visibleSince, cuts.failingBefore ?? null];
  for (const row of await select(visible('$1', '$2'), 'last_updated, id', ...cutsNow))
    if (await underLock(pool, row, visible('$2', '$3'), cutsNow, (db) => restore(db, row.id))) done.restored++;

  // The hidden revisions (and any other past a cursor's life) leave the index now, not a few per settlement.
  for (let pruned = 0, n = 1; n > 0 && pruned < 4 * limit; pruned += n) n = await pruneRevisions(pool, now, limit);
  return done;
}
