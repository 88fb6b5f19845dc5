/**
 * The PostgreSQL search's plain paths (search.ts): one term's index walk, and every term's rows summed per listing,
 * with the keyset and row shape every path shares.
 */
import { roundedMilliSql } from './migrations.ts';
import type { CursorState, RankedRow } from '../search.ts';
import type { DiscoveryFilters } from '../types.ts';
import { parameters, termRowConditions, type Db } from './queries.ts';

type Params = ReturnType<typeof parameters>;

/** The keyset after a cursor on ranked rows (rank, listing_id): a WHERE clause, or `AND` a condition after one. */
export const keysetAfter = (after: CursorState | undefined, { p }: Params, lead: 'WHERE' | 'AND' = 'WHERE') =>
  after ? `${lead} (rank < ${p(after.r)} OR (rank = ${p(after.r)} AND listing_id > ${p(after.i)}))` : '';

export const ranked = (rows: Array<{ listing_id: string; rank: string }>): RankedRow[] =>
  rows.map((r) => ({ listing_id: Number(r.listing_id), rank: Number(r.rank) }));

/** One term: the index walk. */
export async function oneTerm(
  db: Db,
  term: string,
  filters: DiscoveryFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
): Promise<RankedRow[]> {
  const params = parameters();
  const { p } = params;
  const rows = termRowConditions(filters, asOf, params);
  let keyset = '';
  if (after) {
    const milli = p(after.r - 1_000_000);
    keyset = `AND t.milli <= ${milli} AND NOT (t.milli = ${milli} AND t.listing_id <= ${p(after.i)})`;
  }
  const result = await db.query<{ listing_id: string; rank: string }>(
    `SELECT t.listing_id, 1000000 + t.milli AS rank FROM search_terms t ${rows.join}
     WHERE t.term = ${p(term)} AND ${rows.where} ${keyset}
     ORDER BY t.milli DESC, t.listing_id ASC LIMIT ${p(want)}`,
    params.values,
  );
  return ranked(result.rows);
}

/** Every term's rows summed per listing (as sqlite/search.ts's aggregates), ranked and ordered by the server. */
export async function aggregate(
  db: Db,
  terms: string[],
  filters: DiscoveryFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
): Promise<RankedRow[]> {
  const params = parameters();
  const { p } = params;
  const rows = termRowConditions(filters, asOf, params);
  const result = await db.query<{ listing_id: string; rank: string }>(
    `WITH matches AS MATERIALIZED (
       SELECT t.listing_id, count(*) * 1000000 + ${roundedMilliSql('t.units')} AS rank
       FROM search_terms t ${rows.join}
       WHERE t.term = ANY(${p(terms)}::text[]) AND ${rows.where}
       GROUP BY t.rev, t.listing_id
     )
     SELECT listing_id, rank FROM matches ${keysetAfter(after, params)}
     ORDER BY rank DESC, listing_id ASC LIMIT ${p(want)}`,
    params.values,
  );
  return ranked(result.rows);
}
