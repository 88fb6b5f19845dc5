/**
 * The list index's counts on PostgreSQL (sqlite/list-index.ts does the same on SQLite): the entries
 * of one filter value hidden by age, where a deep offset starts, and the few listings a resource or
 * toolName filter selects.
 */
import {
  acceptedEntryExists,
  filterConditions,
  heldFiltersSql,
  pageListingsStatement,
  parameters,
  queryGeneric,
  readPage,
  type Db,
  type RawListingRow,
} from './queries.ts';
import { listingColumns } from './quality.ts';
import {
  ASSET_COMBINATION_KINDS as KINDS,
  BLOCK_SIZE,
  filterKeys,
  needsAcceptsCondition,
  toDiscoveryResource,
  type ListingRow,
} from '../listing.ts';
import { usdAssetsToCheck, usdPriceAsAmount } from '../price.ts';
import { URL_INDEX_CAP, URL_WALK_BUDGET, walkWant, withoutUrl, type UrlSample, type UrlScale } from '../url-filter.ts';
import { JOINED_MATCHES, freshSample, spelledCte, spelledHolds, urlLettersRead } from './url-probe.ts';
import type { DiscoveryFilters, DiscoveryResource, ListPageRead } from '../types.ts';
import { listed } from '../query-paths.ts';

/**
 * The entries of a filter value last updated before `since` (sqlite/list-index.ts hiddenCount):
 * the blocks that start before it, summed, and the entries of the block holding `since` counted
 * in the index. With no block below `since`, the lower bound ('', 0) is below every entry. An SQL
 * expression over `kind`, `value` and `since` (column references or parameters), so a statement
 * that already runs can carry it (store.ts reads it with the list counts: one round trip).
 */
export const hiddenCountSql = (kind: string, value: string, since: string): string =>
  `SELECT below.n + (
     SELECT count(*) FROM listing_keys x
     WHERE x.kind = ${kind} AND x.value = ${value} AND x.last_updated < ${since}
       AND (x.last_updated, x.listing_id) > (below.start_updated, below.start_id)
   ) AS n FROM (
     SELECT coalesce(sum(n), 0) AS n,
       coalesce((array_agg(start_updated ORDER BY start_updated DESC, start_id DESC))[1], '') AS start_updated,
       coalesce((array_agg(start_id ORDER BY start_updated DESC, start_id DESC))[1], 0) AS start_id
     FROM listing_key_blocks WHERE kind = ${kind} AND value = ${value} AND start_updated < ${since}
   ) below`;

/** Where the entry at `offset` of a filter value's page order is (sqlite/list-index.ts seekOffset); the server sums the blocks. */
export async function seekOffset(
  db: Db,
  key: { kind: string; value: string },
  offset: number,
): Promise<{ from?: { lastUpdated: string; listingId: number }; skip: number } | null> {
  const row = (
    await db.query<{ start_updated: string; start_id: string; n: number; upto: string }>(
      `SELECT start_updated, start_id, n, upto FROM (
         SELECT start_updated, start_id, n, sum(n) OVER (ORDER BY start_updated DESC, start_id DESC) AS upto
         FROM listing_key_blocks WHERE kind = $1 AND value = $2
       ) b WHERE upto > $3 ORDER BY start_updated DESC, start_id DESC LIMIT 1`,
      [key.kind, key.value, offset],
    )
  ).rows[0];
  if (!row) return null;
  const skip = offset - (Number(row.upto) - Number(row.n));
  return row.start_updated === '~' ? { skip } : { from: { lastUpdated: row.start_updated, listingId: Number(row.start_id) }, skip };
}

/** The page of one list key's entries from `page.offset` (the list's statement for a single key without failing listings). */
export function singleKeyPage(
  db: Db,
  key: { kind: string; value: string },
  page: { limit: number; offset: number },
  now: Date,
  visibleSince: string | undefined,
): Promise<ListingRow[]> {
  const params = parameters();
  const { p } = params;
  const visible = visibleSince === undefined ? '' : ` AND k.last_updated >= ${p(visibleSince)}`;
  const pageSql = `SELECT k.listing_id AS id, k.last_updated FROM listing_keys k WHERE k.kind = ${p(key.kind)} AND k.value = ${p(key.value)}${visible}
    ORDER BY k.last_updated DESC, k.listing_id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`;
  return readPage(db, { ...pageListingsStatement(pageSql, params, now), generic: true });
}

/** Which of `assets` some listing accepts (their list counts). */
export async function listedAssets(db: Db, assets: string[]): Promise<string[]> {
  const rows = await db.query<{ value: string }>(
    "SELECT value FROM listing_counts WHERE kind = 'asset' AND value = ANY($1::text[]) AND n > 0",
    [assets],
  );
  return rows.rows.map((r) => r.value);
}

/** A list page's filters with maxUsdPrice read as asset + maxAmount when one USD-pegged asset can match (price.ts usdPriceAsAmount). */
export async function withUsdPriceAsAmount(db: Db, filters: DiscoveryFilters): Promise<DiscoveryFilters> {
  if (filters.maxUsdPrice === undefined) return filters;
  const usd = usdAssetsToCheck(filters);
  return usdPriceAsAmount(filters, new Set(usd.length === 0 ? [] : await listedAssets(db, usd)));
}

/**
 * The conditions on listings `l` that leave out those hidden by age (before `visibleSince`) or by failing liveness
 * checks (since before `failing`), their values added through `p` in that order.
 */
function shown(p: (value: unknown) => string, visibleSince: string | undefined, failing: string | undefined): string {
  return (
    (visibleSince === undefined ? '' : ` AND l.last_updated >= ${p(visibleSince)}`) +
    (failing === undefined ? '' : ` AND (l.liveness_failing_since IS NULL OR l.liveness_failing_since >= ${p(failing)})`)
  );
}

/** resource and toolName select a few listings through their own indexes (as sqlite/selective-list.ts listByColumns). */
async function listByColumns(
  db: Db,
  { filters, page, now, visibleSince, failing }: ListPageRead,
): Promise<{ items: DiscoveryResource[]; total: number }> {
  listed('columns');
  const { values, p } = parameters();
  const where = `WHERE ${filterConditions(filters, p)}${shown(p, visibleSince, failing)}`;
  // Both statements go out together (the store's pipelined pool): one round trip.
  const [counted, rows] = await Promise.all([
    db.query<{ n: string }>(`SELECT count(*) AS n FROM listings l ${where}`, [...values]),
    db.query<RawListingRow>(
      `SELECT ${listingColumns(now, p)} ${where} ORDER BY l.last_updated DESC, l.id DESC LIMIT ${p(page.limit)} OFFSET ${p(page.offset)}`,
      values,
    ),
  ]);
  const total = Number(counted.rows[0]!.n);
  return { items: rows.rows.map((r) => toDiscoveryResource({ ...r, id: Number(r.id) })), total };
}

/**
 * A list page filtered by `resource` or `toolName` (they select a few listings), or by `url` alone: its
 * trigram index when few listings hold it, else a bounded walk in page order (../url-filter.ts).
 */
export async function listBySelectiveFilter(
  db: Db,
  read: ListPageRead,
  urlScale: UrlScale,
  urlSample: UrlSample,
): Promise<{ items: DiscoveryResource[]; total: number; partialResults?: boolean }> {
  const { resource, toolName, url } = read.filters;
  if (resource === undefined && toolName === undefined && url !== undefined) return listByUrl(db, read, url, urlScale, urlSample);
  const columns = await listByColumns(db, read);
  return url === undefined ? columns : { ...columns, partialResults: false };
}

/**
 * Where the parts of a walk beside other filters end, as shares of the walk's budget (listByUrl). The first part reads
 * each entry's spelled URL by its listing and stops as soon as the page is found: a common substring's page is among the
 * first entries. Each later part reads its entries' spelled URLs in one batch (`= ANY`, the ids sorted: neighbouring
 * rows read together), and only when the parts before found less than the page. At 1M listings, every page cached, a
 * lookup took about 1.4 µs, an entry of a batch of 2,500 under 0.5. Measured in process at 100k and 1M listings: one
 * batch for all but the first part left 100k's p95 0.5–1 ms higher (docs/BENCHMARKS.md "Filter combinations" has the
 * figures over HTTP).
 */
const WALK_PART_ENDS = [1 / 8, 3 / 8, 1];

/**
 * A `url` page (sqlite/selective-list.ts listByUrl), in one statement. The listings whose URL spelled in letters holds
 * `url`'s spelling (url-probe.ts spelledCte: every listing holding `url`, and rarely a few more) are counted, at
 * most URL_INDEX_CAP + 1 of them. When at most the cap, each is checked where its spelled URL was read, without its
 * listing's row (heldBySpelled), and the page is theirs, in page order (exact). Else the page is the matches a walk
 * finds among the first URL_WALK_BUDGET entries from the newest of the other filters' rarest list key (`all` without
 * any), at most the page and one more (`partialResults` unless that range is every listing holding the key), each
 * checked on its spelled URL as an exact match is: no listing's row is read but the page's. Without other filters the
 * walk reads the spelled URLs in page order (catalog migration 32); with them, the key's entries in parts
 * (WALK_PART_ENDS), or, for a substring few listings hold, its spelled matches joined to them when at most
 * JOINED_MATCHES hold it (url-probe.ts urlLettersRead), or the ids the suffixes named when they named every match. Each
 * part runs only when its case is the answer's.
 */
async function listByUrl(
  db: Db,
  read: ListPageRead,
  url: string,
  scale: UrlScale,
  urlSample: UrlSample,
): Promise<{ items: DiscoveryResource[]; total: number; partialResults: boolean }> {
  const { urlIndexCap = URL_INDEX_CAP, urlWalkBudget = URL_WALK_BUDGET, urlJoinCap = JOINED_MATCHES } = scale;
  const { filters, page, now, visibleSince, failing } = read;
  const letters = urlLettersRead(url, await freshSample(db, urlSample, now.getTime()), scale);
  const want = walkWant(page);
  const { values, p } = parameters();
  const others = withoutUrl(filters);
  // The walked key: the other filters' rarest, a tie in filterKeys' order (listing.ts byFewestListings), chosen by the
  // statement (walk_key below); without other filters, `all` (filterKeys' only key then).
  const keys = filterKeys(others);
  const walkKey =
    keys[0]!.kind !== 'all'
      ? `SELECT k.kind, k.value FROM unnest(${p(keys.map((k) => k.kind))}::text[], ${p(keys.map((k) => k.value))}::text[]) WITH ORDINALITY AS k(kind, value, at)
         ORDER BY coalesce((SELECT c.n FROM listing_counts c WHERE c.kind = k.kind AND c.value = k.value), 0), k.at LIMIT 1`
      : undefined;
  // Functions, as the parts below: a part takes its parameters only when the statement holds it.
  const everyListing = () =>
    (walkKey ? `k.kind = (SELECT kind FROM walk_key) AND k.value = (SELECT value FROM walk_key)` : `k.kind = 'all' AND k.value = ''`) +
    (visibleSince === undefined ? '' : ` AND k.last_updated >= ${p(visibleSince)}`);
  const order = 'ORDER BY k.last_updated DESC, k.listing_id DESC';
  // Each walked entry checked as an exact match is (heldBySpelled; `bits`: whether `k` carries its key bits), its
  // spelling found first (strpos, cheap; CASE keeps the order), the page and one more kept.
  const matching = (bits: boolean) =>
    `CASE WHEN strpos(k.letters, ${p(letters.spelled)}) > 0 THEN ${heldBySpelled(url, others, p, { failing, walked: true, bits })} ELSE false END
     ${order} LIMIT ${p(want)}`;
  // Without other filters: the spelled URLs in page order (catalog migration 32: the same entries as `all`'s), one index
  // range read in page order (no sort) that stops at the budget.
  const spelledWalk = () =>
    `ARRAY(SELECT k.listing_id FROM (SELECT c.listing_id, c.letters, c.last_updated FROM listing_url_letters c${
      visibleSince === undefined ? '' : ` WHERE c.last_updated >= ${p(visibleSince)}`
    } ORDER BY c.last_updated DESC, c.listing_id DESC LIMIT ${p(urlWalkBudget)}) k WHERE ${matching(false)})`;
  // The walked key's entries [from, to) in page order, `columns` of each: one index range, fenced by its LIMIT and OFFSET
  // (the planner never hashes it against every spelled URL).
  const keyRange = (columns: string, from: number, to: number) =>
    `SELECT ${columns} FROM listing_keys k WHERE ${everyListing()} ${order} LIMIT ${p(to - from)} OFFSET ${from === 0 ? '0' : p(from)}`;
  // Beside other filters, part [from, to) of the walk: the first part each entry's spelled URL read by its listing, the
  // others in one batch.
  const keyPart = (from: number, to: number) =>
    from === 0
      ? `SELECT k.listing_id FROM (${keyRange(
          'k.listing_id, k.last_updated, (SELECT c.letters FROM listing_url_letters c WHERE c.listing_id = k.listing_id) AS letters',
          0,
          to,
        )}) k WHERE ${matching(false)}`
      : `SELECT k.listing_id FROM listing_url_letters k WHERE k.listing_id = ANY(ARRAY(${keyRange('k.listing_id', from, to)})) AND ${matching(true)}`;
  const ends = [...new Set(WALK_PART_ENDS.map((share) => Math.max(1, Math.round(share * urlWalkBudget))))];
  // Part `i`'s matches and, while those found so far (`found`, an SQL count) are less than the page and one more, the next parts'.
  const keyWalk = (i: number, found: string): string => {
    const ids = `ARRAY(${keyPart(ends[i - 1] ?? 0, ends[i]!)})`;
    if (i === ends.length - 1) return ids;
    const sofar = `${found}cardinality(w${i}.ids)`;
    return `(SELECT CASE WHEN ${sofar} >= ${p(want)}::bigint THEN w${i}.ids ELSE w${i}.ids || ${keyWalk(i + 1, `${sofar} + `)} END
       FROM (SELECT ${ids} AS ids OFFSET 0) w${i})`;
  };
  // A substring few listings hold (url-probe.ts urlLettersRead) has its spelled matches read, up to JOINED_MATCHES and
  // one more, and when at most that many, those at or before the walk's last entry (walk_end: the key's entry at the
  // budget, none when it has fewer) are the walk's, in place of the parts: in page order (fenced), each checked as an
  // exact match is, the page and one more kept. (A join to the key's first entries, hashed when planned with its values,
  // looped over them once per match in its generic plan: 700 ms at 100k.)
  const joined = letters.walkedByIndex && walkKey !== undefined;
  const joinedWalk = () => `ARRAY(SELECT k.listing_id FROM (
         SELECT k.* FROM spelled k WHERE NOT EXISTS (SELECT 1 FROM walk_end e WHERE (k.last_updated, k.listing_id) < (e.last_updated, e.listing_id))
         ${order} OFFSET 0
       ) k WHERE ${heldBySpelled(url, others, p, { visibleSince, failing })} ${order} LIMIT ${p(want)})`;
  // When the suffixes named every match (url-probe.ts spelledCte: spelled_count's `complete`), the key's first entries
  // are joined to those ids instead (hashed), and only the entries among them have their spelled URLs read, where the
  // join above read every match's: at 100k listings over HTTP, beside that join, the p95 of `url` + `asset` + `network`
  // 2.78–4.25 ms against 3.89–5.28, lower in 4 runs of 4 (docs/BENCHMARKS.md "Filter combinations").
  const namedWalk = () => `ARRAY(SELECT k.listing_id FROM (
         SELECT e.listing_id, e.last_updated, c.letters, c.key_bits FROM (${keyRange('k.listing_id, k.last_updated', 0, urlWalkBudget)}) e
         CROSS JOIN LATERAL (SELECT c.letters, c.key_bits FROM listing_url_letters c WHERE c.listing_id = e.listing_id) c
         WHERE e.listing_id IN (SELECT s.listing_id FROM suffix_rows s)
         ORDER BY e.last_updated DESC, e.listing_id DESC OFFSET 0
       ) k WHERE ${heldBySpelled(url, others, p, { visibleSince, failing })} ${order} LIMIT ${p(want)})`;
  const walk = !walkKey
    ? spelledWalk()
    : joined
      ? `CASE WHEN (SELECT joinable FROM counted) AND (SELECT complete FROM spelled_count) THEN ${namedWalk()}
         WHEN (SELECT joinable FROM counted) THEN ${joinedWalk()} ELSE ${keyWalk(0, '')} END`
      : keyWalk(0, '');
  const spelledCap = joined ? Math.max(urlJoinCap, urlIndexCap) : urlIndexCap;
  // Whether the walk's range is every entry of its key: asked only when the walk found less than the page and one more.
  // The page's listings are read in the same statement (one round trip): a row for each, or one with none when the
  // page is empty, each carrying the matches' count and how they were found.
  const found = await queryGeneric<UrlPageRow>(
    db,
    'url',
    `WITH ${spelledCte(letters, p, spelledCap + 1)}${walkKey ? `, walk_key AS MATERIALIZED (${walkKey})` : ''}${
      joined ? `, walk_end AS MATERIALIZED (${keyRange('k.last_updated, k.listing_id', urlWalkBudget - 1, urlWalkBudget)})` : ''
    },
       counted AS MATERIALIZED (SELECT n <= ${p(urlIndexCap)} AS few${joined ? `, n <= ${p(urlJoinCap)} AS joinable` : ''} FROM spelled_count),
       walked AS MATERIALIZED (SELECT CASE WHEN NOT (SELECT few FROM counted) THEN ${walk} END AS ids),
       answer AS MATERIALIZED (
         SELECT CASE WHEN (SELECT few FROM counted) THEN ARRAY(
             SELECT k.listing_id FROM spelled k WHERE ${heldBySpelled(url, others, p, { visibleSince, failing })} ORDER BY k.last_updated DESC, k.listing_id DESC
           ) END AS exact,
           w.ids AS walked,
           CASE WHEN cardinality(w.ids) < ${p(want)}::bigint THEN EXISTS (SELECT 1 FROM listing_keys k WHERE ${everyListing()} ${order} OFFSET ${p(urlWalkBudget)}) END AS beyond
         FROM walked w
       ),
       matched AS MATERIALIZED (
         SELECT a.exact IS NOT NULL AS exact, coalesce(a.exact, a.walked[1:${p(Math.min(want, INT_MAX))}::int]) AS ids, a.beyond FROM answer a
       )
     SELECT cardinality(m.ids) AS url_total, m.exact AS url_exact, m.beyond AS url_beyond, x.*
     FROM matched m LEFT JOIN LATERAL (
       SELECT ${listingColumns(now, p)} WHERE l.id = ANY(m.ids[${p(Math.min(page.offset + 1, INT_MAX))}::int:${p(Math.min(page.offset + page.limit, INT_MAX))}::int])
     ) x ON true
     ORDER BY x.last_updated DESC, x.id DESC`,
    values,
  );
  // The walk's parts each keep up to the page and one more (those beyond are the later parts'): `matched` keeps the first.
  const { url_total, url_exact, url_beyond } = found.rows[0]!;
  listed(url_exact ? 'url_index' : !walkKey ? 'url_spelled_walk' : joined ? 'url_joinable_walk' : 'url_walk');
  const items = found.rows.filter((r) => r.id !== null).map((r) => toDiscoveryResource({ ...(r as RawListingRow), id: Number(r.id) }));
  return { items, total: url_total, partialResults: !url_exact && (url_total === want || url_beyond === true) };
}

/** The largest array subscript (an SQL int): a page starting past it is past every match (a walk keeps a few thousand). */
const INT_MAX = 2 ** 31 - 1;

/**
 * A row of a `url` page's statement (listByUrl): one of the page's listings (null columns when the page is empty),
 * with the matches' count and how they were found.
 */
type UrlPageRow = (RawListingRow | { [column in keyof RawListingRow]: null }) & {
  url_total: number;
  url_exact: boolean;
  url_beyond: boolean | null;
};

/**
 * The conditions that spelled match `k` (a row of spelledCte's table: its listing's id, spelled URL, lastUpdated and key
 * bits) holds `url` and the other filters and is shown, read without the listing's row where they can be: `url` on the
 * spelling (url-probe.ts spelledHolds), the other filters on the row's key bits and then their list keys' entries and
 * the accepted entries (each a lookup per match, fenced by OFFSET 0: a semi-join would hash every entry of the key), the
 * listings hidden by lastUpdated and by the failing listings' index. A `walked` match is an entry of the walked key:
 * where the other filters have one key, that key, which it holds. `bits`: whether `k` carries the key bits.
 */
function heldBySpelled(
  url: string,
  others: DiscoveryFilters,
  p: (value: unknown) => string,
  { visibleSince, failing, walked = false, bits = true }: { visibleSince?: string; failing?: string; walked?: boolean; bits?: boolean },
): string {
  const filtered = filterKeys(others).filter((key) => key.kind !== 'all');
  const keys = walked && filtered.length === 1 ? [] : filtered;
  const accepts = needsAcceptsCondition(others) ? acceptedEntryExists(others, p, 'k.listing_id', true) : undefined;
  return (
    spelledHolds(url, p) +
    heldFiltersSql(p, 'k.listing_id', keys, accepts, failing, true, bits ? 'k.key_bits' : undefined) +
    (visibleSince === undefined ? '' : ` AND k.last_updated >= ${p(visibleSince)}`)
  );
}

const ASSET_COMBINATION_KINDS = KINDS.map((kind) => `'${kind}'`).join(', ');

/**
 * Catalog migration 28: every listing's keys of asset combinations (listing.ts assetKeysOf, sqlite/list-index.ts
 * migrateToAssetCombinationKeys), their counts, and their blocks cut as buildBlocks cuts them (the newest block starts
 * at the sentinel; every block but the oldest holds BLOCK_SIZE entries), in bulk.
 */
export const ASSET_COMBINATION_KEYS_MIGRATION = `
  DELETE FROM listing_keys WHERE kind IN (${ASSET_COMBINATION_KINDS});
  DELETE FROM listing_counts WHERE kind IN (${ASSET_COMBINATION_KINDS});
  DELETE FROM listing_key_blocks WHERE kind IN (${ASSET_COMBINATION_KINDS});
  INSERT INTO listing_keys (kind, value, listing_id, last_updated)
    SELECT k.kind, k.value, a.listing_id, l.last_updated
    FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
    CROSS JOIN LATERAL (VALUES
      ('network+asset', a.network || E'\n' || a.asset),
      ('scheme+asset', a.scheme || E'\n' || a.asset),
      ('scheme+network+asset', a.scheme || E'\n' || a.network || E'\n' || a.asset),
      ('type+asset', l.type || E'\n' || a.asset),
      ('type+network+asset', l.type || E'\n' || a.network || E'\n' || a.asset)
    ) AS k(kind, value)
    WHERE a.asset IS NOT NULL
    ON CONFLICT DO NOTHING;
  INSERT INTO listing_counts (kind, value, n)
    SELECT kind, value, count(*) FROM listing_keys WHERE kind IN (${ASSET_COMBINATION_KINDS}) GROUP BY kind, value;
  INSERT INTO listing_key_blocks (kind, value, start_updated, start_id, n)
    SELECT kind, value, CASE WHEN b = 0 THEN '~' ELSE (starts)[1] END, CASE WHEN b = 0 THEN 0 ELSE (ids)[1] END, n
    FROM (
      SELECT kind, value, b, count(*) AS n,
        array_agg(last_updated ORDER BY last_updated DESC, listing_id DESC) AS starts,
        array_agg(listing_id ORDER BY last_updated DESC, listing_id DESC) AS ids
      FROM (
        SELECT kind, value, last_updated, listing_id,
          (row_number() OVER (PARTITION BY kind, value ORDER BY last_updated DESC, listing_id DESC) - 1) / ${BLOCK_SIZE} AS b
        FROM listing_keys WHERE kind IN (${ASSET_COMBINATION_KINDS})
      ) numbered
      GROUP BY kind, value, b
    ) blocks;
  ANALYZE listing_keys, listing_counts, listing_key_blocks;`;
