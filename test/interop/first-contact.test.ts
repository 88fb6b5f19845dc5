/**
 * What a newcomer copies first, run against a real `npm run dev` (--ephemeral, its own data
 * directory): every shell line of README's "Try it" block runs as written (only the ports are
 * the run's own, and the placeholder hash a real one) and answers what its comment says; every
 * other ```sh block of README is named here with why it is not run; README's MCP client block is the block `npm run dev` prints (so the two cannot
 * drift), and filled in it starts a tool server that pays the demo weather as README's example
 * prompt asks; the explorer's `paid_call` snippet for Demo Weather runs as shown, and the same call
 * without its `input` is refused by the seller with a reason that says nothing was paid (svc's
 * log shows the seller's verify and no settle). The same run then serves docs/SELLER.md's checks
 * (test/interop/seller-example.ts) and a serving run's own (test/interop/dev-serving.ts: the story,
 * a second and a third run beside it, SIGINT): one `npm run dev` for the three, about 12 CPU-s each.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/dev/agent.ts';
import { DEV_PORTS } from '../../src/dev/stack.ts';
import type { StoryResult } from '../../src/dev/story.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { fencedBlocks } from '../helpers/doc-blocks.ts';
import { startDevRun, type DevRun } from '../helpers/dev-run.ts';
import { failure, success } from '../mcp/harness.ts';
import { devFiles, describeServingRun, type DevFiles } from './dev-serving.ts';
import { describeSellerExample } from './seller-example.ts';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const REPO_DIR = REPO_ROOT.replace(/\/+$/, '');
type McpConfig = DevRun['mcpConfig'];

/** README's ```json block that configures an MCP client. */
function readmeMcpBlock(): McpConfig {
  const blocks = fencedBlocks(README, 'json').filter((b) => b.includes('"mcpServers"'));
  expect(blocks).toHaveLength(1);
  return JSON.parse(blocks[0]!) as McpConfig;
}

let dev: DevRun;
let browser: Browser;
let filesAtReady: DevFiles;
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
  filesAtReady = devFiles(dev.dataDir);
}, 180_000);

afterAll(async () => {
  await closeClients();
  await dev?.stop();
});

/** The README agent and the browser, closed once their checks are done (before the serving run's are). */
async function closeClients(): Promise<void> {
  await (await agent?.catch(() => undefined))?.close();
  agent = undefined;
  await browser?.close();
}

const call = async (name: string, args: Record<string, unknown>) =>
  (await (await readmeAgent()).callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult;

const decisions = (route: string) =>
  readFileSync(join(dev.dataDir, 'svc.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"msg":"payment decision"') && line.includes(`"route":"${route}"`)).length;

/** README's ```sh blocks, each as its lines. */
const readmeShellBlocks = () => fencedBlocks(README, 'sh').map((block) => block.trimEnd().split('\n'));

/** The ```sh blocks this file does not run, by their first line, and why. */
const NOT_RUN_HERE: Record<string, string> = {
  'npm ci': 'the quick start: `npm ci` is the install every test run starts from, and `npm run dev` is what this file runs',
  'npm run build     # once per checkout/upgrade: bundles src/ into dist/ (esbuild)':
    'svc alone against a real network needs a funded seed and the internet; `npm start` itself is run by test/ops/start.test.ts',
  'npm ci     # install exactly the locked dependencies': 'the two commands of CI (.ci/run), which run this file',
};

/** The commands of a shell block: continued lines joined, comment-only lines left out. */
function commandsOf(lines: string[]): string[] {
  const commands: string[] = [];
  let current = '';
  for (const line of lines) {
    if (current === '' && line.trim().startsWith('#')) continue;
    current += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
    if (!line.endsWith('\\')) {
      commands.push(current);
      current = '';
    }
  }
  return commands;
}

/**
 * `command` with each of README's fixed URLs (`http://127.0.0.1:<port>`, the whole port) replaced
 * by this run's, in one pass: a URL put in is never read again. Replaced one port after another,
 * svc's free port 41003 had become the seller's URL + "3" (README's seller port is 4100), a port
 * past 65535 that curl refused as a malformed URL, about one run in 2,800.
 */
function withRunUrls(command: string, urls: Record<number, string>): string {
  return command.replace(/http:\/\/127\.0\.0\.1:(\d+)/g, (fixed, port: string) => urls[Number(port)] ?? fixed);
}

/** What each command of "Try it" must answer (its comment in README says the same). */
const TRY_IT_ANSWERS: Array<[RegExp, (out: string) => void]> = [
  [/\/supported/, (out) => expect((JSON.parse(out) as { kinds: unknown[] }).kinds.length).toBeGreaterThan(0)],
  [/\/discovery\/resources/, (out) => expect((JSON.parse(out) as { items: unknown[] }).items.length).toBeGreaterThanOrEqual(2)],
  [/\/discovery\/search/, (out) => expect((JSON.parse(out) as { resources: unknown[] }).resources.length).toBeGreaterThan(0)],
  [/\/weather\?city=/, (out) => expect(out).toMatch(/^HTTP\/1\.1 402 /)],
  [/\/verify/, (out) => expect(JSON.parse(out)).toMatchObject({ isValid: false, invalidReason: expect.any(String) as string })],
  [/getTransaction/, (out) => expect(JSON.parse(out)).toMatchObject({ result: { status: 'SUCCESS' } })],
];

describe('what a newcomer copies first', () => {
  afterAll(closeClients);

  describe("README's shell blocks", () => {
    it('every block is run here or named with why it is not', () => {
      const firstLines = readmeShellBlocks().map((lines) => lines[0]!);
      const tryIt = firstLines.filter((line) => !(line in NOT_RUN_HERE));
      expect(tryIt).toEqual([expect.stringMatching(/^curl http:\/\/127\.0\.0\.1:4021\/supported/)]);
      expect(firstLines.filter((line) => line in NOT_RUN_HERE).sort()).toEqual(Object.keys(NOT_RUN_HERE).sort());
    });

    it("README's ports are replaced by the run's whole, even where a run's port starts with another of README's", () => {
      const urls = { 4021: 'http://127.0.0.1:41003', 4100: 'http://127.0.0.1:45210', 8000: 'http://127.0.0.1:40210' };
      expect(withRunUrls("curl http://127.0.0.1:4021/supported; curl -i 'http://127.0.0.1:4100/weather?city=Oslo'", urls)).toBe(
        "curl http://127.0.0.1:41003/supported; curl -i 'http://127.0.0.1:45210/weather?city=Oslo'",
      );
      expect(withRunUrls('curl -s http://127.0.0.1:8000 -d x http://127.0.0.1:4101/mcp', urls)).toBe(
        'curl -s http://127.0.0.1:40210 -d x http://127.0.0.1:4101/mcp',
      );
    });

    it('"Try it": every command runs as written and answers what its comment says', () => {
      const block = readmeShellBlocks().find((lines) => !(lines[0]! in NOT_RUN_HERE))!;
      const story = JSON.parse(readFileSync(join(dev.dataDir, 'story.json'), 'utf8')) as StoryResult;
      const urls = { [DEV_PORTS.svc]: dev.svcUrl, [DEV_PORTS.sellers]: dev.sellerUrl, [DEV_PORTS.devnet]: dev.rpcUrl };
      const commands = commandsOf(block);
      expect(commands.length).toBe(TRY_IT_ANSWERS.length);
      for (const written of commands) {
        const command = withRunUrls(written.replace('<a hash from the trace>', story.payments[0]!.transaction), urls);
        const run = spawnSync('bash', ['-c', command], { encoding: 'utf8', timeout: 30_000 });
        expect(run.status, `${written}\n${run.stderr}`).toBe(0);
        const answers = TRY_IT_ANSWERS.filter(([pattern]) => pattern.test(written));
        expect(answers, written).toHaveLength(1);
        // What svc answered, when it is not what the comment says (a busy catalog's 503 reads differently from a wrong route).
        try {
          answers[0]![1](run.stdout);
        } catch (err) {
          throw new Error(`${written}\nanswered: ${run.stdout.slice(0, 600)}\n${String(err)}`, { cause: err });
        }
      }
    }, 60_000);
  });

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

    it('a sentence about a service the catalog lacks says nothing relevant matched: over HTTP, the hosted MCP and the tool server', async () => {
      const query = 'Please find me an API that books a dentist appointment for my dog next Tuesday afternoon.';
      const http = (await (await fetch(`${dev.svcUrl}/discovery/search?${new URLSearchParams({ query }).toString()}`)).json()) as {
        relevance: string;
      };
      expect(http.relevance).toBe('none');
      const stdio = success(await call('search_resources', { query })) as { relevance: string };
      expect(stdio.relevance).toBe('none');
      const hosted = new Client({ name: 'first-contact-hosted', version: '1.0.0' });
      await hosted.connect(new StreamableHTTPClientTransport(new URL(`${dev.svcUrl}/mcp`)));
      try {
        expect(success((await hosted.callTool({ name: 'search_resources', arguments: { query } })) as CallToolResult)).toMatchObject({
          relevance: 'none',
        });
        // What the catalog holds is found, and says so.
        const weather = success(
          (await hosted.callTool({ name: 'search_resources', arguments: { query: 'weather in a city' } })) as CallToolResult,
        ) as {
          relevance: string;
          hits: Array<{ resource: string; match: { terms: Array<{ term: string }> } }>;
        };
        expect(weather.relevance).not.toBe('none');
        expect(weather.hits[0]).toMatchObject({
          resource: `${dev.sellerUrl}/weather`,
          match: { terms: expect.arrayContaining([expect.objectContaining({ term: 'weather' })]) },
        });
      } finally {
        await hosted.close();
      }
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
});

// The same run, for docs/SELLER.md, then for the checks of a serving run (which stop it).
describeSellerExample(() => dev);
describeServingRun(
  () => dev,
  () => filesAtReady,
);
