/**
 * Search revisions on PostgreSQL beside the store's write (store.ts): a new revision with its term
 * rows, a term's score as the exact integer `search_terms.units` holds, and the
 * retention of superseded revisions.
 */
import { PRUNE_BATCH, searchTextHash } from '../listing.ts';
import { revisionKey, withQualityLevel } from '../quality.ts';
import { SNAPSHOT_RETENTION_MS } from '../search.ts';
import { termScores, type SearchText } from '../terms.ts';
import { SCORE_UNITS } from './migrations.ts';
import { parameters, postgresSql, type Db } from './queries.ts';
import { withUrlKeys } from '../url-search.ts';
import { restoreListing } from '../lifecycle.ts';
import { runAsync } from '../statements.ts';
import { moveListEntries } from './list-index.ts';

/** score × 2^53 as an exact integer (migrations.ts): every score is a multiple of 2^-53. */
export function scoreUnits(score: number): string {
  const units = score * SCORE_UNITS; // times a power of two: exact
  if (!Number.isInteger(units) || units <= 0) throw new Error(`a term score below 0.5 cannot be stored exactly: ${score}`);
  return BigInt(units).toString();
}

/**
 * Superseded revisions older than a cursor's lifetime go, at most `batch` (PRUNE_BATCH per write, as
 * sqlite/revisions.ts pruneSupersededRevisions; more per lifecycle pass); returns how many went.
 */
export async function pruneRevisions(db: Db, now: Date, batch = PRUNE_BATCH): Promise<number> {
  const horizon = new Date(now.getTime() - SNAPSHOT_RETENTION_MS).toISOString();
  const pruned = await db.query(
    `WITH expired AS (
       SELECT rev FROM search_revisions WHERE to_seq IS NOT NULL AND superseded_at < $1 ORDER BY superseded_at LIMIT $2
     ), terms AS (
       DELETE FROM search_terms WHERE rev IN (SELECT rev FROM expired)
     )
     DELETE FROM search_revisions WHERE rev IN (SELECT rev FROM expired)`,
    [horizon, batch],
  );
  return pruned.rowCount ?? 0;
}

/**
 * A new search revision only when the searchable text or the quality level changed (as sqlite/store.ts reviseSearchText).
 * `level` may still be on its way (store.ts sends the window's sums just before): the current revision's read goes out
 * with it, one round trip for both. A listing just `created` has no revision and no stash to read.
 */
export async function reviseSearchText(
  db: Db,
  listing: { id: number; resource: string },
  text: SearchText,
  level: number | Promise<number>,
  seq: number,
  nowIso: string,
  created = false,
): Promise<void> {
  const listingId = listing.id;
  const currentRevision = async () =>
    (
      await db.query<{ rev: string; text_hash: string }>(
        'SELECT rev, text_hash FROM search_revisions WHERE listing_id = $1 AND to_seq IS NULL',
        [listingId],
      )
    ).rows[0];
  const [read, quality] = await Promise.all([created ? undefined : currentRevision(), level]);
  let current = read;
  // Hidden until now (../lifecycle.ts): back in the index with the revision it had, which this write then revises.
  if (!current && !created && (await restoreStashed(db, listingId, seq))) current = await currentRevision();
  const hash = revisionKey(searchTextHash(text), quality);
  if (current?.text_hash === hash) return;
  // The current revision's close goes out with the new revision's first statement (insertScoredRevision).
  const closed = current
    ? [
        db.query('UPDATE search_revisions SET to_seq = $1, superseded_at = $2 WHERE rev = $3', [seq, nowIso, current.rev]),
        db.query('UPDATE search_terms SET to_seq = $1 WHERE rev = $2', [seq, current.rev]),
      ]
    : [];
  await Promise.all([...closed, insertScoredRevision(db, listing, hash, withQualityLevel(termScores(text), quality), seq)]);
}

/** Puts a stashed listing back in the search index, and its list entries in the list (../lifecycle.ts restoreListing). */
export const restoreStashed = (db: Db, listingId: number, seq: number): Promise<boolean> =>
  runAsync(
    restoreListing(
      postgresSql(db),
      listingId,
      seq,
      (resource, hash, scores, from) => insertScoredRevision(db, { id: listingId, resource }, hash, scores, from),
      (lastUpdated) => moveListEntries(db, listingId, lastUpdated),
    ),
  );

/**
 * A new current search revision of a listing from its term scores (the quality level in them), with its term rows and
 * the URL keys of its resource (../url-search.ts withUrlKeys).
 */
export async function insertScoredRevision(
  db: Db,
  listing: { id: number; resource: string },
  hash: string,
  scored: Map<string, number>,
  seq: number,
): Promise<void> {
  const scores = [...withUrlKeys(scored, listing.resource)];
  const { values, p } = parameters();
  const [id, from] = [p(listing.id), p(seq)];
  // The revision and its term rows in one statement (its rev from the INSERT's RETURNING).
  await db.query(
    `WITH r AS (INSERT INTO search_revisions (listing_id, from_seq, text_hash) VALUES (${id}, ${from}, ${p(hash)}) RETURNING rev)
     INSERT INTO search_terms (term, rev, listing_id, units, milli, from_seq, to_seq)
     SELECT t.term, r.rev, ${id}, t.units, t.milli, ${from}, NULL
     FROM r CROSS JOIN unnest(${p(scores.map(([term]) => term))}::text[], ${p(scores.map(([, score]) => scoreUnits(score)))}::bigint[],
       ${p(scores.map(([, score]) => Math.round(score * 1000)))}::int[]) AS t(term, units, milli)`,
    values,
  );
}
