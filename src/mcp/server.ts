/**
 * The agent tool server (SPEC §4.8): two tools, search_resources and paid_call, over any MCP
 * transport (main.ts uses stdio). It holds no facilitator internals: discovery goes through the
 * facilitator's public HTTP endpoints with the typed client. Every tool failure is a result with
 * isError and structuredContent {errorCode, reason}; an unknown tool name is a protocol error.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { createFacilitatorClient, type FacilitatorClient } from '../client/facilitator.ts';
import { LedgerTimeEstimator } from '../chains/stellar/ledger-time.ts';
import { createSdkRpc, type ChainRpc } from '../chains/stellar/rpc.ts';
import { walletOf, type McpConfig } from './config.ts';
import { paidCall, HTTP_METHODS, type PaidCallDeps } from './paid-call.ts';
import { asToolResult } from './results.ts';
import { SEARCH_FILTERS, searchResources } from './search.ts';

export const SERVER_INFO = { name: 'svc-agent-tools', version: '0.1.0' };

const stringProp = (description: string) => ({ type: 'string', description });

export const TOOLS = [
  {
    name: 'search_resources',
    description:
      'Search the x402 catalog of paid resources (HTTP endpoints and MCP tools) settled on Stellar. Returns ranked hits, each with an id for paid_call, name, description, price in base units (asset, payTo), network and how to call it. Works without a wallet.',
    inputSchema: {
      type: 'object',
      properties: {
        query: stringProp('Natural-language query, e.g. "weather forecast".'),
        filters: {
          type: 'object',
          description: 'Optional exact filters.',
          properties: Object.fromEntries(SEARCH_FILTERS.map((f) => [f, { type: 'string' }])),
          additionalProperties: false,
        },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Page size (default 20).' },
        cursor: stringProp('nextCursor of a previous call with the same query and filters.'),
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  {
    name: 'paid_call',
    description:
      'Call a paid resource and pay for it in one step: give resourceId (from search_resources) or url (plus toolName for an MCP tool). The live price is checked against the spend cap before anything is signed. Returns the result and the on-chain receipt {transaction, network, payer}.',
    inputSchema: {
      type: 'object',
      properties: {
        resourceId: stringProp('An id from search_resources (svc1:…).'),
        url: stringProp('Absolute http(s) URL of the resource (instead of resourceId).'),
        toolName: stringProp('The MCP tool to call; required when url is an MCP endpoint.'),
        input: { type: 'object', description: 'Query parameters (GET) or JSON body (POST) for http; tool arguments for mcp.' },
        method: { type: 'string', enum: [...HTTP_METHODS], description: 'HTTP method for a url target (default GET).' },
      },
      additionalProperties: false,
    },
  },
] as const;

export interface ToolServerDeps {
  config: McpConfig;
  /** Defaults to a typed client on config.facilitatorUrl. */
  facilitator?: FacilitatorClient;
  /** The buyer's chain port; defaults to an RPC client on config.rpcUrl when a wallet is set. */
  rpc?: ChainRpc;
}

export function createToolServer(deps: ToolServerDeps): Server {
  const { config } = deps;
  const facilitator = deps.facilitator ?? createFacilitatorClient(config.facilitatorUrl, { timeoutMs: config.timeoutMs });
  const signer = walletOf(config);
  let wallet: PaidCallDeps['wallet'];
  if (signer) {
    const rpc = deps.rpc ?? createSdkRpc({ url: config.rpcUrl!, timeoutMs: config.timeoutMs });
    wallet = { signer, rpc, ledgerTime: new LedgerTimeEstimator(rpc) };
  }
  const paidDeps: PaidCallDeps = { facilitator, network: config.network, maxAmount: config.maxAmount, timeoutMs: config.timeoutMs, ...(wallet ? { wallet } : {}) };

  const server = new Server(SERVER_INFO, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.map((t) => ({ ...t })) as never }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments;
    switch (request.params.name) {
      case 'search_resources':
        return asToolResult(() => searchResources(args, facilitator, config.network));
      case 'paid_call':
        return asToolResult(() => paidCall(args, paidDeps));
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name)}; the tools are search_resources and paid_call.`);
    }
  });
  return server;
}
