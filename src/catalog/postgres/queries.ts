/**
 * SQL pieces the Postgres store (store.ts) and its search (search.ts) share: parameter lists, the
 * discovery filters' conditions (as the SQLite store's sqlite/queries.ts) and reading listings by
 * id.
 */
import type pg from 'pg';
import { acceptedEntryCondition } from '../price.ts';
import { COLUMN_FILTERS, listKeyHeld, needsAcceptedEntry, type ListingKey, type ListingRow } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import type { Sql } from '../statements.ts';
import { asciiLower } from '../url-filter.ts';
import { listingColumns } from './quality.ts';

/**
 * The catalog's write sequence, row `seq` of `catalog_meta`. A write takes the next number (NEXT_SEQ_SQL) and holds
 * the row's lock until it commits, so writes commit in sequence order on every instance (store.ts "Snapshots").
 */
export const NEXT_SEQ_SQL = "UPDATE catalog_meta SET value = (value::bigint + 1)::text WHERE key = 'seq' RETURNING value AS seq";
export const CURRENT_SEQ_SQL = "SELECT value::bigint AS seq FROM catalog_meta WHERE key = 'seq'";
export const nextSeq = async (db: Db): Promise<number> => Number((await db.query<{ seq: string }>(NEXT_SEQ_SQL)).rows[0]!.seq);

export type Db = Pick<pg.PoolClient, 'query'>;

/** A `$n` parameter list built with the SQL: `p(value)` appends the value and returns its name. */
export function parameters(): { values: unknown[]; p: (value: unknown) => string } {
  const values: unknown[] = [];
  return { values, p: (value) => `$${values.push(value)}` };
}

/** A listings row as pg returns it (bigint ids come back as strings). */
export type RawListingRow = Omit<ListingRow, 'id'> & { id: string };

/** The listings rows of `ids` (any order) with their quality window's sums as of `now`, as the SQLite store reads them. */
export async function rowsById(db: Db, ids: number[], now: Date): Promise<Map<number, ListingRow>> {
  const out = new Map<number, ListingRow>();
  if (ids.length === 0) return out;
  const { values, p } = parameters();
  const rows = await db.query<RawListingRow>(`SELECT ${listingColumns(now, p)} WHERE l.id = ANY(${p(ids)}::bigint[])`, values);
  for (const row of rows.rows) out.set(Number(row.id), { ...row, id: Number(row.id) });
  return out;
}

/** A page statement (`text` with its `values`): pageListingsStatement's, run by readPage; `generic`: prepared and run with its generic plan. */
export interface PageStatement {
  text: string;
  values: unknown[];
  generic?: boolean;
}

/**
 * The statement of a page's listings in page order (lastUpdated desc, id desc), read in the statement that selects
 * the page (`pageSql`, selecting `id` and `last_updated` with its parameters in `params`), so a list page is one round
 * trip rather than two (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite").
 */
export function pageListingsStatement(pageSql: string, params: ReturnType<typeof parameters>, now: Date): PageStatement {
  const text = `WITH page AS MATERIALIZED (${pageSql})
     SELECT ${listingColumns(now, params.p)} JOIN page ON page.id = l.id
     ORDER BY page.last_updated DESC, page.id DESC`;
  return { text, values: params.values };
}

/** How many statement texts get a prepared statement's name (queryGeneric; preparedDb has as many of its own); the rest are sent as text. */
export const PREPARED_TEXTS = 256;
const preparedNames = new Map<string, string>();
const preparedWriteNames = new Map<string, string>();

/** What queryGeneric sets around its statement (SET LOCAL) and then sets back. */
const GENERIC_SETTINGS = [
  ['plan_cache_mode', 'force_generic_plan'],
  ['max_parallel_workers_per_gather', '0'],
] as const;

/**
 * `text` with `values`, run with its generic plan: prepared on its connection (pg's `{ name, text, values }`, a name per
 * text, `svc_<kind>_<n>`) and planned once per connection, where a statement sent as text is planned every time (a priced
 * page's statement 0.35–0.57 ms on the 100k bench database: docs/BENCHMARKS.md "Discovery on Postgres beside SQLite").
 * Postgres left to choose (plan_cache_mode auto) need not switch: a generic plan counts on 10% of the rows under a LIMIT
 * or OFFSET that is a parameter. So the generic plan is forced for this statement alone (SET LOCAL around it, in the read
 * transaction, pipelined with it: no round trip of its own), which suits only statements whose shape fixes their plan.
 * A `url` page's statements are such (list-index.ts listByUrl): planning each took about 1.4 ms at 100k listings, more
 * than it ran. No generic plan starts parallel workers (`max_parallel_workers_per_gather` 0 beside the plan mode): where it counts on a
 * third of the listings failing (heldFiltersSql), it started two to read a few, for 3.5 ms of a priced page's 4.2 at 1M
 * listings (p50 5.5 ms with some listings failing, 1.05 serial); each reads a few thousand rows.
 * Past PREPARED_TEXTS texts (each connection keeps every statement it prepared) a statement is sent as text.
 */
export function queryGeneric<R extends pg.QueryResultRow>(
  db: Db,
  kind: 'page' | 'counts' | 'url' | 'search',
  text: string,
  values: unknown[],
  scope: 'transaction' | 'session' = 'transaction',
): Promise<pg.QueryResult<R>> {
  const name = preparedName(preparedNames, kind, text);
  if (name === undefined) return db.query<R>(text, values);
  // Outside a transaction (a search: postgres/search.ts) the settings are the session's, set back as well.
  // Each way the settings are one message (statements without parameters, sent together as one simple query): the server
  // answers each message on its own, and each answer wakes the reader's thread again.
  const set = scope === 'transaction' ? 'SET LOCAL' : 'SET';
  const planned = db.query(GENERIC_SETTINGS.map(([setting, value]) => `${set} ${setting} = ${value}`).join('; '));
  const read = db.query<R>({ name, text, values });
  const back = db.query(GENERIC_SETTINGS.map(([setting]) => `${set} ${setting} TO DEFAULT`).join('; '));
  return Promise.all([read, planned, back]).then(([rows]) => rows);
}

/** `text`'s prepared statement's name in `names` (`svc_<kind>_<n>`, one per text), or none past PREPARED_TEXTS texts. */
function preparedName(names: Map<string, string>, kind: string, text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < PREPARED_TEXTS) {
    name = `svc_${kind}_${names.size}`;
    names.set(text, name);
  }
  return name;
}

/**
 * `db` sending each statement with parameters as a prepared statement (a name per text, as queryGeneric): parsed once
 * per connection, not per call; Postgres plans it as it plans any prepared statement (plan_cache_mode auto: a generic
 * plan only where it costs no more than the custom ones did). Every write of a listing runs on it (PostgresCatalogStore's
 * identity lock): sent as text, a write's statements were parsed and planned on every write, most of its cost on a small
 * catalog (docs/CATALOG.md "Postgres" has a write's cost). The same statements, values and answers. Its names are its
 * own, so queryGeneric's PREPARED_TEXTS are all left for the reads.
 */
export function preparedDb(db: Db): Db {
  return {
    query: ((text: string | pg.QueryConfig, values?: unknown[]) => {
      const name = typeof text !== 'string' || values === undefined ? undefined : preparedName(preparedWriteNames, 'write', text);
      return name === undefined ? db.query(text as string, values) : db.query({ name, text: text as string, values });
    }) as Db['query'],
  };
}

/**
 * A page statement's listings (pageListingsStatement); as rowsById, an id without its listing row is left out. A
 * `generic` statement runs with its generic plan (queryGeneric): only those whose shape fixes their plan are marked
 * (postgres/price-index.ts pricedPageStatement). The others are planned with their values: with another key filter's
 * EXISTS the generic plan of a priced page took 217 ms where its custom plan took 0.3.
 */
export async function readPage(db: Db, statement: PageStatement): Promise<ListingRow[]> {
  const { text, values } = statement;
  return pageRows(
    await (statement.generic ? queryGeneric<RawListingRow>(db, 'page', text, values) : db.query<RawListingRow>(text, values)),
  );
}

const pageRows = (result: pg.QueryResult<RawListingRow>): ListingRow[] => result.rows.map((row) => ({ ...row, id: Number(row.id) }));

/**
 * The condition that listing `listing` (an SQL expression) has one accepted entry meeting the filters (../price.ts
 * acceptedEntryCondition). `fence`: each lookup one per row (OFFSET 0, heldFiltersSql).
 */
export const acceptedEntryExists = (
  filters: DiscoveryFilters,
  p: (value: unknown) => string,
  listing: string,
  { asOfSeq, fence = false }: { asOfSeq?: number; fence?: boolean } = {},
): string => acceptedEntryCondition(filters, listing, { p, price: 'pr.price', fence: fence ? ' OFFSET 0' : '' }, asOfSeq);

/** The condition (after ` AND`) that list entry `k` is not hidden by age. */
export const visibleAfter = (p: (value: unknown) => string, visibleSince: string | undefined) =>
  visibleSince === undefined ? '' : ` AND k.last_updated >= ${p(visibleSince)}`;

/**
 * The listings failing their liveness checks since before `cut` (an SQL expression of text), `column` of each, read from
 * their partial index (`listings_liveness_failing`) in a form whose generic plan (queryGeneric, or a statement of a
 * PL/pgSQL function run under it) stays there whatever share of the listings fails. `whole`: every failing listing read
 * and the comparison a filter (`IS TRUE` is no index condition), for a set that is hashed (heldFiltersSql). Else the
 * comparison is the index's range, to find whether one is (an EXISTS): said with `IS NOT NULL`, a generic plan costs
 * the range at its share of the failing listings, where it costed `liveness_failing_since < $n` alone at a third of
 * all listings and read the table from its start, every listing when none is hidden (docs/BENCHMARKS.md "Filter
 * combinations").
 */
export const failingListingsSql = (cut: string, column: string, whole: boolean) =>
  `SELECT ${column} FROM listings WHERE liveness_failing_since IS NOT NULL AND ${
    whole ? `(liveness_failing_since < ${cut}) IS TRUE` : `liveness_failing_since < ${cut}`
  }`;

/**
 * The conditions (each after ` AND`) that listing `listing` (an SQL expression) holds each of `keys` (an entry of each
 * in `listing_keys`), meets `accepts` (an SQL condition on its accepted entries or prices, when given) and is not
 * hidden by failing its liveness checks since before `failing`. `fence` keeps each key's lookup one per row (OFFSET 0),
 * where the planner may otherwise hash every entry of the key (a semi-join). The failing listings are those with a
 * failing time before `failing`, and, said again, with one at all: a generic plan (queryGeneric) counts on a third of
 * the listings under a comparison with a parameter, too many to hash, and then checked each row against the whole list
 * (190 ms at 1M listings, none failing); with its share of listings that have a failing time it hashes the few there are.
 * The comparison is a filter on the failing listings' partial index (`IS TRUE` is no index condition), read whole (the
 * set hashed is most of it: those failing within the grace period are the rest): as an index condition, a generic plan
 * costed the index's range at a third of the listings too, and read every listing instead (docs/BENCHMARKS.md "Filter
 * combinations": 40–60 ms a `url` page at 100k listings, a few hundred of them failing).
 */
export function heldFiltersSql(
  p: (value: unknown) => string,
  listing: string,
  keys: ListingKey[],
  accepts: string | undefined,
  failing: string | undefined,
  fence = false,
): string {
  const held = keys.map((key) => ` AND ${listKeyHeld(p, key, listing, { fence: fence ? ' OFFSET 0' : '' })}`);
  return (
    held.join('') +
    (accepts === undefined ? '' : ` AND ${accepts}`) +
    (failing === undefined ? '' : ` AND ${listing} NOT IN (${failingListingsSql(p(failing), 'id', true)})`)
  );
}

/**
 * `url` as a LIKE pattern matching it as a substring of a lowered resource URL: lowered as both stores lower an
 * ASCII URL, `\`, `%` and `_` taken literally.
 */
export const urlPattern = (url: string) => `%${asciiLower(url).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The condition that listing `l`'s resource URL holds `url`, ignoring ASCII case, checked on each row a search or a
 * `resource` or `toolName` page reads (a `url` page alone reads the suffixes' index: list-index.ts listByUrl):
 * `lower(resource) LIKE`, several times faster per row than `resource ILIKE` (measured at 100k listings:
 * docs/BENCHMARKS.md "Filter combinations").
 */
export const urlCondition = (url: string, p: (value: unknown) => string) => `lower(l.resource) LIKE ${p(urlPattern(url))}`;

/**
 * SQL conditions for the filters against listings aliased `l` (sqlite/queries.ts filterSql), optionally as
 * of a sequence number; `p` names each parameter. `listing`: the listing's id, where the conditions that read only
 * list entries name it (filters that compare none of its columns then need no listing row).
 */
export function filterConditions(
  filters: DiscoveryFilters,
  p: (value: unknown) => string,
  asOfSeq?: number,
  perRow = false,
  listing = 'l.id',
): string {
  const clauses: string[] = [];
  // perRow: an EXISTS checked per row of a walk, not turned into a hashed scan of every entry matching the filter
  // (in a select list the planner builds the hash from all of them, to check a few thousand rows).
  const fence = perRow ? ' OFFSET 0' : '';
  for (const [name, column] of COLUMN_FILTERS) {
    const value = filters[name];
    if (value !== undefined) clauses.push(`${column} = ${p(value)}`);
  }
  if (filters.url !== undefined) clauses.push(urlCondition(filters.url, p));
  if (needsAcceptedEntry(filters)) clauses.push(acceptedEntryExists(filters, p, listing, { asOfSeq, fence: perRow }));
  if (filters.extensions !== undefined)
    clauses.push(listKeyHeld(p, { kind: 'extensions', value: filters.extensions }, listing, { asOfSeq, fence }));
  return clauses.length > 0 ? clauses.join(' AND ') : 'TRUE';
}

/** The store's Sql for the engines written once for both stores (../statements.ts), over a pool or a transaction's client. */
export const postgresSql = (db: Db): Sql => ({
  p: (n) => `$${n}`,
  idList: (n) => `SELECT unnest($${n}::bigint[])`,
  ids: (ids) => ids,
  lockRows: ' FOR UPDATE',
  // An array: one index scan over its values in order, a search per index page they reach. `IN (subquery)` is a join,
  // whose plan hashed every entry of a list key its statistics took for a few thousand (liveness.ts hiddenByFailuresCount).
  inSubquery: (column, subquery) => `${column} = ANY(ARRAY(${subquery}))`,
  rows: async <T>(text: string, params: readonly unknown[]) => (await db.query(text, [...params])).rows as T[],
  changes: async (text, params) => (await db.query(text, [...params])).rowCount ?? 0,
});
