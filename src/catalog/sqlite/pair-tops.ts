/**
 * The first pages of a query of two common words, kept at write time (SQLite catalog migration 17,
 * docs/CATALOG.md "Search"). For each pair of the catalog's common terms (common-terms.ts), the
 * revisions holding both that rank best, by the same exact rank as every other path. Two common
 * words otherwise take the threshold walk (search.ts), which at 1M listings reads about 10,000
 * term rows through long plateaus of equal shares before the page is sure (docs/BENCHMARKS.md
 * "Search by number of terms"); from here the page is one index range of `want` rows.
 *
 * What makes a page from here exact: for each pair, `search_pair_bounds` holds a key in the
 * search order (rank desc, listing id asc), and `search_pair_tops` holds every revision holding
 * both terms (current or superseded) that sorts at or before that key, and nothing after it. So
 * `want` rows valid at the page's snapshot, read in order from here, are the first `want`
 * listings holding both terms; and those rank above every listing holding one of them (each term
 * a listing holds adds 1e6 to its rank). A page the rows cannot fill is answered by the walk.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { CursorState, RankedRow } from '../search.ts';
import { commonBits, exactRankSql, type TermRowFilter } from './queries.ts';

/**
 * The current revisions a pair keeps before its key (PAIR_TOP_ROWS), and how many rows it may
 * gain before the key is moved up to its PAIR_TOP_ROWS-th current row again. 256 serves a first
 * page of up to 100 and the visibility rounds after it; a deeper page takes the walk.
 */
export const PAIR_TOP_ROWS = 256;

type Statement = (sql: string) => StatementSync;

/** The pair of two bits (the smaller first), as stored. */
const pairOf = (a: number, b: number) => Math.min(a, b) * 16 + Math.max(a, b);

/** The exact rank of revision `p.rev` for the two terms of pair `p.pair` (queries.ts exactRankSql). */
const PAIR_RANK_SQL = exactRankSql(
  '(SELECT term FROM search_common_terms WHERE bit = p.pair / 16), (SELECT term FROM search_common_terms WHERE bit = p.pair % 16)',
  'p.rev',
);

function createPairTops(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS search_pair_tops (
      pair INTEGER NOT NULL,
      rev INTEGER NOT NULL,
      listing_id INTEGER NOT NULL,
      rank INTEGER NOT NULL,
      PRIMARY KEY (rev, pair)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS search_pair_tops_by_rank ON search_pair_tops (pair, rank DESC, listing_id ASC, rev);
    CREATE TABLE IF NOT EXISTS search_pair_bounds (
      pair INTEGER PRIMARY KEY,
      rank INTEGER NOT NULL,
      listing_id INTEGER NOT NULL,
      gained INTEGER NOT NULL
    ) STRICT;
  `);
}

/**
 * Moves pair `pair`'s key up to its `kept`-th current row (PAIR_TOP_ROWS; tests lower it) and
 * drops the rows after it. A pair with fewer current rows before its key keeps its key (after
 * withdrawals, say: the revisions after the key were never kept, so it must not move down); only
 * the fill, which kept every revision of such a pair, sets the key below every rank (`filled`).
 */
function trimPair(statement: Statement, pair: number, kept: number, filled = false): void {
  const at = statement(
    `SELECT p.rank, p.listing_id FROM search_pair_tops p INDEXED BY search_pair_tops_by_rank JOIN search_revisions r ON r.rev = p.rev
     WHERE p.pair = ? AND r.to_seq IS NULL ORDER BY p.rank DESC, p.listing_id ASC LIMIT 1 OFFSET ?`,
  ).get(pair, kept - 1) as { rank: number; listing_id: number } | undefined;
  if (!at && !filled) {
    statement('UPDATE search_pair_bounds SET gained = 0 WHERE pair = ?').run(pair);
    return;
  }
  const key = at ? { rank: Number(at.rank), listingId: Number(at.listing_id) } : { rank: -1, listingId: 0 };
  statement('DELETE FROM search_pair_tops WHERE pair = ? AND (rank < ? OR (rank = ? AND listing_id > ?))').run(
    pair,
    key.rank,
    key.rank,
    key.listingId,
  );
  statement(
    `INSERT INTO search_pair_bounds (pair, rank, listing_id, gained) VALUES (?, ?, ?, 0)
     ON CONFLICT (pair) DO UPDATE SET rank = excluded.rank, listing_id = excluded.listing_id, gained = 0`,
  ).run(pair, key.rank, key.listingId);
}

/** Each revision's rounded share of each common term, at rev × 16 + bit (0: not held; a held one is at least 500), and the largest. */
export interface CommonShares {
  milli: Int32Array;
  most: number;
}

/** The common terms' shares (`bits`, the chosen terms' bits) from one pass over their rows (the term index's ranges). */
export function commonShares(db: DatabaseSync, bits: ReadonlyMap<string, number>): CommonShares {
  const { top } = db.prepare('SELECT coalesce(max(rev), 0) AS top FROM search_revisions').get() as { top: number };
  const milli = new Int32Array((Number(top) + 1) * 16);
  const termRows = db.prepare('SELECT rev, milli FROM search_terms WHERE term = ?');
  termRows.setReturnArrays(true);
  let most = 0;
  for (const [term, bit] of bits)
    for (const [rev, m] of termRows.iterate(term) as Iterable<[number, number]>) {
      milli[Number(rev) * 16 + bit] = Number(m);
      most = Math.max(most, Number(m));
    }
  return { milli, most };
}

/**
 * Every pair's rows from the catalog's rows (migration 17, and chooseCommonTerms when it chooses
 * the terms, with the shares it read). The common terms' shares (commonShares) give each pair's; a
 * pair's rank is within 1 of 2e6 plus the sum of its two rounded shares, so the revisions whose
 * sum is at least the PAIR_TOP_ROWS-th current one's less 2 hold every revision that can sort
 * before that one (about 40,000 rows in all at 100k and at 1M). Those are ranked exactly by the
 * server, then each pair is trimmed to its key.
 */
export function fillPairTops(db: DatabaseSync, kept = PAIR_TOP_ROWS, shares?: CommonShares): void {
  createPairTops(db);
  db.exec('DELETE FROM search_pair_tops; DELETE FROM search_pair_bounds;');
  const bits = commonBits((sql) => db.prepare(sql));
  if (bits.size < 2) return;
  const { milli, most } = shares ?? commonShares(db, bits);
  const revisions = db.prepare(
    'SELECT rev, listing_id, common_mask, to_seq IS NULL AS current FROM search_revisions WHERE common_mask <> 0',
  );
  revisions.setReturnArrays(true);
  /** Calls `each(pair, sum)` for every pair of a revision's common terms. */
  const pairsOf = (rev: number, mask: number, each: (pair: number, sum: number) => void) => {
    for (let a = 0; a < 16; a++)
      if ((mask >> a) & 1)
        for (let b = a + 1; b < 16; b++) if ((mask >> b) & 1) each(pairOf(a, b), milli[rev * 16 + a]! + milli[rev * 16 + b]!);
  };
  // How many current revisions of each pair have each sum, to find each pair's PAIR_TOP_ROWS-th.
  const counts = new Map<number, Int32Array>();
  for (const [rev, , mask, current] of revisions.iterate() as Iterable<[number, number, number, number]>)
    if (current)
      pairsOf(Number(rev), Number(mask), (pair, sum) => {
        let c = counts.get(pair);
        if (!c) counts.set(pair, (c = new Int32Array(2 * most + 1)));
        c[sum]!++;
      });
  const least = new Map<number, number>();
  for (const [pair, c] of counts) {
    let sum = c.length - 1;
    for (let seen = c[sum]!; sum > 0 && seen < kept;) seen += c[--sum]!;
    least.set(pair, sum - 2);
  }
  const candidates: Array<[number, number, number]> = [];
  for (const [rev, listingId, mask] of revisions.iterate() as Iterable<[number, number, number, number]>)
    pairsOf(Number(rev), Number(mask), (pair, sum) => {
      if (sum >= (least.get(pair) ?? 0)) candidates.push([pair, Number(rev), Number(listingId)]);
    });
  db.prepare(
    `INSERT INTO search_pair_tops (pair, rev, listing_id, rank)
     SELECT p.pair, p.rev, p.listing_id, ${PAIR_RANK_SQL}
     FROM (SELECT value ->> 0 AS pair, value ->> 1 AS rev, value ->> 2 AS listing_id FROM json_each(?)) p`,
  ).run(JSON.stringify(candidates));
  const statement: Statement = (sql) => db.prepare(sql);
  for (let a = 0; a < 16; a++) for (let b = a + 1; b < 16; b++) trimPair(statement, pairOf(a, b), kept, true);
}

/** Migration 17: the pairs' rows, unless migration 16 (chooseCommonTerms) has just filled them. */
export function migrateToPairTops(db: DatabaseSync): void {
  createPairTops(db);
  if (!db.prepare('SELECT 1 FROM search_pair_bounds LIMIT 1').get()) fillPairTops(db);
}

/**
 * A new revision's rows (the settle write, after its term rows): one row for each pair of its
 * common terms whose exact rank sorts at or before the pair's key. A pair that has gained `kept`
 * rows since its last trim is trimmed, so each pair keeps about `kept` to twice that many current
 * rows (and the superseded ones before its key), and the write's cost stays a few index entries.
 */
export function addPairTops(statement: Statement, rev: number, kept = PAIR_TOP_ROWS): void {
  const gained = statement(
    `INSERT INTO search_pair_tops (pair, rev, listing_id, rank)
     SELECT n.pair, n.rev, n.listing_id, n.rank FROM (
       SELECT p.pair, p.rev, p.listing_id, ${PAIR_RANK_SQL} AS rank
       FROM (SELECT a.bit * 16 + b.bit AS pair, r.rev, r.listing_id
             FROM search_revisions r
             JOIN search_common_terms a ON (r.common_mask >> a.bit) & 1
             JOIN search_common_terms b ON b.bit > a.bit AND (r.common_mask >> b.bit) & 1
             WHERE r.rev = ?) p
     ) n JOIN search_pair_bounds k USING (pair)
     WHERE n.rank > k.rank OR (n.rank = k.rank AND n.listing_id <= k.listing_id)
     RETURNING pair`,
  ).all(rev) as Array<{ pair: number }>;
  for (const { pair } of gained) {
    const { n } = statement('UPDATE search_pair_bounds SET gained = gained + 1 WHERE pair = ? RETURNING gained AS n').get(pair) as {
      n: number;
    };
    if (Number(n) >= kept) trimPair(statement, Number(pair), kept);
  }
}

/**
 * The first `want` listings after `after` for two common terms, from their pair's rows; undefined
 * when the terms are not a kept pair or its rows valid at `asOf` (and passing the filter) cannot
 * fill the page.
 */
export function pairTopK(
  statement: Statement,
  terms: string[],
  asOf: number,
  filter: TermRowFilter,
  after: CursorState | undefined,
  want: number,
): RankedRow[] | undefined {
  if (terms.length !== 2) return undefined;
  const bits = commonBits(statement);
  const [a, b] = terms.map((term) => bits.get(term));
  if (a === undefined || b === undefined) return undefined;
  const keyset = after ? 'AND (p.rank < ? OR (p.rank = ? AND p.listing_id > ?))' : '';
  const rows = statement(
    `SELECT p.listing_id AS listing_id, p.rank AS rank
     FROM search_pair_tops p INDEXED BY search_pair_tops_by_rank JOIN search_revisions t ON t.rev = p.rev ${filter.joinListings}
     WHERE p.pair = ? AND t.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?) AND ${filter.conditions} ${keyset}
     ORDER BY p.rank DESC, p.listing_id ASC LIMIT ?`,
  ).all(pairOf(a, b), asOf, asOf, ...filter.params, ...(after ? [after.r, after.r, after.i] : []), want) as unknown as RankedRow[];
  return rows.length === want ? rows : undefined;
}
