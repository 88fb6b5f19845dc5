/**
 * Liveness end to end (docs/CATALOG.md "Liveness"), observed over HTTP: listings created by real
 * settlements on the loopback devnet, sellers on loopback answering (or not) a live 402, svc's own
 * liveness checks (LIVENESS_CHECKS_PER_MINUTE, through the address guard) on a test clock shared
 * with the catalog. A seller that went away is marked unreachable and, after the grace period,
 * hidden from list and search; paying it again brings it back. A 402 naming another payTo is
 * terms_changed. Without ALLOW_PRIVATE_TARGETS the probe refuses a loopback seller (unreachable).
 * A templated listing (`/users/:id`) of a stock @x402/express seller that validates its parameter
 * is probed with its declared pathParams and stays live.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Keypair } from '@stellar/stellar-sdk';
import express from 'express';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { paymentMiddleware } from '@x402/express';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stellarServerSchemeForCore227 } from '../interop/stock-seller.ts';
import { signingKeys } from '../../src/config.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { encodeX402Header } from '../../src/client/seller.ts';
import type { PaymentPayload } from '../../src/scheme/types.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { httpBazaar, tempCatalog } from './fixtures.ts';

const HOUR = 3_600_000;
/** The test runs every pass itself, on its clock. */
const PASS_MS = 3_600_000;
const OTHER = 'GBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

let h: SchemeHarness;
let t: ReturnType<typeof tempCatalog>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;
let buyer: Keypair;
let seller: Keypair;
let config: ReturnType<typeof testConfig>;
let scheme: ExactStellarScheme;
/** payTo each loopback seller names in its 402, by path. */
const payToOf = new Map<string, string>();

function startSeller(port = 0): Promise<{ server: http.Server; port: number }> {
  const s = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const required = {
      x402Version: 2,
      resource: { url: `http://127.0.0.1${path}` },
      accepts: [{ ...h.requirements(payToOf.get(path) ?? seller.publicKey()) }],
    };
    res.writeHead(402, { 'payment-required': encodeX402Header(required) }).end('{}');
  });
  return new Promise((resolve) => s.listen(port, '127.0.0.1', () => resolve({ server: s, port: (s.address() as AddressInfo).port })));
}
const stop = (s: http.Server) => new Promise<void>((resolve) => (s.close(() => resolve()), s.closeAllConnections()));

let origin: { server: http.Server; port: number };

beforeAll(async () => {
  h = await SchemeHarness.start(200);
  const submitter = await h.devnet.createAccount({ usdcTrustline: false });
  config = testConfig({
    SUBMITTER_SECRET: submitter.secret,
    RPC_URL: h.devnet.rpcUrl,
    LIVENESS_CHECKS_PER_MINUTE: '60',
    // One loopback origin serves every listing here: no pause between them (pacing: test/net/liveness.test.ts).
    PROBE_HOST_INTERVAL_SECONDS: '0',
  });
  const keys = signingKeys(config);
  scheme = new ExactStellarScheme({
    network: config.network,
    rpc: createSdkRpc({ url: h.devnet.rpcUrl, timeoutMs: 2_000 }),
    submitters: keys.submitters,
    feeBump: keys.feeBump,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
    logger: { info() {} },
  });
  t = tempCatalog(undefined, { livenessGraceMs: config.probe.liveness.graceMs });
  server = await startTestServer({ config, scheme, catalog: t.catalog, clock: t.clock, livenessPassMs: PASS_MS });
  client = api(server.url);
  ({ buyer, seller } = await h.parties(50_000_000n));
  origin = await startSeller();
}, 60_000);
afterAll(async () => {
  await server?.close();
  t?.close();
  if (origin?.server.listening) await stop(origin.server);
  await h?.stop();
});

/** A real settlement through svc of a payment for `url`, listing it for `seller`. */
async function pay(url: string, bazaar: Record<string, unknown> = httpBazaar()): Promise<void> {
  const requirements = h.requirements(seller.publicKey());
  const paid = await h.pay(requirements, buyer);
  const paymentPayload: PaymentPayload = {
    ...paid,
    resource: { url, description: 'loopback weather' },
    extensions: { bazaar },
  };
  const res = await client.post('/settle', { x402Version: 2, paymentPayload, paymentRequirements: requirements });
  expect(res.body.success).toBe(true);
}
const item = async (resource: string) =>
  (await client.get(`/discovery/resources?${new URLSearchParams({ resource }).toString()}`)).body.items[0] as
    Record<string, any> | undefined;
const found = async (resource: string) => {
  const listed = (await client.get('/discovery/resources?limit=100')).body.items.some((i: any) => i.resource === resource);
  const searched = (await client.get('/discovery/search?query=loopback')).body.resources.some((r: any) => r.resource === resource);
  expect(searched).toBe(listed);
  return listed;
};
/** Moves the shared clock and runs one liveness pass of the running svc. */
async function pass(ms: number): Promise<void> {
  t.tick(ms);
  await server.service.liveness!.runOnce();
}

describe('liveness checks of listed resources', () => {
  it('a seller that went away: unreachable, hidden after the grace period, back when paid again', async () => {
    const url = `http://127.0.0.1:${origin.port}/gone`;
    await pay(url);
    expect((await item(url))!.liveness).toBeNull(); // just paid: not checked yet
    await pass(6 * HOUR);
    expect((await item(url))!.liveness).toEqual({ status: 'live', checkedAt: t.clock().toISOString() });

    await stop(origin.server); // the seller goes away
    await pass(6 * HOUR);
    expect((await item(url))!.liveness).toEqual({ status: 'unreachable', checkedAt: t.clock().toISOString() });
    expect(await found(url)).toBe(true); // within the grace period (24 h)
    for (let i = 0; i < 4; i++) await pass(6 * HOUR); // failing for 24 h
    expect(await found(url)).toBe(true);
    await pass(6 * HOUR);
    expect(await found(url)).toBe(false);
    expect(await item(url)).toBeUndefined();

    origin = await startSeller(origin.port); // back, and paid again: a settlement resets the record
    await pay(url);
    expect(await found(url)).toBe(true);
    expect((await item(url))!.liveness).toBeNull();
    await pass(6 * HOUR);
    expect((await item(url))!.liveness).toMatchObject({ status: 'live' });
  }, 120_000);

  it('a 402 that names another payTo is terms_changed', async () => {
    const url = `http://127.0.0.1:${origin.port}/moved`;
    payToOf.set('/moved', OTHER);
    await pay(url);
    await pass(6 * HOUR);
    expect((await item(url))!.liveness).toEqual({ status: 'terms_changed', checkedAt: t.clock().toISOString() });
  }, 60_000);

  it('a templated listing whose stock seller validates its parameter is probed with its pathParams and stays live', async () => {
    // A stock @x402/express seller of GET /users/:id that answers 400 to an id that is not a number
    // (before the payment middleware, as a router's validation would): `/users/:id` itself is a 400.
    const stock = new x402ResourceServer(new HTTPFacilitatorClient({ url: server.url }))
      .register('stellar:*', stellarServerSchemeForCore227())
      .registerExtension(bazaarResourceServerExtension);
    const app = express();
    app.use('/users/:id', (req, res, next) => (/^[0-9]+$/.test(req.params.id ?? '') ? next() : res.status(400).json({ error: 'id' })));
    const accepts = {
      scheme: 'exact',
      network: 'stellar:testnet' as const,
      payTo: seller.publicKey(),
      price: '$0.001',
      maxTimeoutSeconds: 60,
    };
    app.use(paymentMiddleware({ 'GET /users/:id': { accepts, description: 'loopback user' } }, stock));
    app.get('/users/:id', (req, res) => res.json({ id: req.params.id }));
    const users = http.createServer(app);
    await new Promise<void>((resolve) => users.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(users.address() as AddressInfo).port}`;
      expect((await fetch(`${base}/users/:id`)).status).toBe(400);
      expect((await fetch(`${base}/users/42`)).status).toBe(402);
      // Listed as the stock bazaar extension declares a dynamic route: routeTemplate and pathParams.
      const bazaar = httpBazaar({ queryParams: {} }) as {
        info: { input: Record<string, unknown> };
        schema: { properties: { input: { properties: Record<string, unknown> } } };
      };
      bazaar.info.input.pathParams = { id: '42' };
      bazaar.schema.properties.input.properties.pathParams = { type: 'object' };
      await pay(`${base}/users/42`, { ...bazaar, routeTemplate: '/users/:id' });
      const templated = `${base}/users/:id`;
      expect((await item(templated))!.resource).toBe(templated);
      await pass(6 * HOUR);
      expect((await item(templated))!.liveness).toEqual({ status: 'live', checkedAt: t.clock().toISOString() });
    } finally {
      await stop(users);
    }
  }, 60_000);

  it('without ALLOW_PRIVATE_TARGETS the probe refuses a loopback seller: unreachable', async () => {
    const url = `http://127.0.0.1:${origin.port}/private`;
    await pay(url);
    const allowed = process.env.ALLOW_PRIVATE_TARGETS;
    process.env.ALLOW_PRIVATE_TARGETS = '';
    let strict: Awaited<ReturnType<typeof startTestServer>> | undefined;
    try {
      strict = await startTestServer({ config, scheme, catalog: t.catalog, clock: t.clock, livenessPassMs: PASS_MS });
    } finally {
      process.env.ALLOW_PRIVATE_TARGETS = allowed;
    }
    try {
      t.tick(6 * HOUR);
      await strict.service.liveness!.runOnce();
      expect((await item(url))!.liveness).toEqual({ status: 'unreachable', checkedAt: t.clock().toISOString() });
      // The same seller, probed with the allow-list, is live.
      await pass(6 * HOUR);
      expect((await item(url))!.liveness).toMatchObject({ status: 'live' });
    } finally {
      await strict.close();
    }
  }, 60_000);
});
