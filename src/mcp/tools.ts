/**
 * What `tools/list` tells an agent about the two tools: titles, behaviour annotations (paid_call
 * spends money on an open world; search_resources only reads), input schemas that say what the
 * tools refuse (exactly one of resourceId / url, the filter enums), and output schemas that every
 * result's structuredContent validates against — a success, or the failure shape
 * {errorCode, reason} (results.ts).
 */
import { HTTP_METHODS } from './paid-call.ts';
import { MAX_QUERY_LENGTH } from '../catalog/terms.ts';
import { SEARCH_FILTERS } from './search.ts';
import { URL_FILTER_MAX, URL_FILTER_MIN, USD_PRICE_PATTERN } from '../filters.ts';

export const SERVER_INSTRUCTIONS = [
  'Tools for paid x402 resources settled on Stellar.',
  'Call search_resources first (free, read-only; no wallet needed) to find a resource and its price in base units;',
  'then paid_call with its id (or a url) to call it and pay in one step, within the configured spend cap.',
  'paid_call spends money: every failure says whether anything was paid, and a success carries the on-chain receipt.',
  'Failures are results with isError and structuredContent {errorCode, reason}.',
].join(' ');

/** The listing types paid_call can call; `type` filters on other values find nothing. */
export const LISTING_TYPES = ['http', 'mcp'] as const;

const stringProp = (description: string) => ({ type: 'string', minLength: 1, description });

/** The failure structuredContent every tool may return (isError: true). */
const failureSchema = {
  type: 'object',
  required: ['errorCode', 'reason'],
  additionalProperties: false,
  properties: {
    errorCode: { type: 'string', description: 'An agent tool code (svc_mcp_*) or a facilitator/scheme code passed through.' },
    reason: { type: 'string', description: 'What failed; for paid_call, also whether anything was paid.' },
  },
};

const price = {
  type: ['object', 'null'],
  properties: {
    amount: { type: 'string' },
    asset: { type: 'string' },
    payTo: { type: 'string' },
    scheme: { type: 'string' },
    network: { type: 'string' },
  },
};

const searchSuccess = {
  type: 'object',
  required: ['hits', 'nextCursor', 'partialResults'],
  properties: {
    hits: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'type', 'resource', 'name', 'description', 'price', 'network', 'call', 'lastUpdated'],
        properties: {
          id: { type: ['string', 'null'], description: 'The id for paid_call (null for a listing type paid_call cannot call).' },
          type: { type: 'string' },
          resource: { type: 'string' },
          toolName: { type: 'string' },
          name: { type: 'string' },
          description: { type: 'string' },
          price,
          network: { type: ['string', 'null'] },
          accepts: { type: 'array' },
          call: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
          lastUpdated: { type: 'string' },
          quality: {
            type: 'object',
            description:
              'Evidence of demand from settled payments (openapi.yaml ListingQuality): payments and distinct payers over the last 30 days, and the last paid time. Search already ranks equally relevant listings by it.',
            required: ['l30DaysTotalCalls', 'l30DaysUniquePayers', 'lastCalledAt'],
            properties: {
              l30DaysTotalCalls: { type: 'integer', minimum: 0 },
              l30DaysUniquePayers: { type: 'integer', minimum: 0 },
              lastCalledAt: { type: 'string' },
            },
          },
          liveness: {
            type: ['object', 'null'],
            description:
              "svc's last unpaid check of the resource (openapi.yaml ListingLiveness): live (a 402 naming the listing's payTo), unreachable, not_payable or terms_changed, and when. null: not checked since it was listed or last paid. paid_call refuses a listing that is not live unless ignoreLiveness is true.",
            required: ['status', 'checkedAt'],
            properties: {
              status: { type: 'string', enum: ['live', 'unreachable', 'not_payable', 'terms_changed'] },
              checkedAt: { type: 'string' },
            },
          },
          match: {
            type: 'object',
            description:
              "How the hit matched the query (openapi.yaml SearchMatch): relevance strong/weak/none, score (the share of the query's weight it holds, 0–1) and terms: each query word it holds, how (exact, stem: another form, related: a word of related meaning) and in which fields.",
            required: ['relevance', 'score', 'terms'],
            properties: {
              relevance: { type: 'string', enum: ['strong', 'weak', 'none'] },
              score: { type: 'number' },
              terms: { type: 'array' },
            },
          },
        },
      },
    },
    nextCursor: { type: ['string', 'null'] },
    partialResults: { type: 'boolean' },
    searchMethod: {
      type: 'string',
      description:
        'text: every query term found in the catalog was searched; text_budgeted: the search budget kept only searchedTerms (the rarest) and left out droppedTerms; text_partial: a filtered search stopped at its work budget, so better matches may be missing (partialResults is true); url: no text matched, resource URLs were searched (openapi.yaml DiscoverySearchResponse).',
    },
    searchedTerms: { type: 'array', items: { type: 'string' }, description: 'The terms the ranking used, rarest first.' },
    droppedTerms: { type: 'array', items: { type: 'string' }, description: 'Query terms found in listings that the budget left out.' },
    relevance: {
      type: 'string',
      enum: ['strong', 'weak', 'none'],
      description:
        'How well the best hit answers the query: none means no listing holds what was asked (the catalog most likely has no such service; any hits are incidental); weak, some of it; strong, much of it.',
    },
  },
};

const paidSuccess = {
  type: 'object',
  required: ['target', 'paid', 'result', 'receipt'],
  properties: {
    target: { type: 'object' },
    paid: { type: 'boolean', description: 'false when the target turned out to be free (no receipt).' },
    result: { description: 'What the resource or tool answered.' },
    receipt: {
      type: ['object', 'null'],
      required: ['transaction', 'network', 'payer'],
      properties: { transaction: { type: 'string' }, network: { type: 'string' }, payer: { type: 'string' } },
    },
    confirmedOnChain: { type: 'boolean' },
  },
};

/** An object schema whose value is a success or a failure (MCP requires `type: object` at the root). */
const resultSchema = (success: object) => ({ type: 'object', anyOf: [success, failureSchema] });

/**
 * search_resources: the same definition in the stdio tool server (server.ts) and at svc's hosted
 * POST /mcp (hosted.ts, docs/MCP.md "Hosted discovery").
 */
export const SEARCH_TOOL = {
  name: 'search_resources',
  title: 'Search paid resources',
  description:
    'Search the x402 catalog of paid resources (HTTP endpoints and MCP tools) settled on Stellar. Send your intent as a sentence, as you would ask a person (e.g. "I need the hourly weather forecast for a city, in JSON"): words are matched in their own form, other forms and related words, and rare words weigh more. Returns ranked hits, each with an id for paid_call, name, description, price in base units (asset, payTo), network, how to call it and how it matched (match); relevance "none" means the catalog most likely has no such service. Works without a wallet.',
  annotations: { title: 'Search paid resources', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: {
    type: 'object',
    properties: {
      query: {
        ...stringProp(
          `What you want, as a sentence, any number of words, e.g. "find an api that returns the weather forecast for a city"; at most ${MAX_QUERY_LENGTH} characters (longer is refused with svc_invalid_query_parameter). Function words are ignored; a long query is searched by its most telling words (see searchMethod in the answer).`,
        ),
        maxLength: MAX_QUERY_LENGTH,
      },
      filters: {
        type: 'object',
        description: 'Optional filters (those of GET /discovery/search).',
        properties: Object.fromEntries(
          SEARCH_FILTERS.map((f) => [
            f,
            f === 'type'
              ? { type: 'string', enum: [...LISTING_TYPES] }
              : f === 'scheme'
                ? { type: 'string', enum: ['exact'] }
                : f === 'maxAmount'
                  ? {
                      type: 'string',
                      pattern: '^[0-9]{1,40}$',
                      description: 'At most this price in base units of `asset` (requires asset).',
                    }
                  : f === 'asset'
                    ? { type: 'string', minLength: 1, description: 'Asset contract address the listing accepts (any letter case).' }
                    : f === 'url'
                      ? {
                          type: 'string',
                          minLength: URL_FILTER_MIN,
                          maxLength: URL_FILTER_MAX,
                          description: 'Text the resource URL contains, ignoring case, e.g. "api.example.com/weather".',
                        }
                      : f === 'maxUsdPrice'
                        ? {
                            type: 'string',
                            pattern: USD_PRICE_PATTERN,
                            description:
                              'At most this many US dollars, e.g. "0.01", in a USD-pegged asset (USDC); other assets do not match.',
                          }
                        : { type: 'string', minLength: 1 },
          ]),
        ),
        additionalProperties: false,
      },
      limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Page size (default 20).' },
      cursor: stringProp('nextCursor of a previous call with the same query and filters.'),
    },
    required: ['query'],
    additionalProperties: false,
  },
  outputSchema: resultSchema(searchSuccess),
} as const;

/** paid_call: only in the stdio tool server, where the buyer's key is (never at the hosted POST /mcp). */
export const PAID_CALL_TOOL = {
  name: 'paid_call',
  title: 'Call and pay for a resource',
  description:
    'Call a paid resource and pay for it in one step: give resourceId (from search_resources) or url (plus toolName for an MCP tool). The live price is checked against the spend cap before anything is signed. Returns the result and the on-chain receipt {transaction, network, payer}; every failure says whether anything was paid.',
  annotations: {
    title: 'Call and pay for a resource',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  inputSchema: {
    type: 'object',
    properties: {
      resourceId: stringProp('An id from search_resources (svc1:…).'),
      url: stringProp('Absolute http(s) URL of the resource (instead of resourceId).'),
      toolName: stringProp('The MCP tool to call; required when url is an MCP endpoint.'),
      input: { type: 'object', description: 'Query parameters (GET) or JSON body (POST) for http; tool arguments for mcp.' },
      method: { type: 'string', enum: [...HTTP_METHODS], description: 'HTTP method for a url target (default GET).' },
      ignoreLiveness: {
        type: 'boolean',
        description:
          "Call a listing (resourceId) even when svc's last check found it not live (svc_mcp_listing_not_live otherwise); the live 402 is still probed first.",
      },
    },
    oneOf: [
      // A listing declares its own method; toolName may repeat the one the id names.
      { required: ['resourceId'], not: { anyOf: [{ required: ['url'] }, { required: ['method'] }] } },
      { required: ['url'], not: { required: ['resourceId'] } },
    ],
    additionalProperties: false,
  },
  outputSchema: resultSchema(paidSuccess),
} as const;

export const TOOLS = [SEARCH_TOOL, PAID_CALL_TOOL] as const;
