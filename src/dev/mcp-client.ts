/**
 * The MCP client configuration `npm run dev` prints for its agent tool server (README "Try it",
 * docs/MCP.md "MCP client configuration" show the same block with placeholders; tests compare them).
 */

/**
 * The demo's sellers listen on loopback, which svc's catalog and paid_call refuse by default
 * (docs/SECURITY.md "SSRF"): the dev stack, and only it, allows loopback.
 */
export const DEV_ALLOW_PRIVATE_TARGETS = '127.0.0.0/8,::1/128';

export interface McpClientConfig {
  mcpServers: { svc: { command: string; args: string[]; env: Record<string, string> } };
}

/** The block for an MCP client (Claude Desktop, Cursor, …) that starts svc's stdio tool server against a dev run. */
export function devMcpClientConfig(run: { repoDir: string; facilitatorUrl: string; rpcUrl: string; agentSecret: string }): McpClientConfig {
  return {
    mcpServers: {
      svc: {
        command: 'npm',
        args: ['run', '--silent', '--prefix', run.repoDir, 'mcp'],
        env: {
          FACILITATOR_URL: run.facilitatorUrl,
          RPC_URL: run.rpcUrl,
          CLIENT_STELLAR_PRIVATE_KEY: run.agentSecret,
          ALLOW_PRIVATE_TARGETS: DEV_ALLOW_PRIVATE_TARGETS,
        },
      },
    },
  };
}
