/**
 * The tool server without a devnet: configuration (exit 78 without echoing values), the tool list,
 * protocol errors, svc_mcp_internal_error, and the spend policy inside the shared payment client.
 * In-process tests connect an MCP client over the SDK's InMemoryTransport; the boundaries stubbed
 * are named per test (the facilitator client port, the ChainRpc port).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { spawn } from 'node:child_process';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Keypair } from '@stellar/stellar-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StellarPaymentError, createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import type { FacilitatorClient } from '../../src/client/facilitator.ts';
import { decodeX402Header, encodeX402Header } from '../../src/client/seller.ts';
import type { ChainRpc } from '../../src/chains/stellar/rpc.ts';
import { loadMcpConfig, walletOf } from '../../src/mcp/config.ts';
import { createToolServer } from '../../src/mcp/server.ts';
import { MCP_BUNDLE } from './harness.ts';

const SEED = Keypair.random().secret();

async function connected(facilitator: Partial<FacilitatorClient>, env: Record<string, string> = {}) {
  const server = createToolServer({ config: loadMcpConfig(env), facilitator: facilitator as FacilitatorClient });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 't', version: '0' });
  await client.connect(b);
  return client;
}

function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(MCP_BUNDLE[0], MCP_BUNDLE[1], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.stdout.on('data', (c) => (stdout += c));
    child.on('close', (code) => resolve({ code, stderr, stdout }));
  });
}

describe('configuration', () => {
  it('defaults: facilitator 127.0.0.1:4021, testnet, cap 10000000, search-only without a key', () => {
    const c = loadMcpConfig({});
    expect(c).toEqual({
      facilitatorUrl: 'http://127.0.0.1:4021',
      network: 'stellar:testnet',
      maxAmount: 10_000_000n,
      rpcUrl: null,
      timeoutMs: 30_000,
      walletAddress: null,
    });
    expect(walletOf(c)).toBeNull();
    expect(loadMcpConfig({ CLIENT_STELLAR_PRIVATE_KEY: '  ' }).walletAddress).toBeNull();
  });

  it('a wallet: public address only in the config (the seed is not serializable), testnet RPC default, pubnet needs RPC_URL', () => {
    const c = loadMcpConfig({ CLIENT_STELLAR_PRIVATE_KEY: SEED });
    expect(c.walletAddress).toBe(Keypair.fromSecret(SEED).publicKey());
    expect(c.rpcUrl).toBe('https://soroban-testnet.stellar.org');
    expect(JSON.stringify(c, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(SEED);
    expect(inspect(c, { showHidden: false })).not.toContain(SEED);
    expect(walletOf(c)!.secret()).toBe(SEED);
    expect(() => loadMcpConfig({ CLIENT_STELLAR_PRIVATE_KEY: SEED, NETWORK: 'stellar:pubnet' })).toThrow(/RPC_URL/);
    expect(loadMcpConfig({ CLIENT_STELLAR_PRIVATE_KEY: SEED, NETWORK: 'stellar:pubnet', RPC_URL: 'https://rpc.example.com/' }).rpcUrl).toBe(
      'https://rpc.example.com',
    );
  });

  it.each([
    [{ CLIENT_STELLAR_PRIVATE_KEY: 'SNOTAREALSEED' }, 'CLIENT_STELLAR_PRIVATE_KEY'],
    [{ CLIENT_STELLAR_PRIVATE_KEY: Keypair.random().publicKey() }, 'CLIENT_STELLAR_PRIVATE_KEY'],
    [{ SVC_MCP_MAX_AMOUNT: '0' }, 'SVC_MCP_MAX_AMOUNT'],
    [{ SVC_MCP_MAX_AMOUNT: '-5' }, 'SVC_MCP_MAX_AMOUNT'],
    [{ SVC_MCP_MAX_AMOUNT: '1.5' }, 'SVC_MCP_MAX_AMOUNT'],
    [{ SVC_MCP_MAX_AMOUNT: '1e7' }, 'SVC_MCP_MAX_AMOUNT'],
    [{ FACILITATOR_URL: 'not a url' }, 'FACILITATOR_URL'],
    [{ FACILITATOR_URL: 'ftp://x.example' }, 'FACILITATOR_URL'],
    [{ FACILITATOR_URL: 'http://user:pw@x.example' }, 'FACILITATOR_URL'],
    [{ NETWORK: 'stellar:futurenet' }, 'NETWORK'],
    [{ RPC_URL: 'localhost:8000' }, 'RPC_URL'],
    [{ SVC_MCP_TIMEOUT_MS: '10' }, 'SVC_MCP_TIMEOUT_MS'],
    [{ ALLOW_PRIVATE_TARGETS: '127.0.0.0/8,garbage' }, 'ALLOW_PRIVATE_TARGETS'],
  ])('refuses %j naming %s', (env, variable) => {
    expect(() => loadMcpConfig(env)).toThrow(new RegExp(`^${variable}: `));
  });

  it('the tool server (dist/mcp/main.js) with a malformed key exits 78 with one line that never echoes the value', async () => {
    const secretish = `S${'Q'.repeat(55)}`;
    const run = await runMain({ CLIENT_STELLAR_PRIVATE_KEY: secretish });
    expect(run.code).toBe(78);
    expect(run.stdout).toBe('');
    const lines = run.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('svc-mcp'));
    expect(lines).toEqual([
      'svc-mcp: invalid configuration: CLIENT_STELLAR_PRIVATE_KEY: is not a valid Stellar ed25519 secret seed (S…, 56 characters).',
    ]);
    expect(run.stderr).not.toContain(secretish);
    expect(run.stderr).not.toContain('QQQQ');
    const cap = await runMain({ SVC_MCP_MAX_AMOUNT: 'lots' });
    expect(cap.code).toBe(78);
    expect(cap.stderr).toMatch(/SVC_MCP_MAX_AMOUNT/);
    expect(cap.stderr).not.toContain('lots');
  });
});

describe('protocol', () => {
  it('lists the two tools with JSON Schemas; an unknown tool is a JSON-RPC error, not a result', async () => {
    const client = await connected({});
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_resources', 'paid_call']);
    expect(tools[0]!.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    expect(Object.keys(tools[1]!.inputSchema.properties!)).toEqual(['resourceId', 'url', 'toolName', 'input', 'method', 'ignoreLiveness']);
    await expect(client.callTool({ name: 'buy_everything', arguments: {} })).rejects.toThrow(
      /^MCP error -32602: Unknown tool "buy_everything"; the tools are search_resources and paid_call\.$/,
    );
  });

  it('tools/list describes the tools (titles, annotations, output schemas), the server gives instructions, and results validate against the output schemas', async () => {
    const listing = {
      resource: 'https://api.example.com/weather',
      type: 'http',
      x402Version: 2,
      lastUpdated: '2026-11-22T05:00:00.000Z',
      quality: { l30DaysTotalCalls: 3, l30DaysUniquePayers: 2, lastCalledAt: '2026-11-22T05:00:00.000Z' },
      liveness: { status: 'live' as const, checkedAt: '2026-11-22T06:00:00.000Z' },
      description: 'Weather',
      accepts: [{ scheme: 'exact', network: 'stellar:testnet', asset: 'C', amount: '100', payTo: 'G', maxTimeoutSeconds: 60 }],
    };
    const client = await connected({
      search: async () => ({
        ok: true,
        data: {
          x402Version: 2,
          resources: [listing],
          partialResults: false,
          pagination: { limit: 1, cursor: null },
          searchMethod: 'text' as const,
          searchedTerms: [],
          droppedTerms: [],
          relevance: 'none' as const,
        },
      }),
    });
    expect(client.getInstructions()).toMatch(/search_resources first.*paid_call/s);
    expect(client.getServerVersion()?.title).toBeTruthy();
    const { tools } = await client.listTools();
    const [search, paid] = tools;
    expect(search!.title).toBe('Search paid resources');
    expect(search!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    expect(paid!.title).toBe('Call and pay for a resource');
    expect(paid!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
    for (const tool of tools) expect(tool.outputSchema).toMatchObject({ type: 'object' });
    expect((search!.inputSchema.properties!.filters as any).properties.type.enum).toEqual(['http', 'mcp']);

    // The input schema says "exactly one of resourceId / url" (and no method with an id).
    const ajv = new Ajv2020({ strict: false });
    const validInput = ajv.compile(paid!.inputSchema);
    expect(validInput({ resourceId: 'svc1:x' })).toBe(true);
    expect(validInput({ url: 'https://a.example/', method: 'POST' })).toBe(true);
    expect(validInput({ resourceId: 'svc1:x', url: 'https://a.example/' })).toBe(false);
    expect(validInput({ resourceId: 'svc1:x', method: 'GET' })).toBe(false);
    expect(validInput({})).toBe(false);

    // The SDK client validates structuredContent against the listed outputSchema (it throws on a mismatch).
    const output = ajv.compile(search!.outputSchema!);
    const hits = (await client.callTool({ name: 'search_resources', arguments: { query: 'weather' } })) as any;
    expect(hits.isError).toBeUndefined();
    expect(output(hits.structuredContent), ajv.errorsText(output.errors)).toBe(true);
    // Each hit carries the listing's quality signals.
    expect(hits.structuredContent.hits[0].quality).toEqual({
      l30DaysTotalCalls: 3,
      l30DaysUniquePayers: 2,
      lastCalledAt: '2026-11-22T05:00:00.000Z',
    });
    expect((search!.outputSchema as any).anyOf[0].properties.hits.items.properties.quality.required).toEqual([
      'l30DaysTotalCalls',
      'l30DaysUniquePayers',
      'lastCalledAt',
    ]);
    const bogus = (await client.callTool({ name: 'search_resources', arguments: { query: 'weather', filters: { type: 'bogus' } } })) as any;
    expect(bogus.structuredContent).toMatchObject({
      errorCode: 'svc_mcp_invalid_arguments',
      reason: expect.stringContaining('filters.type'),
    });
    expect(output(bogus.structuredContent)).toBe(true);
    const failed = (await client.callTool({ name: 'paid_call', arguments: { resourceId: 'svc1:nonsense' } })) as any;
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent.reason).toMatch(/nothing was paid/i);
    expect(ajv.compile(paid!.outputSchema!)(failed.structuredContent)).toBe(true);
  });

  it('svc_mcp_internal_error: an unexpected fault inside the server (facilitator client port throwing a non-transport error)', async () => {
    const client = await connected({
      search: async () => {
        throw new TypeError('Cannot read properties of undefined');
      },
    });
    const result = (await client.callTool({ name: 'search_resources', arguments: { query: 'x' } })) as any;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      errorCode: 'svc_mcp_internal_error',
      reason: expect.stringMatching(/The tool server failed\. Cannot read properties/),
    });
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  });

  it('a discovery page with an unexpected shape is svc_mcp_internal_error too, never a crash', async () => {
    const client = await connected({ search: async () => ({ ok: true, data: { resources: null } as any }) });
    const result = (await client.callTool({ name: 'search_resources', arguments: { query: 'x' } })) as any;
    expect(result.structuredContent.errorCode).toBe('svc_mcp_internal_error');
  });
});

describe('spend policy inside the shared payment client', () => {
  it('createStellarPayment with maxAmount refuses an over-cap amount before any RPC call or signature', async () => {
    const calls: string[] = [];
    const rpc = new Proxy({} as ChainRpc, {
      get: (_t, name) => () => (calls.push(String(name)), Promise.reject(new Error('no RPC expected'))),
    });
    const requirements = {
      scheme: 'exact',
      network: 'stellar:testnet',
      asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
      amount: '10000001',
      payTo: Keypair.random().publicKey(),
      maxTimeoutSeconds: 30,
    };
    const err = await createStellarPayment({ requirements, signer: Keypair.random(), rpc, maxAmount: 10_000_000n }).catch((e) => e);
    expect(err).toBeInstanceOf(StellarPaymentError);
    expect(err.reason).toBe('over_spend_cap');
    expect(err.message).toMatch(/10000001 base units .* 10000000 base units/);
    expect(calls).toEqual([]);
    // At the cap it proceeds to the chain (and here hits the refusing RPC port).
    const atCap = await createStellarPayment({
      requirements: { ...requirements, amount: '10000000' },
      signer: Keypair.random(),
      rpc,
      maxAmount: 10_000_000n,
    }).catch((e) => e);
    expect(atCap.reason).toBe('rpc_error');
    expect(calls.length).toBeGreaterThan(0);
  });
});

describe('PAYMENT-* header codec', () => {
  it('round-trips objects and refuses non-base64, non-JSON and non-object values', () => {
    const value = { x402Version: 2, accepts: [{ amount: '1' }], note: 'ü' };
    expect(decodeX402Header(encodeX402Header(value))).toEqual(value);
    for (const bad of [
      undefined,
      null,
      '',
      'not base64!',
      Buffer.from('nope').toString('base64'),
      encodeX402Header([1, 2]),
      encodeX402Header('s'),
      encodeX402Header(null),
    ]) {
      expect(decodeX402Header(bad as any)).toBeUndefined();
    }
  });
});
