/**
 * The discovery tool server svc hosts at POST /mcp (docs/MCP.md "Hosted discovery"): only
 * search_resources, with the definition and the code of the stdio tool server (tools.ts,
 * search.ts). paid_call is not offered: it signs with the buyer's key, which stays with the agent
 * in the local stdio server. Transport-agnostic; src/handlers/mcp.ts serves it over streamable
 * HTTP, one server per request, to clients of MCP 2026-07-28 and of 2025-11-25 alike.
 */
import { Server } from '@modelcontextprotocol/server';
import { asToolResult, invalidParams } from './results.ts';
import { searchResources, type SearchPort } from './search.ts';
import { SEARCH_TOOL } from './tools.ts';

export const HOSTED_SERVER_INFO = {
  name: 'svc-discovery',
  title: 'svc discovery: search paid x402 resources settled on Stellar',
  version: '0.1.0',
};

export const HOSTED_INSTRUCTIONS = [
  'Search the catalog of paid x402 resources (HTTP endpoints and MCP tools) settled on Stellar with search_resources:',
  'free, read-only, no wallet needed. Each hit has its price in base units (asset, payTo), network and how to call it.',
  'This server does not pay: to call and pay, run the local stdio tool server of svc (npm run mcp), whose paid_call',
  'takes the id of a hit and signs with your own key, which never leaves your machine.',
].join(' ');

/** The tool list of the hosted server: search_resources, exactly as the stdio server lists it. */
export const HOSTED_TOOLS = [SEARCH_TOOL] as const;

/**
 * A server answering tools/list and tools/call of search_resources through `search` (svc's
 * catalog, queried as GET /discovery/search queries it). `network` picks the price shown in a hit.
 * It declares `logging` so that a 2025-11-25 client's logging/setLevel is answered (the server
 * sends no log messages: each request is answered on its own and nothing else is sent).
 */
export function createHostedDiscoveryServer(search: SearchPort, network: string): Server {
  const server = new Server(HOSTED_SERVER_INFO, { capabilities: { tools: {}, logging: {} }, instructions: HOSTED_INSTRUCTIONS });
  server.setRequestHandler('tools/list', () => ({ tools: HOSTED_TOOLS.map((t) => ({ ...t })) as never }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    if (name === SEARCH_TOOL.name) return asToolResult(() => searchResources(request.params.arguments, search, network, ctx.mcpReq.id));
    const why =
      name === 'paid_call'
        ? 'paid_call is not served here: it signs with the buyer key, which stays with the agent. Run the local stdio tool server (docs/MCP.md) for paid_call.'
        : `Unknown tool ${JSON.stringify(name)}.`;
    throw invalidParams(`${why} This server has one tool: search_resources.`);
  });
  return server;
}
