/**
 * The two bounded paths of a filtered search on SQLite (docs/CATALOG.md "Search with filters"; search.ts
 * FILTER_DRIVER_LISTINGS and windowBound): ranking the members of the filters' smallest set, and ranking the
 * window of a search that neither its text nor its filters narrow.
 */
import { windowBound, windowExact, windowRowsPerTerm, type CursorState, type RankedRow } from '../search.ts';
import type { DriverSet } from './filter-set.ts';
import { exactRankSql, type SearchSource, type TermRowFilter } from './queries.ts';

/** The keyset after a cursor on ranked rows (rank, listing_id), with its parameters. */
const keysetAfter = (after: CursorState | undefined) =>
  after ? { sql: 'AND (rank < ? OR (rank = ? AND listing_id > ?))', params: [after.r, after.r, after.i] } : { sql: '', params: [] };

/**
 * The next `want` matches after `after` among the set's members: each member's revision valid at `asOf` (by listing),
 * ranked by the contract's rank over `terms` (one key lookup per term), those holding none left out, then the
 * filters' exact conditions. Exactly the text paths' page: the set holds every match.
 */
export function setDrivenRows(
  store: SearchSource,
  terms: string[],
  asOf: number,
  filter: TermRowFilter,
  driver: DriverSet,
  after: CursorState | undefined,
  want: number,
): RankedRow[] {
  const keyset = keysetAfter(after);
  const rows = store
    .statement(
      `SELECT listing_id, rank FROM (
         SELECT t.listing_id AS listing_id, ${exactRankSql(terms.map(() => '?').join(', '), 't.rev')} AS rank
         FROM search_revisions t ${filter.joinListings}
         WHERE t.listing_id IN (${driver.members}) AND t.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?) AND ${filter.conditions}
       ) WHERE rank >= 1000000 ${keyset.sql}
       ORDER BY rank DESC, listing_id ASC LIMIT ?`,
    )
    .all(...terms, ...driver.params, asOf, asOf, ...filter.params, ...keyset.params, want) as RankedRow[];
  return rows.map((r) => ({ listing_id: Number(r.listing_id), rank: Number(r.rank) }));
}

/**
 * The next `want` matches after `after` in the window: the listings among each term's first windowRowsPerTerm(budget) rows valid at
 * `asOf` (its index order) that pass the filters, ranked exactly. `exact` when no listing outside the window can be
 * on the page (windowBound): the page is then the text paths' page.
 */
export function windowRows(
  store: SearchSource,
  terms: string[],
  asOf: number,
  filter: TermRowFilter,
  budget: number,
  after: CursorState | undefined,
  want: number,
): { rows: RankedRow[]; exact: boolean } {
  const perTerm = windowRowsPerTerm(budget, terms.length);
  const snapshot = 'w.term = ? AND w.from_seq <= ? AND (w.to_seq IS NULL OR w.to_seq > ?)';
  const firstRows = `SELECT * FROM (SELECT w.rev, w.listing_id, w.milli FROM search_terms w WHERE ${snapshot} ORDER BY w.milli DESC, w.listing_id ASC LIMIT ?)`;
  const keyset = keysetAfter(after);
  const rows = (
    store
      .statement(
        `WITH c AS MATERIALIZED (${terms.map(() => `SELECT rev, listing_id FROM (${firstRows})`).join(' UNION ')})
         SELECT listing_id, rank FROM (
           SELECT t.listing_id AS listing_id, ${exactRankSql(terms.map(() => '?').join(', '), 't.rev')} AS rank
           FROM c t ${filter.joinListings} WHERE ${filter.conditions}
         ) WHERE TRUE ${keyset.sql}
         ORDER BY rank DESC, listing_id ASC LIMIT ?`,
      )
      .all(...terms.flatMap((term) => [term, asOf, asOf, perTerm]), ...terms, ...filter.params, ...keyset.params, want) as RankedRow[]
  ).map((r) => ({ listing_id: Number(r.listing_id), rank: Number(r.rank) }));
  const edge = store.statement(`SELECT count(*) AS rows, min(milli) AS lowest FROM (${firstRows})`);
  const edges = terms.map((term) => {
    const { rows: n, lowest } = edge.get(term, asOf, asOf, perTerm) as { rows: number; lowest: number | null };
    return { rows: Number(n), lowest: Number(lowest ?? 0) };
  });
  return { rows, exact: windowExact(rows, want, windowBound(edges, perTerm)) };
}
