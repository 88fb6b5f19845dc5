/**
 * Each search revision's bounds on a query's share sum (catalog migrations 12 and 15): the sums of
 * its largest rounded shares, written with the revision (store.ts) and read in bound order by
 * revision-scan.ts (docs/CATALOG.md "Search"), and the pruning of superseded revisions.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { LONG_QUERY_SHARE_SUMS, REVISION_SHARE_SUMS, TOP_SHARES, topShareSums, topSharesColumn, topSharesIndex } from '../terms.ts';
import { commonTermsOf } from './common-terms.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { SNAPSHOT_RETENTION_MS } from '../search.ts';

/**
 * Writes a new search revision with its share sums, signature, sketches and common-term mask
 * (store.ts), the common terms chosen first if the catalog has grown to `commonTermsChosenAt`
 * without them (common-terms.ts); returns its `rev`.
 */
export function insertRevision(
  db: DatabaseSync,
  revision: { listingId: number; fromSeq: number; textHash: string },
  scores: Map<string, number>,
  signature: { sig: bigint; sketchA: bigint; sketchB: bigint },
  commonTermsChosenAt?: number,
): number {
  const statement = (sql: string) => cachedStatement(db, sql);
  const sums = REVISION_SHARE_SUMS.map(topSharesColumn);
  const common = commonTermsOf(db, statement, scores, commonTermsChosenAt);
  const row = statement(
    `INSERT INTO search_revisions (listing_id, from_seq, text_hash, ${sums.join(', ')}, sig, sketch_a, sketch_b, common_mask, common_milli)
     VALUES (?, ?, ?, ${sums.map(() => '?').join(', ')}, ?, ?, ?, ?, ?) RETURNING rev`,
  ).get(
    revision.listingId,
    revision.fromSeq,
    revision.textHash,
    ...topShareSums(scores, REVISION_SHARE_SUMS),
    signature.sig,
    signature.sketchA,
    signature.sketchB,
    common.mask,
    common.milli,
  ) as { rev: number };
  return Number(row.rev);
}

/**
 * Deletes up to PRUNE_BATCH revisions superseded more than SNAPSHOT_RETENTION_MS ago, with their
 * term rows and pair rows (pair-tops.ts): no cursor can still read them (the settle write, store.ts;
 * the lifecycle pass, lifecycle.ts). Returns how many went.
 */
export function pruneSupersededRevisions(db: DatabaseSync, now: Date): number {
  const horizon = new Date(now.getTime() - SNAPSHOT_RETENTION_MS).toISOString();
  const expired = cachedStatement(
    db,
    'SELECT rev FROM search_revisions WHERE to_seq IS NOT NULL AND superseded_at < ? ORDER BY superseded_at LIMIT ?',
  ).all(horizon, PRUNE_BATCH) as Array<{ rev: number }>;
  for (const { rev } of expired)
    for (const table of ['search_terms', 'search_pair_tops', 'search_revisions'])
      cachedStatement(db, `DELETE FROM ${table} WHERE rev = ?`).run(rev);
  return expired.length;
}

/**
 * Migration 12: the revisions' bounds (TOP_SHARES). The defaults (a bound above any share sum,
 * every signature bit and sketch code) make an unfilled revision a candidate of every query, ranked
 * exactly; every existing revision gets its own here, from its term rows (an MD5 per term is not
 * needed: the rows carry the signature).
 */
export function migrateToRevisionBounds(db: DatabaseSync): void {
  db.exec(`
    ALTER TABLE search_revisions ADD COLUMN top_shares INTEGER NOT NULL DEFAULT 1000000000000;
    ALTER TABLE search_revisions ADD COLUMN sig INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE search_revisions ADD COLUMN sketch_a INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE search_revisions ADD COLUMN sketch_b INTEGER NOT NULL DEFAULT -1;
    UPDATE search_revisions SET
      top_shares = coalesce((SELECT sum(milli) FROM (SELECT milli FROM search_terms
        WHERE rev = search_revisions.rev ORDER BY milli DESC LIMIT ${TOP_SHARES})), 0),
      sig = coalesce((SELECT sig FROM search_terms WHERE rev = search_revisions.rev LIMIT 1), 0),
      sketch_a = coalesce((SELECT sketch_a FROM search_terms WHERE rev = search_revisions.rev LIMIT 1), 0),
      sketch_b = coalesce((SELECT sketch_b FROM search_terms WHERE rev = search_revisions.rev LIMIT 1), 0);
    CREATE INDEX search_revisions_by_top ON search_revisions (top_shares DESC, rev, listing_id, from_seq, to_seq, sig, sketch_a, sketch_b);
  `);
}

/**
 * Migration 15: the revisions' sums of their 5, 6 and 7 largest shares (LONG_QUERY_SHARE_SUMS), each
 * indexed as `top_shares`. The default, above any sum, makes a revision written by an svc before it
 * a candidate of every query (ranked exactly). Filled in one pass over the term rows, keeping each
 * revision's 7 largest shares in one typed array (about 80 bytes a revision with its slot), then one update per revision:
 * migration 12's correlated subquery per revision took 46 s at 100k, a lookup per term row.
 */
export function migrateToLongQueryBounds(db: DatabaseSync): void {
  const deepest = Math.max(...LONG_QUERY_SHARE_SUMS);
  for (const n of LONG_QUERY_SHARE_SUMS)
    db.exec(`ALTER TABLE search_revisions ADD COLUMN ${topSharesColumn(n)} INTEGER NOT NULL DEFAULT 1000000000000`);
  // Each revision's `deepest` largest shares, descending, in one flat array (a slot per revision).
  const revisions = db.prepare('SELECT rev FROM search_revisions');
  revisions.setReturnArrays(true);
  const revs = (revisions.all() as unknown as Array<[number]>).map(([rev]) => rev);
  const slotOf = new Map(revs.map((rev, slot) => [rev, slot]));
  const largest = new Int32Array(revs.length * deepest);
  const held = new Uint8Array(revs.length);
  const rows = db.prepare('SELECT rev, milli FROM search_terms');
  rows.setReturnArrays(true);
  for (const [rev, milli] of rows.iterate() as Iterable<[number, number]>) {
    const slot = slotOf.get(rev);
    if (slot === undefined) continue;
    const top = largest.subarray(slot * deepest, (slot + 1) * deepest);
    const k = held[slot]!;
    if (k === deepest && milli <= top[deepest - 1]!) continue;
    let at = Math.min(k, deepest - 1);
    for (; at > 0 && top[at - 1]! < milli; at--) top[at] = top[at - 1]!;
    top[at] = milli;
    if (k < deepest) held[slot] = k + 1;
  }
  const update = db.prepare(
    `UPDATE search_revisions SET ${LONG_QUERY_SHARE_SUMS.map((n) => `${topSharesColumn(n)} = ?`).join(', ')} WHERE rev = ?`,
  );
  revs.forEach((rev, slot) => {
    // A revision without terms matches nothing: 0, as migration 12 gives its `top_shares`.
    const top = largest.subarray(slot * deepest, slot * deepest + held[slot]!);
    update.run(...LONG_QUERY_SHARE_SUMS.map((n) => top.subarray(0, n).reduce((sum, m) => sum + m, 0)), rev);
  });
  for (const n of LONG_QUERY_SHARE_SUMS) {
    const column = topSharesColumn(n);
    db.exec(
      `CREATE INDEX ${topSharesIndex(n)} ON search_revisions (${column} DESC, rev, listing_id, from_seq, to_seq, sig, sketch_a, sketch_b)`,
    );
  }
}
