/**
 * List pages (openapi.yaml `GET /discovery/resources`) filtered by a filter that selects few listings
 * (`resource`, `toolName`: read from the listings' own columns), or by `url` alone: its trigram index
 * when at most URL_INDEX_CAP listings hold the substring, else a bounded walk in page order
 * (../url-filter.ts, docs/CATALOG.md "List"). The other filters' pages read the list keys (list-index.ts).
 */
import type { DatabaseSync } from 'node:sqlite';
import { windowStartDay } from '../quality.ts';
import { byFewestListings, filterKeys, type ListingRow } from '../listing.ts';
import type { DiscoveryFilters, ListPageRead } from '../types.ts';
import { URL_INDEX_CAP, URL_WALK_BUDGET, asciiLower, walkWant, type UrlScale } from '../url-filter.ts';
import { listingsWith } from './list-index.ts';
import { LISTING_COLUMNS, filterSql, type SearchSource } from './queries.ts';
import { urlMatchesCapped } from './url-probe.ts';

/** What these reads need of the store (store.ts): its cached statements and its rows by id. */
type ListSource = Pick<SearchSource, 'statement' | 'rowsById'> & { db: DatabaseSync };

type ListRows = { rows: ListingRow[]; total: number; partialResults?: boolean };

/** The page of a list whose filters include `resource`, `toolName` or `url`; `partialResults` exactly when `url` is given. */
export function listBySelectiveFilter(store: ListSource, read: ListPageRead, scale: UrlScale): ListRows {
  const { resource, toolName, url } = read.filters;
  if (resource === undefined && toolName === undefined && url !== undefined) return listByUrl(store, scale, read, url);
  const columns = listByColumns(store, read);
  return url === undefined ? columns : { ...columns, partialResults: false };
}

/**
 * A `url` page: when at most URL_INDEX_CAP listings hold `url`, every match the index names, filtered and ordered
 * here (exact page and total); else the matches a walk in page order finds (walkPageOrder).
 */
function listByUrl(
  store: ListSource,
  { urlIndexCap = URL_INDEX_CAP, urlWalkBudget = URL_WALK_BUDGET }: UrlScale,
  read: ListPageRead,
  url: string,
): { rows: ListingRow[]; total: number; partialResults: boolean } {
  const { filters, page, now, visibleSince, failing } = read;
  const indexed = urlMatchesCapped(store.db, url, urlIndexCap + 1);
  let ids: number[];
  let partialResults = false;
  if (indexed.length > urlIndexCap) ({ ids, partialResults } = walkPageOrder(store, read, url, urlWalkBudget));
  else {
    // Few hold it: the index's listings are all the matches, filtered and ordered here.
    const others: DiscoveryFilters = { ...filters };
    delete others.url;
    const { conditions, params } = filterSql(others);
    const live = shown(visibleSince, failing);
    ids = (
      store
        .statement(
          `SELECT l.id FROM listings l WHERE l.id IN (SELECT value FROM json_each(?)) AND ${conditions}${live.sql}
           ORDER BY l.last_updated DESC, l.id DESC`,
        )
        .all(JSON.stringify(indexed), ...params, ...live.params) as Array<{ id: number }>
    ).map((r) => Number(r.id));
  }
  const pageIds = ids.slice(page.offset, page.offset + page.limit);
  const byId = store.rowsById(pageIds, now);
  return { rows: pageIds.flatMap((id) => byId.get(id) ?? []), total: ids.length, partialResults };
}

/**
 * The listings matching `url` and the other filters, in page order, walking the entries of the other filters' rarest
 * list key (byFewestListings; `all` without any) from the newest until the page and one more match (walkWant) or `budget`
 * listings are walked; `partialResults` unless the walk checked every listing holding that key. The walk's last entry
 * is read first, so the walk is one index range the page statement stops in.
 */
function walkPageOrder(
  store: ListSource,
  { filters, page, visibleSince, failing }: ListPageRead,
  url: string,
  budget: number,
): { ids: number[]; partialResults: boolean } {
  const others: DiscoveryFilters = { ...filters };
  delete others.url;
  const { conditions, params } = filterSql(others);
  const { key } = byFewestListings(filterKeys(others), (key) => listingsWith(store.db, key))[0]!;
  // The key's entries not hidden by age.
  const walked = {
    sql: `k.kind = ? AND k.value = ?${visibleSince === undefined ? '' : ' AND k.last_updated >= ?'}`,
    params: [key.kind, key.value, ...(visibleSince === undefined ? [] : [visibleSince])],
  };
  const order = 'ORDER BY k.last_updated DESC, k.listing_id DESC';
  const ends = store
    .statement(`SELECT k.last_updated, k.listing_id FROM listing_keys k WHERE ${walked.sql} ${order} LIMIT 2 OFFSET ?`)
    .all(...walked.params, budget - 1) as Array<{ last_updated: string; listing_id: number }>;
  const end = ends[0];
  const live = shown(undefined, failing);
  // Each walked URL is read from the trigram table's own copy (FTS5's `listing_urls_content`: id, c0), a few dozen
  // bytes a row where a listing's row holds its whole body; the listing's row is read only for other filters, and
  // only for a listing whose URL holds `url`.
  const filtered = conditions !== 'TRUE' || failing !== undefined;
  const want = walkWant(page);
  const ids = (
    store
      .statement(
        `SELECT k.listing_id AS id FROM listing_keys k CROSS JOIN listing_urls_content u${filtered ? ' CROSS JOIN listings l' : ''}
         WHERE ${walked.sql}${end ? ' AND (k.last_updated, k.listing_id) >= (?, ?)' : ''}
           AND u.id = k.listing_id AND instr(lower(u.c0), ?) > 0${filtered ? ` AND l.id = k.listing_id AND ${conditions}${live.sql}` : ''}
         ${order} LIMIT ?`,
      )
      .all(
        ...walked.params,
        ...(end ? [end.last_updated, end.listing_id] : []),
        asciiLower(url),
        ...(filtered ? [...params, ...live.params] : []),
        want,
      ) as Array<{ id: number }>
  ).map((r) => Number(r.id));
  return { ids, partialResults: ids.length === want || ends.length > 1 };
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
