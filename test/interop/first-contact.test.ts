/**
 * What a newcomer copies first, run against a real `npm run dev` (--ephemeral, its own data
 * directory): README's MCP client block is the block `npm run dev` prints (so the two cannot
 * drift), and filled in it starts a tool server that pays the demo weather as README's example
 * prompt asks; the explorer's `paid_call` snippet for Demo Weather runs as shown, and the same call
 * without its `input` is refused by the seller with a reason that says nothing was paid (svc's
 * log shows the seller's verify and no settle).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/dev/agent.ts';
import { DEV_PORTS } from '../../src/dev/stack.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { startDevRun, type DevRun } from '../helpers/dev-run.ts';
import { failure, success } from '../mcp/harness.ts';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const REPO_DIR = REPO_ROOT.replace(/\/+$/, '');
type McpConfig = DevRun['mcpConfig'];

/** README's ```json block that configures an MCP client. */
function readmeMcpBlock(): McpConfig {
  const blocks = [...README.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).filter((b) => b.includes('"mcpServers"'));
  expect(blocks).toHaveLength(1);
  return JSON.parse(blocks[0]!) as McpConfig;
}

let dev: DevRun;
let browser: Browser;
let agent: Promise<Client> | undefined;

/** svc's tool server started from README's block, filled in with what `npm run dev` printed. */
function readmeAgent(): Promise<Client> {
  return (agent ??= (async () => {
    const block = readmeMcpBlock().mcpServers.svc;
    const fill: Record<string, string> = {
      '/absolute/path/to/svc': REPO_DIR,
      [`http://127.0.0.1:${DEV_PORTS.svc}`]: dev.svcUrl,
      [`http://127.0.0.1:${DEV_PORTS.devnet}`]: dev.rpcUrl,
      '<the dev-only agent secret printed by npm run dev>': dev.agentSecret,
    };
    const transport = new StdioClientTransport({
      command: block.command,
      args: block.args.map((a) => fill[a] ?? a),
      env: Object.fromEntries(Object.entries(block.env).map(([k, v]) => [k, fill[v] ?? v])),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'first-contact', version: '0.1.0' });
    await client.connect(transport, { timeout: 60_000 });
    return client;
  })());
}

beforeAll(async () => {
  [dev, browser] = await Promise.all([startDevRun(), launchBrowser()]);
}, 180_000);

afterAll(async () => {
  await (await agent?.catch(() => undefined))?.close();
  await browser?.close();
  await dev?.stop();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await (await readmeAgent()).callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult;

const decisions = (route: string) =>
  readFileSync(join(dev.dataDir, 'svc.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"msg":"payment decision"') && line.includes(`"route":"${route}"`)).length;

describe("README's MCP client block", () => {
  it('is the block npm run dev prints, with the fixed ports and placeholders for the path and the key', () => {
    const printed = dev.mcpConfig.mcpServers.svc;
    expect(printed.args).toContain(REPO_DIR);
    expect(printed.env).toMatchObject({ FACILITATOR_URL: dev.svcUrl, RPC_URL: dev.rpcUrl, CLIENT_STELLAR_PRIVATE_KEY: dev.agentSecret });
    const asReadmeShowsIt: McpConfig = {
      mcpServers: {
        svc: {
          ...printed,
          args: printed.args.map((a) => (a === REPO_DIR ? '/absolute/path/to/svc' : a)),
          env: {
            ...printed.env,
            FACILITATOR_URL: `http://127.0.0.1:${DEV_PORTS.svc}`,
            RPC_URL: `http://127.0.0.1:${DEV_PORTS.devnet}`,
            CLIENT_STELLAR_PRIVATE_KEY: '<the dev-only agent secret printed by npm run dev>',
          },
        },
      },
    };
    expect(readmeMcpBlock()).toEqual(asReadmeShowsIt);
  });

  it("filled in, starts svc's tool server, which finds the weather API and pays it for Oslo (README's example prompt)", async () => {
    const { hits } = success(await call('search_resources', { query: 'weather' })) as { hits: Array<{ id: string; resource: string }> };
    const weather = hits.find((h) => h.resource === `${dev.sellerUrl}/weather`);
    expect(weather, JSON.stringify(hits)).toBeDefined();
    const paid = success(await call('paid_call', { resourceId: weather!.id, input: { city: 'Oslo' } }));
    expect(paid).toMatchObject({ paid: true, result: { status: 200, body: { city: 'Oslo' } }, receipt: { network: 'stellar:testnet' } });
  }, 120_000);
});

describe("the explorer's paid_call snippet for Demo Weather", () => {
  it('runs as shown; without its input the seller refuses after verify, nothing is settled, and the reason says so', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${dev.svcUrl}/`);
    await page.locator('#results .listing', { hasText: 'Demo Weather' }).click();
    await expect.poll(() => page.locator('#detail h2').textContent()).toBe('Demo Weather');
    const snippet = JSON.parse((await page.locator('#detail pre').allTextContents())[1]!) as {
      name: string;
      arguments: Record<string, unknown>;
    };
    await page.close();
    expect(snippet.arguments.input).toEqual({ city: 'Lisbon' }); // the seller's example value

    const paid = success(await call(snippet.name, snippet.arguments));
    expect(paid).toMatchObject({ paid: true, result: { status: 200, body: { city: 'Lisbon' } } });

    const [verifies, settles] = [decisions('POST /verify'), decisions('POST /settle')];
    const { input: _input, ...withoutInput } = snippet.arguments;
    const refused = failure(await call(snippet.name, withoutInput));
    expect(refused.errorCode).toBe('svc_mcp_resource_error');
    expect(refused.reason).toMatch(/HTTP 400 and no receipt, so nothing was paid\..*city is required/);
    // The seller had svc verify the payment, then answered 400 without settling it.
    expect([decisions('POST /verify'), decisions('POST /settle')]).toEqual([verifies + 1, settles]);
  }, 120_000);
});
