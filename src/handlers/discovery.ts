/**
 * GET /discovery/resources and GET /discovery/search: the query-parameter layer (SPEC §4.4,
 * §4.5, §8), then a call to the catalog. The catalog owns filtering, ranking and cursors.
 */
import type { Context, Middleware, Next } from 'koa';
import { CatalogQueryError, type CatalogPort, type DiscoveryFilters } from '../catalog/types.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcState } from '../http/middleware.ts';

export const LIMIT_DEFAULT = 20;
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 100;
export const FILTER_NAMES = ['type', 'payTo', 'scheme', 'network', 'extensions'] as const;
/** Exact-match identity filters only the list endpoint declares (the tool server resolves ids with them). */
export const LIST_ONLY_FILTER_NAMES = ['resource', 'toolName'] as const;

export interface DiscoveryQuery {
  filters: DiscoveryFilters;
  limit: number;
  offset: number;
  query?: string;
  cursor?: string;
}

type DiscoveryState = SvcState & { discovery: DiscoveryQuery };

const invalid = (reason: string) => new HttpError(400, 'svc_invalid_query_parameter', reason);

/** `limit`: default 20; an integer is clamped to [1, 100]; anything else is 400. */
export function parseLimit(raw: string | null): number {
  if (raw === null) return LIMIT_DEFAULT;
  if (!/^[+-]?[0-9]+$/.test(raw)) throw invalid(`limit must be an integer, got ${JSON.stringify(raw)}.`);
  const n = Number(raw); // huge values become large finite numbers or ±Infinity; both clamp.
  return Math.min(LIMIT_MAX, Math.max(LIMIT_MIN, n));
}

/** `offset`: default 0; a non-negative (safe) integer, else 400. */
export function parseOffset(raw: string | null): number {
  if (raw === null) return 0;
  if (!/^[+]?[0-9]+$/.test(raw)) throw invalid(`offset must be a non-negative integer, got ${JSON.stringify(raw)}.`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw invalid(`offset must be at most ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(raw)}.`);
  return n;
}

/** Parses the query string; `search` adds `query` and `cursor`. */
export function parseDiscoveryQuery(querystring: string, kind: 'list' | 'search'): DiscoveryQuery {
  const params = new URLSearchParams(querystring);
  for (const name of new Set(params.keys())) {
    if (params.getAll(name).length > 1) throw invalid(`The query parameter ${JSON.stringify(name)} is repeated; give it at most once.`);
  }
  const filters: DiscoveryFilters = {};
  for (const name of kind === 'list' ? [...FILTER_NAMES, ...LIST_ONLY_FILTER_NAMES] : FILTER_NAMES) {
    const value = params.get(name);
    if (value === null) continue;
    // An empty filter is refused rather than silently ignored.
    if (value.trim() === '') throw invalid(`The filter ${name} is empty; omit it or give a value.`);
    filters[name] = value;
  }
  const limit = parseLimit(params.get('limit'));
  if (kind === 'list') return { filters, limit, offset: parseOffset(params.get('offset')) };
  const query = params.get('query');
  if (query === null || query.trim() === '') {
    throw new HttpError(400, 'svc_missing_search_query', 'The search query is missing or blank; pass a non-empty `query` parameter.');
  }
  const cursor = params.get('cursor');
  return { filters, limit, offset: 0, query, ...(cursor === null ? {} : { cursor }) };
}

export function discoveryQuery(kind: 'list' | 'search'): Middleware {
  return async (ctx: Context, next: Next) => {
    (ctx.state as DiscoveryState).discovery = parseDiscoveryQuery(ctx.querystring, kind);
    await next();
  };
}

function requireCatalog(catalog: CatalogPort | undefined): CatalogPort {
  if (!catalog) throw new HttpError(500, 'svc_internal_error', 'No catalog is mounted.');
  return catalog;
}

/** A CatalogQueryError is the caller's mistake: 400 with its code; anything else propagates (500). */
function asQueryError(err: unknown): never {
  if (err instanceof CatalogQueryError) throw new HttpError(err.status, err.code, err.message || undefined);
  throw err;
}

export function listHandler(catalog: CatalogPort | undefined): Middleware {
  return async (ctx: Context) => {
    const { filters, limit, offset } = (ctx.state as DiscoveryState).discovery;
    const port = requireCatalog(catalog);
    try {
      ctx.body = await port.list(filters, { limit, offset });
    } catch (err) {
      asQueryError(err);
    }
    ctx.status = 200;
  };
}

export function searchHandler(catalog: CatalogPort | undefined): Middleware {
  return async (ctx: Context) => {
    const { filters, limit, query, cursor } = (ctx.state as DiscoveryState).discovery;
    const port = requireCatalog(catalog);
    try {
      ctx.body = await port.search(query ?? '', filters, { limit, ...(cursor === undefined ? {} : { cursor }) });
    } catch (err) {
      asQueryError(err);
    }
    ctx.status = 200;
  };
}
