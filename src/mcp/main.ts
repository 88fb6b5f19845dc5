/**
 * `npm run mcp`: the agent tool server on stdio (stdout carries MCP frames only; diagnostics go to
 * stderr). An invalid configuration exits 78 with one line naming the variable, never its value.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { ConfigError, EXIT_CONFIG } from '../config.ts';
import { loadMcpConfig, type McpConfig } from './config.ts';
import { toolServerFactory } from './server.ts';

let config: McpConfig;
try {
  config = loadMcpConfig(process.env);
} catch (err) {
  const line = err instanceof ConfigError ? err.message : 'the configuration could not be read';
  process.stderr.write(`svc-mcp: invalid configuration: ${line}\n`);
  process.exit(EXIT_CONFIG);
}

const connection = serveStdio(toolServerFactory({ config }));
process.stderr.write(
  `svc-mcp: ready on stdio; facilitator ${config.facilitatorUrl}, network ${config.network}, ` +
    `${config.walletAddress ? `wallet ${config.walletAddress}, spend cap ${config.maxAmount} base units` : 'search-only (no CLIENT_STELLAR_PRIVATE_KEY)'}\n`,
);
const shutdown = () => {
  void connection.close().finally(() => process.exit(0));
};
process.stdin.on('end', shutdown);
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
