/**
 * The agent tool server (docs/MCP.md): two tools, search_resources and paid_call, over any MCP
 * transport (main.ts serves it on stdio to clients of MCP 2026-07-28 and of 2025-11-25 alike, one
 * server per connection from `toolServerFactory`). It holds no facilitator internals: discovery goes through the
 * facilitator's public HTTP endpoints with the typed client. Every tool failure is a result with
 * isError and structuredContent {errorCode, reason}; an unknown tool name is a protocol error.
 */
import { Server } from '@modelcontextprotocol/server';
import { createFacilitatorClient, type FacilitatorClient } from '../client/facilitator.ts';
import { LedgerTimeEstimator, createSdkRpc, type ChainRpc } from '../chains/stellar/index.ts';
import { walletOf, type McpConfig } from './config.ts';
import { paidCall, type PaidCallDeps } from './paid-call.ts';
import { asToolResult, invalidParams } from './results.ts';
import { searchResources } from './search.ts';
import { SERVER_INSTRUCTIONS, TOOLS } from './tools.ts';

export const SERVER_INFO = { name: 'svc-agent-tools', title: 'svc agent tools: search and pay for x402 resources', version: '0.1.0' };

export { TOOLS } from './tools.ts';

export interface ToolServerDeps {
  config: McpConfig;
  /** Defaults to a typed client on config.facilitatorUrl. */
  facilitator?: FacilitatorClient;
  /** The buyer's chain port; defaults to an RPC client on config.rpcUrl when a wallet is set. */
  rpc?: ChainRpc;
}

/** One tool server. */
export function createToolServer(deps: ToolServerDeps): Server {
  return toolServerFactory(deps)();
}

/**
 * Makes tool servers that share one facilitator client and one wallet (built once here); the SDK's
 * stdio entry asks for one per connection, and one more to answer a 2026-07-28 discovery probe.
 */
export function toolServerFactory(deps: ToolServerDeps): () => Server {
  const { config } = deps;
  const facilitator = deps.facilitator ?? createFacilitatorClient(config.facilitatorUrl, { timeoutMs: config.timeoutMs });
  const signer = walletOf(config);
  let wallet: PaidCallDeps['wallet'];
  if (signer) {
    const rpc = deps.rpc ?? createSdkRpc({ url: config.rpcUrl!, timeoutMs: config.timeoutMs });
    wallet = { signer, rpc, ledgerTime: new LedgerTimeEstimator(rpc) };
  }
  const paidDeps: PaidCallDeps = {
    facilitator,
    network: config.network,
    maxAmount: config.maxAmount,
    timeoutMs: config.timeoutMs,
    ...(wallet ? { wallet } : {}),
  };

  return () => {
    // `logging`: a 2025-11-25 client's logging/setLevel is answered; diagnostics go to stderr only.
    const server = new Server(SERVER_INFO, { capabilities: { tools: {}, logging: {} }, instructions: SERVER_INSTRUCTIONS });
    server.setRequestHandler('tools/list', () => ({ tools: TOOLS.map((t) => ({ ...t })) as never }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const args = request.params.arguments;
      switch (request.params.name) {
        case 'search_resources':
          return asToolResult(() => searchResources(args, facilitator, config.network, ctx.mcpReq.id));
        case 'paid_call':
          return asToolResult(() => paidCall(args, paidDeps));
        default:
          throw invalidParams(`Unknown tool ${JSON.stringify(request.params.name)}; the tools are search_resources and paid_call.`);
      }
    });
    return server;
  };
}
