/**
 * The search by resource URL on Postgres, as sqlite/url-search.ts on SQLite (../url-search.ts,
 * docs/CATALOG.md "When the text finds nothing"): `listing_url_terms` (catalog migration 26), one
 * term a walk of its key range in id order, several their rows summed per listing.
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
import { filterConditions, parameters, rowsById, type Db } from './queries.ts';
import { freshSample, urlHeldIds, urlLettersRead } from './url-probe.ts';
import { URL_INDEX_CAP, type UrlSample } from '../url-filter.ts';
import { searched } from '../query-paths.ts';

/**
 * The page of a URL search (the first page's terms chosen now, a cursor page's pinned), within the search budget's rows
 * (`searchRowBudget`, SEARCH_ROW_BUDGET unless set). With a `url` filter that at most URL_INDEX_CAP listings hold (and
 * `urlSample`, the store's), its term rows are those listings' alone (url-probe.ts urlHeldIds), where a host's search
 * read up to the search budget's term rows to find its one listing (7.7 ms at 100k).
 */
export async function urlSearchPage(
  db: Db,
  secret: Buffer,
  { searchRowBudget, urlSample }: { searchRowBudget?: number | undefined; urlSample?: UrlSample | undefined },
  request: UrlSearchRequest,
): Promise<SearchPage> {
  searched('url');
  const { queryTerms, filters, page, after, asOf, hash, now, x402Version } = request;
  const cap = (searchRowBudget ?? SEARCH_ROW_BUDGET) + 1;
  const candidates = urlCandidates(queryTerms);
  let choice;
  if (after?.u === 1) choice = pinnedUrlChoice(queryTerms, after);
  else {
    const counted = await db.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM (SELECT 1 FROM listing_url_terms u WHERE u.term = c.term LIMIT $2) x) AS n
       FROM unnest($1::text[]) WITH ORDINALITY AS c(term, i) ORDER BY c.i`,
      [candidates, cap],
    );
    choice = chooseUrlTerms(
      candidates,
      counted.rows.map((r) => Number(r.n)),
      cap - 1,
    );
  }
  const terms = choice.searched;
  const answered = choiceFields(choice);
  // No URL holds a query term either: the text's answer stands (its searchMethod and terms).
  if (terms.length === 0) return request.textAnswer;
  const { url } = filters;
  const held =
    url === undefined || urlSample === undefined
      ? undefined
      : await urlHeldIds(db, url, urlLettersRead(url, await freshSample(db, urlSample, now.getTime())), URL_INDEX_CAP);
  const k = choiceIndexes(queryTerms, choice);
  const rankRows = async (from: CursorState | undefined, want: number): Promise<RankedRow[]> => {
    const { values, p } = parameters();
    const conditions = filterConditions(filters, p, asOf);
    const snapshot = `l.created_seq <= ${p(asOf)}${held === undefined ? '' : ` AND u.listing_id = ANY(${p(held)}::bigint[])`}`;
    const text =
      terms.length === 1
        ? `SELECT u.listing_id, 1000000 AS rank FROM listing_url_terms u JOIN listings l ON l.id = u.listing_id
           WHERE u.term = ${p(terms[0])} AND ${snapshot} AND ${conditions}${from ? ` AND u.listing_id > ${p(from.i)}` : ''}
           ORDER BY u.listing_id ASC LIMIT ${p(want)}`
        : `SELECT u.listing_id, count(*) * 1000000 AS rank FROM listing_url_terms u JOIN listings l ON l.id = u.listing_id
           WHERE u.term = ANY(${p(terms)}::text[]) AND ${snapshot} AND ${conditions}
           GROUP BY u.listing_id${
             from ? ` HAVING count(*) * 1000000 < ${p(from.r)} OR (count(*) * 1000000 = ${p(from.r)} AND u.listing_id > ${p(from.i)})` : ''
           }
           ORDER BY rank DESC, u.listing_id ASC LIMIT ${p(want)}`;
    const rows = await db.query<{ listing_id: string; rank: string }>(text, values);
    return rows.rows.map((r) => ({ listing_id: Number(r.listing_id), rank: Number(r.rank) }));
  };
  const want = page.limit + 1;
  const kept: Array<{ row: RankedRow; listing: ListingRow }> = [];
  const state = (row: RankedRow): CursorState => ({
    v: 1,
    h: hash,
    a: asOf,
    r: row.rank,
    i: row.listing_id,
    t: after?.t ?? now.getTime(),
    k,
    u: 1,
  });
  let from = after?.u === 1 ? after : undefined;
  let last: RankedRow | undefined;
  let exhausted = false;
  for (let round = 0; round < VISIBILITY_ROUNDS && kept.length < want && !exhausted; round++) {
    const batch = visibilityBatch(page.limit, round);
    const rows = await rankRows(from, batch);
    exhausted = rows.length < batch;
    const byId = await rowsById(
      db,
      rows.map((r) => r.listing_id),
      now,
    );
    last = keepVisible(rows, byId, request.visibleSince, want, kept, request.failingBefore) ?? last;
    if (last) from = state(last);
  }
  const pageRows = kept.slice(0, page.limit);
  const more = kept.length > page.limit || (!exhausted && kept.length < want);
  const at = kept.length > page.limit ? pageRows.at(-1)!.row : last;
  const cursor = more && at ? encodeCursor(secret, state(at)) : null;
  const resources = pageRows.map((row) => toDiscoveryResource(row.listing));
  return { x402Version, resources, partialResults: more, pagination: { limit: resources.length, cursor }, ...answered };
}
