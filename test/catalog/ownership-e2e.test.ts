/**
 * Ownership from the origin, black-box on the devnet (docs/CATALOG.md "Ownership and refresh"):
 * stock @x402/express sellers settling through svc (LISTING_OWNERSHIP at its default, `origin`)
 * and a stock @x402/fetch buyer paying them, observed over HTTP only. The owner's first
 * settlement answers `processing` and its listing appears within seconds; a squatter (a stock
 * seller whose route declares the owner's URL as its `resource`) is paid but never listed under
 * its payTo — its settle answers `processing`, validate then shows the check `rejected` with what
 * the owner's server answered, and its next settle answers `rejected` — before and after the
 * owner withdraws; the owner's server restarted on the same origin with a new payTo gets the
 * listing at its next settlement, without a withdrawal.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import express from 'express';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { paymentMiddleware } from '@x402/express';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as StellarClientScheme } from '@x402/stellar/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFacilitatorClient, delist } from '../../src/client/index.ts';
import { loadConfig } from '../../src/config.ts';
import { startDevnet, type Devnet, type DevnetExtras } from '../../src/devnet/index.ts';
import type { RunningServer } from '../../src/http/app.ts';
import { silentLogger } from '../../src/log.ts';
import { createService, type Service } from '../../src/service.ts';
import { trustCertAndBlockDns, type OfflineHttps } from '../helpers/offline-https.ts';
import { BUSY_MACHINE_BOUNDS } from './fixtures.ts';
import { stellarServerSchemeForCore227 } from '../interop/stock-seller.ts';

const owner = Keypair.random();
const rotated = Keypair.random();
const squatter = Keypair.random();
const buyer = Keypair.random();
const submitter = Keypair.random();

let devnet: Devnet & DevnetExtras;
let offline: OfflineHttps;
let service: Service;
let svc: RunningServer;
let dataDir: string;
let pay: typeof fetch;

/** A stock @x402/express seller of GET /weather through svc; `settles` are the settle results its facilitator client got. */
interface ExpressSeller {
  url: string;
  port: number;
  settles: Array<{ success: boolean; extensionResponses?: Record<string, any> }>;
  close(): Promise<void>;
}

async function startSeller(payTo: string, options: { port?: number; resource?: string } = {}): Promise<ExpressSeller> {
  const settles: ExpressSeller['settles'] = [];
  const facilitator = new HTTPFacilitatorClient({ url: svc.url });
  const settle = facilitator.settle.bind(facilitator);
  facilitator.settle = async (...args) => {
    const result = await settle(...args);
    settles.push(result);
    return result;
  };
  const stock = new x402ResourceServer(facilitator)
    .register('stellar:*', stellarServerSchemeForCore227())
    .registerExtension(bazaarResourceServerExtension);
  const app = express();
  const route = {
    accepts: { scheme: 'exact', network: 'stellar:testnet' as const, payTo, price: '$0.001', maxTimeoutSeconds: 60 },
    description: 'Weather for a city, owned by its server',
    ...(options.resource ? { resource: options.resource } : {}),
    extensions: declareDiscoveryExtension({
      input: { city: 'Oslo' },
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      output: { example: { city: 'Oslo', tempC: 4 } },
    }),
  };
  app.use(paymentMiddleware({ 'GET /weather': route }, stock));
  app.get('/weather', (req, res) => res.json({ city: req.query.city ?? 'unknown', tempC: 4 }));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    settles,
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}

const get = async (path: string) => (await fetch(`${svc.url}${path}`)).json() as Promise<Record<string, any>>;
const listingOf = async (resource: string) => (await get(`/discovery/resources?${new URLSearchParams({ resource }).toString()}`)).items[0];
const validate = async (url: string) =>
  (await fetch(`${svc.url}/discovery/validate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  }).then((r) => r.json())) as Record<string, any>;
const bought = async (url: string) => {
  const res = await pay(url);
  expect(res.status, await res.clone().text()).toBe(200);
};
const lastBazaar = (seller: ExpressSeller) => seller.settles.at(-1)?.extensionResponses?.bazaar;

let ownerSeller: ExpressSeller;
let squatSeller: ExpressSeller;
let resource: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-ownership-'));
  devnet = await startDevnet({ network: 'stellar:testnet', ledgerMs: 1000, https: true });
  offline = trustCertAndBlockDns(devnet.caCertPem!);
  await devnet.fund(submitter.publicKey(), { usdcTrustline: false });
  await devnet.fund(buyer.publicKey(), { usdc: 10n * 10_000_000n });
  for (const k of [owner, rotated, squatter]) await devnet.fund(k.publicKey());
  const config = loadConfig({
    SUBMITTER_SECRET: submitter.secret(),
    RPC_URL: devnet.rpcUrl,
    DB_PATH: join(dataDir, 'svc.sqlite'),
    DISCOVERY_YIELD_PERCENT: '100',
    LIVENESS_CHECKS_PER_MINUTE: '0',
    // Every seller here is one host (127.0.0.1), polled by validate: the bound of one request per
    // host per interval (test/security/outbound.test.ts) would queue them behind each other.
    PROBE_HOST_INTERVAL_SECONDS: '0',
  });
  expect(config.listingOwnership).toBe('origin');
  service = createService(config, { logger: silentLogger(), catalogBounds: BUSY_MACHINE_BOUNDS });
  svc = await service.listen(0, '127.0.0.1');
  const client = x402Client.fromConfig({
    schemes: [
      {
        network: 'stellar:testnet',
        client: new StellarClientScheme(createEd25519Signer(buyer.secret(), 'stellar:testnet'), { url: devnet.httpsRpcUrl! }),
      },
    ],
    spendControls: { allowedAssets: [{ network: 'stellar:testnet', asset: devnet.usdc.contractId, maxAmountPerPayment: '10000000' }] },
  });
  pay = wrapFetchWithPayment(fetch, client);
  ownerSeller = await startSeller(owner.publicKey());
  resource = `${ownerSeller.url}/weather`;
  squatSeller = await startSeller(squatter.publicKey(), { resource });
}, 60_000);

afterAll(async () => {
  await squatSeller?.close();
  await ownerSeller?.close();
  await service?.close();
  offline?.restore();
  await devnet?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('a listing belongs to the payTo its own server names', () => {
  it("the owner's settlement answers processing, and the listing appears within seconds", async () => {
    await bought(`${resource}?city=Oslo`);
    expect(lastBazaar(ownerSeller)).toEqual({ status: 'processing' });
    await expect
      .poll(async () => (await listingOf(resource))?.accepts.map((a: { payTo: string }) => a.payTo), { timeout: 10_000 })
      .toEqual([owner.publicKey()]);
    expect((await get('/discovery/search?query=weather')).resources.map((r: { resource: string }) => r.resource)).toContain(resource);
  });

  it('a server declaring that URL is paid but not listed: processing, validate shows the rejection, its next settle is rejected', async () => {
    const before = devnet.balances(squatter.publicKey()).usdc!;
    await bought(`${squatSeller.url}/weather?city=Oslo`);
    expect(devnet.balances(squatter.publicKey()).usdc).toBe(before + 10_000n); // the payment went through
    expect(lastBazaar(squatSeller)).toEqual({ status: 'processing' });
    await expect
      .poll(async () => (await validate(resource)).ownership.find((c: { payTo: string }) => c.payTo === squatter.publicKey())?.status, {
        timeout: 10_000,
      })
      .toBe('rejected');
    const check = (await validate(resource)).ownership.find((c: { payTo: string }) => c.payTo === squatter.publicKey());
    expect(check).toMatchObject({ code: 'bazaar_origin_names_other_payee' });
    expect(check.reason).toContain(`svc asked GET ${resource} `); // unpaid, and without the example input a stranger chose
    expect(check.reason).toContain(`name payTo ${owner.publicKey()}, not ${squatter.publicKey()}`);

    await bought(`${squatSeller.url}/weather?city=Oslo`);
    expect(lastBazaar(squatSeller)).toMatchObject({ status: 'rejected', code: 'bazaar_origin_names_other_payee' });
    expect(lastBazaar(squatSeller).rejectedReason).toContain(owner.publicKey());
    expect((await listingOf(resource)).accepts.map((a: { payTo: string }) => a.payTo)).toEqual([owner.publicKey()]);
    expect((await get(`/discovery/resources?payTo=${squatter.publicKey()}`)).pagination.total).toBe(0);
  });

  it('the owner restarted on the same origin with a new payTo takes the listing over at its next settlement', async () => {
    await ownerSeller.close();
    // A restart takes a moment: the buyer's pooled connection to the old server sees it close first.
    await new Promise((resolve) => setTimeout(resolve, 200));
    ownerSeller = await startSeller(rotated.publicKey(), { port: ownerSeller.port });
    await bought(`${resource}?city=Oslo`);
    expect(lastBazaar(ownerSeller)).toEqual({ status: 'processing' });
    await expect
      .poll(async () => (await listingOf(resource))?.accepts.map((a: { payTo: string }) => a.payTo), { timeout: 10_000 })
      .toEqual([rotated.publicKey()]);
    expect((await get(`/discovery/resources?payTo=${owner.publicKey()}`)).pagination.total).toBe(0);
  });

  it('after the owner withdraws, the squatter is still not listed', async () => {
    const answer = await delist(createFacilitatorClient(svc.url), rotated, { resource, type: 'http' });
    expect(answer).toMatchObject({ ok: true, data: { delisted: true } });
    expect(await listingOf(resource)).toBeUndefined();
    await bought(`${squatSeller.url}/weather?city=Oslo`);
    expect(lastBazaar(squatSeller)).toMatchObject({ status: 'rejected', code: 'bazaar_origin_names_other_payee' });
    expect(await listingOf(resource)).toBeUndefined();
    expect((await get(`/discovery/resources?payTo=${squatter.publicKey()}`)).pagination.total).toBe(0);
  });
});
