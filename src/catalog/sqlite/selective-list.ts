/**
 * List pages (openapi.yaml `GET /discovery/resources`) filtered by a filter that selects few listings
 * (`resource`, `toolName`: read from the listings' own columns), or by `url` alone: its trigram index
 * when at most URL_INDEX_CAP listings hold the substring, else a bounded walk in page order
 * (../url-filter.ts, docs/CATALOG.md "List"). The other filters' pages read the list keys (list-index.ts).
 */
import { windowStartDay } from '../quality.ts';
import type { ListingRow } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import { URL_INDEX_CAP, URL_WALK_BUDGET, asciiLower, type UrlScale } from '../url-filter.ts';
import { LISTING_COLUMNS, filterSql, urlPhrase, type SearchSource } from './queries.ts';

/** What these reads need of the store (store.ts): its cached statements and its rows by id. */
type ListSource = Pick<SearchSource, 'statement' | 'rowsById'>;

type ListRows = { rows: ListingRow[]; total: number; partialResults?: boolean };

/** The page of a list whose filters include `resource`, `toolName` or `url`; `partialResults` exactly when `url` is given. */
export function listBySelectiveFilter(
  store: ListSource,
  filters: DiscoveryFilters,
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
  failing: string | undefined,
  scale: UrlScale,
): ListRows {
  const { resource, toolName, url } = filters;
  if (resource === undefined && toolName === undefined && url !== undefined) {
    const walked = listByUrlWalk(store, scale, filters, url, page, now, visibleSince, failing);
    if (walked) return walked;
  }
  const columns = listByColumns(store, filters, page, now, visibleSince, failing);
  return url === undefined ? columns : { ...columns, partialResults: false };
}

/**
 * A `url` page when more than URL_INDEX_CAP listings hold `url`: the matches among the first URL_WALK_BUDGET
 * listings in page order (every other filter checked on the row), `partialResults` when the walk did not reach
 * the last listing. Undefined when the trigram index holds at most URL_INDEX_CAP matches (read them whole).
 */
function listByUrlWalk(
  store: ListSource,
  scale: UrlScale,
  filters: DiscoveryFilters,
  url: string,
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
  failing: string | undefined,
): { rows: ListingRow[]; total: number; partialResults: boolean } | undefined {
  if (url.includes('\u0000')) return undefined;
  const { urlIndexCap = URL_INDEX_CAP, urlWalkBudget = URL_WALK_BUDGET } = scale;
  const indexed = store
    .statement('SELECT count(*) AS n FROM (SELECT rowid FROM listing_urls WHERE listing_urls MATCH ? LIMIT ?)')
    .get(urlPhrase(url), urlIndexCap + 1) as { n: number };
  if (Number(indexed.n) <= urlIndexCap) return undefined;
  const others: DiscoveryFilters = { ...filters };
  delete others.url;
  const { conditions, params } = filterSql(others);
  const walk =
    `SELECT k.listing_id, k.last_updated FROM listing_keys k WHERE k.kind = 'all' AND k.value = ''` +
    `${visibleSince === undefined ? '' : ' AND k.last_updated >= ?'} ORDER BY k.last_updated DESC, k.listing_id DESC LIMIT ?`;
  const walkParams = [...(visibleSince === undefined ? [] : [visibleSince]), urlWalkBudget];
  const walkedPast = `SELECT count(*) AS n FROM (SELECT 1 FROM listing_keys k WHERE k.kind = 'all' AND k.value = ''${visibleSince === undefined ? '' : ' AND k.last_updated >= ?'} LIMIT ?)`;
  const past = [...(visibleSince === undefined ? [] : [visibleSince]), urlWalkBudget + 1];
  const walked = Number((store.statement(walkedPast).get(...past) as { n: number }).n);
  const ids = store
    .statement(
      `SELECT l.id FROM (${walk}) w JOIN listings l ON l.id = w.listing_id
     WHERE instr(lower(l.resource), ?) > 0 AND ${conditions}
     ${failing === undefined ? '' : ' AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ?)'}
     ORDER BY w.last_updated DESC, w.listing_id DESC`,
    )
    .all(...walkParams, asciiLower(url), ...params, ...(failing === undefined ? [] : [failing])) as Array<{ id: number }>;
  const pageIds = ids.slice(page.offset, page.offset + page.limit).map((r) => Number(r.id));
  const byId = store.rowsById(pageIds, now);
  return {
    rows: pageIds.flatMap((id) => byId.get(id) ?? []),
    total: ids.length,
    partialResults: walked > urlWalkBudget,
  };
}

function listByColumns(
  store: ListSource,
  filters: DiscoveryFilters,
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
  failing: string | undefined,
): { rows: ListingRow[]; total: number } {
  const { conditions, params } = filterSql(filters);
  if (visibleSince !== undefined) params.push(visibleSince);
  if (failing !== undefined) params.push(failing);
  const where =
    `WHERE ${conditions}${visibleSince === undefined ? '' : ' AND l.last_updated >= ?'}` +
    (failing === undefined ? '' : ' AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ?)');
  const total = Number((store.statement(`SELECT count(*) AS n FROM listings l ${where}`).get(...params) as { n: number }).n);
  const rows = store
    .statement(
      `SELECT ${LISTING_COLUMNS} FROM listings l ${where}
     ORDER BY l.last_updated DESC, l.id DESC LIMIT ? OFFSET ?`,
    )
    .all(windowStartDay(now), windowStartDay(now), ...params, page.limit, page.offset) as unknown as ListingRow[];
  return { rows, total };
}
