/**
 * A paid MCP tool server over streamable HTTP, speaking the x402 MCP transport:
 * - an unpaid tools/call of a priced tool → {isError:true, structuredContent: PaymentRequired,
 *   content:[{type:'text', text: JSON}]};
 * - the retry carries params._meta["x402/payment"] (a PaymentPayload): verify, run the tool,
 *   settle, and return the tool's result with result._meta["x402/payment-response"] (SettleResponse);
 * - a refused payment or a failed settlement → isError with a PaymentRequired whose `error` is the
 *   facilitator's code, and no tool content. A tool that fails is returned as is, unsettled.
 * Each priced tool declares a `bazaar` extension (type 'mcp', toolName, inputSchema) so its first
 * settlement lists it in the catalog. Stateless: one MCP server instance per HTTP request.
 *
 *   const tools = await startPaidMcpServer({ facilitator, tools: [{ name: 'forecast', description: '…',
 *     inputSchema: { type: 'object', properties: { city: { type: 'string' } } }, accepts,
 *     handler: (args) => ({ content: [{ type: 'text', text: `Sunny in ${args.city}` }] }) }] });
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload, PaymentRequirements } from '../scheme/types.ts';
import type { FacilitatorClient } from './facilitator.ts';
import {
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  mcpBazaar,
  paymentRequired,
  settleOffer,
  verifyOffer,
  type JsonSchema,
  type PaidOffer,
} from './seller.ts';

export interface PaidTool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /** Payment terms; empty or absent makes the tool free. */
  accepts?: PaymentRequirements[];
  serviceName?: string;
  tags?: string[];
  example?: Record<string, unknown>;
  handler(args: Record<string, unknown>): CallToolResult | Promise<CallToolResult>;
}

export interface PaidMcpServer {
  /** The streamable-HTTP endpoint, http://host:port/mcp: the resource URL of every tool. */
  url: string;
  close(): Promise<void>;
}

const SERVER_INFO = { name: 'svc-paid-tools', version: '0.1.0' };

/** The offer of one tool at the server's endpoint. */
export function toolOffer(tool: PaidTool, facilitator: FacilitatorClient, url: string): PaidOffer {
  return {
    facilitator,
    accepts: tool.accepts ?? [],
    resource: {
      url,
      description: tool.description,
      mimeType: 'application/json',
      ...(tool.serviceName ? { serviceName: tool.serviceName } : {}),
      ...(tool.tags ? { tags: tool.tags } : {}),
    },
    bazaar: mcpBazaar({
      toolName: tool.name,
      inputSchema: tool.inputSchema,
      description: tool.description,
      ...(tool.example ? { example: tool.example } : {}),
    }),
  };
}

function paymentRequiredResult(offer: PaidOffer, error?: string): CallToolResult {
  const required = paymentRequired(offer, error);
  return {
    isError: true,
    structuredContent: required as unknown as Record<string, unknown>,
    content: [{ type: 'text', text: JSON.stringify(required) }],
  };
}

async function runTool(tool: PaidTool, args: Record<string, unknown>): Promise<CallToolResult> {
  try {
    return await tool.handler(args);
  } catch (err) {
    return {
      isError: true,
      content: [{ type: 'text', text: `The tool ${tool.name} failed: ${err instanceof Error ? err.message : String(err)}` }],
    };
  }
}

/** tools/call with the x402 MCP transport. */
export async function callPaidTool(
  tool: PaidTool,
  offer: PaidOffer,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  if (offer.accepts.length === 0) return runTool(tool, args);
  const payment = meta?.[MCP_PAYMENT_META];
  if (payment === undefined) return paymentRequiredResult(offer);
  if (!payment || typeof payment !== 'object' || Array.isArray(payment)) return paymentRequiredResult(offer, 'svc_malformed_request_body');
  const payload = payment as PaymentPayload;
  const verified = await verifyOffer(offer, payload);
  if (!verified.ok) return paymentRequiredResult(offer, verified.error);
  const result = await runTool(tool, args);
  if (result.isError) return result; // the tool failed: nothing is settled
  const settled = await settleOffer(offer, payload, verified.requirements);
  if (!settled.ok) return paymentRequiredResult(offer, settled.error);
  return { ...result, _meta: { ...result._meta, [MCP_PAYMENT_RESPONSE_META]: settled.receipt } };
}

function mcpServerFor(tools: PaidTool[], offerOf: (tool: PaidTool) => PaidOffer): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name)}.`);
    const args = request.params.arguments ?? {};
    return callPaidTool(tool, offerOf(tool), args, request.params._meta);
  });
  return server;
}

export async function startPaidMcpServer(options: {
  facilitator: FacilitatorClient;
  tools: PaidTool[];
  host?: string;
  port?: number;
  path?: string;
}): Promise<PaidMcpServer> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  let url = '';
  const offers = new Map<PaidTool, PaidOffer>();
  const offerOf = (tool: PaidTool) => {
    let offer = offers.get(tool);
    if (!offer) offers.set(tool, (offer = toolOffer(tool, options.facilitator, url)));
    return offer;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://seller.invalid').pathname !== path) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `Not found; the MCP endpoint is ${path}.` }));
      return;
    }
    const server = mcpServerFor(options.tools, offerOf);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  url = `http://${host}:${port}${path}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
