/**
 * List pages (openapi.yaml `GET /discovery/resources`) filtered by a filter that selects few listings
 * (`resource`, `toolName`: read from the listings' own columns), or by `url` alone: its trigram index
 * when at most URL_INDEX_CAP listings hold the substring, else a bounded walk in page order
 * (../url-filter.ts, docs/CATALOG.md "List"). The other filters are read from the list keys (keyedFilter, which
 * store.ts's list pages read too), so a `url` page reads no listing's row but its page's.
 */
import type { DatabaseSync } from 'node:sqlite';
import { windowStartDay } from '../quality.ts';
import { byFewestListings, filterKeys, needsAcceptsCondition, type ListingKey, type ListingRow } from '../listing.ts';
import type { DiscoveryFilters, ListPageRead } from '../types.ts';
import { asciiLower, pageOf, urlPageIds, withoutUrl, type UrlPageMatches, type UrlScale } from '../url-filter.ts';
import { heldFiltersSql, listingsWith, withUsdPriceAsAmount } from './list-index.ts';
import { LISTING_COLUMNS, acceptedEntrySql, filterSql } from './queries.ts';
import type { SearchSource } from './search.ts';
import { urlMatchesCapped } from './url-probe.ts';
import { listed } from '../query-paths.ts';

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

/** A `url` page (../url-filter.ts urlPageIds): the index's matches (url-probe.ts), or a walk in page order (walkPageOrder). */
function listByUrl(store: ListSource, scale: UrlScale, read: ListPageRead, url: string): ListRows & { partialResults: boolean } {
  const { page, now } = read;
  let matched: number[] = [];
  const { ids, total, partialResults } = urlPageIds(
    {
      matches: ({ cap }) => (matched = urlMatchesCapped(store.db, url, cap + 1)).length,
      exact: () => pageOf(exactMatches(store, read, matched), page),
      walk: ({ budget, want }) => {
        const walked = walkPageOrder(store, read, url, budget, want);
        return { ...pageOf(walked.ids, page), beyond: walked.beyond };
      },
    },
    page,
    scale,
  ) as UrlPageMatches & { partialResults: boolean }; // its statements answer synchronously
  const byId = store.rowsById(ids, now);
  return { rows: ids.flatMap((id) => byId.get(id) ?? []), total, partialResults };
}

/**
 * Of `ids` (every listing holding the page's `url`), those the other filters keep, each checked on its entry of the
 * other filters' rarest list key (a primary-key read of a few dozen bytes, where a listing's row holds its whole body)
 * and ordered by it.
 */
function exactMatches(store: ListSource, { filters, visibleSince, failing }: ListPageRead, ids: number[]): number[] {
  const keyed = keyedFilter(store.db, withUsdPriceAsAmount(store.db, withoutUrl(filters)), visibleSince, failing);
  return (
    store
      .statement(
        `SELECT k.listing_id AS id FROM json_each(?) j CROSS JOIN listing_keys k WHERE k.listing_id = j.value AND ${keyed.sql}
         ORDER BY k.last_updated DESC, k.listing_id DESC`,
      )
      .all(JSON.stringify(ids), ...keyed.params) as Array<{ id: number }>
  ).map((r) => Number(r.id));
}

/**
 * The listings matching `url` and the other filters, in page order, walking the entries of the other filters' rarest
 * list key (byFewestListings; `all` without any) from the newest until `want` matches or `budget` listings are walked;
 * `beyond` when the key has more entries. The walk's last entry is read first, so the walk is one index range the page
 * statement stops in.
 */
function walkPageOrder(
  store: ListSource,
  { filters, visibleSince, failing }: ListPageRead,
  url: string,
  budget: number,
  want: number,
): { ids: number[]; beyond: boolean } {
  const others = withUsdPriceAsAmount(store.db, withoutUrl(filters));
  const counted = keysByListings(store.db, others);
  const { key } = counted[0]!;
  const order = 'ORDER BY k.last_updated DESC, k.listing_id DESC';
  // The key's entries not hidden by age.
  const ends = store
    .statement(
      `SELECT k.last_updated, k.listing_id FROM listing_keys k WHERE k.kind = ? AND k.value = ?${visibleSince === undefined ? '' : ' AND k.last_updated >= ?'}
       ${order} LIMIT 2 OFFSET ?`,
    )
    .all(key.kind, key.value, ...(visibleSince === undefined ? [] : [visibleSince]), budget - 1) as Array<{
    last_updated: string;
    listing_id: number;
  }>;
  const end = ends[0];
  // The walk's range starts at the newest entry and ends at `end`: its lastUpdated is the range's lower bound on the
  // index (it is at least visibleSince), so a walk that finds fewer than it wants stops there. Beside visibleSince as
  // that bound, with `end` only a further check, a walk that found too few read every entry of the key (135 ms at 1M).
  const keyed = keyedFilter(store.db, others, end ? end.last_updated : visibleSince, failing, counted);
  // Each walked URL is read from the trigram table's own copy (FTS5's `listing_urls_content`: id, c0), a few dozen
  // bytes a row where a listing's row holds its whole body, and the other filters from their list keys' entries.
  const ids = (
    store
      .statement(
        `SELECT k.listing_id AS id FROM listing_keys k CROSS JOIN listing_urls_content u
         WHERE ${keyed.sql}${end ? ' AND (k.last_updated, k.listing_id) >= (?, ?)' : ''} AND u.id = k.listing_id AND instr(lower(u.c0), ?) > 0
         ${order} LIMIT ?`,
      )
      .all(...keyed.params, ...(end ? [end.last_updated, end.listing_id] : []), asciiLower(url), want) as Array<{ id: number }>
  ).map((r) => Number(r.id));
  return { ids, beyond: ends.length > 1 };
}

/** The filters' list keys with their listings, fewest first (listing.ts byFewestListings): read once per page. */
const keysByListings = (db: DatabaseSync, filters: DiscoveryFilters) =>
  byFewestListings(filterKeys(filters), (key) => listingsWith(db, key));

/**
 * The list index's read of list filters other than `resource`, `toolName` and `url` (maxUsdPrice already read as
 * asset + maxAmount where it can be: list-index.ts withUsdPriceAsAmount): the conditions on an entry `k` of
 * `listing_keys` of the filters' rarest key (`counted[0]`, byFewestListings), the other keys' entries, the accepted
 * entries' terms (price), and the listings hidden by age or failures left out. `single` when the rarest key is the
 * whole filter (its count less the hidden is the total). `counted`: keysByListings(filters), passed in when the caller has read it.
 */
export function keyedFilter(
  db: DatabaseSync,
  filters: DiscoveryFilters,
  visibleSince: string | undefined,
  failing: string | undefined,
  counted = keysByListings(db, filters),
): { counted: Array<{ key: ListingKey; n: number }>; sql: string; params: Array<string | number>; single: boolean } {
  const [driver, ...others] = counted;
  const accepts = needsAcceptsCondition(filters) ? acceptedEntrySql(filters, 'k.listing_id') : undefined;
  const held = heldFiltersSql(
    'k.listing_id',
    others.map((o) => o.key),
    accepts,
    failing,
  );
  const sql = 'k.kind = ? AND k.value = ?' + (visibleSince === undefined ? '' : ' AND k.last_updated >= ?') + held.sql;
  const params = [driver!.key.kind, driver!.key.value, ...(visibleSince === undefined ? [] : [visibleSince]), ...held.params];
  return { counted, sql, params, single: others.length === 0 && !accepts };
}

function listByColumns(
  store: ListSource,
  { filters, page, now, visibleSince, failing }: ListPageRead,
): { rows: ListingRow[]; total: number } {
  listed('columns');
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
