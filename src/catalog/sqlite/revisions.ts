/**
 * Search revisions on SQLite: a listing's searchable text as term rows valid over [from_seq, to_seq)
 * (docs/CATALOG.md "Search"), written with the listing (store.ts, lifecycle.ts), and the pruning of
 * superseded ones once no cursor can read them.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import { PRUNE_BATCH } from '../listing.ts';
import { SNAPSHOT_RETENTION_MS } from '../search.ts';

/**
 * The catalog's write sequence, row `seq` of `catalog_meta`: every write takes the next number
 * (nextSeq) and stamps what it adds or closes with it, so a search pinned at N reads the catalog as
 * of N (docs/CATALOG.md "Response and cursor", "Exactly once").
 */
export const nextSeq = (db: DatabaseSync): number =>
  Number(
    (cachedStatement(db, "UPDATE catalog_meta SET value = value + 1 WHERE key = 'seq' RETURNING value").get() as { value: string }).value,
  );
export const currentSeq = (db: DatabaseSync): number =>
  Number((cachedStatement(db, "SELECT value FROM catalog_meta WHERE key = 'seq'").get() as { value: string }).value);

/** Writes a search revision and its term rows (one per distinct term, with its score); returns its `rev`. */
export function insertRevision(
  db: DatabaseSync,
  revision: { listingId: number; fromSeq: number; toSeq: number | null; textHash: string },
  scores: Map<string, number>,
): number {
  const { rev } = cachedStatement(
    db,
    'INSERT INTO search_revisions (listing_id, from_seq, to_seq, text_hash) VALUES (?, ?, ?, ?) RETURNING rev',
  ).get(revision.listingId, revision.fromSeq, revision.toSeq, revision.textHash) as { rev: number };
  insertTermRows(db, { ...revision, rev: Number(rev) }, scores);
  return Number(rev);
}

/** The term rows of one search revision: they repeat its validity, so a search reads only these rows. */
function insertTermRows(
  db: DatabaseSync,
  revision: { rev: number; listingId: number; fromSeq: number; toSeq: number | null },
  scores: Map<string, number>,
): void {
  const insert = cachedStatement(
    db,
    'INSERT INTO search_terms (term, rev, listing_id, score, milli, from_seq, to_seq) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  for (const [term, score] of scores)
    insert.run(term, revision.rev, revision.listingId, score, Math.round(score * 1000), revision.fromSeq, revision.toSeq);
}

/**
 * Deletes up to PRUNE_BATCH revisions superseded more than SNAPSHOT_RETENTION_MS ago, with their
 * term rows: no cursor can still read them (the settle write, store.ts; the lifecycle pass,
 * lifecycle.ts). Returns how many went.
 */
export function pruneSupersededRevisions(db: DatabaseSync, now: Date): number {
  const horizon = new Date(now.getTime() - SNAPSHOT_RETENTION_MS).toISOString();
  const expired = cachedStatement(
    db,
    'SELECT rev FROM search_revisions WHERE to_seq IS NOT NULL AND superseded_at < ? ORDER BY superseded_at LIMIT ?',
  ).all(horizon, PRUNE_BATCH) as Array<{ rev: number }>;
  for (const { rev } of expired)
    for (const table of ['search_terms', 'search_revisions']) cachedStatement(db, `DELETE FROM ${table} WHERE rev = ?`).run(rev);
  return expired.length;
}
