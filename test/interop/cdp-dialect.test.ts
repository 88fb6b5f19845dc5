/**
 * What an agent tool built for the CDP Bazaar asks of svc, black box over HTTP with a stock
 * @x402/express seller paid by the stock @x402/fetch buyer on the devnet (docs/CATALOG.md
 * "Merchant", "Checking a listing"): the merchant lookup in CDP's shape with offset paging, and
 * POST /discovery/validate's `index` (listed now or not, and why).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as StellarClientScheme } from '@x402/stellar/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../src/dev/stack.ts';
import { api } from '../helpers/contract.ts';
import { trustCertAndBlockDns, type OfflineHttps } from '../helpers/offline-https.ts';
import { startStockSeller, type StockSeller } from './stock-seller.ts';

let stack: Stack;
let seller: StockSeller;
let dataDir: string;
let offline: OfflineHttps;
let client: ReturnType<typeof api>;

const ROUTES = ['weather', 'forecast', 'tides'] as const;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-cdp-'));
  stack = await startStack({ dataDir, ledgerMs: 1000 });
  client = api(stack.svc.url);
  offline = trustCertAndBlockDns(stack.devnet.caCertPem!);
  const payTo = stack.accounts.seller.publicKey;
  const route = (name: string, price: string) => ({
    accepts: { scheme: 'exact', network: 'stellar:testnet' as const, payTo, price, maxTimeoutSeconds: 60 },
    description: `The ${name} of a city`,
    mimeType: 'application/json',
    extensions: declareDiscoveryExtension({ input: { city: 'Lisbon' } }),
  });
  seller = await startStockSeller({
    facilitatorUrl: stack.svc.url,
    routes: {
      'GET /weather': route('weather', '$0.001'),
      'GET /forecast': route('forecast', '$0.02'),
      'GET /tides': route('tides', '$0.5'),
    },
    handlers: Object.fromEntries(ROUTES.map((r) => [`GET /${r}`, () => ({ ok: r })])),
  });
  const buyer = x402Client.fromConfig({
    schemes: [
      {
        network: 'stellar:testnet',
        client: new StellarClientScheme(createEd25519Signer(stack.accounts.buyer.secret, 'stellar:testnet'), {
          url: stack.devnet.httpsRpcUrl!,
        }),
      },
    ],
    // @x402/stellar 2.9.0 predates core's default-asset table (docs/INTEROP.md, incompatibility 1).
    spendControls: {
      allowedAssets: [{ network: 'stellar:testnet', asset: stack.devnet.usdc.contractId, maxAmountPerPayment: '10000000' }],
    },
  });
  const pay = wrapFetchWithPayment(fetch, buyer);
  for (const r of ROUTES) {
    const res = await pay(`${seller.url}/${r}?city=Lisbon`);
    expect(res.status, r).toBe(200);
  }
  // Each new listing waits for svc to ask the seller's server (docs/CATALOG.md "Ownership and refresh"): seconds.
  for (let waited = 0; (await client.get(`/discovery/resources?payTo=${payTo}`)).body.pagination.total < ROUTES.length; waited += 100) {
    if (waited > 15_000) throw new Error('the paid routes were not listed within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 120_000);

afterAll(async () => {
  offline?.restore();
  await seller?.close();
  await stack?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('GET /discovery/merchant', () => {
  it("answers the seller's listings in CDP's shape, newest first, offset-paged", async () => {
    const payTo = stack.accounts.seller.publicKey;
    const all = await client.get(`/discovery/merchant?payTo=${payTo}`);
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['pagination', 'payTo', 'resources', 'x402Version']);
    expect(all.body).toMatchObject({ x402Version: 2, payTo, pagination: { limit: 20, offset: 0, total: 3 } });
    expect(all.body.resources.map((r: { resource: string }) => r.resource)).toEqual([...ROUTES].reverse().map((r) => `${seller.url}/${r}`));
    const second = await client.get(`/discovery/merchant?payTo=${payTo}&limit=1&offset=1`);
    expect(second.body.pagination).toEqual({ limit: 1, offset: 1, total: 3 });
    expect(second.body.resources.map((r: { resource: string }) => r.resource)).toEqual([`${seller.url}/forecast`]);
    const nobody = await client.get(`/discovery/merchant?payTo=${stack.accounts.buyer.publicKey}`);
    expect(nobody.body).toMatchObject({ resources: [], pagination: { total: 0 } });
  });

  it('payTo is required; another parameter is refused (400 svc_invalid_query_parameter)', async () => {
    for (const query of ['', '?payTo=', '?payTo=G&query=weather', '?payTo=G&payTo=H']) {
      const res = await client.get(`/discovery/merchant${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('svc_invalid_query_parameter');
    }
  });
});

describe('POST /discovery/validate index', () => {
  it('a listed seller is active, with its quality; a route never paid is not_listed', async () => {
    const listed = await client.post('/discovery/validate', { url: `${seller.url}/weather?city=Lisbon` });
    expect(listed.status).toBe(200);
    expect(listed.body.index).toMatchObject({ active: true, hiddenBy: null, quality: { l30DaysTotalCalls: 1 } });
    const unknown = await client.post('/discovery/validate', { url: `${seller.url}/unpaid-route` });
    expect(unknown.status).toBe(200);
    expect(unknown.body.index).toEqual({ active: false, hiddenBy: 'not_listed', quality: null, liveness: null });
  });
});
