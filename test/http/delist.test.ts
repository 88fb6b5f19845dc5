/**
 * POST /discovery/delist, black box over HTTP against svc on the devnet (docs/CATALOG.md
 * "Withdrawing a listing"), on SQLite and PostgreSQL: listings are made by real settlements; the
 * owner's signed withdrawal (the seller toolkit's delist()) removes one from list and search; a
 * signature by another key is 403 and changes nothing; a stale issuedAt is 400, an unknown listing
 * 404, a malformed signature 400; a new settlement lists it again and the replayed withdrawal is
 * 409. Every answer is checked against openapi.yaml. Then the rate limit: 429 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { signingKeys } from '../../src/config.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { delist, signedDelist } from '../../src/client/delist.ts';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import type { PaymentPayload } from '../../src/scheme/types.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { SchemeHarness } from '../scheme/harness.ts';
import { httpBazaar, tempCatalog } from '../catalog/fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from '../catalog/fresh.ts';

let h: SchemeHarness;
let buyer: Keypair;
let owner: Keypair;
let stranger: Keypair;

beforeAll(async () => {
  h = await SchemeHarness.start(200);
  const parties = await h.parties(50_000_000n);
  buyer = parties.buyer;
  owner = parties.seller;
  stranger = (await h.parties(0n)).seller;
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

describe.each(BACKENDS)('on %s', (backend) => {
  let t: ReturnType<typeof tempCatalog>;
  let server: TestServer;
  let client: ReturnType<typeof api>;
  const url = `https://${backend.toLowerCase()}.example.com/forecast`;
  const listing = { resource: url, type: 'http' };

  beforeAll(async () => {
    const submitter = await h.devnet.createAccount({ usdcTrustline: false });
    const config = testConfig({ SUBMITTER_SECRET: submitter.secret, RPC_URL: h.devnet.rpcUrl, DELIST_RATE_PER_MINUTE: '1000' });
    const keys = signingKeys(config);
    const scheme = new ExactStellarScheme({
      network: config.network,
      rpc: createSdkRpc({ url: h.devnet.rpcUrl, timeoutMs: 10_000 }),
      submitters: keys.submitters,
      feeBump: keys.feeBump,
      maxTransactionFeeStroops: config.maxTransactionFeeStroops,
      logger: { info() {} },
    });
    t = tempCatalog(Date.now(), { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    server = await startTestServer({ config, scheme, catalog: t.catalog });
    client = api(server.url);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    t?.close();
  });

  /** A real settlement to `payTo` echoing a bazaar extension for `url`; returns the bazaar outcome. */
  async function settle(payTo: Keypair) {
    const requirements = h.requirements(payTo.publicKey(), { amount: '100000' });
    const paid = await h.pay(requirements, buyer);
    const paymentPayload: PaymentPayload = {
      ...paid,
      resource: { url, description: 'Daily forecast', serviceName: 'Forecast' },
      extensions: { bazaar: httpBazaar() },
    };
    const res = await client.post('/settle', { x402Version: 2, paymentPayload, paymentRequirements: requirements });
    expect(res.body.success).toBe(true);
    const header = res.headers.get('extension-responses');
    return header === null ? null : JSON.parse(Buffer.from(header, 'base64').toString()).bazaar;
  }
  /** What discovery shows of the listing: in list (by resource and by payTo), in search. */
  const shown = async () => {
    const byResource = await client.get(`/discovery/resources?${new URLSearchParams({ resource: url }).toString()}`);
    const byOwner = await client.get(`/discovery/resources?${new URLSearchParams({ payTo: owner.publicKey() }).toString()}`);
    const found = await client.get('/discovery/search?query=forecast');
    return {
      listed: byResource.body.items.map((i: { accepts: Array<{ payTo: string }> }) => i.accepts[0]!.payTo),
      total: byResource.body.pagination.total,
      ownerTotal: byOwner.body.pagination.total,
      searched: found.body.resources.filter((r: { resource: string }) => r.resource === url).length,
    };
  };

  let firstWithdrawal: ReturnType<typeof signedDelist>;

  it('refusals change nothing: another key 403, a stale issuedAt 400, an unknown listing 404, a malformed signature 400', async () => {
    expect(await settle(owner)).toEqual({ status: 'success' });
    const before = await shown();
    expect(before).toEqual({ listed: [owner.publicKey()], total: 1, ownerTotal: 1, searched: 1 });

    // The stranger signs as itself: a valid signature, but not the owner's.
    const notOwner = await client.post('/discovery/delist', signedDelist(stranger, listing));
    expect(notOwner.status).toBe(403);
    expect(notOwner.body.error).toEqual({ code: 'svc_delist_not_owner', reason: expect.stringContaining(owner.publicKey()) });
    // The stranger signs a message naming the owner as payTo: the signature is not the owner's.
    const forged = { ...signedDelist(stranger, listing), payTo: owner.publicKey() };
    const forgedAnswer = await client.post('/discovery/delist', forged);
    expect(forgedAnswer.status).toBe(403);
    expect(forgedAnswer.body.error.code).toBe('svc_delist_signature_invalid');
    // A signature of another listing's message does not withdraw this one.
    const elsewhere = signedDelist(owner, { resource: `${url}/other`, type: 'http' });
    expect((await client.post('/discovery/delist', { ...elsewhere, resource: url })).body.error.code).toBe('svc_delist_signature_invalid');

    const stale = await client.post('/discovery/delist', signedDelist(owner, listing, new Date(Date.now() - 6 * 60_000)));
    expect(stale.status).toBe(400);
    expect(stale.body.error).toEqual({ code: 'svc_delist_stale', reason: expect.stringMatching(/6 min before svc's clock/) });
    const early = await client.post('/discovery/delist', signedDelist(owner, listing, new Date(Date.now() + 6 * 60_000)));
    expect(early.body.error.code).toBe('svc_delist_stale');

    const unknown = await client.post('/discovery/delist', signedDelist(owner, { resource: `${url}/nothing`, type: 'http' }));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('svc_delist_unknown_listing');
    const asTool = await client.post('/discovery/delist', signedDelist(owner, { ...listing, type: 'mcp', toolName: 'forecast' }));
    expect(asTool.status).toBe(404);

    const signed = signedDelist(owner, listing);
    for (const signature of ['not base64!', signed.signature.slice(4), Buffer.alloc(32).toString('base64')]) {
      const malformed = await client.post('/discovery/delist', { ...signed, signature });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error).toEqual({ code: 'svc_malformed_request_body', reason: expect.stringContaining('signature') });
    }
    const badTime = await client.post('/discovery/delist', { ...signed, issuedAt: 'yesterday' });
    expect(badTime.body.error).toEqual({ code: 'svc_malformed_request_body', reason: expect.stringContaining('issuedAt') });

    expect(await shown()).toEqual(before);
  });

  it("the owner's delist() removes it from list and search; a new settlement lists it again; the replayed withdrawal is 409 and changes nothing", async () => {
    const facilitator = createFacilitatorClient(server.url);
    firstWithdrawal = signedDelist(owner, listing);
    expect(await facilitator.delist(firstWithdrawal)).toEqual({ ok: true, data: { delisted: true } });
    expect(await shown()).toEqual({ listed: [], total: 0, ownerTotal: 0, searched: 0 });
    // Gone: the same message again finds nothing.
    expect(await delist(facilitator, owner, listing)).toMatchObject({ ok: false, status: 404, code: 'svc_delist_unknown_listing' });

    expect(await settle(owner)).toEqual({ status: 'success' });
    expect(await shown()).toEqual({ listed: [owner.publicKey()], total: 1, ownerTotal: 1, searched: 1 });
    const replay = await client.post('/discovery/delist', firstWithdrawal);
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('svc_delist_replayed');
    expect(await shown()).toEqual({ listed: [owner.publicKey()], total: 1, ownerTotal: 1, searched: 1 });
    // A new message (later than the first) withdraws it again.
    const answer = await delist(facilitator, owner, listing, new Date(Date.parse(firstWithdrawal.issuedAt) + 1000));
    expect(answer).toEqual({ ok: true, data: { delisted: true } });
    expect((await shown()).total).toBe(0);
  });
});

describe('rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: testConfig({ DELIST_RATE_PER_MINUTE: '2' }) });
  });
  afterAll(() => server?.close());

  it('beyond DELIST_RATE_PER_MINUTE from one address: 429 svc_delist_rate_limited with Retry-After', async () => {
    const client = api(server.url);
    const body = signedDelist(owner, { resource: 'https://nothing.example.com/x', type: 'http' });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await client.post('/discovery/delist', body));
    expect(answers.map((a) => a.status)).toEqual([404, 404, 429, 429]);
    expect(answers[2]!.body.error).toEqual({ code: 'svc_delist_rate_limited', reason: expect.stringMatching(/DELIST_RATE_PER_MINUTE/) });
    expect(Number(answers[2]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
