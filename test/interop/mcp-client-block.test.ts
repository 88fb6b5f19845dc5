/**
 * The MCP client blocks of README.md ("Try it") and docs/MCP.md ("MCP client configuration") are
 * the block `npm run dev` prints (src/dev/mcp-client.ts), with the fixed ports of README and
 * placeholders for the checkout's path and the agent's key: a variable added to what dev prints
 * (or dropped) must be added to both docs. test/interop/first-contact.test.ts checks README's
 * block against the output of a real run.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../helpers/doc-blocks.ts';
import { devMcpClientConfig, type McpClientConfig } from '../../src/dev/mcp-client.ts';
import { DEV_PORTS } from '../../src/dev/stack.ts';

const asDocsShowIt = devMcpClientConfig({
  repoDir: '/absolute/path/to/svc',
  facilitatorUrl: `http://127.0.0.1:${DEV_PORTS.svc}`,
  rpcUrl: `http://127.0.0.1:${DEV_PORTS.devnet}`,
  agentSecret: '<the dev-only agent secret printed by npm run dev>',
});

/** The ```json blocks of a doc that configure svc's stdio tool server. */
function stdioBlocks(doc: string): McpClientConfig[] {
  const text = readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8');
  return fencedBlocks(text, 'json')
    .map((block) => JSON.parse(block) as Partial<McpClientConfig>)
    .filter((block): block is McpClientConfig => block.mcpServers?.svc !== undefined);
}

describe("the MCP client blocks of the docs are npm run dev's", () => {
  it.each(['README.md', 'docs/MCP.md'])('%s', (doc) => {
    expect(Object.keys(asDocsShowIt.mcpServers.svc.env)).toEqual([
      'FACILITATOR_URL',
      'RPC_URL',
      'CLIENT_STELLAR_PRIVATE_KEY',
      'ALLOW_PRIVATE_TARGETS',
    ]);
    expect(stdioBlocks(doc)).toEqual([asDocsShowIt]);
  });
});
