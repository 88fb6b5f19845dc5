/**
 * The agent part of the `npm run dev` story: an MCP client (@modelcontextprotocol/sdk) spawns
 * svc's agent tool server (`src/mcp/main.ts`, what `npm run mcp` runs) over stdio, exactly as a
 * desktop agent would from the README's config, then discovers and pays: search_resources finds
 * the weather listing, paid_call pays it by id, paid_call pays the paid MCP tool by URL (x402 MCP
 * transport), and the tool's own settlement lists it, so a second search finds it.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ChainRpc } from '../chains/stellar/index.ts';
import { expectThat as check, type Trace } from './trace.ts';

/** How long the agent waits for the paid tool to be listed (its server asked first: seconds). */
const TOOL_LISTING_WAIT_MS = 15_000;

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MCP_MAIN = fileURLToPath(new URL('../mcp/main.ts', import.meta.url));

export interface AgentOptions {
  facilitatorUrl: string;
  rpcUrl: string;
  /** The agent's dev-only wallet seed (passed to the child's environment only). */
  walletSecret: string;
  weatherUrl: string;
  mcp: { url: string; toolName: string };
  rpc: ChainRpc;
}

export interface AgentResult {
  ok: boolean;
  payments: Array<{ target: string; transaction: string }>;
  mcpListed: boolean;
}

interface Hit {
  id: string;
  type: string;
  resource: string;
  toolName?: string;
  name?: string;
  description?: string;
  price?: { amount: string };
}

export async function runAgent(trace: Trace, options: AgentOptions): Promise<AgentResult> {
  const transport = new StdioClientTransport({
    // This Node (24) with tsx as a loader: the same entry point as `npm run mcp`.
    command: process.execPath,
    args: ['--import', 'tsx', MCP_MAIN],
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      FACILITATOR_URL: options.facilitatorUrl,
      RPC_URL: options.rpcUrl,
      CLIENT_STELLAR_PRIVATE_KEY: options.walletSecret,
      // The demo's sellers are on loopback (set by src/dev/main.ts; docs/SECURITY.md "SSRF").
      ALLOW_PRIVATE_TARGETS: process.env.ALLOW_PRIVATE_TARGETS ?? '',
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'svc-dev-agent', version: '0.1.0' });
  const result: AgentResult = { ok: false, payments: [], mcpListed: false };
  const call = async (name: string, args: Record<string, unknown>) => {
    const answer = (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    };
    check(!answer.isError, `${name} failed: ${JSON.stringify(answer.structuredContent)}`);
    return answer.structuredContent as Record<string, unknown>;
  };
  try {
    trace.step("An agent connects to svc's MCP tool server (spawned over stdio, like a desktop agent would)");
    await client.connect(transport);
    const tools = await client.listTools();
    trace.detail('tools', tools.tools.map((t) => t.name).join(', '));
    trace.detail('tool server', stderr.trim().split('\n').pop() ?? '');

    const query = 'weather in a city';
    trace.step(`Agent: search_resources("${query}")`);
    const found = (await call('search_resources', { query })) as { hits: Hit[] };
    for (const hit of found.hits)
      trace.detail(`${hit.type} ${hit.name ?? hit.resource}`, `${hit.price?.amount ?? '?'} base units, id ${hit.id}`);
    const weather = found.hits.find((h) => h.resource === options.weatherUrl);
    check(weather, `search_resources did not return ${options.weatherUrl}`);

    trace.step(`Agent: paid_call({ resourceId: "${weather.id.slice(0, 24)}…", input: { city: "Nairobi" } })`);
    const paidHttp = (await call('paid_call', { resourceId: weather.id, input: { city: 'Nairobi' } })) as {
      result: unknown;
      receipt: { transaction: string; network: string; payer: string };
    };
    trace.detail('result', paidHttp.result);
    trace.detail('receipt', paidHttp.receipt);
    check(
      (await options.rpc.getTransaction(paidHttp.receipt.transaction)).status === 'SUCCESS',
      'the HTTP receipt is not a successful transaction',
    );
    result.payments.push({ target: options.weatherUrl, transaction: paidHttp.receipt.transaction });
    trace.ok('the agent paid the HTTP resource; its receipt is on chain');

    const input = { from: 'EUR', to: 'USD', amount: 100 };
    trace.step(`Agent: paid_call({ url: "${options.mcp.url}", toolName: "${options.mcp.toolName}", input: ${JSON.stringify(input)} })`);
    const paidTool = (await call('paid_call', { url: options.mcp.url, toolName: options.mcp.toolName, input })) as {
      target: { binding?: string };
      result: { structuredContent?: unknown; content?: Array<{ text?: string }> };
      receipt: { transaction: string; network: string; payer: string };
    };
    trace.detail('tool result', paidTool.result.structuredContent ?? paidTool.result.content?.[0]?.text);
    trace.detail('receipt', paidTool.receipt);
    check(
      (await options.rpc.getTransaction(paidTool.receipt.transaction)).status === 'SUCCESS',
      'the MCP receipt is not a successful transaction',
    );
    result.payments.push({ target: `${options.mcp.url}#${options.mcp.toolName}`, transaction: paidTool.receipt.transaction });
    // The demo seller speaks MCP 2026-07-28, so the payment goes through x402's extension binding (docs/MCP.md "x402 bindings").
    check(paidTool.target.binding === 'org.x402/payment', `the MCP tool asked for payment in the ${paidTool.target.binding} binding`);
    trace.ok(`the agent paid the MCP tool over the x402 MCP transport (binding ${paidTool.target.binding})`);

    trace.step('Agent: search_resources("currency exchange"): the tool is listed by its own settlement');
    // A new listing follows its settlement once svc has asked the tool's server, unpaid, whether it
    // names the payTo that was paid (docs/CATALOG.md "Ownership and refresh"): within seconds.
    const listedTool = (hits: Hit[]) => hits.some((h) => h.resource === options.mcp.url && h.toolName === options.mcp.toolName);
    let again = (await call('search_resources', { query: 'currency exchange', filters: { type: 'mcp' } })) as { hits: Hit[] };
    for (let waited = 0; !listedTool(again.hits) && waited < TOOL_LISTING_WAIT_MS; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      again = (await call('search_resources', { query: 'currency exchange', filters: { type: 'mcp' } })) as { hits: Hit[] };
    }
    for (const hit of again.hits) trace.detail(`${hit.type} ${hit.toolName ?? ''} at ${hit.resource}`, `id ${hit.id}`);
    result.mcpListed = listedTool(again.hits);
    check(result.mcpListed, 'the MCP tool is not in the catalog after its settlement');
    trace.ok('the paid MCP tool is discoverable');
    result.ok = true;
    return result;
  } finally {
    await client.close().catch(() => {});
  }
}
