/**
 * The agent tool server end to end: an MCP client spawns it (dist/mcp/main.js) over stdio, finds
 * devnet-settled listings with search_resources and pays them with paid_call, once for an HTTP
 * seller and once for an MCP tool seller (both built with the seller toolkit). Receipts are looked
 * up on the devnet and balances read from its ledger. The MCP tool's listing appears in the
 * catalog through its own settlement; ids are the same across two independently started servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { startPaidHttpServer, type PaidHttpServer } from '../../src/client/seller-http.ts';
import { startPaidMcpServer, type PaidMcpServer } from '../../src/client/seller-mcp.ts';
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
} from '../../src/client/seller.ts';
import { encodeResourceId } from '../../src/mcp/resource-id.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { HEX64, McpHarness, success, type ToolServer } from './harness.ts';

let h: McpHarness;
let buyer: Keypair;
let httpSellerKey: Keypair;
let mcpSellerKey: Keypair;
let httpSeller: PaidHttpServer;
let mcpSeller: PaidMcpServer;
let agent: ToolServer;

const WEATHER_PRICE = '100000';
const FORECAST_PRICE = '200000';

beforeAll(async () => {
  h = await McpHarness.start(200);
  [buyer, httpSellerKey, mcpSellerKey] = await Promise.all([h.account(10_000_000n), h.account(), h.account()]);
  httpSeller = await startPaidHttpServer({
    facilitator: h.facilitator,
    routes: [
      {
        method: 'GET',
        path: '/weather',
        accepts: [h.requirements(httpSellerKey.publicKey(), WEATHER_PRICE)],
        description: 'Weather forecast for a city',
        serviceName: 'WeatherNow',
        tags: ['weather', 'forecast'],
        inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] },
        example: { city: 'Lisbon' },
        handle: ({ query }) =>
          query.get('city')
            ? { status: 200, body: { city: query.get('city'), forecast: 'sunny', celsius: 21 } }
            : { status: 400, body: { error: 'city is required' } },
      },
    ],
  });
  h.onStop(() => httpSeller.close());
  mcpSeller = await startPaidMcpServer({
    facilitator: h.facilitator,
    tools: [
      {
        name: 'tide_table',
        description: 'Tide table for a harbour',
        serviceName: 'TideTools',
        tags: ['tides', 'marine'],
        inputSchema: { type: 'object', properties: { harbour: { type: 'string', description: 'Harbour name' } }, required: ['harbour'] },
        accepts: [h.requirements(mcpSellerKey.publicKey(), FORECAST_PRICE)],
        handler: (args) => ({
          content: [{ type: 'text', text: `High tide at ${String(args.harbour)}: 14:05` }],
          structuredContent: { harbour: args.harbour, highTide: '14:05' },
        }),
      },
    ],
  });
  h.onStop(() => mcpSeller.close());
  agent = await h.toolServer({ CLIENT_STELLAR_PRIVATE_KEY: buyer.secret() });
}, 60_000);
afterAll(() => h?.stop());

/** A buyer outside the tool server pays the HTTP seller directly (seller middleware + shared builder). */
async function directPurchase(
  payer: Keypair,
  url: string,
): Promise<{ status: number; receipt: Record<string, unknown> | undefined; body: unknown }> {
  const unpaid = await fetch(url);
  expect(unpaid.status).toBe(402);
  const required = decodeX402Header(unpaid.headers.get(PAYMENT_REQUIRED_HEADER))!;
  expect(required).toMatchObject({ x402Version: 2, resource: { url: httpSeller.urlOf('/weather') } });
  expect(await unpaid.json()).toEqual(required);
  const requirements = (required.accepts as PaymentRequirements[])[0]!;
  const payload: PaymentPayload = await createStellarPayment({
    requirements,
    signer: payer,
    rpc: h.rpc,
    resource: required.resource as any,
    extensions: required.extensions as any,
  });
  const paid = await fetch(url, { headers: { [PAYMENT_SIGNATURE_HEADER]: encodeX402Header(payload) } });
  return { status: paid.status, receipt: decodeX402Header(paid.headers.get(PAYMENT_RESPONSE_HEADER)), body: await paid.json() };
}

describe('HTTP seller', () => {
  it('the seller middleware answers 402 with PAYMENT-REQUIRED (bazaar http extension), then serves and settles with PAYMENT-RESPONSE', async () => {
    const other = await h.account(1_000_000n);
    const before = h.usdc(httpSellerKey.publicKey());
    const bought = await directPurchase(other, `${httpSeller.urlOf('/weather')}?city=Porto`);
    expect(bought.status).toBe(200);
    expect(bought.body).toEqual({ city: 'Porto', forecast: 'sunny', celsius: 21 });
    expect(bought.receipt).toMatchObject({ success: true, network: 'stellar:testnet', payer: other.publicKey() });
    expect(bought.receipt!.transaction).toMatch(HEX64);
    expect(h.usdc(httpSellerKey.publicKey()) - before).toBe(BigInt(WEATHER_PRICE));
    expect(h.usdc(other.publicKey())).toBe(1_000_000n - BigInt(WEATHER_PRICE));
    // The settlement cataloged the resource with its calling convention.
    const listed = await h.facilitator.list({ resource: httpSeller.urlOf('/weather'), type: 'http' });
    expect(listed.ok && listed.data.items).toHaveLength(1);
  });

  it('search_resources finds the settled listing; paid_call pays it by id: result, on-chain receipt, exact balances', async () => {
    const found = success(await agent.call('search_resources', { query: 'weather forecast city' }));
    const hit = found.hits.find((x: any) => x.resource === httpSeller.urlOf('/weather'));
    expect(hit).toMatchObject({
      id: encodeResourceId({ type: 'http', resource: httpSeller.urlOf('/weather'), toolName: '' }),
      type: 'http',
      name: 'WeatherNow',
      description: 'Weather forecast for a city',
      price: {
        amount: WEATHER_PRICE,
        asset: h.devnet.usdc.contractId,
        payTo: httpSellerKey.publicKey(),
        scheme: 'exact',
        network: 'stellar:testnet',
      },
      network: 'stellar:testnet',
      call: {
        type: 'http',
        method: 'GET',
        queryParams: { city: 'Lisbon' },
        schema: { type: 'object', properties: { city: { type: 'string', description: 'City name' } } },
      },
    });
    expect(found).toHaveProperty('nextCursor');

    const [buyerBefore, sellerBefore] = [h.usdc(buyer.publicKey()), h.usdc(httpSellerKey.publicKey())];
    const paid = success(await agent.call('paid_call', { resourceId: hit.id, input: { city: 'Lisbon' } }));
    expect(paid).toMatchObject({ paid: true, result: { status: 200, body: { city: 'Lisbon', forecast: 'sunny', celsius: 21 } } });
    expect(paid.receipt).toEqual({ transaction: expect.stringMatching(HEX64), network: 'stellar:testnet', payer: buyer.publicKey() });
    expect(paid.confirmedOnChain).toBe(true);
    const onChain = await h.rpc.getTransaction(paid.receipt.transaction);
    expect(onChain.status).toBe('SUCCESS');
    expect(buyerBefore - h.usdc(buyer.publicKey())).toBe(BigInt(WEATHER_PRICE));
    expect(h.usdc(httpSellerKey.publicKey()) - sellerBefore).toBe(BigInt(WEATHER_PRICE));
  });
});

describe('concurrency', () => {
  it('three concurrent paid_calls from one tool server each settle once (distinct transactions, exact balances)', async () => {
    const hit = success(await agent.call('search_resources', { query: 'weather' })).hits.find(
      (x: any) => x.resource === httpSeller.urlOf('/weather'),
    );
    const [buyerBefore, sellerBefore] = [h.usdc(buyer.publicKey()), h.usdc(httpSellerKey.publicKey())];
    const results = await Promise.all(
      ['Faro', 'Braga', 'Evora'].map((city) => agent.call('paid_call', { resourceId: hit.id, input: { city } })),
    );
    const paid = results.map(success);
    expect(paid.map((p: any) => p.result.body.city)).toEqual(['Faro', 'Braga', 'Evora']);
    expect(new Set(paid.map((p: any) => p.receipt.transaction)).size).toBe(3);
    expect(buyerBefore - h.usdc(buyer.publicKey())).toBe(3n * BigInt(WEATHER_PRICE));
    expect(h.usdc(httpSellerKey.publicKey()) - sellerBefore).toBe(3n * BigInt(WEATHER_PRICE));
  });
});

describe('MCP tool seller', () => {
  it('paid_call pays an MCP tool by url (x402 MCP transport); its own settlement lists it; search finds it; paid_call by id pays again', async () => {
    const url = mcpSeller.url;
    expect(success(await agent.call('search_resources', { query: 'tide harbour' })).hits.filter((x: any) => x.resource === url)).toEqual(
      [],
    );

    const [buyerBefore, sellerBefore] = [h.usdc(buyer.publicKey()), h.usdc(mcpSellerKey.publicKey())];
    const first = success(await agent.call('paid_call', { url, toolName: 'tide_table', input: { harbour: 'Setubal' } }));
    expect(first).toMatchObject({
      paid: true,
      result: {
        structuredContent: { harbour: 'Setubal', highTide: '14:05' },
        content: [{ type: 'text', text: 'High tide at Setubal: 14:05' }],
      },
    });
    expect((await h.rpc.getTransaction(first.receipt.transaction)).status).toBe('SUCCESS');
    expect(first.receipt).toMatchObject({ network: 'stellar:testnet', payer: buyer.publicKey() });
    expect(buyerBefore - h.usdc(buyer.publicKey())).toBe(BigInt(FORECAST_PRICE));
    expect(h.usdc(mcpSellerKey.publicKey()) - sellerBefore).toBe(BigInt(FORECAST_PRICE));

    const found = success(await agent.call('search_resources', { query: 'tide harbour', filters: { type: 'mcp' } }));
    const hit = found.hits.find((x: any) => x.resource === url);
    expect(hit).toMatchObject({
      id: encodeResourceId({ type: 'mcp', resource: url, toolName: 'tide_table' }),
      type: 'mcp',
      toolName: 'tide_table',
      name: 'TideTools',
      price: { amount: FORECAST_PRICE, payTo: mcpSellerKey.publicKey() },
      call: {
        type: 'mcp',
        toolName: 'tide_table',
        transport: 'streamable-http',
        inputSchema: { type: 'object', properties: { harbour: { type: 'string', description: 'Harbour name' } }, required: ['harbour'] },
      },
    });

    const second = success(await agent.call('paid_call', { resourceId: hit.id, input: { harbour: 'Sines' } }));
    expect(second.result.structuredContent).toEqual({ harbour: 'Sines', highTide: '14:05' });
    expect(second.receipt.transaction).not.toBe(first.receipt.transaction);
    expect((await h.rpc.getTransaction(second.receipt.transaction)).status).toBe('SUCCESS');
    expect(buyerBefore - h.usdc(buyer.publicKey())).toBe(2n * BigInt(FORECAST_PRICE));
    expect(h.usdc(mcpSellerKey.publicKey()) - sellerBefore).toBe(2n * BigInt(FORECAST_PRICE));
  });
});

describe('ids', () => {
  it('the same listing yields the same id on two independently started tool servers (one without a wallet)', async () => {
    const other = await h.toolServer({});
    const a = success(await agent.call('search_resources', { query: 'weather tide' })).hits.map((x: any) => [x.resource, x.id]);
    const b = success(await other.call('search_resources', { query: 'weather tide' })).hits.map((x: any) => [x.resource, x.id]);
    expect(a.length).toBeGreaterThanOrEqual(2);
    expect(b).toEqual(a);
  });

  it('search paging: limit 1 walks every hit once through nextCursor', async () => {
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = success(await agent.call('search_resources', { query: 'weather tide', limit: 1, ...(cursor ? { cursor } : {}) }));
      expect(page.hits.length).toBeLessThanOrEqual(1);
      seen.push(...page.hits.map((x: any) => x.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThanOrEqual(2);
  });
});
