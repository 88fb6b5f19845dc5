/**
 * The all-terms tier of 8 common words from each revision's exact mask of the catalog's most
 * common terms (SQLite catalog migration 16, docs/CATALOG.md "Search"): the revisions holding all
 * of them are read by their masks, a few index ranges, instead of the rarest term's rows (about a
 * third of the listings for the 8 most common words) or the revisions by a share bound.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { RankedRow } from '../search.ts';
import { COMMON_TERMS, COMMON_TERMS_CHOSEN_AT, commonMaskOf, commonTermsQuery } from '../common-terms.ts';
import { sketchShareBoundSql, termSlots } from '../terms.ts';
import { commonShares, fillPairTops } from './pair-tops.ts';
import { commonBits } from './queries.ts';

type Statement = (sql: string) => StatementSync;

/**
 * A new revision's common-term mask and the sum of those terms' rounded shares (insertRevision).
 * The write that finds no common terms in a catalog of at least `chosenAt` revisions chooses them
 * first, so its own revision gets its mask as every later one does. Once chosen they stay: a term
 * common at 10,000 listings stays common as the catalog grows, and a query of terms that are not
 * all chosen takes the other paths, with the same pages.
 */
export function commonTermsOf(
  db: DatabaseSync,
  statement: Statement,
  scores: Map<string, number>,
  chosenAt: number = COMMON_TERMS_CHOSEN_AT,
): { mask: number; milli: number } {
  let bits = commonBits(statement);
  if (bits.size === 0) {
    const { revisions } = statement('SELECT coalesce(max(rev), 0) AS revisions FROM search_revisions').get() as { revisions: number };
    if (Number(revisions) >= chosenAt) {
      chooseCommonTerms(db);
      bits = commonBits(statement);
    }
  }
  return commonMaskOf(bits, scores);
}

/**
 * Migration 16: the revisions' masks of the COMMON_TERMS terms with most rows, and their shares'
 * sums, indexed by mask then sum. Also callable on a filled catalog to choose them again (tests
 * choose them after writing a corpus: a catalog migrated empty has none, and its 8-term queries
 * read the rarest term's rows as before). One pass over those terms' rows (the term index's
 * ranges), one update per revision holding any of them. Then the pairs' first pages from them (pair-tops.ts).
 */
export function chooseCommonTerms(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS search_common_terms (term TEXT PRIMARY KEY, bit INTEGER NOT NULL) STRICT;
    DELETE FROM search_common_terms;
    DROP INDEX IF EXISTS search_revisions_by_common;
  `);
  const columns = (db.prepare('PRAGMA table_info(search_revisions)').all() as Array<{ name: string }>).map((c) => c.name);
  if (!columns.includes('common_mask'))
    db.exec(`
      ALTER TABLE search_revisions ADD COLUMN common_mask INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE search_revisions ADD COLUMN common_milli INTEGER NOT NULL DEFAULT 0;
    `);
  else db.exec('UPDATE search_revisions SET common_mask = 0, common_milli = 0 WHERE common_mask <> 0');
  const common = (
    db
      .prepare(
        `SELECT term FROM search_terms INDEXED BY search_terms_top GROUP BY term ORDER BY count(*) DESC, term ASC LIMIT ${COMMON_TERMS}`,
      )
      .all() as Array<{ term: string }>
  ).map(({ term }) => term);
  const insert = db.prepare('INSERT INTO search_common_terms (term, bit) VALUES (?, ?)');
  common.forEach((term, bit) => insert.run(term, bit));
  // One pass over those terms' rows serves the masks and the pairs' fill (pair-tops.ts).
  const shares = commonShares(db, new Map(common.map((term, bit) => [term, bit])));
  const update = db.prepare('UPDATE search_revisions SET common_mask = ?, common_milli = ? WHERE rev = ?');
  for (let rev = 0; rev * 16 < shares.milli.length; rev++) {
    let mask = 0;
    let milli = 0;
    for (let bit = 0; bit < 16; bit++) {
      const share = shares.milli[rev * 16 + bit]!;
      if (share === 0) continue;
      mask |= 1 << bit;
      milli += share;
    }
    if (mask !== 0) update.run(mask, milli, rev);
  }
  db.exec(
    `CREATE INDEX search_revisions_by_common ON search_revisions (common_mask, common_milli DESC, rev, listing_id, from_seq, to_seq, sketch_a, sketch_b)`,
  );
  fillPairTops(db, undefined, shares);
}

/** What allTermsTopK hands the scan (as revision-scan.ts RevisionScan): its query, filter and exact ranking. */
export interface CommonTermsScan {
  store: { statement: Statement };
  terms: string[];
  /** Each term's largest share, in `terms` order (its sketch bound at the top code). */
  largest: number[];
  asOf: number;
  filter: { joinListings: string; conditions: string; params: Array<string | number> };
  want: number;
  /** The tier's rows ranked so far after the cursor, best first (rank keeps it). */
  ranked: RankedRow[];
  /** Ranks [rev, listing_id, bound] rows of revisions holding every term exactly, keeping those after the cursor. */
  rankHolding: (rows: Array<[number, number, number]>) => void;
  /** The want-th exact rank's share part, once the tier holds want rows after the cursor. */
  floor: () => number | undefined;
}

/**
 * The tier from the revisions whose mask holds every query term: the masks holding the query's
 * bits are enumerated (index ranges), each revision bounded by the smaller of its query terms'
 * sketch bounds and its common terms' share sum less the least share of each common term beyond
 * the query's, then ranked exactly 32 at a time in bound order while the bound reaches the
 * want-th exact rank. Every revision of the tier is read, so the page is sure. Returns undefined
 * when a term is not common (or too few are for the enumeration to be small).
 */
export function commonTermsTopK(scan: CommonTermsScan): RankedRow[] | null | undefined {
  const { store, terms, largest, asOf, filter, want, ranked, rankHolding, floor } = scan;
  const n = terms.length;
  const bits = commonBits((sql) => store.statement(sql));
  const query = commonTermsQuery(bits, terms);
  if (!query) return undefined;
  const { masks, bound } = query;
  const sketchBound = largest.map((l, i) => sketchShareBoundSql(termSlots(terms[i]!), l, 'min')).join(' + ');
  const statement = store.statement(
    `SELECT t.rev, t.listing_id, ${sketchBound} AS sketch, t.common_mask, t.common_milli
     FROM search_revisions t INDEXED BY search_revisions_by_common ${filter.joinListings}
     WHERE t.common_mask IN (${masks.map(() => '?').join(', ')})
       AND t.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?) AND ${filter.conditions}`,
  );
  statement.setReturnArrays(true);
  const rows = statement.all(...masks, asOf, asOf, ...filter.params) as unknown as Array<[number, number, number, number, number]>;
  const candidates = rows
    .map(([rev, listingId, sketch, mask, milli]): [number, number, number] => [
      Number(rev),
      Number(listingId),
      bound(Number(sketch), Number(mask), Number(milli)) + n,
    ])
    .sort((x, y) => y[2] - x[2] || x[1] - y[1]);
  for (let next = 0; next < candidates.length; next += 32) {
    const reach = floor();
    if (reach !== undefined && candidates[next]![2] < reach) break;
    rankHolding(candidates.slice(next, next + 32));
  }
  return ranked.length >= want ? ranked.slice(0, want) : null;
}
