/**
 * search_resources: the facilitator's GET /discovery/search through the typed client, each listing
 * projected into a hit an agent can act on: the deterministic id, name, description, price in base
 * units (asset, payTo), network, and the calling convention (http: method, example query or body,
 * JSON Schema; mcp: toolName, inputSchema). Works without a wallet.
 */
import {
  FacilitatorUnreachableError,
  type DiscoveryResource,
  type DiscoverySearchResponse,
  type FacilitatorClient,
  type FacilitatorResult,
  type SearchQuery,
} from '../client/facilitator.ts';
import { searchWithin } from '../catalog/page-bytes.ts';
import { queryLimitViolation } from '../catalog/terms.ts';
import { FILTER_NAMES, filterViolation } from '../filters.ts';
import { checkListingRef, encodeResourceId } from './resource-id.ts';
import { ToolFailure, argumentsObject, isFacilitatorCode, isPlainObject, optionalObject, optionalString, toolSuccess } from './results.ts';

/**
 * What search_resources reads the catalog through: the facilitator's GET /discovery/search over
 * HTTP (the stdio tool server), or the same query answered in-process (svc's hosted POST /mcp).
 */
export type SearchPort = Pick<FacilitatorClient, 'search'>;

/** The filters search_resources accepts: those of GET /discovery/search (src/filters.ts). */
export const SEARCH_FILTERS = FILTER_NAMES;

/** One discovery call; transport failures and refusals become the agent tool codes (facilitator codes verbatim). */
export async function discovery<T>(run: () => Promise<FacilitatorResult<T>>): Promise<T> {
  let result: FacilitatorResult<T>;
  try {
    result = await run();
  } catch (err) {
    if (err instanceof FacilitatorUnreachableError) throw new ToolFailure('svc_mcp_facilitator_unreachable', err.message);
    throw err;
  }
  if (result.ok) return result.data;
  if (isFacilitatorCode(result.code)) throw new ToolFailure(result.code, result.reason);
  throw new ToolFailure('svc_mcp_search_failed', `The facilitator refused discovery with HTTP ${result.status}: ${result.reason}`);
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The bazaar `info.input` of a listing (empty object when absent). */
export function listingInput(listing: DiscoveryResource): Record<string, unknown> {
  const bazaar = listing.extensions?.bazaar;
  const input = isPlainObject(bazaar) && isPlainObject(bazaar.info) ? bazaar.info.input : undefined;
  return isPlainObject(input) ? input : {};
}

/** The tool name of a listing: "" for http. */
export function listingToolName(listing: DiscoveryResource): string {
  return listing.type === 'mcp' ? (str(listingInput(listing).toolName) ?? '') : '';
}

function callingConvention(listing: DiscoveryResource): Record<string, unknown> {
  const input = listingInput(listing);
  if (listing.type === 'mcp') {
    return {
      type: 'mcp',
      toolName: str(input.toolName) ?? '',
      inputSchema: input.inputSchema ?? null,
      transport: str(input.transport) ?? 'streamable-http',
      ...(input.example !== undefined ? { example: input.example } : {}),
    };
  }
  const bazaar = listing.extensions?.bazaar;
  const schema = isPlainObject(bazaar) ? bazaar.schema : undefined;
  // The declared input schema sits at schema.properties.input.properties.{queryParams|body}.
  const inputProps =
    isPlainObject(schema) && isPlainObject(schema.properties) && isPlainObject(schema.properties.input)
      ? schema.properties.input.properties
      : undefined;
  const part = input.bodyType !== undefined ? 'body' : 'queryParams';
  const partSchema = isPlainObject(inputProps) ? inputProps[part] : undefined;
  return {
    type: 'http',
    method: str(input.method) ?? 'GET',
    ...(input.bodyType !== undefined ? { bodyType: input.bodyType, body: input.body ?? null } : { queryParams: input.queryParams ?? {} }),
    schema: partSchema ?? schema ?? null,
  };
}

/** The terms an agent would pay: exact on the tool's network first, else the first offered. */
function price(listing: DiscoveryResource, network: string): Record<string, unknown> | null {
  const accepts = (listing.accepts ?? []) as Array<Record<string, unknown>>;
  const terms = accepts.find((a) => a.scheme === 'exact' && a.network === network) ?? accepts[0];
  if (!terms) return null;
  return { amount: terms.amount, asset: terms.asset, payTo: terms.payTo, scheme: terms.scheme, network: terms.network };
}

export function toHit(listing: DiscoveryResource, network: string): Record<string, unknown> {
  const toolName = listingToolName(listing);
  const ref = checkListingRef(listing.type, listing.resource, toolName);
  const terms = price(listing, network);
  return {
    // Only http and mcp listings are callable by paid_call; any other type gets no id.
    id: ref.ok ? encodeResourceId(ref.ref) : null,
    type: listing.type,
    resource: listing.resource,
    ...(toolName ? { toolName } : {}),
    name: listing.serviceName ?? (toolName || listing.resource),
    description: listing.description ?? str(listingInput(listing).description) ?? '',
    price: terms,
    network: terms?.network ?? null,
    accepts: listing.accepts,
    call: callingConvention(listing),
    ...(listing.serviceName ? { serviceName: listing.serviceName } : {}),
    ...(listing.tags ? { tags: listing.tags } : {}),
    ...(listing.mimeType ? { mimeType: listing.mimeType } : {}),
    lastUpdated: listing.lastUpdated,
    // Absent only from a facilitator older than the quality signals (resp. the liveness checks).
    ...(listing.quality ? { quality: listing.quality } : {}),
    ...(listing.liveness !== undefined ? { liveness: listing.liveness } : {}),
    // How it matched the query (openapi.yaml SearchMatch); absent from an older facilitator's answer.
    ...(isPlainObject(listing.match) ? { match: listing.match } : {}),
  };
}

/**
 * search_resources, answering JSON-RPC request `requestId`: its whole answer is at most 4 MiB
 * (page-bytes.ts), a page shrunk to fit ending where its nextCursor continues.
 */
export async function searchResources(
  rawArgs: unknown,
  facilitator: SearchPort,
  network: string,
  requestId: string | number,
): Promise<Record<string, unknown>> {
  const args = argumentsObject(rawArgs, ['query', 'filters', 'limit', 'cursor']);
  const query = optionalString(args, 'query');
  if (query === undefined) throw new ToolFailure('svc_mcp_invalid_arguments', 'query is required: a non-empty natural-language string.');
  // Refused here with the facilitator's own code and reason (GET /discovery/search), without a round trip.
  const beyondLimits = queryLimitViolation(query);
  if (beyondLimits !== undefined) throw new ToolFailure('svc_invalid_query_parameter', beyondLimits);
  const filters = argumentsObject(optionalObject(args, 'filters'), SEARCH_FILTERS);
  for (const name of SEARCH_FILTERS) optionalString(filters, name);
  // asset/maxAmount refused as the facilitator refuses them, without a round trip.
  const violation = filterViolation(filters);
  if (violation !== undefined) throw new ToolFailure('svc_invalid_query_parameter', violation);
  // A type no listing can have would silently find nothing: refuse it (the input schema's enum).
  if (filters.type !== undefined && filters.type !== 'http' && filters.type !== 'mcp') {
    throw new ToolFailure('svc_mcp_invalid_arguments', `filters.type must be "http" or "mcp", got ${JSON.stringify(filters.type)}.`);
  }
  if (filters.scheme !== undefined && filters.scheme !== 'exact') {
    throw new ToolFailure(
      'svc_mcp_invalid_arguments',
      `filters.scheme must be "exact" (the only scheme served), got ${JSON.stringify(filters.scheme)}.`,
    );
  }
  const limit = args.limit;
  if (limit !== undefined && (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 100)) {
    throw new ToolFailure('svc_mcp_invalid_arguments', 'limit must be an integer from 1 to 100.');
  }
  const cursor = optionalString(args, 'cursor');
  const request = { query, ...filters, ...(limit !== undefined ? { limit } : {}), ...(cursor ? { cursor } : {}) } as SearchQuery;
  const ask = (limit?: number) => discovery(() => facilitator.search(limit === undefined ? request : { ...request, limit }));
  // The whole answer within what a stock client reads, as every discovery answer (page-bytes.ts).
  const answer = (page: DiscoverySearchResponse) =>
    JSON.stringify({ jsonrpc: '2.0', id: requestId, result: toolSuccess(searchAnswer(page, network)) });
  const { page } = await searchWithin(await ask(), ask, answer);
  return searchAnswer(page, network);
}

/** search_resources' structuredContent for a page of GET /discovery/search. */
function searchAnswer(page: DiscoverySearchResponse, network: string): Record<string, unknown> {
  return {
    hits: page.resources.map((listing) => toHit(listing, network)),
    nextCursor: page.pagination.cursor,
    partialResults: page.partialResults,
    // What was searched (the search budget, openapi.yaml DiscoverySearchResponse); absent from an older facilitator's answer.
    ...(page.searchMethod !== undefined ? { searchMethod: page.searchMethod } : {}),
    ...(page.searchedTerms !== undefined ? { searchedTerms: page.searchedTerms } : {}),
    ...(page.droppedTerms !== undefined ? { droppedTerms: page.droppedTerms } : {}),
    ...(page.relevance !== undefined ? { relevance: page.relevance } : {}),
  };
}
