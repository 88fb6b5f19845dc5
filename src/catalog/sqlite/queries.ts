/**
 * The SQL of the discovery filters on SQLite, shared by the store's list query (store.ts) and the
 * search (search.ts); the Postgres store has the same conditions in postgres/queries.ts. Also the
 * rank's expression (rankSql), the one every search path uses.
 */
import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { cachedStatement } from '../../db/sqlite.ts';
import type { Sql } from '../statements.ts';
import { PRESENCE } from '../query-terms.ts';
import { acceptedEntryCondition } from '../price.ts';
import { COLUMN_FILTERS, listKeyHeld, needsAcceptedEntry } from '../listing.ts';
import type { DiscoveryFilters } from '../types.ts';
import { asciiLower } from '../url-filter.ts';

/**
 * The condition that listing `listingId` has one accepted entry meeting the filters (../price.ts acceptedEntryCondition),
 * with its parameters. Shared by filterSql (against listings `l`) and the list index (against listing_keys `k`).
 */
export function acceptedEntrySql(
  filters: DiscoveryFilters,
  listingId: string,
  asOfSeq?: number,
): { condition: string; params: Array<string | number> } {
  const params: Array<string | number> = [];
  return { condition: acceptedEntryCondition(filters, listingId, { p: bindTo(params), price: '+pr.price', fence: '' }, asOfSeq), params };
}

/** A dialect's `p` for SQLite: each value appended to `params`, in the order of the text, its placeholder `?`. */
export const bindTo =
  (params: Array<string | number>) =>
  (value: unknown): string => {
    params.push(value as string | number);
    return '?';
  };

/** `url` as an FTS5 phrase: the trigram table matches it as a substring, ignoring case (its tokenizer's default). */
export const urlPhrase = (url: string) => `"${url.replaceAll('"', '""')}"`;

/**
 * The condition that listing `l`'s resource URL holds `url`, ignoring ASCII case, checked on its row (a search path or a
 * walk reads the row anyway; asking the trigram index for every match of a common substring would read them all, so
 * url-probe.ts asks it for at most a cap of them). SQLite's lower() folds ASCII only, as asciiLower does.
 */
export function urlMatchSql(url: string): { condition: string; params: string[] } {
  // No resource URL holds a control character (ingest refuses them): a U+0000 matches nothing, as on Postgres.
  if (url.includes('\u0000')) return { condition: 'FALSE', params: [] };
  return { condition: 'instr(lower(l.resource), ?) > 0', params: [asciiLower(url)] };
}

/**
 * SQL conditions (joined with AND, 'TRUE' when none) and parameters for the filters,
 * against listings aliased `l`, optionally as of a sequence number (a listing's existence then is
 * implied by a search revision valid then, so it is not tested here).
 */
export function filterSql(filters: DiscoveryFilters, asOfSeq?: number): { conditions: string; params: Array<string | number> } {
  const clauses: string[] = [];
  const params: Array<string | number> = [];
  for (const [name, column] of COLUMN_FILTERS) {
    const value = filters[name];
    if (value === undefined) continue;
    clauses.push(`${column} = ?`);
    params.push(value);
  }
  if (filters.url !== undefined) {
    const url = urlMatchSql(filters.url);
    clauses.push(url.condition);
    params.push(...url.params);
  }
  if (needsAcceptedEntry(filters)) {
    const accepted = acceptedEntrySql(filters, 'l.id', asOfSeq);
    clauses.push(accepted.condition);
    params.push(...accepted.params);
  }
  if (filters.extensions !== undefined)
    clauses.push(listKeyHeld(bindTo(params), { kind: 'extensions', value: filters.extensions }, 'l.id', { asOfSeq }));
  return { conditions: clauses.length > 0 ? clauses.join(' AND ') : 'TRUE', params };
}

/**
 * The rank of a revision from its term rows `t` grouped by revision, each joined to its key's weight `k.w`
 * (docs/CATALOG.md "Ranking", query-terms.ts): Σ weight × (PRESENCE + milli), integers, so exact. The one expression
 * of it on SQLite (postgres/search.ts has Postgres's).
 */
export const rankSql = (t: string, k: string) => `sum(${k}.w * (${PRESENCE} + ${t}.milli))`;

/** A listing row with its quality window's sums (two parameters: the window's first day, twice). */
export const LISTING_COLUMNS = `l.id, l.resource, l.type, l.x402_version, l.last_updated, l.body,
  l.liveness_status, l.liveness_checked_at, l.liveness_failing_since,
  (SELECT coalesce(sum(d.value ->> 1), 0) FROM json_each(l.quality_days) d WHERE d.value ->> 0 >= ?) AS calls,
  (SELECT coalesce(sum(d.value ->> 2), 0) FROM json_each(l.quality_days) d WHERE d.value ->> 0 >= ?) AS payers`;

/** The store's Sql for the engines written once for both stores (../statements.ts): `?n` parameters, id lists as JSON. */
export const sqliteSql = (db: DatabaseSync): Sql => ({
  p: (n) => `?${n}`,
  idList: (n) => `SELECT value FROM json_each(?${n})`,
  ids: (ids) => JSON.stringify(ids.map(Number)),
  lockRows: '',
  inSubquery: (column, subquery) => `${column} IN (${subquery})`,
  rows: <T>(text: string, params: readonly unknown[]) => cachedStatement(db, text).all(...(params as SQLInputValue[])) as T[],
  changes: (text, params) => Number(cachedStatement(db, text).run(...(params as SQLInputValue[])).changes),
});
