/**
 * Every agent tool code of mcp-codes.yaml reached through a tool server spawned over stdio (the 11th,
 * svc_mcp_internal_error, is in server.test.ts, in process), plus facilitator and scheme codes
 * passed through verbatim. Every path that must not pay is checked against devnet balances.
 * Named boundaries: a "rogue" HTTP seller written here (it takes payments without settling, or
 * verifies other terms than it offered) and a non-svc HTTP server standing in for a facilitator.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Keypair } from '@stellar/stellar-sdk';
import { MCP_CODES } from '../../src/codes.ts';
import { startPaidHttpServer, type PaidHttpServer } from '../../src/client/seller-http.ts';
import { startPaidMcpServer, type PaidMcpServer } from '../../src/client/seller-mcp.ts';
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
  paymentRequired,
} from '../../src/client/seller.ts';
import { encodeResourceId } from '../../src/mcp/resource-id.ts';
import { McpHarness, failure, success, type ToolServer } from './harness.ts';

let h: McpHarness;
let buyer: Keypair;
let sellerKey: Keypair;
let seller: PaidHttpServer;
let tools: PaidMcpServer;
let rogue: { url: string; close: () => Promise<void> };
let agent: ToolServer;
/** Tool servers with other environments, spawned in parallel up front (a spawn costs ~1 s). */
let capped: ToolServer, searchOnly: ToolServer, poorAgent: ToolServer, offline: ToolServer, wrong: ToolServer;
let poor: Keypair;
const reached = new Set<string>();

function expectCode(result: any, code: string, reason?: RegExp): { errorCode: string; reason: string } {
  const f = failure(result);
  expect(f.errorCode).toBe(code);
  if (reason) expect(f.reason).toMatch(reason);
  expect(f.reason).not.toMatch(/S[A-Z2-7]{55}/); // never a secret seed
  reached.add(code);
  return f;
}

/** Balances of buyer and seller do not move during `run`. */
async function paysNothing<T>(run: () => Promise<T>): Promise<T> {
  const before = [h.usdc(buyer.publicKey()), h.usdc(sellerKey.publicKey())];
  const out = await run();
  await h.devnet.closeLedger();
  expect([h.usdc(buyer.publicKey()), h.usdc(sellerKey.publicKey())]).toEqual(before);
  return out;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closedPort(): Promise<string> {
  const s = createServer();
  const url = await listen(s);
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return url;
}

beforeAll(async () => {
  h = await McpHarness.start(200);
  [buyer, sellerKey] = await Promise.all([h.account(10_000_000n), h.account()]);
  const terms = (amount = '100000') => [h.requirements(sellerKey.publicKey(), amount)];
  seller = await startPaidHttpServer({
    facilitator: h.facilitator,
    routes: [
      { method: 'GET', path: '/paid', accepts: terms(), description: 'A paid thing', handle: () => ({ status: 200, body: { ok: true } }) },
      {
        method: 'GET',
        path: '/pricey',
        accepts: terms('50000000'),
        description: 'Five USDC',
        handle: () => ({ status: 200, body: { ok: true } }),
      },
      {
        method: 'GET',
        path: '/pubnet-only',
        accepts: [h.requirements(sellerKey.publicKey(), '100000', { network: 'stellar:pubnet' })],
        handle: () => ({ status: 200, body: {} }),
      },
      { method: 'GET', path: '/free', accepts: [], handle: ({ query }) => ({ status: 200, body: { echo: query.get('q') } }) },
      { method: 'POST', path: '/free-post', accepts: [], handle: ({ body }) => ({ status: 201, body: { received: body } }) },
      { method: 'GET', path: '/big', accepts: [], handle: () => ({ status: 200, body: 'x'.repeat(600_000) }) },
      { method: 'GET', path: '/broken', accepts: [], handle: () => ({ status: 500, body: { error: 'database on fire' } }) },
      { method: 'GET', path: '/fails-after-verify', accepts: terms(), handle: () => ({ status: 503, body: { error: 'busy' } }) },
      // Like the weather seller of `npm run dev`: the 402 comes first, the input is checked after verify.
      {
        method: 'GET',
        path: '/needs-city',
        accepts: terms(),
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        handle: ({ query }) =>
          query.get('city') ? { status: 200, body: { city: query.get('city') } } : { status: 400, body: { error: 'city is required' } },
      },
    ],
  });
  h.onStop(() => seller.close());
  tools = await startPaidMcpServer({
    facilitator: h.facilitator,
    tools: [
      {
        name: 'paid_tool',
        description: 'A paid tool',
        inputSchema: { type: 'object' },
        accepts: terms(),
        handler: () => ({ content: [{ type: 'text', text: 'ok' }] }),
      },
      {
        name: 'flaky',
        description: 'Fails when run',
        inputSchema: { type: 'object' },
        accepts: terms(),
        handler: () => {
          throw new Error('flaky tool broke');
        },
      },
      {
        name: 'free_echo',
        description: 'Free',
        inputSchema: { type: 'object' },
        handler: (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
      },
      {
        name: 'free_error',
        description: 'Free, always an error',
        inputSchema: { type: 'object' },
        handler: () => ({ isError: true, content: [{ type: 'text', text: 'no such harbour' }] }),
      },
    ],
  });
  h.onStop(() => tools.close());

  // The rogue seller: /no-receipt takes the payment header and answers 200 without settling;
  // /switch offers 100000 but verifies against 200000 (the facilitator says wrong_amount).
  const offered = h.requirements(sellerKey.publicKey(), '100000');
  // The handler's promise is not awaited by node:http; every branch answers the response itself.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  const rogueServer = createServer(async (req, res) => {
    const url = `http://${req.headers.host}${req.url}`;
    const required = paymentRequired({ facilitator: h.facilitator, accepts: [offered], resource: { url } });
    const signature = req.headers[PAYMENT_SIGNATURE_HEADER.toLowerCase()] as string | undefined;
    if (!signature) {
      res
        .writeHead(402, { [PAYMENT_REQUIRED_HEADER]: encodeX402Header(required), 'content-type': 'application/json' })
        .end(JSON.stringify(required));
      return;
    }
    if (req.url === '/fake-receipt') {
      const receipt = { success: true, transaction: 'ab'.repeat(32), network: 'stellar:testnet', payer: buyer.publicKey() };
      res.writeHead(200, { 'content-type': 'application/json', 'PAYMENT-RESPONSE': encodeX402Header(receipt) }).end('{"served":true}');
      return;
    }
    if (req.url === '/no-receipt') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"served":true}');
      return;
    }
    const verdict = await h.facilitator.verify(decodeX402Header(signature), { ...offered, amount: '200000' });
    const refused = paymentRequired({ facilitator: h.facilitator, accepts: [offered], resource: { url } }, verdict.body.invalidReason);
    res.writeHead(402, { [PAYMENT_REQUIRED_HEADER]: encodeX402Header(refused) }).end();
  });
  rogue = { url: await listen(rogueServer), close: () => new Promise((resolve) => rogueServer.close(() => resolve())) };
  h.onStop(() => rogue.close());

  poor = await h.account(10n);
  const impostor = createServer((_req, res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance'));
  const impostorUrl = await listen(impostor);
  h.onStop(() => new Promise<void>((resolve) => impostor.close(() => resolve())));
  const deadFacilitator = await closedPort();
  [agent, capped, searchOnly, poorAgent, offline, wrong] = await Promise.all([
    h.toolServer({ CLIENT_STELLAR_PRIVATE_KEY: buyer.secret() }),
    h.toolServer({ CLIENT_STELLAR_PRIVATE_KEY: buyer.secret(), SVC_MCP_MAX_AMOUNT: '99999' }),
    h.toolServer({}),
    h.toolServer({ CLIENT_STELLAR_PRIVATE_KEY: poor.secret() }),
    h.toolServer({ FACILITATOR_URL: deadFacilitator }),
    h.toolServer({ FACILITATOR_URL: impostorUrl }),
  ]);
}, 60_000);
afterAll(() => h?.stop());

describe('paid_call arguments and ids', () => {
  it('svc_mcp_invalid_arguments: neither or both targets, unknown arguments, bad types, toolName not matching the id, a bad url or method', async () => {
    const id = encodeResourceId({ type: 'http', resource: `${seller.url}/paid`, toolName: '' });
    for (const args of [
      {},
      { resourceId: id, url: `${seller.url}/paid` },
      { url: `${seller.url}/paid`, amount: 5 },
      { url: 42 },
      { url: '' },
      { url: `${seller.url}/paid`, input: 'city=Lisbon' },
      { url: `${seller.url}/paid`, input: [1] },
      { resourceId: id, toolName: 'forecast' },
      { resourceId: id, method: 'POST' },
      { url: 'ftp://example.com/x' },
      { url: '/relative' },
      { url: `${seller.url}/paid`, method: 'TRACE' },
      { url: tools.url, toolName: 'paid_tool', method: 'POST' },
    ]) {
      await paysNothing(async () => expectCode(await agent.call('paid_call', args), 'svc_mcp_invalid_arguments'));
    }
  });

  it('svc_mcp_unknown_resource_id: a malformed id and a well-formed id of no (or no longer a) listing; nothing paid', async () => {
    await paysNothing(async () => {
      expectCode(await agent.call('paid_call', { resourceId: 'svc1:not json!' }), 'svc_mcp_unknown_resource_id', /Malformed resource id/);
      // A real, payable resource that never settled through svc: not in the catalog, so not paid.
      const stale = encodeResourceId({ type: 'http', resource: `${seller.url}/paid`, toolName: '' });
      expectCode(await agent.call('paid_call', { resourceId: stale }), 'svc_mcp_unknown_resource_id', /catalog/);
      const staleTool = encodeResourceId({ type: 'mcp', resource: tools.url, toolName: 'paid_tool' });
      expectCode(await agent.call('paid_call', { resourceId: staleTool }), 'svc_mcp_unknown_resource_id');
    });
  });
});

describe('targets', () => {
  it('free resources work without paying (http GET with query, http POST with body, free MCP tool)', async () => {
    await paysNothing(async () => {
      expect(success(await agent.call('paid_call', { url: `${seller.url}/free`, input: { q: 'hi' } }))).toMatchObject({
        paid: false,
        receipt: null,
        result: { status: 200, body: { echo: 'hi' } },
      });
      expect(
        success(await agent.call('paid_call', { url: `${seller.url}/free-post`, method: 'POST', input: { a: [1, 2] } })),
      ).toMatchObject({ paid: false, result: { status: 201, body: { received: { a: [1, 2] } } } });
      expect(success(await agent.call('paid_call', { url: tools.url, toolName: 'free_echo', input: { x: 1 } }))).toMatchObject({
        paid: false,
        result: { content: [{ type: 'text', text: '{"x":1}' }] },
      });
      const big = success(await agent.call('paid_call', { url: `${seller.url}/big` }));
      expect(big.result.body).toMatch(/^x{262144}… \[cut at 262144 bytes\]$/);
    });
  });

  it('svc_mcp_resource_unreachable: nothing listens at the url (http and mcp); nothing paid', async () => {
    const dead = await closedPort();
    await paysNothing(async () => {
      expectCode(await agent.call('paid_call', { url: `${dead}/x` }), 'svc_mcp_resource_unreachable', /did not answer/);
      expectCode(await agent.call('paid_call', { url: `${dead}/mcp`, toolName: 'paid_tool' }), 'svc_mcp_resource_unreachable');
    });
  });

  it('svc_mcp_target_forbidden: without ALLOW_PRIVATE_TARGETS, loopback, private, link-local and metadata targets are refused before any request; nothing paid', async () => {
    const strict = await h.toolServer({ CLIENT_STELLAR_PRIVATE_KEY: buyer.secret(), ALLOW_PRIVATE_TARGETS: '' });
    const port = new URL(seller.url).port;
    let hits = 0;
    const probe = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"AccessKeyId":"fake"}');
    });
    const probeUrl = await listen(probe);
    try {
      await paysNothing(async () => {
        for (const url of [
          `${probeUrl}/latest/meta-data/iam`,
          `http://localhost:${new URL(probeUrl).port}/x`,
          `http://[::ffff:127.0.0.1]:${new URL(probeUrl).port}/x`,
          `http://0x7f000001:${port}/paid`,
          'http://169.254.169.254/latest/meta-data/',
          'http://10.0.0.1/x',
          'http://[fd00:ec2::254]/x',
          'http://100.100.100.200/x',
        ]) {
          expectCode(await strict.call('paid_call', { url }), 'svc_mcp_target_forbidden', /refused to connect/);
        }
        expectCode(await strict.call('paid_call', { url: `${tools.url}`, toolName: 'paid_tool' }), 'svc_mcp_target_forbidden');
      });
      expect(hits).toBe(0);
    } finally {
      await strict.close();
      await new Promise<void>((resolve) => probe.close(() => resolve()));
    }
  });

  it('svc_mcp_resource_error: the target answers a non-payment error (HTTP 500, 404, an MCP tool error, a non-MCP endpoint); nothing paid', async () => {
    await paysNothing(async () => {
      expectCode(await agent.call('paid_call', { url: `${seller.url}/broken` }), 'svc_mcp_resource_error', /HTTP 500/);
      expectCode(await agent.call('paid_call', { url: `${seller.url}/nope` }), 'svc_mcp_resource_error', /HTTP 404/);
      expectCode(await agent.call('paid_call', { url: tools.url, toolName: 'free_error' }), 'svc_mcp_resource_error', /no such harbour/);
      expectCode(
        await agent.call('paid_call', { url: `${seller.url}/free`, toolName: 'x' }),
        'svc_mcp_resource_error',
        /not a working MCP/,
      );
    });
  });

  it('svc_mcp_tool_call_failed: an unknown tool (JSON-RPC error) and a paid tool that fails on the paid call; nothing settled', async () => {
    await paysNothing(async () => {
      expectCode(await agent.call('paid_call', { url: tools.url, toolName: 'no_such_tool' }), 'svc_mcp_tool_call_failed', /Unknown tool/);
      expectCode(
        await agent.call('paid_call', { url: tools.url, toolName: 'flaky' }),
        'svc_mcp_tool_call_failed',
        /no receipt, so nothing was paid\..*flaky tool broke/,
      );
    });
  });

  it('an HTTP handler error after verify is svc_mcp_resource_error and nothing is settled', async () => {
    await paysNothing(async () =>
      expectCode(
        await agent.call('paid_call', { url: `${seller.url}/fails-after-verify` }),
        'svc_mcp_resource_error',
        /HTTP 503 and no receipt, so nothing was paid\./,
      ),
    );
  });

  it('a required input missing, refused by the seller after verify: the reason says nothing was paid and where the input is described', async () => {
    await paysNothing(async () =>
      expectCode(
        await agent.call('paid_call', { url: `${seller.url}/needs-city` }),
        'svc_mcp_resource_error',
        /answered the paid request with HTTP 400 and no receipt, so nothing was paid\. If the input was wrong, search_resources shows the listing's input schema and example\. Body: \{"error":"city is required"\}/,
      ),
    );
  });
});

describe('spend policy and wallet', () => {
  it('svc_mcp_payment_declined_by_policy: over the default cap (both amounts named) and only another network offered; nothing signed', async () => {
    await paysNothing(async () => {
      expectCode(
        await agent.call('paid_call', { url: `${seller.url}/pricey` }),
        'svc_mcp_payment_declined_by_policy',
        /demands 50000000 base units.*SVC_MCP_MAX_AMOUNT of 10000000 base units\. Nothing was signed/,
      );
      expectCode(
        await agent.call('paid_call', { url: `${seller.url}/pubnet-only` }),
        'svc_mcp_payment_declined_by_policy',
        /exact on stellar:pubnet/,
      );
    });
  });

  it('SVC_MCP_MAX_AMOUNT binds: a cap of 99999 refuses a 100000 payment', async () => {
    await paysNothing(async () => {
      expectCode(
        await capped.call('paid_call', { url: `${seller.url}/paid` }),
        'svc_mcp_payment_declined_by_policy',
        /demands 100000 base units.*SVC_MCP_MAX_AMOUNT of 99999 base units/,
      );
      expectCode(await capped.call('paid_call', { url: tools.url, toolName: 'paid_tool' }), 'svc_mcp_payment_declined_by_policy', /99999/);
    });
  });

  it('svc_mcp_wallet_not_configured: a search-only server refuses a paid target but calls a free one', async () => {
    await paysNothing(async () => {
      expectCode(
        await searchOnly.call('paid_call', { url: `${seller.url}/paid` }),
        'svc_mcp_wallet_not_configured',
        /CLIENT_STELLAR_PRIVATE_KEY/,
      );
      expectCode(await searchOnly.call('paid_call', { url: tools.url, toolName: 'paid_tool' }), 'svc_mcp_wallet_not_configured');
      expect(success(await searchOnly.call('paid_call', { url: `${seller.url}/free` })).paid).toBe(false);
    });
  });
});

describe('payments that do not settle', () => {
  it('svc_mcp_payment_not_settled: the target takes the payment header but returns no receipt; nothing reached the chain', async () => {
    await paysNothing(async () =>
      expectCode(await agent.call('paid_call', { url: `${rogue.url}/no-receipt` }), 'svc_mcp_payment_not_settled', /receipt/),
    );
  });

  it('svc_mcp_payment_not_settled: a receipt whose transaction is not on chain (looked up on the buyer RPC); nothing paid', async () => {
    await paysNothing(async () =>
      expectCode(
        await agent.call('paid_call', { url: `${rogue.url}/fake-receipt` }),
        'svc_mcp_payment_not_settled',
        new RegExp(`${'ab'.repeat(32)}.*does not know`),
      ),
    );
  });

  it('a scheme code from the facilitator passes through verbatim (wrong_amount); nothing paid', async () => {
    await paysNothing(async () =>
      expectCode(await agent.call('paid_call', { url: `${rogue.url}/switch` }), 'invalid_exact_stellar_payload_wrong_amount'),
    );
  });

  it('a buyer without enough funds: the payment cannot be built (simulation fails), svc_mcp_payment_not_settled, nothing sent', async () => {
    await paysNothing(async () =>
      expectCode(await poorAgent.call('paid_call', { url: `${seller.url}/paid` }), 'svc_mcp_payment_not_settled', /could not be built/),
    );
    expect(h.usdc(poor.publicKey())).toBe(10n);
  });
});

describe('facilitator', () => {
  it('a facilitator code passes through verbatim: a forged search cursor is svc_invalid_search_cursor', async () => {
    expectCode(await agent.call('search_resources', { query: 'anything', cursor: 'forged' }), 'svc_invalid_search_cursor');
  });

  it('svc_mcp_facilitator_unreachable: nothing listens at FACILITATOR_URL (search, and paid_call by id)', async () => {
    expectCode(await offline.call('search_resources', { query: 'weather' }), 'svc_mcp_facilitator_unreachable', /did not answer/);
    const id = encodeResourceId({ type: 'http', resource: `${seller.url}/paid`, toolName: '' });
    await paysNothing(async () => expectCode(await offline.call('paid_call', { resourceId: id }), 'svc_mcp_facilitator_unreachable'));
  });

  it('svc_mcp_search_failed: FACILITATOR_URL answers discovery with an error but no recognized code', async () => {
    expectCode(await wrong.call('search_resources', { query: 'weather' }), 'svc_mcp_search_failed', /HTTP 503/);
    expectCode(
      await wrong.call('paid_call', { resourceId: encodeResourceId({ type: 'http', resource: `${seller.url}/paid`, toolName: '' }) }),
      'svc_mcp_search_failed',
    );
  });

  it('search_resources argument errors are svc_mcp_invalid_arguments', async () => {
    for (const args of [
      {},
      { query: '  ' },
      { query: 'x', limit: 0 },
      { query: 'x', limit: 1.5 },
      { query: 'x', filters: { colour: 'red' } },
      { query: 'x', filters: { type: 3 } },
      { query: 'x', extra: 1 },
    ]) {
      expectCode(await agent.call('search_resources', args), 'svc_mcp_invalid_arguments');
    }
  });
});

describe('liveness', () => {
  it('svc_mcp_listing_not_live: a listing svc found not live is refused before any request unless ignoreLiveness; nothing paid', async () => {
    const url = `${seller.url}/paid`;
    expect(success(await agent.call('paid_call', { url })).paid).toBe(true); // listed by its settlement
    const hitOf = async () =>
      success(await agent.call('search_resources', { query: 'A paid thing' })).hits.find((hit: any) => hit.resource === url);
    expect((await hitOf()).liveness).toBeNull(); // not checked since it was paid
    // svc's check finds it unreachable: the record a pass writes, through the catalog's liveness port.
    const now = Date.now();
    const claimed = await h.catalog.liveness!.claimDue(now, now + 1, 1_000);
    const listing = claimed.find((l) => l.resource === url)!;
    const checkedAt = new Date(now).toISOString();
    await h.catalog.liveness!.writeLiveness(listing.key, { status: 'unreachable', checkedAt, failingSince: checkedAt }, now);
    const hit = await hitOf();
    expect(hit.liveness).toEqual({ status: 'unreachable', checkedAt });
    await paysNothing(async () =>
      expectCode(await agent.call('paid_call', { resourceId: hit.id }), 'svc_mcp_listing_not_live', /unreachable.*ignoreLiveness/),
    );
    expectCode(await agent.call('paid_call', { resourceId: hit.id, ignoreLiveness: 'yes' }), 'svc_mcp_invalid_arguments');
    // The caller insists: probed and paid as usual (the settlement resets the record).
    expect(success(await agent.call('paid_call', { resourceId: hit.id, ignoreLiveness: true })).paid).toBe(true);
    expect((await hitOf()).liveness).toBeNull();
  });
});

describe('coverage', () => {
  it('reached 12 of the 13 agent tool codes here (svc_mcp_internal_error is in server.test.ts)', () => {
    const expected = Object.keys(MCP_CODES).filter((c) => c !== 'svc_mcp_internal_error');
    expect(expected.filter((c) => !reached.has(c))).toEqual([]);
  });
});
