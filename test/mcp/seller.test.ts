/**
 * The seller toolkit on its own, against the real facilitator on the devnet: the 402 shapes of
 * both transports, refusals (malformed payment, replay, facilitator down), and that content is
 * never delivered and nothing is charged twice when a payment does not settle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import { startPaidHttpServer, type PaidHttpServer } from '../../src/client/seller-http.ts';
import { startPaidMcpServer, type PaidMcpServer } from '../../src/client/seller-mcp.ts';
import {
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
  type PaymentRequired,
} from '../../src/client/seller.ts';
import type { PaymentPayload } from '../../src/scheme/types.ts';
import { HEX64, McpHarness } from './harness.ts';

let h: McpHarness;
let buyer: Keypair;
let sellerKey: Keypair;
let http: PaidHttpServer;
let offline: PaidHttpServer;
let tools: PaidMcpServer;
let served = 0;

beforeAll(async () => {
  h = await McpHarness.start(200);
  [buyer, sellerKey] = await Promise.all([h.account(5_000_000n), h.account()]);
  const route = {
    method: 'GET' as const,
    path: '/quote',
    accepts: [h.requirements(sellerKey.publicKey(), '100000')],
    description: 'A stock quote',
    handle: () => {
      served += 1;
      return { status: 200, body: { quote: 42 } };
    },
  };
  const echo = {
    method: 'POST' as const,
    path: '/echo',
    accepts: [],
    handle: ({ body }: { body: unknown }) => ({ status: 200, body: { body } }),
  };
  http = await startPaidHttpServer({ facilitator: h.facilitator, routes: [route, echo] });
  h.onStop(() => http.close());
  // The same route behind a facilitator that does not answer.
  offline = await startPaidHttpServer({
    facilitator: createFacilitatorClient('http://127.0.0.1:9', { timeoutMs: 2_000 }),
    routes: [route],
  });
  h.onStop(() => offline.close());
  tools = await startPaidMcpServer({
    facilitator: h.facilitator,
    tools: [
      {
        name: 'quote',
        description: 'A stock quote',
        inputSchema: { type: 'object', properties: { symbol: { type: 'string' } } },
        accepts: [h.requirements(sellerKey.publicKey(), '100000')],
        handler: (args) => ({ content: [{ type: 'text', text: `${String(args.symbol)}: 42` }] }),
      },
    ],
  });
  h.onStop(() => tools.close());
}, 60_000);
afterAll(() => h?.stop());

async function payFor(required: PaymentRequired): Promise<PaymentPayload> {
  return createStellarPayment({
    requirements: required.accepts[0]!,
    signer: buyer,
    rpc: h.rpc,
    resource: required.resource,
    ...(required.extensions ? { extensions: required.extensions } : {}),
  });
}

describe('HTTP seller', () => {
  it('402: PAYMENT-REQUIRED header = JSON body = {x402Version 2, resource, accepts, extensions.bazaar}; nothing served', async () => {
    const before = served;
    const res = await fetch(http.urlOf('/quote'));
    expect(res.status).toBe(402);
    const header = decodeX402Header(res.headers.get(PAYMENT_REQUIRED_HEADER));
    expect(await res.json()).toEqual(header);
    expect(header).toMatchObject({
      x402Version: 2,
      resource: { url: http.urlOf('/quote'), description: 'A stock quote', mimeType: 'application/json' },
      accepts: [{ scheme: 'exact', amount: '100000', payTo: sellerKey.publicKey() }],
      extensions: { bazaar: { info: { input: { type: 'http', method: 'GET' } }, schema: { type: 'object' } } },
    });
    expect(header).not.toHaveProperty('error');
    expect(served).toBe(before);
  });

  it('a malformed PAYMENT-SIGNATURE is a 402 with error svc_malformed_request_body', async () => {
    for (const bad of ['%%%', encodeX402Header([1]), Buffer.from('not json').toString('base64')]) {
      const res = await fetch(http.urlOf('/quote'), { headers: { [PAYMENT_SIGNATURE_HEADER]: bad } });
      expect(res.status).toBe(402);
      expect(decodeX402Header(res.headers.get(PAYMENT_REQUIRED_HEADER))).toMatchObject({ error: 'svc_malformed_request_body' });
    }
  });

  it('pays once; a replay of the same payload is refused with the scheme code and not served or charged again', async () => {
    const required = decodeX402Header(
      (await fetch(http.urlOf('/quote'))).headers.get(PAYMENT_REQUIRED_HEADER),
    ) as unknown as PaymentRequired;
    const payload = await payFor(required);
    const headers = { [PAYMENT_SIGNATURE_HEADER]: encodeX402Header(payload) };
    const first = await fetch(http.urlOf('/quote'), { headers });
    expect(first.status).toBe(200);
    expect(decodeX402Header(first.headers.get(PAYMENT_RESPONSE_HEADER))).toMatchObject({
      success: true,
      transaction: expect.stringMatching(HEX64),
    });
    const [buyerAfter, servedAfter] = [h.usdc(buyer.publicKey()), served];

    const replay = await fetch(http.urlOf('/quote'), { headers });
    expect(replay.status).toBe(402);
    expect(replay.headers.get(PAYMENT_RESPONSE_HEADER)).toBeNull();
    expect(decodeX402Header(replay.headers.get(PAYMENT_REQUIRED_HEADER))).toMatchObject({
      error: 'invalid_exact_stellar_payload_simulation_failed',
    });
    expect(await replay.json()).not.toHaveProperty('quote');
    expect(served).toBe(servedAfter);
    expect(h.usdc(buyer.publicKey())).toBe(buyerAfter);
  });

  it('a facilitator that does not answer: 402 with error svc_internal_error, nothing served, nothing charged', async () => {
    const required = decodeX402Header(
      (await fetch(offline.urlOf('/quote'))).headers.get(PAYMENT_REQUIRED_HEADER),
    ) as unknown as PaymentRequired;
    const [before, servedBefore] = [h.usdc(buyer.publicKey()), served];
    const res = await fetch(offline.urlOf('/quote'), { headers: { [PAYMENT_SIGNATURE_HEADER]: encodeX402Header(await payFor(required)) } });
    expect(res.status).toBe(402);
    expect(decodeX402Header(res.headers.get(PAYMENT_REQUIRED_HEADER))).toMatchObject({ error: 'svc_internal_error' });
    expect(served).toBe(servedBefore);
    expect(h.usdc(buyer.publicKey())).toBe(before);
  });

  it('unknown routes are 404; on a POST route a body over 64 KiB or not JSON is 400', async () => {
    expect((await fetch(`${http.url}/nope`)).status).toBe(404);
    expect((await fetch(http.urlOf('/quote'), { method: 'POST' })).status).toBe(404);
    const ok = await fetch(http.urlOf('/echo'), { method: 'POST', body: '{"a":1}' });
    expect(await ok.json()).toEqual({ body: { a: 1 } });
    const big = await fetch(http.urlOf('/echo'), { method: 'POST', body: JSON.stringify({ a: 'x'.repeat(70_000) }) });
    expect(big.status).toBe(400);
    expect(await big.json()).toEqual({ error: 'The body is larger than 65536 bytes.' });
    expect((await fetch(http.urlOf('/echo'), { method: 'POST', body: '{nope' })).status).toBe(400);
  });
});

describe('MCP seller (x402 MCP transport)', () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'seller-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(tools.url)));
  });
  afterAll(() => client?.close());

  const call = (meta?: Record<string, unknown>) =>
    client.callTool({ name: 'quote', arguments: { symbol: 'XLM' }, ...(meta ? { _meta: meta } : {}) }) as Promise<any>;

  it('unpaid: isError, structuredContent is the PaymentRequired (bazaar mcp), content[0].text is its JSON', async () => {
    const result = await call();
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      x402Version: 2,
      resource: { url: tools.url },
      accepts: [{ amount: '100000' }],
      extensions: {
        bazaar: { info: { input: { type: 'mcp', toolName: 'quote', transport: 'streamable-http', inputSchema: { type: 'object' } } } },
      },
    });
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  });

  it('paid: the tool result with result._meta["x402/payment-response"]; a replay is isError with the scheme code and no tool content', async () => {
    const payload = await payFor((await call()).structuredContent);
    const before = h.usdc(sellerKey.publicKey());
    const paid = await call({ [MCP_PAYMENT_META]: payload });
    expect(paid.isError).toBeFalsy();
    expect(paid.content).toEqual([{ type: 'text', text: 'XLM: 42' }]);
    expect(paid._meta[MCP_PAYMENT_RESPONSE_META]).toMatchObject({
      success: true,
      network: 'stellar:testnet',
      payer: buyer.publicKey(),
      transaction: expect.stringMatching(HEX64),
    });
    expect(h.usdc(sellerKey.publicKey()) - before).toBe(100_000n);

    const replay = await call({ [MCP_PAYMENT_META]: payload });
    expect(replay.isError).toBe(true);
    expect(replay.structuredContent).toMatchObject({ x402Version: 2, error: 'invalid_exact_stellar_payload_simulation_failed' });
    expect(replay.content).toEqual([{ type: 'text', text: JSON.stringify(replay.structuredContent) }]);
    expect(replay._meta?.[MCP_PAYMENT_RESPONSE_META]).toBeUndefined();
    expect(h.usdc(sellerKey.publicKey()) - before).toBe(100_000n);
  });

  it('a payment that is not an object is refused with svc_malformed_request_body', async () => {
    const result = await call({ [MCP_PAYMENT_META]: 'pay me' });
    expect(result.structuredContent).toMatchObject({ error: 'svc_malformed_request_body' });
  });
});
