/**
 * GET /discovery/search on SQLite: the statements the search engine runs (../search-engine.ts
 * TextIndex), in one read transaction. The term rows (`search_terms`, one per revision and term,
 * keyed (term, rev), ordered by (term, milli desc, listing_id)) carry their revision's validity
 * [from_seq, to_seq), so a page reads the catalog as of its snapshot without a join per row.
 */
import type { StatementSync } from 'node:sqlite';
import { inReadTransaction } from '../../db/sqlite.ts';
import type { ListingRow } from '../listing.ts';
import {
  checkQuery,
  runSync,
  searchPage,
  type KeptCounts,
  type RankedRead,
  type SearchRequest,
  type SearchScale,
  type TextIndex,
} from '../search-engine.ts';
import type { CursorState, RankedRow, WindowEdge } from '../search.ts';
import type { SearchPage } from '../types.ts';
import { filterSql, rankSql } from './queries.ts';
import { PRESENCE } from '../query-terms.ts';
import { URL_KEY_MILLI, urlKey } from '../terms.ts';
import { URL_TERM_RANK } from '../url-search.ts';
import { urlMatchesCapped } from './url-probe.ts';

/** What a search reads through: the SQLite store (store.ts). */
export interface SearchSource {
  statement(sql: string): StatementSync;
  readonly db: import('node:sqlite').DatabaseSync;
  /** The search's bounds where the store sets them (tests). */
  readonly searchScale?: SearchScale | undefined;
  readonly keptCounts?: KeptCounts | undefined;
  assertUsable(forWrite: boolean): void;
  cursorSecret(): Buffer;
  currentSeq(): number;
  rowsById(ids: number[], now: Date): Map<number, ListingRow>;
}

/** The term rows of the snapshot `?` (twice). */
const SNAPSHOT = 't.from_seq <= ? AND (t.to_seq IS NULL OR t.to_seq > ?)';
const list = (n: number) => Array.from({ length: n }, () => '?').join(', ');
const ranked = (rows: unknown[]): RankedRow[] =>
  (rows as Array<{ listing_id: number; rank: number; keys?: string }>).map((r) => ({
    listing_id: Number(r.listing_id),
    rank: Number(r.rank),
    ...(r.keys === undefined ? {} : { keys: r.keys.split(' ') }),
  }));
/** The searched keys and their weights as a table `k(term, w)` (`?` parameters: term, weight per key). */
const weightsSql = (n: number) => `k(term, w) AS (VALUES ${Array.from({ length: n }, () => '(?, ?)').join(', ')})`;
/** After a cursor, on ranked rows (rank, listing_id) of `from` (a table's alias and a dot, or none): a condition, TRUE without one. */
const afterCursor = (after: CursorState | undefined, from = '') =>
  after
    ? { sql: `(${from}rank < ? OR (${from}rank = ? AND ${from}listing_id > ?))`, params: [after.r, after.r, after.i] }
    : { sql: 'TRUE', params: [] };

/**
 * The filters on rows of listing `listing` (an SQL expression): the listing joined when a filter needs it, after the
 * rows (CROSS JOIN keeps that order: SQLite's planner would otherwise read every listing of a `type` from its index).
 * The filters' few candidates (RankedRead candidates) are checked by id first (an index of them built once), without
 * the listing.
 */
function rowFilter(read: RankedRead, listing = 't.listing_id'): { join: string; where: string; params: Array<string | number> } {
  const { candidates } = read;
  const { conditions, params } = filterSql(read.filters, read.asOf);
  const byId = candidates ? [`${listing} IN (SELECT value FROM json_each(?))`] : [];
  return {
    join: conditions === 'TRUE' ? '' : `CROSS JOIN listings l ON l.id = ${listing}`,
    where: [...byId, ...(conditions === 'TRUE' ? [] : [conditions])].join(' AND ') || 'TRUE',
    params: [...(candidates ? [JSON.stringify(candidates)] : []), ...params],
  };
}

export function textIndex(store: SearchSource): TextIndex {
  /** One term's rows at the snapshot after `after`, in index order, at most `limit` (`?` parameters: term, asOf twice, keyset, limit). */
  const walkSql = (after: CursorState | undefined) =>
    `SELECT t.rev, t.listing_id, t.milli, t.score FROM search_terms t WHERE t.term = ? AND ${SNAPSHOT}
     ${after ? 'AND t.milli <= ? AND NOT (t.milli = ? AND t.listing_id <= ?)' : ''} ORDER BY t.milli DESC, t.listing_id ASC LIMIT ?`;
  /** The walk's rank of a term row is weight × (PRESENCE + milli) (rankSql), so the cursor's rank gives its milli back. */
  const walkParams = (term: string, asOf: number, after: CursorState | undefined, limit: number, weight = 1) => {
    const milli = after ? after.r / weight - PRESENCE : 0;
    return [term, asOf, asOf, ...(after ? [milli, milli, after.i] : []), limit];
  };
  return {
    currentSeq: () => store.currentSeq(),
    countListings: () =>
      Number((store.statement("SELECT coalesce(max(n), 0) AS n FROM listing_counts WHERE kind = 'all'").get() as { n: number }).n),
    countTerms(terms, cap) {
      const statement = store.statement('SELECT count(*) AS n FROM (SELECT 1 FROM search_terms WHERE term = ? LIMIT ?)');
      return terms.map((term) => Number((statement.get(term, cap) as { n: number }).n));
    },
    countTermsAt(terms, asOf, cap) {
      const statement = store.statement(
        `SELECT count(*) AS n FROM (SELECT 1 FROM search_terms t WHERE t.term = ? AND ${SNAPSHOT} LIMIT ?)`,
      );
      return terms.map((term) => Number((statement.get(term, asOf, asOf, cap) as { n: number }).n));
    },
    termWalk(read) {
      const { term, weight, asOf, after, want, scan } = read;
      const filter = rowFilter(read);
      const rows = ranked(
        store
          .statement(
            `SELECT t.listing_id, ? * (${PRESENCE} + t.milli) AS rank, ? AS keys FROM (${walkSql(after)}) t ${filter.join}
             WHERE ${filter.where} ORDER BY t.milli DESC, t.listing_id ASC LIMIT ?`,
          )
          .all(weight, term, ...walkParams(term, asOf, after, scan ?? want, weight), ...filter.params, want),
      );
      if (scan === undefined || rows.length >= want) return { rows };
      // Fewer than `want` passed: find whether the scan stopped at `scan` rows (then the page is partial) or at the term's end.
      const read_ = store
        .statement(`SELECT count(*) AS n, min(milli) AS milli FROM (${walkSql(after)})`)
        .get(...walkParams(term, asOf, after, scan, weight)) as {
        n: number;
        milli: number | null;
      };
      if (Number(read_.n) < scan) return { rows };
      const last = store
        .statement(`SELECT listing_id FROM (${walkSql(after)}) WHERE milli = ? ORDER BY listing_id DESC LIMIT 1`)
        .get(...walkParams(term, asOf, after, scan, weight), read_.milli) as { listing_id: number };
      return { rows, edge: { listing_id: Number(last.listing_id), rank: weight * (PRESENCE + Number(read_.milli)) } };
    },
    rankTerms(read) {
      const { terms, weights, asOf, after, want, window, byCandidates } = read;
      // The filters are checked once per revision, on its group (`g`), not on each of its keys' rows.
      // Read from the candidates' revisions (`byCandidates`), every group is a candidate's: its id is not checked again.
      const filter = rowFilter(byCandidates ? { ...read, candidates: undefined } : read, 'g.listing_id');
      const weighted = terms.flatMap((term, i) => [term, weights[i]!]);
      if (window === undefined && !byCandidates) {
        // The groups are checked in rank order until the page is full, not each before the sort: a filter most listings
        // pass costs a page's probes, not one per group (docs/BENCHMARKS.md "Filter combinations"). The outer ORDER BY
        // fixes the page's order whatever the plan; SQLite satisfies it with the subquery's ORDER BY (an aggregate
        // subquery keeps its own, and CROSS JOIN reads it first), so no sort stands between the filters and the LIMIT.
        const cursor = afterCursor(after, 'g.');
        return ranked(
          store
            .statement(
              `WITH ${weightsSql(terms.length)}
               SELECT g.listing_id, g.rank, g.keys FROM (
                 SELECT t.listing_id AS listing_id, ${rankSql('t', 'k')} AS rank, group_concat(t.term, ' ') AS keys
                 FROM search_terms t JOIN k ON k.term = t.term WHERE t.term IN (${list(terms.length)}) AND ${SNAPSHOT}
                 GROUP BY t.rev ORDER BY rank DESC, listing_id ASC
               ) g ${filter.join}
               WHERE ${cursor.sql} AND ${filter.where} ORDER BY g.rank DESC, g.listing_id ASC LIMIT ?`,
            )
            .all(...weighted, ...terms, asOf, asOf, ...cursor.params, ...filter.params, want),
        );
      }
      const keyset = afterCursor(after);
      // The window: the revisions among each term's first `window` rows, each once (a listing is in several terms' windows:
      // a word's exact and stem keys hold the same listings), or the candidates' revisions at the snapshot; ranked exactly
      // over every term by a primary-key read per revision and term. CROSS JOIN keeps that order: SQLite's planner would
      // otherwise read each term's every row.
      const revisions = byCandidates
        ? `SELECT r.rev FROM json_each(?) j CROSS JOIN search_revisions r ON r.listing_id = j.value
           WHERE r.from_seq <= ? AND (r.to_seq IS NULL OR r.to_seq > ?)`
        : terms.map(() => `SELECT rev FROM (${walkSql(undefined)})`).join(' UNION ');
      return ranked(
        store
          .statement(
            `WITH ${weightsSql(terms.length)}, c AS MATERIALIZED (${revisions}),
             matches AS MATERIALIZED (
               SELECT g.* FROM (
                 SELECT t.listing_id AS listing_id, ${rankSql('t', 'k')} AS rank, group_concat(t.term, ' ') AS keys
                 FROM c CROSS JOIN k CROSS JOIN search_terms t ON t.term = k.term AND t.rev = c.rev GROUP BY t.rev
               ) g ${filter.join} WHERE ${filter.where}
             )
             SELECT listing_id, rank, keys FROM matches WHERE ${keyset.sql} ORDER BY rank DESC, listing_id ASC LIMIT ?`,
          )
          .all(
            ...weighted,
            ...(byCandidates
              ? [JSON.stringify(read.candidates), asOf, asOf]
              : terms.flatMap((term) => walkParams(term, asOf, undefined, window!))),
            ...filter.params,
            ...keyset.params,
            want,
          ),
      );
    },
    windowEdges(terms, asOf, window): WindowEdge[] {
      const edge = store.statement(`SELECT count(*) AS n, min(milli) AS lowest FROM (${walkSql(undefined)})`);
      return terms.map((term) => {
        const { n, lowest } = edge.get(...walkParams(term, asOf, undefined, window)) as { n: number; lowest: number | null };
        return { rows: Number(n), lowest: Number(lowest ?? 0) };
      });
    },
    urlRows(read) {
      const { terms, asOf, after, want } = read;
      const filter = rowFilter(read);
      const keys = terms.map(urlKey);
      // One term: every match ranks the same and its rows the same milli, so its key range in id order is the page's order.
      if (keys.length === 1)
        return ranked(
          store
            .statement(
              `SELECT t.listing_id AS listing_id, ${URL_TERM_RANK} AS rank FROM search_terms t ${filter.join}
               WHERE t.term = ? AND t.milli = ${URL_KEY_MILLI} AND ${SNAPSHOT} AND ${filter.where}${after ? ' AND t.listing_id > ?' : ''}
               ORDER BY t.listing_id ASC LIMIT ?`,
            )
            .all(keys[0]!, asOf, asOf, ...filter.params, ...(after ? [after.i] : []), want),
        );
      const keyset = afterCursor(after);
      return ranked(
        store
          .statement(
            `WITH matches AS MATERIALIZED (
               SELECT t.listing_id AS listing_id, count(*) * ${URL_TERM_RANK} AS rank FROM search_terms t ${filter.join}
               WHERE t.term IN (${list(keys.length)}) AND ${SNAPSHOT} AND ${filter.where} GROUP BY t.rev
             )
             SELECT listing_id, rank FROM matches WHERE ${keyset.sql} ORDER BY rank DESC, listing_id ASC LIMIT ?`,
          )
          .all(...keys, asOf, asOf, ...filter.params, ...keyset.params, want),
      );
    },
    listings: (ids, now) => store.rowsById(ids, now),
    urlListings(url, cap) {
      const ids = urlMatchesCapped(store.db, url, cap + 1);
      return ids.length > cap ? undefined : ids;
    },
    // One row per range, its ids joined only when they fit: a commoner range costs its entries, not a row object each.
    pricedListings(ranges, cap) {
      const statement = store.statement(
        `SELECT count(*) AS n, CASE WHEN count(*) <= ? THEN group_concat(listing_id) END AS ids
         FROM (SELECT listing_id FROM listing_prices WHERE asset = ? AND price <= ? LIMIT ?)`,
      );
      const ids = new Set<number>();
      let left = cap;
      for (const { key, max } of ranges) {
        const range = statement.get(left, key, max, left + 1) as { n: number; ids: string | null };
        if (range.n > left) return undefined;
        left -= range.n;
        for (const id of range.ids?.split(',') ?? []) ids.add(Number(id));
      }
      return [...ids];
    },
  };
}

/** A search page on SQLite (the engine on this store's statements, in one read transaction); the store supplies its secret, bounds and kept counts. */
export function searchCatalog(store: SearchSource, request: Omit<SearchRequest, 'secret' | 'scale' | 'keptCounts'>): SearchPage {
  checkQuery(request.query);
  store.assertUsable(false);
  const secret = store.cursorSecret();
  return inReadTransaction(store.db, () =>
    runSync(textIndex(store), searchPage({ ...request, secret, scale: store.searchScale, keptCounts: store.keptCounts })),
  );
}
