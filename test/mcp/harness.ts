/**
 * One devnet (200 ms ledgers) + one svc facilitator (real exact scheme, real catalog on a temp
 * SQLite file) per test file, sellers built with the seller toolkit, and agent tool servers
 * spawned as separate processes over stdio by an MCP client from @modelcontextprotocol/sdk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Keypair } from '@stellar/stellar-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openCatalog, type Catalog } from '../../src/catalog/index.ts';
import { createFacilitatorClient, type FacilitatorClient } from '../../src/client/facilitator.ts';
import { signingKeys } from '../../src/config.ts';
import { startDevnet, type Devnet } from '../../src/devnet/index.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc, type ChainRpc } from '../../src/chains/stellar/rpc.ts';
import type { PaymentRequirements } from '../../src/scheme/types.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import { BUSY_MACHINE_BOUNDS } from '../catalog/fixtures.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MCP_MAIN = join(ROOT, 'src/mcp/main.ts');
/**
 * The tool server bundled by `npm run build` (the global setup builds it from the current
 * sources), started with this Node: about 1 s of CPU a start, where `tsx src/mcp/main.ts` took 3
 * to 6 s in two processes. `npm run mcp` itself (scripts/run-ts.mjs) is run by test/interop/first-contact.test.ts
 * (README's MCP client block) and by `npm run dev`'s agent (test/interop/dev.test.ts).
 */
export const MCP_BUNDLE: [command: string, args: string[]] = [process.execPath, [join(ROOT, 'dist/mcp/main.js')]];
export const HEX64 = /^[0-9a-f]{64}$/;

export interface ToolServer {
  client: Client;
  stderr: () => string;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { structuredContent?: any }>;
  close(): Promise<void>;
}

export class McpHarness {
  private constructor(
    readonly devnet: Devnet,
    readonly rpc: ChainRpc,
    readonly facilitatorUrl: string,
    readonly facilitator: FacilitatorClient,
    /** The facilitator's catalog (its liveness records are set through it, as svc's checks would). */
    readonly catalog: Catalog,
    private readonly cleanups: Array<() => Promise<void> | void>,
  ) {}

  static async start(ledgerMs = 200): Promise<McpHarness> {
    const cleanups: Array<() => Promise<void> | void> = [];
    const devnet = await startDevnet({ ledgerMs });
    cleanups.push(() => devnet.stop());
    const rpc = createSdkRpc({ url: devnet.rpcUrl, timeoutMs: 5_000 });
    const submitter = await devnet.createAccount({ usdcTrustline: false });
    const config = testConfig({ SUBMITTER_SECRET: submitter.secret, RPC_URL: devnet.rpcUrl });
    const scheme = new ExactStellarScheme({
      network: config.network,
      rpc: createSdkRpc({ url: devnet.rpcUrl, timeoutMs: 5_000 }),
      submitters: signingKeys(config).submitters,
    });
    const dir = mkdtempSync(join(tmpdir(), 'svc-mcp-'));
    const catalog: Catalog = openCatalog({
      dbPath: join(dir, 'catalog.sqlite'),
      logger: { warn: () => undefined, error: () => undefined },
      ...BUSY_MACHINE_BOUNDS,
    });
    cleanups.push(() => {
      void catalog.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const server = await startTestServer({ config, scheme, catalog });
    cleanups.unshift(() => server.close());
    return new McpHarness(devnet, rpc, server.url, createFacilitatorClient(server.url, { timeoutMs: 20_000 }), catalog, cleanups);
  }

  /** Registers something to stop at the end (LIFO after the sellers, before the facilitator). */
  onStop(cleanup: () => Promise<void> | void): void {
    this.cleanups.unshift(cleanup);
  }

  async account(usdc = 0n): Promise<Keypair> {
    const account = await this.devnet.createAccount({ usdc });
    return Keypair.fromSecret(account.secret);
  }

  usdc(address: string): bigint {
    return this.devnet.balances(address).usdc ?? 0n;
  }

  requirements(payTo: string, amount = '100000', overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
    return {
      scheme: 'exact',
      network: 'stellar:testnet',
      asset: this.devnet.usdc.contractId,
      amount,
      payTo,
      maxTimeoutSeconds: 30,
      extra: { areFeesSponsored: true },
      ...overrides,
    };
  }

  /** Spawns the tool server (`npm run mcp`'s entry point, bundled: MCP_BUNDLE) with exactly this environment. */
  async toolServer(env: Record<string, string>): Promise<ToolServer> {
    const transport = new StdioClientTransport({
      command: MCP_BUNDLE[0],
      args: MCP_BUNDLE[1],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        FACILITATOR_URL: this.facilitatorUrl,
        RPC_URL: this.devnet.rpcUrl,
        SVC_MCP_TIMEOUT_MS: '20000',
        ALLOW_PRIVATE_TARGETS: process.env.ALLOW_PRIVATE_TARGETS ?? '',
        ...env,
      },
      stderr: 'pipe',
      cwd: ROOT,
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'svc-mcp-test', version: '0.0.0' });
    await client.connect(transport);
    const tool: ToolServer = {
      client,
      stderr: () => stderr,
      call: async (name, args) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as any,
      close: () => client.close(),
    };
    this.onStop(() => tool.close());
    return tool;
  }

  async stop(): Promise<void> {
    for (const cleanup of this.cleanups) await cleanup();
  }
}

/** The structuredContent of a failed tool result (and a check that it is one). */
export function failure(result: CallToolResult & { structuredContent?: any }): { errorCode: string; reason: string } {
  if (!result.isError) throw new Error(`expected a failed tool result, got ${JSON.stringify(result).slice(0, 500)}`);
  const sc = result.structuredContent;
  if (!sc || typeof sc.errorCode !== 'string' || typeof sc.reason !== 'string' || Object.keys(sc).length !== 2) {
    throw new Error(`failure structuredContent must be exactly {errorCode, reason}: ${JSON.stringify(sc)}`);
  }
  return sc;
}

export function success(result: CallToolResult & { structuredContent?: any }): any {
  if (result.isError) throw new Error(`expected success, got ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 800)}`);
  return result.structuredContent;
}
