/**
 * A paid MCP tool server over streamable HTTP, speaking both bindings of the x402 MCP transport
 * (docs/MCP.md "Seller toolkit"):
 * - extension binding (`org.x402/payment`, MCP 2026-07-28): when the request's client capabilities
 *   name the extension, an unpaid tools/call of a priced tool is the result
 *   {resultType: "payment_required", paymentRequired: PaymentRequired}, and so is a refused payment
 *   or a failed settlement (its `error` is the facilitator's code; a failed SettleResponse rides in
 *   result._meta["x402/payment-response"]);
 * - tool-result binding (any other request, every MCP 2025-11-25 client): the same refusals are
 *   {isError:true, structuredContent: PaymentRequired, content:[{type:'text', text: JSON}]};
 * - either way the retry carries params._meta["x402/payment"] (a PaymentPayload): verify, run the
 *   tool, settle, and return the tool's result with result._meta["x402/payment-response"]
 *   (SettleResponse). A tool that fails is returned as is, unsettled.
 * Each priced tool declares a `bazaar` extension (type 'mcp', toolName, inputSchema) so its first
 * settlement lists it in the catalog. Stateless: one MCP server instance per HTTP request, from the
 * SDK's HTTP entry, which serves 2026-07-28 requests and 2025-era ones alike; `legacyOnly` makes a
 * seller of before 2026-07-28 (2025-11-25 only, tool-result binding only).
 *
 *   const tools = await startPaidMcpServer({ facilitator, tools: [{ name: 'forecast', description: '…',
 *     inputSchema: { type: 'object', properties: { city: { type: 'string' } } }, accepts,
 *     handler: (args) => ({ content: [{ type: 'text', text: `Sunny in ${args.city}` }] }) }] });
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CLIENT_CAPABILITIES_META_KEY,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { PaymentPayload, PaymentRequirements } from '../scheme/types.ts';
import type { FacilitatorClient } from './facilitator.ts';
import {
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  X402_MCP_EXTENSION,
  X402_PAYMENT_REQUIRED_RESULT,
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

/** Which binding a tools/call is answered in: the extension only for a client that names it. */
export type X402Binding = 'extension' | 'tool-result';

/** A refusal: the PaymentRequired (its `error` set after a refused payment) in the request's binding. */
function paymentRequiredResult(offer: PaidOffer, binding: X402Binding, error?: string, receipt?: unknown): CallToolResult {
  const required = paymentRequired(offer, error);
  const meta = receipt === undefined ? {} : { _meta: { [MCP_PAYMENT_RESPONSE_META]: receipt } };
  if (binding === 'extension')
    return { resultType: X402_PAYMENT_REQUIRED_RESULT, paymentRequired: required, ...meta } as unknown as CallToolResult;
  return {
    isError: true,
    structuredContent: required,
    content: [{ type: 'text', text: JSON.stringify(required) }],
    ...meta,
  };
}

/** The extension binding when the request's per-request client capabilities (2026-07-28) name it. */
export function bindingOf(ctx: Pick<ServerContext, 'mcpReq'>): X402Binding {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[X402_MCP_EXTENSION] !== undefined ? 'extension' : 'tool-result';
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

/** tools/call with the x402 MCP transport, answered in `binding`. */
export async function callPaidTool(
  tool: PaidTool,
  offer: PaidOffer,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
  binding: X402Binding = 'tool-result',
): Promise<CallToolResult> {
  if (offer.accepts.length === 0) return runTool(tool, args);
  const payment = meta?.[MCP_PAYMENT_META];
  if (payment === undefined) return paymentRequiredResult(offer, binding);
  if (!payment || typeof payment !== 'object' || Array.isArray(payment))
    return paymentRequiredResult(offer, binding, 'svc_malformed_request_body');
  const payload = payment as PaymentPayload;
  const verified = await verifyOffer(offer, payload);
  if (!verified.ok) return paymentRequiredResult(offer, binding, verified.error);
  const result = await runTool(tool, args);
  if (result.isError) return result; // the tool failed: nothing is settled
  const settled = await settleOffer(offer, payload, verified.requirements);
  if (!settled.ok) return paymentRequiredResult(offer, binding, settled.error, settled.receipt);
  return { ...result, _meta: { ...result._meta, [MCP_PAYMENT_RESPONSE_META]: settled.receipt } };
}

function mcpServerFor(tools: PaidTool[], offerOf: (tool: PaidTool) => PaidOffer, legacyOnly: boolean): Server {
  const server = new Server(SERVER_INFO, {
    // The extension is offered only where it can be used: on 2026-07-28.
    capabilities: { tools: {}, ...(legacyOnly ? {} : { extensions: { [X402_MCP_EXTENSION]: {} } }) },
  });
  server.setRequestHandler('tools/list', () => ({
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name)}.`);
    const args = request.params.arguments ?? {};
    return callPaidTool(tool, offerOf(tool), args, request.params._meta, legacyOnly ? 'tool-result' : bindingOf(ctx));
  });
  return server;
}

/**
 * A node:http request as the web-standard Request the SDK's HTTP entry serves, or null when its
 * body is over the SDK's own bound (DEFAULT_MAX_REQUEST_BODY_SIZE): it is not read further.
 */
async function webRequest(req: IncomingMessage, url: string): Promise<Request | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > DEFAULT_MAX_REQUEST_BODY_SIZE) return null;
    chunks.push(chunk as Buffer);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  return new Request(url, { method: req.method ?? 'GET', headers, ...(body && req.method !== 'GET' ? { body } : {}) });
}

export async function startPaidMcpServer(options: {
  facilitator: FacilitatorClient;
  tools: PaidTool[];
  host?: string;
  port?: number;
  path?: string;
  /** Speak only MCP 2025-11-25 and the tool-result binding, as sellers of before 2026-07-28. */
  legacyOnly?: boolean;
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
    const request = await webRequest(req, new URL(req.url ?? '/', url).href);
    if (!request) {
      res
        .writeHead(413, { 'content-type': 'application/json', connection: 'close' })
        .end(JSON.stringify({ error: 'Request body too large.' }));
      return;
    }
    const response = options.legacyOnly ? await legacyAnswer(request) : await mcp.fetch(request);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    res.writeHead(response.status, headers).end(Buffer.from(await response.arrayBuffer()));
  }
  const mcp = createMcpHandler(() => mcpServerFor(options.tools, offerOf, false), { legacy: 'stateless' });
  /** A seller of before 2026-07-28: the SDK's streamable HTTP transport alone, stateless, JSON answers. */
  async function legacyAnswer(request: Request): Promise<Response> {
    const server = mcpServerFor(options.tools, offerOf, true);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
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
        http.close(() => void mcp.close().then(() => resolve()));
      }),
  };
}
