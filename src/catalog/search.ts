/**
 * GET /discovery/search (SPEC §2.8, §4.5): FTS5 retrieval, a lexical rank over four weighted
 * fields, and a signed keyset cursor.
 *
 * Ranking. FTS5 finds the candidates (quoted tokens joined with OR, so any input is safe and no
 * word can veto a match). The rank of a candidate is computed from its own text only:
 *   rank = 1e6 × (distinct query terms it contains) + round(1000 × Σ_field weight × Σ_term tf/(tf+1))
 * with weights serviceName 4, tags 3, description 2, parameter text 1. Matching more terms always
 * ranks first; within that, the weighted, saturating term frequency orders. bm25 is not used
 * because its IDF and length statistics move whenever any listing is written, which would let a
 * keyset cursor skip or repeat matches; this rank cannot move for a listing whose text is fixed.
 *
 * Cursor. The first page pins the catalog's write sequence number; later pages search the
 * catalog as of that number (text revisions, accepts and extension rows valid then), so the
 * match set and every rank are frozen, and the keyset (rank desc, id asc) visits each match
 * exactly once. The cursor is `base64url(JSON{v,h,a,r,i,t}).base64url(HMAC-SHA256)` with the
 * per-catalog secret stored in the database: h binds it to the query and filters, a is the
 * pinned sequence, (r, i) the last position, t the issue time (valid for one hour).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { CatalogQueryError, type DiscoveryFilters } from './types.ts';
import { SNAPSHOT_RETENTION_MS, filterSql, inReadTransaction, toDiscoveryResource, type CatalogStore } from './store.ts';

export const FIELD_WEIGHTS = { serviceName: 4.0, tags: 3.0, description: 2.0, params: 1.0 } as const;
export const MAX_QUERY_TERMS = 16;
export const MAX_TERM_LENGTH = 64;
const MAX_CURSOR_LENGTH = 1024;
const RANK_FUNCTION = 'svc_search_rank';

/**
 * Lowercase, diacritics removed, split on anything that is not a letter or a digit. Decompose,
 * drop combining marks, recompose: so "é" becomes "e" while Hangul syllables (which decompose into
 * letters, not marks) come back whole, as FTS5's unicode61 tokenizer sees them.
 */
const ASCII_ONLY = /^[\x00-\x7f]*$/;

export function tokenize(text: string): string[] {
  // Fast path, same result: ASCII has no marks to strip and its letters and digits are [a-z0-9].
  if (ASCII_ONLY.test(text)) return text.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t !== '');
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t !== '');
}

/** Distinct query terms, in order, at most 16, each at most 64 characters. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query).map((t) => t.slice(0, MAX_TERM_LENGTH)))].slice(0, MAX_QUERY_TERMS);
}

/** The FTS5 MATCH expression: every term double-quoted (inner quotes doubled), joined with OR. */
export function compileFtsQuery(terms: string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
}

function isAsciiAlnum(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 122);
}

/** Whole-token occurrences of `term` in lowercased ASCII text, without splitting it (the hot path). */
function countAsciiToken(lower: string, term: string): number {
  let n = 0;
  for (let i = lower.indexOf(term); i !== -1; i = lower.indexOf(term, i + term.length)) {
    const end = i + term.length;
    if ((i === 0 || !isAsciiAlnum(lower.charCodeAt(i - 1))) && (end === lower.length || !isAsciiAlnum(lower.charCodeAt(end)))) n++;
  }
  return n;
}

/** Term frequencies of `terms` in `text`, tokenized exactly as `tokenize` does. */
function termFrequencies(terms: ReadonlySet<string>, text: string): Map<string, number> {
  const tf = new Map<string, number>();
  if (ASCII_ONLY.test(text)) {
    const lower = text.toLowerCase();
    for (const term of terms) {
      const n = countAsciiToken(lower, term);
      if (n > 0) tf.set(term, n);
    }
    return tf;
  }
  for (const token of tokenize(text)) if (terms.has(token)) tf.set(token, (tf.get(token) ?? 0) + 1);
  return tf;
}

/** The rank of one candidate for the terms (see the file comment). */
export function rankText(terms: ReadonlySet<string>, fields: Array<[string, number]>): number {
  const matched = new Set<string>();
  let weighted = 0;
  for (const [text, weight] of fields) {
    if (text === '') continue;
    for (const [term, n] of termFrequencies(terms, text)) {
      matched.add(term);
      weighted += (weight * n) / (n + 1);
    }
  }
  return matched.size * 1_000_000 + Math.round(weighted * 1000);
}

/** The SQL rank function reads the terms of the statement being run (single-threaded, synchronous). */
export function installRankFunction(db: DatabaseSync): { withTerms<T>(terms: string[], run: () => T): T } {
  let active: ReadonlySet<string> = new Set();
  db.function(RANK_FUNCTION, { deterministic: false, varargs: false }, (serviceName, tags, description, params) =>
    rankText(active, [
      [String(serviceName ?? ''), FIELD_WEIGHTS.serviceName],
      [String(tags ?? ''), FIELD_WEIGHTS.tags],
      [String(description ?? ''), FIELD_WEIGHTS.description],
      [String(params ?? ''), FIELD_WEIGHTS.params],
    ]),
  );
  return {
    withTerms(terms, run) {
      const previous = active;
      active = new Set(terms);
      try {
        return run();
      } finally {
        active = previous;
      }
    },
  };
}

interface CursorState {
  v: 1;
  /** hash of query + filters */
  h: string;
  /** pinned write sequence */
  a: number;
  /** rank and id of the last result served */
  r: number;
  i: number;
  /** issued at, ms since epoch */
  t: number;
}

function bindingHash(query: string, filters: DiscoveryFilters): string {
  const key = JSON.stringify([query, filters.type ?? null, filters.payTo ?? null, filters.scheme ?? null, filters.network ?? null, filters.extensions ?? null]);
  return createHash('sha256').update(key).digest('base64url').slice(0, 22);
}

const sign = (secret: Buffer, payload: string) => createHmac('sha256', secret).update(`svc-search-cursor.${payload}`).digest();

export function encodeCursor(secret: Buffer, state: CursorState): string {
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${payload}.${sign(secret, payload).toString('base64url')}`;
}

const invalidCursor = (why: string) =>
  new CatalogQueryError('svc_invalid_search_cursor', `The cursor ${why}; restart the search without a cursor.`);

export function decodeCursor(secret: Buffer, cursor: string, expectedHash: string, now: number): CursorState {
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor('is not a cursor issued by this service');
  const [payload, mac] = cursor.split('.') as [string, string];
  const expected = sign(secret, payload);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor('is not a cursor issued by this service');
  let state: CursorState;
  try {
    state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorState;
  } catch {
    throw invalidCursor('is not a cursor issued by this service');
  }
  if (state.v !== 1 || ![state.a, state.r, state.i, state.t].every(Number.isSafeInteger)) throw invalidCursor('is not a cursor issued by this service');
  if (state.h !== expectedHash) throw invalidCursor('was issued for a different query or filter combination');
  if (now - state.t > SNAPSHOT_RETENTION_MS) throw invalidCursor('has expired (cursors are valid for one hour)');
  return state;
}

export interface SearchPage {
  x402Version: number;
  resources: unknown[];
  partialResults: boolean;
  pagination: { limit: number; cursor: string | null };
}

export function searchCatalog(
  store: CatalogStore,
  ranker: ReturnType<typeof installRankFunction>,
  query: string,
  filters: DiscoveryFilters,
  page: { limit: number; cursor?: string },
  now: Date,
  x402Version: number,
): SearchPage {
  if (query.trim() === '') throw new CatalogQueryError('svc_missing_search_query', 'The search query is missing or blank; pass a non-empty `query` parameter.');
  store.assertUsable(false);
  const secret = store.cursorSecret();
  const hash = bindingHash(query, filters);
  const after = page.cursor === undefined ? undefined : decodeCursor(secret, page.cursor, hash, now.getTime());
  const terms = queryTerms(query);
  if (terms.length === 0) return { x402Version, resources: [], partialResults: false, pagination: { limit: 0, cursor: null } };

  return inReadTransaction(store.db, () => {
    const asOf = after?.a ?? store.currentSeq();
    const { conditions, params } = filterSql(filters, asOf);
    const keyset = after ? 'WHERE rank < ? OR (rank = ? AND listing_id > ?)' : '';
    const keysetParams = after ? [after.r, after.r, after.i] : [];
    // MATERIALIZED: the rank is computed once per candidate, not once per reference.
    const sql = `
      WITH matches AS MATERIALIZED (
        SELECT r.listing_id AS listing_id, ${RANK_FUNCTION}(f.service_name, f.tags, f.description, f.params) AS rank
        FROM search_fts f
        JOIN search_revisions r ON r.rev = f.rowid
        JOIN listings l ON l.id = r.listing_id
        WHERE search_fts MATCH ? AND r.from_seq <= ? AND (r.to_seq IS NULL OR r.to_seq > ?) AND ${conditions}
      )
      SELECT listing_id, rank FROM matches ${keyset}
      ORDER BY rank DESC, listing_id ASC
      LIMIT ?`;
    const rows = ranker.withTerms(terms, () =>
      store.statement(sql).all(compileFtsQuery(terms), asOf, asOf, ...params, ...keysetParams, page.limit + 1),
    ) as Array<{ listing_id: number; rank: number }>;
    const pageRows = rows.slice(0, page.limit);
    const byId = store.rowsById(pageRows.map((r) => Number(r.listing_id)));
    const resources = pageRows.flatMap((r) => {
      const row = byId.get(Number(r.listing_id));
      return row ? [toDiscoveryResource(row)] : [];
    });
    const more = rows.length > page.limit;
    const last = pageRows.at(-1);
    const cursor =
      more && last
        ? encodeCursor(secret, { v: 1, h: hash, a: asOf, r: Number(last.rank), i: Number(last.listing_id), t: after?.t ?? now.getTime() })
        : null;
    return { x402Version, resources, partialResults: more, pagination: { limit: resources.length, cursor } };
  });
}
