/**
 * GET and POST /discovery/delist, black box over HTTP against svc on the devnet (docs/CATALOG.md
 * "Withdrawing a listing"), on SQLite and PostgreSQL: listings are made by real settlements; GET
 * hands out the text naming this catalog and its network; the owner's signed withdrawal (the seller
 * toolkit's delist(), which signs that text) removes one from list and search; a signature by
 * another key is 403 and changes nothing; a stale issuedAt is 400, and so is one further ahead of
 * svc's clock than the allowed skew; an unknown listing 404, a malformed signature 400; a new
 * settlement lists it again and the replayed withdrawal is 409. A withdrawal accepted by one svc is
 * refused by a second svc with its own database, which keeps the listing. Every answer is checked
 * against openapi.yaml. Then the rate limit: 429 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { signingKeys } from '../../src/config.ts';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import { delist, signedDelist } from '../../src/client/delist.ts';
import { delistMessage, type DelistBinding } from '../../src/delist-message.ts';
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
  /** This catalog and network, as GET /discovery/delist names them. */
  let binding: DelistBinding;
  /** A second svc with its own database: its own catalog. */
  let other: { t: ReturnType<typeof tempCatalog>; server: TestServer; client: ReturnType<typeof api> };
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
    const otherCatalog = tempCatalog(Date.now(), { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    const otherServer = await startTestServer({ config, scheme, catalog: otherCatalog.catalog });
    other = { t: otherCatalog, server: otherServer, client: api(otherServer.url) };
    const text = await client.get(`/discovery/delist?${new URLSearchParams({ ...listing, payTo: owner.publicKey() }).toString()}`);
    binding = { catalog: text.body.catalog, network: text.body.network };
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await other?.server.close();
    t?.close();
    other?.t.close();
  });

  /** A real settlement to `payTo` echoing a bazaar extension for `url`; returns the bazaar outcome. */
  async function settle(payTo: Keypair, at = client) {
    const requirements = h.requirements(payTo.publicKey(), { amount: '100000' });
    const paid = await h.pay(requirements, buyer);
    const paymentPayload: PaymentPayload = {
      ...paid,
      resource: { url, description: 'Daily forecast', serviceName: 'Forecast' },
      extensions: { bazaar: httpBazaar() },
    };
    const res = await at.post('/settle', { x402Version: 2, paymentPayload, paymentRequirements: requirements });
    expect(res.body.success).toBe(true);
    const header = res.headers.get('extension-responses');
    return header === null ? null : JSON.parse(Buffer.from(header, 'base64').toString()).bazaar;
  }
  /** What discovery shows of the listing: in list (by resource and by payTo), in search. */
  const shown = async (at = client) => {
    const byResource = await at.get(`/discovery/resources?${new URLSearchParams({ resource: url }).toString()}`);
    const byOwner = await at.get(`/discovery/resources?${new URLSearchParams({ payTo: owner.publicKey() }).toString()}`);
    const found = await at.get('/discovery/search?query=forecast');
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
    const notOwner = await client.post('/discovery/delist', signedDelist(stranger, listing, binding));
    expect(notOwner.status).toBe(403);
    expect(notOwner.body.error).toEqual({ code: 'svc_delist_not_owner', reason: expect.stringContaining(owner.publicKey()) });
    // How this catalog decides ownership (testConfig: first-settlement); the origin's reason is below.
    expect(notOwner.body.error.reason).toMatch(
      /its owner is the payTo of the settlement that first listed it \(LISTING_OWNERSHIP=first-settlement\)\.$/,
    );
    // The stranger signs a message naming the owner as payTo: the signature is not the owner's.
    const forged = { ...signedDelist(stranger, listing, binding), payTo: owner.publicKey() };
    const forgedAnswer = await client.post('/discovery/delist', forged);
    expect(forgedAnswer.status).toBe(403);
    expect(forgedAnswer.body.error.code).toBe('svc_delist_signature_invalid');
    // A signature of another listing's message does not withdraw this one.
    const elsewhere = signedDelist(owner, { resource: `${url}/other`, type: 'http' }, binding);
    expect((await client.post('/discovery/delist', { ...elsewhere, resource: url })).body.error.code).toBe('svc_delist_signature_invalid');

    const stale = await client.post('/discovery/delist', signedDelist(owner, listing, binding, new Date(Date.now() - 6 * 60_000)));
    expect(stale.status).toBe(400);
    expect(stale.body.error).toEqual({ code: 'svc_delist_stale', reason: expect.stringMatching(/6 min before svc's clock/) });
    const early = await client.post('/discovery/delist', signedDelist(owner, listing, binding, new Date(Date.now() + 6 * 60_000)));
    expect(early.body.error.code).toBe('svc_delist_stale');
    // Beyond the allowed clock skew ahead of svc's clock: refused, so it cannot hold back the owner's next withdrawal.
    const ahead = await client.post('/discovery/delist', signedDelist(owner, listing, binding, new Date(Date.now() + 90_000)));
    expect(ahead.status).toBe(400);
    expect(ahead.body.error).toEqual({ code: 'svc_delist_stale', reason: expect.stringMatching(/after svc's clock.*60 s after it/) });

    // Signed for another catalog: refused with its own code when the body names it, as a bad signature when not.
    const elsewhereCatalog = signedDelist(owner, listing, { ...binding, catalog: 'another-catalog' });
    const otherCatalog = await client.post('/discovery/delist', elsewhereCatalog);
    expect(otherCatalog.status).toBe(403);
    expect(otherCatalog.body.error).toEqual({ code: 'svc_delist_other_catalog', reason: expect.stringContaining(binding.catalog) });
    const { catalog: _named, ...unnamed } = elsewhereCatalog;
    expect((await client.post('/discovery/delist', unnamed)).body.error.code).toBe('svc_delist_signature_invalid');
    // The text of the earlier protocol (six lines, no catalog, no network) withdraws nothing either.
    const legacy = {
      ...unnamed,
      signature: Buffer.from(owner.signMessage(['svc delist', 'http', url, '', owner.publicKey(), unnamed.issuedAt].join('\n'))).toString(
        'base64',
      ),
    };
    expect((await client.post('/discovery/delist', legacy)).body.error.code).toBe('svc_delist_signature_invalid');

    const unknown = await client.post('/discovery/delist', signedDelist(owner, { resource: `${url}/nothing`, type: 'http' }, binding));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({
      code: 'svc_delist_unknown_listing',
      reason: `No http listing has resource ${url}/nothing, and no listing of any type is at that URL; copy resource, type and toolName from the listing as GET /discovery/resources shows it (toolName "" for http).`,
    });
    // The wrong type: the reason names what is listed at that URL, and how to withdraw it.
    const asTool = await client.post('/discovery/delist', signedDelist(owner, { ...listing, type: 'mcp', toolName: 'forecast' }, binding));
    expect(asTool.status).toBe(404);
    expect(asTool.body.error.reason).toBe(
      `No mcp listing of tool "forecast" has resource ${url}; at that URL there is an http listing (type "http", toolName ""): withdraw it with that type and toolName.`,
    );

    const signed = signedDelist(owner, listing, binding);
    for (const signature of ['not base64!', signed.signature.slice(4), Buffer.alloc(32).toString('base64')]) {
      const malformed = await client.post('/discovery/delist', { ...signed, signature });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error).toEqual({ code: 'svc_malformed_request_body', reason: expect.stringContaining('signature') });
    }
    const badTime = await client.post('/discovery/delist', { ...signed, issuedAt: 'yesterday' });
    expect(badTime.body.error).toEqual({ code: 'svc_malformed_request_body', reason: expect.stringContaining('issuedAt') });

    expect(await shown()).toEqual(before);
  });

  it('GET /discovery/delist: the text to sign names this catalog, its network and the listing, issued now', async () => {
    const before = Date.now();
    const text = await client.get(`/discovery/delist?${new URLSearchParams({ ...listing, payTo: owner.publicKey() }).toString()}`);
    expect(text.status).toBe(200);
    expect(text.body).toEqual({
      message: expect.any(String),
      issuedAt: expect.any(String),
      catalog: binding.catalog,
      network: 'stellar:testnet',
    });
    expect(Date.parse(text.body.issuedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(text.body.message).toBe(
      ['svc delist', `catalog ${binding.catalog}`, 'network stellar:testnet', 'http', url, '', owner.publicKey(), text.body.issuedAt].join(
        '\n',
      ),
    );
    expect(text.body.message).toBe(
      delistMessage({ ...listing, toolName: '', payTo: owner.publicKey(), issuedAt: text.body.issuedAt, ...binding }),
    );
    // Every instance of one database names one catalog; another database is another catalog.
    const elsewhere = await other.client.get(
      `/discovery/delist?${new URLSearchParams({ ...listing, payTo: owner.publicKey() }).toString()}`,
    );
    expect(elsewhere.body.catalog).not.toBe(binding.catalog);
    const missing = await client.get(`/discovery/delist?${new URLSearchParams({ resource: url, type: 'http' }).toString()}`);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('svc_invalid_query_parameter');
  });

  it("the owner's delist() removes it from list and search; a new settlement lists it again; the replayed withdrawal is 409 and changes nothing", async () => {
    const facilitator = createFacilitatorClient(server.url);
    // The URL as a buyer called it (a query string, a trailing slash): made canonical as validate and settlements make it.
    firstWithdrawal = signedDelist(owner, { ...listing, resource: `${url}/?city=Oslo` }, binding);
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
    // A new message (issued now by svc, later than the first) withdraws it again.
    const answer = await delist(facilitator, owner, listing);
    expect(answer).toEqual({ ok: true, data: { delisted: true } });
    expect((await shown()).total).toBe(0);
  });

  it('a withdrawal signed over the GET text works on its catalog and is refused by a second svc with its own database, which keeps the listing', async () => {
    expect(await settle(owner)).toEqual({ status: 'success' });
    expect(await settle(owner, other.client)).toEqual({ status: 'success' });
    const listed = { listed: [owner.publicKey()], total: 1, ownerTotal: 1, searched: 1 };
    expect(await shown(other.client)).toEqual(listed);

    const text = await client.get(`/discovery/delist?${new URLSearchParams({ ...listing, payTo: owner.publicKey() }).toString()}`);
    const signature = Buffer.from(owner.signMessage(text.body.message)).toString('base64');
    const body = {
      ...listing,
      toolName: '',
      payTo: owner.publicKey(),
      issuedAt: text.body.issuedAt,
      catalog: text.body.catalog,
      signature,
    };
    expect((await client.post('/discovery/delist', body)).body).toEqual({ delisted: true });
    expect((await shown()).total).toBe(0);

    const replayed = await other.client.post('/discovery/delist', body);
    expect(replayed.status).toBe(403);
    expect(replayed.body.error.code).toBe('svc_delist_other_catalog');
    const { catalog: _catalog, ...withoutCatalog } = body;
    const bare = await other.client.post('/discovery/delist', withoutCatalog);
    expect(bare.status).toBe(403);
    expect(bare.body.error.code).toBe('svc_delist_signature_invalid');
    expect(await shown(other.client)).toEqual(listed);
    // Its own text withdraws it there.
    expect(await delist(createFacilitatorClient(other.server.url), owner, listing)).toEqual({ ok: true, data: { delisted: true } });
    expect((await shown(other.client)).total).toBe(0);
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
    const body = signedDelist(
      owner,
      { resource: 'https://nothing.example.com/x', type: 'http' },
      { catalog: 'any', network: 'stellar:testnet' },
    );
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await client.post('/discovery/delist', body));
    expect(answers.map((a) => a.status)).toEqual([403, 403, 429, 429]);
    expect(answers[2]!.body.error).toEqual({ code: 'svc_delist_rate_limited', reason: expect.stringMatching(/DELIST_RATE_PER_MINUTE/) });
    expect(Number(answers[2]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('with ownership from the origin (the default)', () => {
  // The catalog port is the named boundary: it answers that another payTo owns the listing.
  let server: TestServer;
  const holder = 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H';
  beforeAll(async () => {
    server = await startTestServer({
      config: testConfig({ LISTING_OWNERSHIP: 'origin' }),
      catalog: {
        recordSettlement: () => Promise.resolve(null),
        list: () => Promise.resolve({ x402Version: 2, items: [], pagination: { limit: 20, offset: 0, total: 0 } }),
        search: () => Promise.reject(new Error('not used')),
        catalogId: () => Promise.resolve('origin-catalog'),
        withdraw: () => Promise.resolve({ status: 'not_owner', owner: holder }),
      },
    });
  });
  afterAll(() => server?.close());

  it("svc_delist_not_owner says the owner is the payTo the resource's own server names, as svc checked it", async () => {
    const answer = await api(server.url).post(
      '/discovery/delist',
      signedDelist(
        owner,
        { resource: 'https://api.example.com/weather', type: 'http' },
        { catalog: 'origin-catalog', network: 'stellar:testnet' },
      ),
    );
    expect(answer.status).toBe(403);
    expect(answer.body.error).toEqual({
      code: 'svc_delist_not_owner',
      reason: `The listing is owned by ${holder}, not ${owner.publicKey()}; nothing was changed. Only its owner's key can withdraw it: its owner is the payTo the resource's own server names in the 402 it answers an unpaid request with, which svc checked when a settlement claimed the listing.`,
    });
  });
});
