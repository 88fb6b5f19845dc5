/**
 * The two bounded paths of a filtered search on PostgreSQL, as sqlite/filter-driver.ts (docs/CATALOG.md "Search with
 * filters"; search.ts FILTER_DRIVER_LISTINGS and windowBound): ranking the members of the filters' rarest list key,
 * and ranking the window of a search that neither its text nor its filters narrow.
 */
import { exactRankSql } from './term-tiers.ts';
import {
  FILTER_DRIVER_LISTINGS,
  FILTER_SET_CAP,
  setDrives,
  windowBound,
  windowExact,
  windowRowsPerTerm,
  type CursorState,
  type RankedRow,
} from '../search.ts';
import { filterKeys, type ListingKey } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import { URL_INDEX_CAP, type UrlSample } from '../url-filter.ts';
import { filterConditions, parameters, termRowConditions, type Db, type SearchFilters } from './queries.ts';
import { freshSample, urlHeldIds, urlLettersRead } from './url-probe.ts';
import { listingCount, termRowsUpTo } from './term-counts.ts';
import { keysetAfter, ranked } from './term-paths.ts';

/** A revision `rev`'s exact rank over `terms` (the SQL array), as a scalar subquery: term-tiers.ts's exactRankSql. */
const exactRank = (terms: string, rev: string) => `(${exactRankSql(rev, terms)})`;

/**
 * The next `want` matches after `after` among the listings of `filters.within` (the rarest list key, which holds every
 * match): each one's revision valid at `asOf`, ranked exactly, those holding no term left out, then the filters'
 * exact conditions. Exactly the text paths' page.
 */
export async function setDrivenRows(
  db: Db,
  terms: string[],
  filters: SearchFilters,
  asOf: number,
  after: CursorState | undefined,
  want: number,
): Promise<RankedRow[]> {
  const params = parameters();
  const { p } = params;
  const rank = exactRank(p(terms), 't.rev');
  const rows = termRowConditions(filters, asOf, params);
  const keyset = keysetAfter(after, params, 'AND');
  const result = await db.query<{ listing_id: string; rank: string }>(
    `SELECT listing_id, rank FROM (
       SELECT t.listing_id, ${rank} AS rank FROM search_revisions t ${rows.join} WHERE ${rows.where}
     ) m WHERE rank >= 1000000 ${keyset}
     ORDER BY rank DESC, listing_id ASC LIMIT ${p(want)}`,
    params.values,
  );
  return ranked(result.rows);
}

/**
 * The next `want` matches after `after` in the window: the listings among each term's first windowRowsPerTerm(budget) rows valid at
 * `asOf` (its index order) that pass the filters, ranked exactly; `exact` when no listing outside the window can be
 * on the page (windowBound).
 */
export async function windowRows(
  db: Db,
  terms: string[],
  filters: SearchFilters,
  budget: number,
  asOf: number,
  after: CursorState | undefined,
  want: number,
): Promise<{ rows: RankedRow[]; exact: boolean }> {
  const perTerm = windowRowsPerTerm(budget, terms.length);
  /** Each term's first `perTerm` rows valid at `asOf`, with parameters named by `p`. */
  const first = (term: string, p: (value: unknown) => string) =>
    `SELECT w.rev, w.listing_id, w.milli, w.from_seq, w.to_seq FROM search_terms w
     WHERE w.term = ${p(term)} AND w.from_seq <= ${p(asOf)} AND (w.to_seq IS NULL OR w.to_seq > ${p(asOf)})
     ORDER BY w.milli DESC, w.listing_id ASC LIMIT ${p(perTerm)}`;
  const params = parameters();
  const { p } = params;
  const window = terms.map((term) => `SELECT rev, listing_id, from_seq, to_seq FROM (${first(term, p)}) f`).join(' UNION ');
  const rows = termRowConditions(filters, asOf, params);
  const rank = exactRank(p(terms), 't.rev');
  const keyset = keysetAfter(after, params);
  const limit = p(want);
  const edgeParams = parameters();
  const edges = terms
    .map((term, i) => `SELECT ${i} AS i, count(*) AS n, min(e.milli) AS lowest FROM (${first(term, edgeParams.p)}) e`)
    .join(' UNION ALL ');
  const [found, counted] = await Promise.all([
    db.query<{ listing_id: string; rank: string }>(
      `WITH c AS MATERIALIZED (${window})
       SELECT listing_id, rank FROM (SELECT t.listing_id, ${rank} AS rank FROM c t ${rows.join} WHERE ${rows.where}) m ${keyset}
       ORDER BY rank DESC, listing_id ASC LIMIT ${limit}`,
      params.values,
    ),
    db.query<{ i: number; n: string; lowest: string | null }>(`${edges} ORDER BY 1`, edgeParams.values),
  ]);
  const result = ranked(found.rows);
  const bound = windowBound(
    counted.rows.map((r) => ({ rows: Number(r.n), lowest: Number(r.lowest ?? 0) })),
    perTerm,
  );
  return { rows: result, exact: windowExact(result, want, bound) };
}

/** The store's sample of spelled URLs (url-probe.ts) and the request's time, which decides whether it is drawn again. */
type UrlSampleAt = { sample: UrlSample | undefined; nowMs: number };

/**
 * `filters` (at least one given: filterPlan asks only then) with their smallest set as `within` when it is small
 * (queries.ts SearchFilters): the rarest list key's count and `url`'s listings (url-probe.ts urlHeldIds) are read
 * together, a statement each.
 */
async function searchFilters(db: Db, filters: DiscoveryFilters, url?: UrlSampleAt): Promise<SearchFilters> {
  const keys = filterKeys(filters).filter((key) => key.kind !== 'all');
  const counted =
    keys.length === 0
      ? undefined
      : db.query<{ kind: ListingKey['kind']; value: string; n: string }>(
          `SELECT k.kind, k.value, coalesce(c.n, 0) AS n FROM unnest($1::text[], $2::text[]) AS k (kind, value)
           LEFT JOIN listing_counts c ON c.kind = k.kind AND c.value = k.value ORDER BY 3 LIMIT 1`,
          [keys.map((key) => key.kind), keys.map((key) => key.value)],
        );
  const urlIds =
    filters.url === undefined || url?.sample === undefined
      ? undefined
      : urlHeldIds(db, filters.url, urlLettersRead(filters.url, await freshSample(db, url.sample, url.nowMs)), URL_INDEX_CAP);
  const [rarest, held] = await Promise.all([counted?.then((r) => r.rows[0]), urlIds]);
  if (held !== undefined && (rarest === undefined || held.length <= Number(rarest.n))) {
    return { ...filters, within: { ids: held, listings: held.length } };
  }
  return rarest && Number(rarest.n) <= FILTER_SET_CAP
    ? { ...filters, within: { kind: rarest.kind, value: rarest.value, listings: Number(rarest.n) } }
    : filters;
}

/**
 * How a search of `terms` under `filters` is bounded (docs/CATALOG.md "Search with filters"): the filters with their
 * smallest set (searchFilters: the rarest list key when it holds at most FILTER_SET_CAP, or the few listings holding
 * `url`), whether that set drives the search (at most `driverListings`, FILTER_DRIVER_LISTINGS unless set, and cheaper
 * than the text: setDrives), and whether it ranks the window (its cursor says so, or two or more terms, the rarest past
 * the budget, under filters no set drives).
 */
export async function filterPlan(
  db: Db,
  filters: DiscoveryFilters,
  terms: string[],
  {
    budget,
    driverListings,
    want,
    after,
    url,
  }: { budget: number; driverListings?: number; want: number; after: CursorState | undefined; url?: UrlSampleAt },
): Promise<{ sets: SearchFilters; driven: boolean; windowed: boolean }> {
  const filtered = filterConditions(filters, parameters().p) !== 'TRUE';
  const sets: SearchFilters = filtered ? await searchFilters(db, filters, url) : filters;
  const rarestRows = async () => (await termRowsUpTo(db, [terms[0]!], budget + 1))[0]!;
  const driven =
    sets.within !== undefined &&
    sets.within.listings <= (driverListings ?? FILTER_DRIVER_LISTINGS) &&
    setDrives(sets.within.listings, terms.length, await rarestRows(), budget, want, await listingCount(db));
  const windowed = after?.p === 1 || (filtered && !driven && terms.length > 1 && (await rarestRows()) > budget);
  return { sets, driven, windowed };
}
