/**
 * List pages (openapi.yaml `GET /discovery/resources`) filtered by a filter that selects few listings
 * (`resource`, `toolName`: read from the listings' own columns), or by `url` alone: its trigram index
 * when at most URL_INDEX_CAP listings hold the substring, else a bounded walk in page order
 * (../url-filter.ts, docs/CATALOG.md "List"). The other filters' pages read the list keys (list-index.ts).
 */
import { windowStartDay } from '../quality.ts';
import type { ListingRow } from '../listing.ts';
import type { DiscoveryFilters, ListPageRead } from '../types.ts';
import { URL_INDEX_CAP, URL_WALK_BUDGET, asciiLower, type UrlScale } from '../url-filter.ts';
import { LISTING_COLUMNS, filterSql, urlPhrase, type SearchSource } from './queries.ts';

/** What these reads need of the store (store.ts): its cached statements and its rows by id. */
type ListSource = Pick<SearchSource, 'statement' | 'rowsById'>;

type ListRows = { rows: ListingRow[]; total: number; partialResults?: boolean };

/** The page of a list whose filters include `resource`, `toolName` or `url`; `partialResults` exactly when `url` is given. */
export function listBySelectiveFilter(store: ListSource, read: ListPageRead, scale: UrlScale): ListRows {
  const { resource, toolName, url } = read.filters;
  if (resource === undefined && toolName === undefined && url !== undefined) {
    const walked = listByUrlWalk(store, scale, read, url);
    if (walked) return walked;
  }
  const columns = listByColumns(store, read);
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
  { filters, page, now, visibleSince, failing }: ListPageRead,
  url: string,
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
  const visible = visibleSince === undefined ? { sql: '', params: [] } : { sql: ' AND k.last_updated >= ?', params: [visibleSince] };
  const everyListing = `FROM listing_keys k WHERE k.kind = 'all' AND k.value = ''${visible.sql}`;
  const past = store.statement(`SELECT count(*) AS n FROM (SELECT 1 ${everyListing} LIMIT ?)`).get(...visible.params, urlWalkBudget + 1);
  const walked = Number((past as { n: number }).n);
  const live = shown(undefined, failing);
  const ids = store
    .statement(
      `SELECT l.id FROM (SELECT k.listing_id, k.last_updated ${everyListing} ORDER BY k.last_updated DESC, k.listing_id DESC LIMIT ?) w
     JOIN listings l ON l.id = w.listing_id
     WHERE instr(lower(l.resource), ?) > 0 AND ${conditions}${live.sql}
     ORDER BY w.last_updated DESC, w.listing_id DESC`,
    )
    .all(...visible.params, urlWalkBudget, asciiLower(url), ...params, ...live.params) as Array<{ id: number }>;
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
  { filters, page, now, visibleSince, failing }: ListPageRead,
): { rows: ListingRow[]; total: number } {
  const { conditions, params } = filterSql(filters);
  const shownNow = shown(visibleSince, failing);
  params.push(...shownNow.params);
  const where = `WHERE ${conditions}${shownNow.sql}`;
  const total = Number((store.statement(`SELECT count(*) AS n FROM listings l ${where}`).get(...params) as { n: number }).n);
  const rows = store
    .statement(
      `SELECT ${LISTING_COLUMNS} FROM listings l ${where}
     ORDER BY l.last_updated DESC, l.id DESC LIMIT ? OFFSET ?`,
    )
    .all(windowStartDay(now), windowStartDay(now), ...params, page.limit, page.offset) as unknown as ListingRow[];
  return { rows, total };
}

/** The conditions on listings `l` that leave out those hidden by age (before `visibleSince`) or by failing liveness checks (since before `failing`). */
function shown(visibleSince: string | undefined, failing: string | undefined): { sql: string; params: string[] } {
  const sql =
    (visibleSince === undefined ? '' : ' AND l.last_updated >= ?') +
    (failing === undefined ? '' : ' AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ?)');
  return { sql, params: [visibleSince, failing].filter((value) => value !== undefined) };
}
