/**
 * The seller toolkit against the stock x402 stack (dev-only packages): @x402/fetch's
 * wrapFetchWithPayment drives the PAYMENT-* header exchange against our HTTP seller (with our
 * buyer builder registered as its `exact` scheme client), the stock header codecs and zod schemas
 * read what our seller sends, and the stock bazaar validators accept our declared extensions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import { extractDiscoveryInfo, validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { startPaidHttpServer, type PaidHttpServer } from '../../src/client/seller-http.ts';
import { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, httpBazaar, mcpBazaar } from '../../src/client/seller.ts';
import type { PaymentRequirements } from '../../src/scheme/types.ts';
import { HEX64, McpHarness } from './harness.ts';

let h: McpHarness;
let buyer: Keypair;
let sellerKey: Keypair;
let seller: PaidHttpServer;

beforeAll(async () => {
  h = await McpHarness.start(200);
  [buyer, sellerKey] = await Promise.all([h.account(1_000_000n), h.account()]);
  seller = await startPaidHttpServer({
    facilitator: h.facilitator,
    routes: [
      {
        method: 'POST',
        path: '/translate',
        accepts: [h.requirements(sellerKey.publicKey(), '150000')],
        description: 'Translate a sentence',
        serviceName: 'Translator',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string', description: 'Sentence to translate' }, to: { type: 'string' } },
          required: ['text'],
        },
        example: { text: 'bom dia', to: 'en' },
        handle: ({ body }) => ({ status: 200, body: { translated: `(${String((body as any)?.to)}) ${String((body as any)?.text)}` } }),
      },
    ],
  });
  h.onStop(() => seller.close());
}, 60_000);
afterAll(() => h?.stop());

describe('stock x402 buyer against our HTTP seller', () => {
  it('wrapFetchWithPayment pays through PAYMENT-REQUIRED / PAYMENT-SIGNATURE / PAYMENT-RESPONSE; the settlement catalogs the POST route', async () => {
    const url = seller.urlOf('/translate');
    const unpaid = await fetch(url, { method: 'POST', body: '{"text":"x"}', headers: { 'content-type': 'application/json' } });
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get(PAYMENT_REQUIRED_HEADER)!);
    expect(PaymentRequiredV2Schema.safeParse(required).success).toBe(true);

    const exactClient = {
      scheme: 'exact',
      createPaymentPayload: async (x402Version: number, requirements: unknown) => {
        const payload = await createStellarPayment({ requirements: requirements as PaymentRequirements, signer: buyer, rpc: h.rpc });
        return { x402Version, payload: payload.payload! };
      },
    };
    const payingFetch = wrapFetchWithPaymentFromConfig(fetch, {
      schemes: [{ network: 'stellar:testnet', client: exactClient }],
      spendControls: { allowedAssets: [{ network: 'stellar:testnet', asset: h.devnet.usdc.contractId, maxAmountPerPayment: '1000000' }] },
    });
    const paid = await payingFetch(url, {
      method: 'POST',
      body: JSON.stringify({ text: 'bom dia', to: 'en' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ translated: '(en) bom dia' });
    const receipt = decodePaymentResponseHeader(paid.headers.get(PAYMENT_RESPONSE_HEADER)!);
    expect(receipt).toMatchObject({ success: true, network: 'stellar:testnet', payer: buyer.publicKey() });
    expect(receipt.transaction).toMatch(HEX64);
    expect((await h.rpc.getTransaction(receipt.transaction)).status).toBe('SUCCESS');
    expect(h.usdc(sellerKey.publicKey())).toBe(150_000n);
    expect(h.usdc(buyer.publicKey())).toBe(850_000n);

    // The stock client echoed our bazaar declaration, so the settlement listed the resource.
    const listed = await h.facilitator.list({ resource: url, type: 'http' });
    expect(listed.ok && listed.data.items[0]).toMatchObject({
      resource: url,
      serviceName: 'Translator',
      extensions: { bazaar: { info: { input: { type: 'http', method: 'POST', bodyType: 'json', body: { text: 'bom dia', to: 'en' } } } } },
    });
  });
});

describe('stock bazaar validators accept our declarations', () => {
  const requirements = { scheme: 'exact', network: 'stellar:testnet', asset: 'C', amount: '1', payTo: 'G', maxTimeoutSeconds: 30 };
  it.each([
    [
      'http GET',
      httpBazaar({ method: 'GET', inputSchema: { type: 'object', properties: { city: { type: 'string' } } }, example: { city: 'Lisbon' } }),
    ],
    [
      'http POST',
      httpBazaar({ method: 'POST', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, example: { text: 'hi' } }),
    ],
    [
      'mcp',
      mcpBazaar({
        toolName: 'tide_table',
        inputSchema: { type: 'object', properties: { harbour: { type: 'string' } } },
        description: 'Tides',
        example: { harbour: 'Sines' },
      }),
    ],
  ])('%s', (_name, bazaar) => {
    expect(validateDiscoveryExtension(bazaar as any)).toMatchObject({ valid: true });
    expect(validateDiscoveryExtensionSpec(bazaar as any)).toMatchObject({ valid: true });
    const info = extractDiscoveryInfo(
      {
        x402Version: 2,
        resource: { url: 'https://api.example.com/x?y=1' },
        accepted: requirements,
        payload: {},
        extensions: { bazaar },
      } as any,
      requirements as any,
    );
    expect(info).not.toBeNull();
    expect(info!.resourceUrl).toBe('https://api.example.com/x');
  });
});
