/**
 * The two bindings of x402's MCP transport (docs/MCP.md "x402 bindings") on the devnet, with real
 * signatures: paid_call (the stdio tool server, spawned) pays a 2026-07-28 seller through the
 * `org.x402/payment` extension (a `payment_required` result) and a seller of before 2026-07-28
 * (MCP 2025-11-25 only) through the tool-result binding; receipts are looked up on chain and
 * balances read from the ledger. The sellers' wire answers are checked over raw HTTP: the
 * extension only for a client that names it, the tool-result binding for any other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { startPaidMcpServer, type PaidMcpServer, type PaidTool } from '../../src/client/seller-mcp.ts';
import { HEX64, McpHarness, success, type ToolServer } from './harness.ts';

const MODERN = '2026-07-28';
const PRICE = '150000';

let h: McpHarness;
let buyer: Keypair;
let sellerKey: Keypair;
let modernSeller: PaidMcpServer;
let olderSeller: PaidMcpServer;
let agent: ToolServer;

const tool = (): PaidTool => ({
  name: 'harbour_depth',
  description: 'Water depth at a harbour entrance',
  inputSchema: { type: 'object', properties: { harbour: { type: 'string' } }, required: ['harbour'] },
  accepts: [h.requirements(sellerKey.publicKey(), PRICE)],
  handler: (args) => ({
    content: [{ type: 'text', text: `${String(args.harbour)}: 12 m` }],
    structuredContent: { harbour: args.harbour, metres: 12 },
  }),
});

beforeAll(async () => {
  h = await McpHarness.start(200);
  [buyer, sellerKey] = await Promise.all([h.account(10_000_000n), h.account()]);
  modernSeller = await startPaidMcpServer({ facilitator: h.facilitator, tools: [tool()] });
  h.onStop(() => modernSeller.close());
  olderSeller = await startPaidMcpServer({ facilitator: h.facilitator, tools: [tool()], legacyOnly: true });
  h.onStop(() => olderSeller.close());
  agent = await h.toolServer({ CLIENT_STELLAR_PRIVATE_KEY: buyer.secret() });
}, 60_000);
afterAll(() => h?.stop());

/** One JSON-RPC request in MCP 2026-07-28 form, with these client capabilities. */
async function modernCall(url: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(method === 'tools/call' ? { 'mcp-name': String(params.name) } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          ...(params._meta as object | undefined),
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': capabilities,
          'io.modelcontextprotocol/clientInfo': { name: 'wire-test', version: '1' },
        },
      },
    }),
  });
  return (await res.json()) as { result?: any; error?: any };
}

describe('the seller toolkit, on the wire', () => {
  it('a 2026-07-28 seller offers the extension in server/discover', async () => {
    const discover = await modernCall(modernSeller.url, 'server/discover', {});
    expect(discover.result.supportedVersions).toContain(MODERN);
    expect(discover.result.capabilities.extensions).toEqual({ 'org.x402/payment': {} });
  });

  it('an unpaid call is payment_required for a client naming the extension, an isError result for any other', async () => {
    const args = { name: 'harbour_depth', arguments: { harbour: 'Faro' } };
    const extension = await modernCall(modernSeller.url, 'tools/call', args, { extensions: { 'org.x402/payment': {} } });
    expect(extension.result).toMatchObject({
      resultType: 'payment_required',
      paymentRequired: { x402Version: 2, resource: { url: modernSeller.url }, accepts: [{ amount: PRICE, payTo: sellerKey.publicKey() }] },
    });
    expect(extension.result.content ?? []).toEqual([]); // no tool content: the tool did not run

    const toolResult = await modernCall(modernSeller.url, 'tools/call', args);
    expect(toolResult.result).toMatchObject({ resultType: 'complete', isError: true, structuredContent: { x402Version: 2 } });
    expect(JSON.parse(toolResult.result.content[0].text)).toEqual(toolResult.result.structuredContent);
  });

  it('a refused payment in the extension binding is payment_required again, its error the facilitator code', async () => {
    const refused = await modernCall(
      modernSeller.url,
      'tools/call',
      { name: 'harbour_depth', arguments: { harbour: 'Faro' }, _meta: { 'x402/payment': { x402Version: 2, payload: {} } } },
      { extensions: { 'org.x402/payment': {} } },
    );
    expect(refused.result.resultType).toBe('payment_required');
    expect(refused.result.paymentRequired.error).toMatch(/^[a-z_]+$/);
  });

  it('a seller of before 2026-07-28 refuses the 2026-07-28 revision and offers no extension', async () => {
    const discover = await modernCall(olderSeller.url, 'server/discover', {});
    // Refused as a 2025-11-25 transport refuses an unknown MCP-Protocol-Version: no discovery, no extension.
    expect(discover.result).toBeUndefined();
    expect(discover.error.message).toMatch(/protocol version/i);
  });
});

describe('paid_call', () => {
  it(`pays a ${MODERN} seller through org.x402/payment: receipt on chain, exact balances`, async () => {
    const [buyerBefore, sellerBefore] = [h.usdc(buyer.publicKey()), h.usdc(sellerKey.publicKey())];
    const paid = success(await agent.call('paid_call', { url: modernSeller.url, toolName: 'harbour_depth', input: { harbour: 'Faro' } }));
    expect(paid).toMatchObject({
      target: { type: 'mcp', url: modernSeller.url, toolName: 'harbour_depth', binding: 'org.x402/payment' },
      paid: true,
      result: { structuredContent: { harbour: 'Faro', metres: 12 } },
      receipt: { network: 'stellar:testnet', payer: buyer.publicKey() },
      confirmedOnChain: true,
    });
    expect(paid.receipt.transaction).toMatch(HEX64);
    expect((await h.rpc.getTransaction(paid.receipt.transaction)).status).toBe('SUCCESS');
    expect(buyerBefore - h.usdc(buyer.publicKey())).toBe(BigInt(PRICE));
    expect(h.usdc(sellerKey.publicKey()) - sellerBefore).toBe(BigInt(PRICE));
  });

  it('falls back to the tool-result binding against a seller of before 2026-07-28', async () => {
    const [buyerBefore, sellerBefore] = [h.usdc(buyer.publicKey()), h.usdc(sellerKey.publicKey())];
    const paid = success(await agent.call('paid_call', { url: olderSeller.url, toolName: 'harbour_depth', input: { harbour: 'Sines' } }));
    expect(paid).toMatchObject({
      target: { binding: 'tool-result' },
      paid: true,
      result: { structuredContent: { harbour: 'Sines', metres: 12 } },
      confirmedOnChain: true,
    });
    expect((await h.rpc.getTransaction(paid.receipt.transaction)).status).toBe('SUCCESS');
    expect(buyerBefore - h.usdc(buyer.publicKey())).toBe(BigInt(PRICE));
    expect(h.usdc(sellerKey.publicKey()) - sellerBefore).toBe(BigInt(PRICE));
  });
});
