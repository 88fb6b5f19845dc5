/**
 * GET /discovery/resources and GET /discovery/search: the query-parameter layer (openapi.yaml,
 * docs/CATALOG.md), then a call to the catalog. The catalog owns filtering, ranking and cursors.
 */
import { limitKeyOf } from '../http/client-address.ts';
import type { Operation } from 'openapi-backend';
import { checkCursorForm } from '../catalog/search.ts';
import { queryLimitViolation } from '../catalog/terms.ts';
import { CatalogQueryError, type CatalogPort, type Requester } from '../catalog/types.ts';
import { FILTER_NAMES, LIST_ONLY_FILTER_NAMES, filterViolation, type DiscoveryFilters } from '../filters.ts';
import type { components } from '../generated/openapi.ts';
import { HttpError } from '../http/errors.ts';
import type { DiscoveryQuery, SvcContext, SvcMiddleware, SvcNext, SvcState } from '../http/middleware.ts';

export const LIMIT_DEFAULT = 20;
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 100;

const invalid = (reason: string) => new HttpError(400, 'svc_invalid_query_parameter', reason);

// JSON Schema counts `3.0` as the integer 3, so a zero fraction is accepted (openapi.yaml types both as integer).
const INTEGER_SPELLING = /^[+-]?[0-9]+(\.0*)?$/;

/** `limit`: default 20; an integer is clamped to [1, 100]; anything else is 400. */
export function parseLimit(raw: string | null): number {
  if (raw === null) return LIMIT_DEFAULT;
  if (!INTEGER_SPELLING.test(raw)) throw invalid(`limit must be an integer, got ${JSON.stringify(raw)}.`);
  const n = Number(raw); // huge values become large finite numbers or ±Infinity; both clamp.
  return Math.min(LIMIT_MAX, Math.max(LIMIT_MIN, n));
}

/** `offset`: default 0; a non-negative (safe) integer, else 400. */
export function parseOffset(raw: string | null): number {
  if (raw === null) return 0;
  const n = Number(raw);
  if (!INTEGER_SPELLING.test(raw) || n < 0) throw invalid(`offset must be a non-negative integer, got ${JSON.stringify(raw)}.`);
  if (!Number.isSafeInteger(n)) throw invalid(`offset must be at most ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(raw)}.`);
  return n === 0 ? 0 : n; // `-0` is offset 0
}

/**
 * Refuses a name the operation does not declare, whatever it is spelled like: an empty name,
 * `__proto__`, `constructor` (names a parser that gathers the query into an object may lose),
 * since filters are never silently ignored.
 */
function refuseUndeclared(params: URLSearchParams, declared: readonly string[]): void {
  const name = [...params.keys()].find((n) => !declared.includes(n));
  if (name !== undefined) throw undeclaredParameter(name, declared);
}

const undeclaredParameter = (name: string, declared: readonly string[]) =>
  invalid(`The query parameter ${JSON.stringify(name)} is not accepted by this operation; it accepts ${declared.join(', ')}.`);
const repeatedParameter = (name: string) => invalid(`The query parameter ${JSON.stringify(name)} is repeated; give it at most once.`);

/**
 * The query's parameters, or a 400 when one is undeclared or repeated (openapi.yaml: each operation
 * accepts only its declared parameters, once), for operations without filters (the merchant route,
 * the delist text). The raw query string is read: the validator's parsed object never shows a name
 * such as `__proto__`.
 */
export function declaredQuery(querystring: string, declared: readonly string[]): URLSearchParams {
  const params = new URLSearchParams(querystring);
  for (const name of new Set(params.keys())) {
    if (!declared.includes(name)) throw undeclaredParameter(name, declared);
    if (params.getAll(name).length > 1) throw repeatedParameter(name);
  }
  return params;
}

/**
 * Parses the query string; `search` adds `query` and `cursor`. `declared` is the operation's query
 * parameters in openapi.yaml; any other name is refused once the declared ones are read.
 */
export function parseDiscoveryQuery(querystring: string, kind: 'list' | 'search', declared: readonly string[]): DiscoveryQuery {
  const params = new URLSearchParams(querystring);
  for (const name of new Set(params.keys())) {
    if (params.getAll(name).length > 1) throw repeatedParameter(name);
  }
  const filters: DiscoveryFilters = {};
  for (const name of kind === 'list' ? [...FILTER_NAMES, ...LIST_ONLY_FILTER_NAMES] : FILTER_NAMES) {
    const value = params.get(name);
    if (value === null) continue;
    // An empty filter is refused rather than silently ignored.
    if (value.trim() === '') throw invalid(`The filter ${name} is empty; omit it or give a value.`);
    filters[name] = value;
  }
  const violation = filterViolation(filters);
  if (violation !== undefined) throw invalid(violation);
  const limit = parseLimit(params.get('limit'));
  if (kind === 'list') {
    const offset = parseOffset(params.get('offset'));
    refuseUndeclared(params, declared);
    return { filters, limit, offset };
  }
  const query = params.get('query');
  if (query === null || query.trim() === '') {
    throw new HttpError(400, 'svc_missing_search_query', 'The search query is missing or blank; pass a non-empty `query` parameter.');
  }
  const beyondLimits = queryLimitViolation(query);
  if (beyondLimits !== undefined) throw invalid(beyondLimits);
  refuseUndeclared(params, declared);
  const cursor = params.get('cursor');
  // A cursor of a form svc never issues is refused here, with the code the catalog gives an unknown one.
  if (cursor !== null) {
    try {
      checkCursorForm(cursor);
    } catch (err) {
      asQueryError(err);
    }
  }
  return { filters, limit, offset: 0, query, ...(cursor === null ? {} : { cursor }) };
}

/** The query parameters an operation of openapi.yaml declares, by name. */
function declaredQueryNames(operation: Operation | undefined): string[] {
  if (!operation) throw new Error('discoveryQuery mounted before routeMatcher');
  return (operation.parameters ?? []).flatMap((p) => ('in' in p && p.in === 'query' ? [p.name] : []));
}

export function discoveryQuery(kind: 'list' | 'search'): SvcMiddleware {
  return async (ctx: SvcContext, next: SvcNext) => {
    ctx.state.discovery = parseDiscoveryQuery(ctx.querystring, kind, declaredQueryNames(ctx.state.operation));
    await next();
  };
}

function queryOf(state: SvcState): DiscoveryQuery {
  if (!state.discovery) throw new Error('discovery handler mounted before discoveryQuery');
  return state.discovery;
}

type ListResponse = components['schemas']['DiscoveryListResponse'];
type SearchResponse = components['schemas']['DiscoverySearchResponse'];

/** A CatalogQueryError answers with its status and code (400: the caller's mistake; 503: busy or unusable); anything else propagates (500). */
function asQueryError(err: unknown): never {
  if (err instanceof CatalogQueryError) throw new HttpError(err.status, err.code, err.message || undefined);
  throw err;
}

/**
 * The client a discovery request is for, as the per-client limits count it: the peer, or the client
 * a trusted proxy names (src/http/client-address.ts), an IPv6 client by its /64.
 */
export function requesterOf(ctx: SvcContext): Requester {
  return { client: limitKeyOf(ctx.state.client) };
}

/**
 * Sends a page's JSON text as it is, as Koa would send the page object (Content-Type
 * application/json; charset=utf-8, the text's byte length). The catalog serialized it on its
 * reader thread (CatalogPort.listJson and searchJson), so the main thread neither receives an
 * object graph nor stringifies it (docs/CATALOG.md "Threads").
 */
function sendJsonText(ctx: SvcContext, text: string): void {
  ctx.body = text;
  ctx.type = 'application/json';
}

export function listHandler(catalog: CatalogPort): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const { filters, limit, offset } = queryOf(ctx.state);
    try {
      if (catalog.listJson) sendJsonText(ctx, await catalog.listJson(filters, { limit, offset }, requesterOf(ctx)));
      else ctx.body = (await catalog.list(filters, { limit, offset }, requesterOf(ctx))) satisfies ListResponse;
    } catch (err) {
      asQueryError(err);
    }
    ctx.status = 200;
  };
}

export function searchHandler(catalog: CatalogPort): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const query = queryOf(ctx.state);
    try {
      if (catalog.searchJson)
        sendJsonText(ctx, await catalog.searchJson(query.query ?? '', query.filters, pageOf(query), requesterOf(ctx)));
      else ctx.body = (await searchCatalog(catalog, query, requesterOf(ctx))) satisfies SearchResponse;
    } catch (err) {
      asQueryError(err);
    }
    ctx.status = 200;
  };
}

/** A search's page parameters: the limit, and the cursor when one was given. */
function pageOf(query: DiscoveryQuery): { limit: number; cursor?: string } {
  return { limit: query.limit, ...(query.cursor === undefined ? {} : { cursor: query.cursor }) };
}

/**
 * The page GET /discovery/search answers for a parsed query (parseDiscoveryQuery); also what
 * search_resources finds at POST /mcp. A CatalogQueryError propagates.
 */
export function searchCatalog(catalog: CatalogPort, query: DiscoveryQuery, requester: Requester): Promise<SearchResponse> {
  return catalog.search(query.query ?? '', query.filters, pageOf(query), requester);
}
