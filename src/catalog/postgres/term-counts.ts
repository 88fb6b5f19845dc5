/**
 * What the PostgreSQL search reads about its terms before it picks a path (search.ts): each term's
 * rows, the catalog's size and its chosen common terms, kept a while per pool where counting is dear.
 */
import { TermCounts } from '../search.ts';
import type { Db } from './queries.ts';

/** Each pool's kept counts (TermCounts expires them). */
const termCounts = new WeakMap<Db, TermCounts>();
function countsOf(db: Db): TermCounts {
  let counts = termCounts.get(db);
  if (!counts) termCounts.set(db, (counts = new TermCounts()));
  return counts;
}

/**
 * Each term's rows, counted in full and kept a while per pool (TermCounts), in query order: the
 * rarest term drives the all-terms tier, and a count stopped at a cap made the most common words
 * equal, so the first of them drove (at 100k, 93,000 rows where the rarest of 6 has 36,000).
 */
export async function termRowCounts(db: Db, terms: string[]): Promise<Array<{ term: string; n: number }>> {
  const counts = countsOf(db);
  const unknown = terms.filter((term) => counts.get(term) === undefined);
  if (unknown.length > 0) {
    const probes = await db.query<{ term: string; n: string }>(
      `SELECT term, (SELECT count(*) FROM search_terms s WHERE s.term = q.term) AS n FROM unnest($1::text[]) AS q(term)`,
      [unknown],
    );
    for (const { term, n } of probes.rows) counts.set(term, Number(n));
  }
  return terms.map((term) => ({ term, n: counts.get(term) ?? 0 }));
}

/**
 * Each term's rows up to `cap` (the search budget's counts, term-budget.ts), in one statement; past
 * 1,024 kept a while per pool, as the full counts are.
 */
export async function termRowsUpTo(db: Db, terms: string[], cap: number): Promise<number[]> {
  const counts = countsOf(db);
  const key = (term: string) => `${cap}\u0001${term}`;
  const unknown = cap > 1024 ? terms.filter((term) => counts.get(key(term)) === undefined) : terms;
  const found = new Map<string, number>();
  if (unknown.length > 0) {
    const probes = await db.query<{ term: string; n: string }>(
      `SELECT q.term, (SELECT count(*) FROM (SELECT 1 FROM search_terms s WHERE s.term = q.term LIMIT $2) x) AS n
       FROM unnest($1::text[]) AS q(term)`,
      [unknown, cap],
    );
    for (const { term, n } of probes.rows) {
      found.set(term, Number(n));
      if (cap > 1024) counts.set(key(term), Number(n));
    }
  }
  return terms.map((term) => found.get(term) ?? counts.get(key(term)) ?? 0);
}

/** How many listings the search index holds (sqlite/term-tiers.ts listingCount), kept a while per pool. */
export async function listingCount(db: Db): Promise<number> {
  const counts = countsOf(db);
  const known = counts.get('\u0002listings');
  if (known !== undefined) return known;
  const n = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM listings WHERE search_stash IS NULL')).rows[0]!.n);
  counts.set('\u0002listings', n);
  return n;
}

/** The catalog's chosen common terms and their bits (term-budget.ts orders them by bit). */
export async function chosenCommonTerms(db: Db): Promise<Map<string, number>> {
  const rows = await db.query<{ term: string; term_bit: number }>('SELECT term, term_bit FROM search_common_terms');
  return new Map(rows.rows.map(({ term, term_bit }) => [term, Number(term_bit)]));
}
