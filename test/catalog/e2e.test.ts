/**
 * Settlements through the devnet create, refresh and protect listings (docs/CATALOG.md): the real exact
 * scheme settles real signed payments on the loopback devnet, the real catalog hook runs on a real
 * file, and everything is observed over HTTP through the openapi.yaml contract helper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { signingKeys } from '../../src/config.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import type { PaymentPayload } from '../../src/scheme/types.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { httpBazaar, tempCatalog } from './fixtures.ts';

let h: SchemeHarness;
let t: ReturnType<typeof tempCatalog>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;
let buyer: Keypair;
let sellerA: Keypair;
let sellerB: Keypair;

beforeAll(async () => {
  h = await SchemeHarness.start(200);
  const submitter = await h.devnet.createAccount({ usdcTrustline: false });
  const config = testConfig({ SUBMITTER_SECRET: submitter.secret, RPC_URL: h.devnet.rpcUrl });
  const keys = signingKeys(config);
  const scheme = new ExactStellarScheme({
    network: config.network,
    rpc: createSdkRpc({ url: h.devnet.rpcUrl, timeoutMs: 2_000 }),
    submitters: keys.submitters,
    feeBump: keys.feeBump,
    maxTransactionFeeStroops: config.maxTransactionFeeStroops,
    logger: { info() {} },
  });
  t = tempCatalog();
  server = await startTestServer({ config, scheme, catalog: t.catalog });
  client = api(server.url);
  const a = await h.parties(50_000_000n);
  buyer = a.buyer;
  sellerA = a.seller;
  sellerB = (await h.parties(0n)).seller;
}, 60_000);
afterAll(async () => {
  await server?.close();
  t?.close();
  await h?.stop();
});

async function paidSettle(
  seller: Keypair,
  resource: Record<string, unknown>,
  extensions?: Record<string, unknown>,
  amount = '100000',
  payer: Keypair = buyer,
) {
  const requirements = h.requirements(seller.publicKey(), { amount });
  const paid = await h.pay(requirements, payer);
  const paymentPayload: PaymentPayload = { ...paid, resource, ...(extensions ? { extensions } : {}) };
  const res = await client.post('/settle', { x402Version: 2, paymentPayload, paymentRequirements: requirements });
  const header = res.headers.get('extension-responses');
  return {
    res,
    paymentPayload,
    requirements,
    bazaar: header === null ? null : JSON.parse(Buffer.from(header, 'base64').toString()).bazaar,
  };
}
const listing = async (resource: string) => {
  const res = await client.get(`/discovery/resources?${new URLSearchParams({ resource, type: 'http' }).toString()}`);
  return res.body.items[0] as Record<string, any> | undefined;
};

describe('settlements through the devnet', () => {
  const url = 'https://weather.example.com/forecast?city=Lisbon';
  const canonical = 'https://weather.example.com/forecast';

  it('a settled payment with a bazaar extension creates a listing owned by payTo', async () => {
    const { res, bazaar } = await paidSettle(
      sellerA,
      { url, description: 'Daily forecast', serviceName: 'Forecast' },
      { bazaar: httpBazaar() },
    );
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(bazaar).toEqual({ status: 'success' });
    const l = await listing(canonical);
    expect(l).toMatchObject({ resource: canonical, type: 'http', description: 'Daily forecast', serviceName: 'Forecast' });
    expect(l!.accepts).toEqual([
      expect.objectContaining({ payTo: sellerA.publicKey(), amount: '100000', asset: h.devnet.usdc.contractId }),
    ]);
    const found = await client.get('/discovery/search?query=forecast');
    expect(found.body.resources.map((r: any) => r.resource)).toContain(canonical);
  });

  it('the same payTo refreshes it: new metadata wins, absent fields keep, accepts accumulate', async () => {
    const before = await listing(canonical);
    const { res, bazaar } = await paidSettle(sellerA, { url, description: 'Hourly forecast' }, { bazaar: httpBazaar() }, '200000');
    expect(res.body.success).toBe(true);
    expect(bazaar).toEqual({ status: 'success' });
    const after = await listing(canonical);
    expect(after).toMatchObject({ description: 'Hourly forecast', serviceName: 'Forecast' });
    expect(after!.accepts.map((a: any) => a.amount)).toEqual(['100000', '200000']);
    expect(after!.lastUpdated >= before!.lastUpdated).toBe(true);
  });

  it('a different payTo settles normally but cannot take the listing', async () => {
    const before = await listing(canonical);
    const { res, bazaar } = await paidSettle(sellerB, { url, description: 'Hijacked', serviceName: 'Thief' }, { bazaar: httpBazaar() });
    expect(res.body.success).toBe(true);
    expect(bazaar).toMatchObject({ status: 'rejected', code: 'bazaar_listing_owned_by_other_payee' });
    expect(await listing(canonical)).toEqual(before);
  });

  it('no extension: settled, no header, no listing; a failed settlement: no header', async () => {
    const plain = await paidSettle(sellerA, { url: 'https://plain.example.com/x' });
    expect(plain.res.body.success).toBe(true);
    expect(plain.bazaar).toBeNull();
    expect(await listing('https://plain.example.com/x')).toBeUndefined();
    // Replaying the settled payload fails at re-simulation: no header, nothing listed.
    const first = await paidSettle(sellerA, { url: 'https://replay.example.com/x' }, { bazaar: httpBazaar() });
    expect(first.bazaar).toEqual({ status: 'success' });
    const replay = await client.post('/settle', {
      x402Version: 2,
      paymentPayload: { ...first.paymentPayload, resource: { url: 'https://replay2.example.com/x' } },
      paymentRequirements: first.requirements,
    });
    expect(replay.body.success).toBe(false);
    expect(replay.headers.get('extension-responses')).toBeNull();
    expect(await listing('https://replay2.example.com/x')).toBeUndefined();
  });
});

/**
 * Quality signals, the ranking that uses them, the price filters and the lifecycle, black box over
 * HTTP with real payments (docs/CATALOG.md "Quality signals", "Ranking", "Lifecycle"). Runs last:
 * it moves the catalog's clock past LISTING_TTL_DAYS.
 */
describe('quality, ranking, price filters and lifecycle over HTTP', () => {
  const DAY = 86_400_000;
  let payers: Keypair[];
  beforeAll(async () => {
    payers = [buyer, ...(await Promise.all([h.parties(5_000_000n), h.parties(5_000_000n)])).map((p) => p.buyer)];
  }, 60_000);
  const description = 'Quality forecast with equal text';
  const pay = async (url: string, payer: Keypair, amount = '100000') => {
    const { res, bazaar } = await paidSettle(sellerA, { url, description }, { bazaar: httpBazaar() }, amount, payer);
    expect(res.body.success).toBe(true);
    expect(bazaar).toEqual({ status: 'success' });
  };
  const quality = async (resource: string) => (await listing(resource))?.quality;
  const searched = async (params: Record<string, string>) => {
    const res = await client.get(
      `/discovery/search?${new URLSearchParams({ query: 'quality forecast', limit: '50', ...params }).toString()}`,
    );
    expect(res.status).toBe(200);
    return (res.body.resources as Array<{ resource: string }>).map((r) => r.resource).filter((r) => /^https:\/\/q[ab][12]\./.test(r));
  };

  it.each([
    ['A created first', 'https://qa1.example.com/f', 'https://qb1.example.com/f', true],
    ['B created first', 'https://qa2.example.com/f', 'https://qb2.example.com/f', false],
  ])(
    'three distinct payers of A, one of B (same text; %s): quality {3,3} and {1,1}, A ranks above B',
    async (_, a, b, aFirst) => {
      if (aFirst) await pay(a, payers[0]!);
      await pay(b, payers[0]!, '200000');
      if (!aFirst) await pay(a, payers[0]!);
      await pay(a, payers[1]!);
      await pay(a, payers[2]!);
      const now = t.clock().toISOString();
      expect(await quality(a)).toEqual({ l30DaysTotalCalls: 3, l30DaysUniquePayers: 3, lastCalledAt: now });
      expect(await quality(b)).toEqual({ l30DaysTotalCalls: 1, l30DaysUniquePayers: 1, lastCalledAt: now });
      const order = (await searched({})).filter((r) => r === a || r === b);
      expect(order).toEqual([a, b]);
    },
    120_000,
  );

  it('asset and maxAmount include and exclude exactly; maxAmount alone is refused', async () => {
    const usdc = h.devnet.usdc.contractId;
    const all = ['https://qa1.example.com/f', 'https://qa2.example.com/f', 'https://qb1.example.com/f', 'https://qb2.example.com/f'];
    expect((await searched({ asset: usdc })).sort()).toEqual(all);
    expect((await searched({ asset: usdc, maxAmount: '199999' })).sort()).toEqual(all.slice(0, 2));
    expect((await searched({ asset: usdc, maxAmount: '200000' })).sort()).toEqual(all);
    expect(await searched({ asset: 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC' })).toEqual([]);
    const listed = await client.get(`/discovery/resources?${new URLSearchParams({ asset: usdc, maxAmount: '100000' }).toString()}`);
    expect(
      listed.body.items
        .map((i: { resource: string }) => i.resource)
        .filter((r: string) => /^https:\/\/q[ab][12]\./.test(r))
        .sort(),
    ).toEqual(all.slice(0, 2));
    const refused = await client.get('/discovery/resources?maxAmount=100000');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'svc_invalid_query_parameter', reason: expect.stringMatching(/requires asset/) });
  });

  it('a listing not paid for LISTING_TTL_DAYS (30) is hidden from list and search; its next settlement brings it back', async () => {
    t.tick(30 * DAY + 1_000);
    expect(await searched({})).toEqual([]);
    expect(await listing('https://qa1.example.com/f')).toBeUndefined();
    await pay('https://qa1.example.com/f', payers[1]!);
    expect(await searched({})).toEqual(['https://qa1.example.com/f']);
    expect(await quality('https://qa1.example.com/f')).toEqual({
      l30DaysTotalCalls: 1,
      l30DaysUniquePayers: 1,
      lastCalledAt: t.clock().toISOString(),
    });
  }, 60_000);
});
