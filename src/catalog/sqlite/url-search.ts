/**
 * The search by resource URL on SQLite (../url-search.ts, docs/CATALOG.md "When the text finds
 * nothing"): `listing_url_terms` (migration 21) holds each listing's URL terms, keyed
 * (term, listing_id). One term is a walk of its key range in id order (every match ranks 1e6);
 * several sum their rows per listing, at most SEARCH_ROW_BUDGET rows. The snapshot is the listings
 * created by the pinned sequence (a URL never changes), the filters those of the text search.
 */
import { toDiscoveryResource, type ListingRow } from '../listing.ts';
import {
  VISIBILITY_ROUNDS,
  choiceFields,
  choiceIndexes,
  encodeCursor,
  keepVisible,
  pinnedUrlChoice,
  visibilityBatch,
  type CursorState,
  type RankedRow,
} from '../search.ts';
import { chooseUrlTerms, urlCandidates, type UrlSearchRequest } from '../url-search.ts';
import { SEARCH_ROW_BUDGET } from '../term-budget.ts';
import type { SearchPage } from '../types.ts';
import { filterSql, type SearchSource } from './queries.ts';
import { searched } from '../query-paths.ts';

/** The page of a URL search (the first page's terms chosen now, a cursor page's pinned). */
export function urlSearchPage(store: SearchSource, request: UrlSearchRequest): SearchPage {
  searched('url');
  const { queryTerms, filters, page, after, asOf, hash, now, x402Version } = request;
  const budget = store.searchRowBudget ?? SEARCH_ROW_BUDGET;
  const candidates = urlCandidates(queryTerms);
  const count = store.statement('SELECT count(*) AS n FROM (SELECT 1 FROM listing_url_terms WHERE term = ? LIMIT ?)');
  const choice =
    after?.u === 1
      ? pinnedUrlChoice(queryTerms, after)
      : chooseUrlTerms(
          candidates,
          candidates.map((term) => Number((count.get(term, budget + 1) as { n: number }).n)),
          budget,
        );
  const terms = choice.searched;
  const answered = choiceFields(choice);
  // No URL holds a query term either: the text's answer stands (its searchMethod and terms).
  if (terms.length === 0) return request.textAnswer;
  const k = choiceIndexes(queryTerms, choice);
  const { conditions, params } = filterSql(filters, asOf);
  const rankRows = (from: CursorState | undefined, want: number): RankedRow[] => {
    if (terms.length === 1)
      return store
        .statement(
          `SELECT u.listing_id AS listing_id, 1000000 AS rank FROM listing_url_terms u JOIN listings l ON l.id = u.listing_id
           WHERE u.term = ? AND l.created_seq <= ? AND ${conditions}${from ? ' AND u.listing_id > ?' : ''}
           ORDER BY u.listing_id ASC LIMIT ?`,
        )
        .all(terms[0]!, asOf, ...params, ...(from ? [from.i] : []), want) as RankedRow[];
    return store
      .statement(
        `SELECT u.listing_id AS listing_id, count(*) * 1000000 AS rank FROM listing_url_terms u JOIN listings l ON l.id = u.listing_id
         WHERE u.term IN (${terms.map(() => '?').join(', ')}) AND l.created_seq <= ? AND ${conditions}
         GROUP BY u.listing_id${from ? ' HAVING count(*) * 1000000 < ? OR (count(*) * 1000000 = ? AND u.listing_id > ?)' : ''}
         ORDER BY rank DESC, listing_id ASC LIMIT ?`,
      )
      .all(...terms, asOf, ...params, ...(from ? [from.r, from.r, from.i] : []), want) as RankedRow[];
  };
  const want = page.limit + 1;
  const kept: Array<{ row: RankedRow; listing: ListingRow }> = [];
  const state = (row: RankedRow): CursorState => ({
    v: 1,
    h: hash,
    a: asOf,
    r: Number(row.rank),
    i: Number(row.listing_id),
    t: after?.t ?? now.getTime(),
    k,
    u: 1,
  });
  let from = after?.u === 1 ? after : undefined;
  let last: RankedRow | undefined;
  let exhausted = false;
  for (let round = 0; round < VISIBILITY_ROUNDS && kept.length < want && !exhausted; round++) {
    const batch = visibilityBatch(page.limit, round);
    const rows = rankRows(from, batch);
    exhausted = rows.length < batch;
    const byId = store.rowsById(
      rows.map((r) => Number(r.listing_id)),
      now,
    );
    last = keepVisible(rows, byId, request.visibleSince, want, kept, request.failingBefore) ?? last;
    if (last) from = state(last);
  }
  const pageRows = kept.slice(0, page.limit);
  const more = kept.length > page.limit || (!exhausted && kept.length < want);
  const at = kept.length > page.limit ? pageRows.at(-1)!.row : last;
  const cursor = more && at ? encodeCursor(store.cursorSecret(), state(at)) : null;
  const resources = pageRows.map((row) => toDiscoveryResource(row.listing));
  return { x402Version, resources, partialResults: more, pagination: { limit: resources.length, cursor }, ...answered };
}
