/** SQL the Postgres store and its search share (the SQLite twin is sqlite/queries.ts). */
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

/** pg returns bigint ids as strings. */
export type RawListingRow = Omit<ListingRow, 'id'> & { id: string };

/** A listing's row as pg reads it, made a ListingRow in place (its BIGINT id, a string, made a number): no copy of its columns. */
export function listingRow(row: RawListingRow): ListingRow {
  const listing = row as unknown as ListingRow;
  listing.id = Number(row.id);
  return listing;
}

/** The listings rows of `ids` (any order) with their quality window's sums as of `now`, as the SQLite store reads them. */
export async function rowsById(db: Db, ids: number[], now: Date): Promise<Map<number, ListingRow>> {
  const out = new Map<number, ListingRow>();
  if (ids.length === 0) return out;
  const { values, p } = parameters();
  const rows = await db.query<RawListingRow>(`SELECT ${listingColumns(now, p)} WHERE l.id = ANY(${p(ids)}::bigint[])`, values);
  for (const row of rows.rows) out.set(Number(row.id), listingRow(row));
  return out;
}

/** A page statement (`text` with its `values`): pageListingsStatement's, run by readPage; `generic`: prepared and run with its generic plan. */
export interface PageStatement {
  text: string;
  values: unknown[];
  generic?: boolean;
}

/**
 * A page's listings in page order, read in the same statement as `pageSql` (which selects `id` and `last_updated`)
 * so a list page is one round trip, not two.
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
 * `text` run with its generic plan: prepared once per connection, because planning these statements costs more than
 * running them (docs/BENCHMARKS.md "Discovery on Postgres beside SQLite"). Left to choose (plan_cache_mode auto),
 * Postgres keeps custom plans, since a generic plan guesses 10% of the rows under a parameter LIMIT or OFFSET; so the
 * generic plan is forced for this statement alone (SET pipelined around it, no round trip of its own). Use it only for
 * statements whose shape fixes their plan (e.g. list-index.ts listByUrl).
 * Parallel workers are off too: a generic plan guessing a third of the listings failing (heldFiltersSql) starts workers
 * to read a few thousand rows, which costs more than the read.
 * Past PREPARED_TEXTS texts (a connection keeps every statement it prepared) a statement is sent as text.
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
  // Outside a transaction (a search) the settings are the session's. Each way they are one simple-query message:
  // every message is answered on its own, and each answer wakes the reader's thread.
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
 * `db` sending each statement with parameters as a prepared statement, parsed once per connection (plan_cache_mode
 * stays auto). Listing writes run on it: parsing and planning a write's statements every time is most of a write's
 * cost on a small catalog. Its names are its own, so queryGeneric's PREPARED_TEXTS are all left for the reads.
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
 * A page statement's listings; an id without its listing row is left out. Only statements whose shape fixes their plan
 * are marked `generic` (price-index.ts pricedPageStatement): the others are planned with their values, because with
 * another key filter's EXISTS a generic plan can be orders of magnitude slower than the custom one.
 */
export async function readPage(db: Db, statement: PageStatement): Promise<ListingRow[]> {
  const { text, values } = statement;
  return pageRows(
    await (statement.generic ? queryGeneric<RawListingRow>(db, 'page', text, values) : db.query<RawListingRow>(text, values)),
  );
}

const pageRows = (result: pg.QueryResult<RawListingRow>): ListingRow[] => result.rows.map(listingRow);

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

export const visibleAfter = (p: (value: unknown) => string, visibleSince: string | undefined) =>
  visibleSince === undefined ? '' : ` AND k.last_updated >= ${p(visibleSince)}`;

/**
 * The listings failing since before `cut`, read from their partial index in a form whose generic plan stays on that
 * index whatever share of listings fails. `whole`: every failing listing read, the comparison a filter (`IS TRUE` is no
 * index condition), for a set to hash (heldFiltersSql). Else the comparison is the index range, for an EXISTS. The
 * `IS NOT NULL` is for the planner: with `liveness_failing_since < $n` alone a generic plan guesses a third of all
 * listings and scans the table (docs/BENCHMARKS.md "Filter combinations"). `indexed`: only those still in the list
 * index's range (no stash: `listings_indexed_failing`), as a read of list entries needs; a lifecycle pass moved the
 * others' entries out of every list read's range (../lifecycle.ts HIDDEN_LIST_TIME). Else every one
 * (`listings_liveness_failing`), as a read of listing rows needs.
 */
export const failingListingsSql = (cut: string, column: string, whole: boolean, indexed: boolean) =>
  `SELECT ${column} FROM listings WHERE liveness_failing_since IS NOT NULL${indexed ? ' AND search_stash IS NULL' : ''} AND ${
    whole ? `(liveness_failing_since < ${cut}) IS TRUE` : `liveness_failing_since < ${cut}`
  }`;

/**
 * The conditions (each after ` AND`) that listing `listing` (an SQL expression) holds each of `keys` (an entry of each
 * in `listing_keys`), meets `accepts` (an SQL condition on its accepted entries or prices, when given) and is not
 * hidden by failing its liveness checks since before `failing`. `fence` keeps each key's lookup one per row (OFFSET 0),
 * where the planner may otherwise hash every entry of the key (a semi-join). The failing set is read whole from its
 * partial index and hashed (failingListingsSql `whole`): with the comparison alone, or as an index condition, a generic
 * plan guesses a third of the listings, too many to hash, and checks each row against the whole list or scans every
 * listing (docs/BENCHMARKS.md "Filter combinations"). `indexed` (failingListingsSql's): a read whose rows are list
 * entries, each already at its listing's time, leaves out only the failing listings no pass has hidden yet.
 */
export function heldFiltersSql(
  p: (value: unknown) => string,
  listing: string,
  keys: ListingKey[],
  {
    accepts,
    failing,
    fence = false,
    indexed = true,
  }: { accepts?: string | undefined; failing: string | undefined; fence?: boolean; indexed?: boolean },
): string {
  const held = keys.map((key) => ` AND ${listKeyHeld(p, key, listing, { fence: fence ? ' OFFSET 0' : '' })}`);
  return (
    held.join('') +
    (accepts === undefined ? '' : ` AND ${accepts}`) +
    (failing === undefined ? '' : ` AND ${listing} NOT IN (${failingListingsSql(p(failing), 'id', true, indexed)})`)
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
 * `lower(resource) LIKE`, because it is several times cheaper per row than `resource ILIKE` (docs/BENCHMARKS.md "Filter
 * combinations").
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
  // An array: one index scan over its values in order. `IN (subquery)` is a join, whose plan may hash every entry of a
  // list key the statistics underestimate (liveness.ts hiddenByFailuresCount).
  inSubquery: (column, subquery) => `${column} = ANY(ARRAY(${subquery}))`,
  rows: async <T>(text: string, params: readonly unknown[]) => (await db.query(text, [...params])).rows as T[],
  changes: async (text, params) => (await db.query(text, [...params])).rowCount ?? 0,
});
