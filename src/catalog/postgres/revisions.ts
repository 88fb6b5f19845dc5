/**
 * Search revisions on PostgreSQL beside the store's write (store.ts): a new revision with its term
 * rows, a term's score as the exact integer `search_terms.units` holds, and the
 * retention of superseded revisions.
 */
import { PRUNE_BATCH, searchTextHash } from '../listing.ts';
import { revisionKey, withQualityLevel } from '../quality.ts';
import { SNAPSHOT_RETENTION_MS } from '../search.ts';
import { termScores, withStemRows, type SearchText } from '../terms.ts';
import type pg from 'pg';
import { inTransaction } from '../../db/postgres.ts';
import { SCORE_UNITS } from './migrations.ts';
import { nextSeq, parameters, postgresSql, type Db } from './queries.ts';
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

/** Revisions the stem pass (addDueStemRows) derives per transaction: each commits, so a long pass resumes where it stopped. */
const STEM_PASS_REVISIONS = 2_000;

/**
 * The stem rows of every revision written before stems were indexed (catalog migration 37 marks them due, from
 * revision 1), derived from its term rows alone as SQLite's migration does: a stem holds the highest score among its
 * terms. In batches of STEM_PASS_REVISIONS revisions, one transaction each under the mark's row lock, the mark holding
 * the next revision to derive: a large catalog's pass neither holds one statement for minutes nor starts over when it
 * is interrupted, and a second instance opening meanwhile waits for a batch, then goes on.
 */
export async function addDueStemRows(pool: pg.Pool, batch = STEM_PASS_REVISIONS): Promise<void> {
  for (let done = false; !done;) {
    done = await inTransaction(pool, async (client) => {
      const due = await client.query<{ value: string }>("SELECT value FROM catalog_meta WHERE key = 'stem_rows_due' FOR UPDATE");
      if (due.rows.length === 0) return true;
      const from = BigInt(due.rows[0]!.value);
      const to = from + BigInt(batch);
      const rows = await client.query<{
        term: string;
        rev: string;
        listing_id: string;
        units: string;
        from_seq: string;
        to_seq: string | null;
      }>(
        `SELECT term, rev, listing_id, units::text AS units, from_seq, to_seq FROM search_terms
         WHERE rev >= $1 AND rev < $2 AND term NOT LIKE '~%' ORDER BY rev`,
        [from.toString(), to.toString()],
      );
      const byRev = new Map<string, typeof rows.rows>();
      for (const row of rows.rows) {
        const terms = byRev.get(row.rev);
        if (terms) terms.push(row);
        else byRev.set(row.rev, [row]);
      }
      const stems: Array<{ term: string; score: number; row: (typeof rows.rows)[number] }> = [];
      for (const terms of byRev.values()) {
        const scores = new Map(terms.map((t) => [t.term, Number(BigInt(t.units)) / SCORE_UNITS]));
        for (const [term, score] of withStemRows(scores)) if (!scores.has(term)) stems.push({ term, score, row: terms[0]! });
      }
      if (stems.length > 0) {
        // Like every change to the term rows, a batch takes a sequence number (../search-engine.ts KeptCounts).
        await nextSeq(client);
        await client.query(
          `INSERT INTO search_terms (term, rev, listing_id, units, milli, from_seq, to_seq)
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::int[], $6::bigint[], $7::bigint[])
           ON CONFLICT DO NOTHING`,
          [
            stems.map((s) => s.term),
            stems.map((s) => s.row.rev),
            stems.map((s) => s.row.listing_id),
            stems.map((s) => scoreUnits(s.score)),
            stems.map((s) => Math.round(s.score * 1000)),
            stems.map((s) => s.row.from_seq),
            stems.map((s) => s.row.to_seq),
          ],
        );
      }
      const later = await client.query('SELECT 1 FROM search_revisions WHERE rev >= $1 LIMIT 1', [to.toString()]);
      if (later.rows.length === 0) {
        await client.query("DELETE FROM catalog_meta WHERE key = 'stem_rows_due'");
        return true;
      }
      await client.query("UPDATE catalog_meta SET value = $1 WHERE key = 'stem_rows_due'", [to.toString()]);
      return false;
    });
  }
}
