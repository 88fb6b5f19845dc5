/**
 * Stock x402 clients against svc on the devnet, over HTTP only (docs/INTEROP.md):
 * - a seller made of the stock @x402/core resource-server pieces (HTTPFacilitatorClient pointed at
 *   svc, x402ResourceServer, x402HTTPResourceServer) with the @x402/stellar 2.9.0 `exact` server
 *   scheme and the bazaar extension, and a buyer using @x402/fetch 2.27 with the @x402/stellar
 *   2.9.0 client, complete a paid request through svc; the seller gets the decoded
 *   EXTENSION-RESPONSES; the listing appears in GET /discovery/resources;
 * - the stock HTTPFacilitatorClient reads /supported and receives svc's rejection codes intact.
 *
 * Certificate trust: the @x402/stellar 2.9.0 client only accepts https RPC URLs on its own
 * terms, so it talks to the devnet's HTTPS port; the devnet's self-signed certificate is added to
 * this process's default CA list (Node 24 `tls.setDefaultCACertificates`; NODE_EXTRA_CA_CERTS
 * would do the same for a child process). Network boundary: the 2.9.0 client asks Horizon
 * testnet for the ledger close time; every non-loopback DNS lookup of the https global agent
 * fails at once (named boundary), so it falls back to its 5 s default without leaving loopback.
 */
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import {
  PAYMENT_IDENTIFIER,
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  generatePaymentId,
} from '@x402/extensions/payment-identifier';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as StellarClientScheme } from '@x402/stellar/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../src/dev/stack.ts';
import { startStockSeller, type StockSeller } from './stock-seller.ts';
import { EXTENSION_RESPONSES_LOG, expectConsole } from '../helpers/console.ts';
import { trustCertAndBlockDns, type OfflineHttps } from '../helpers/offline-https.ts';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import { startPaidHttpServer } from '../../src/client/seller-http.ts';
import {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  decodeX402Header,
  encodeX402Header,
} from '../../src/client/seller.ts';
import type { PaymentRequirements } from '../../src/scheme/types.ts';
import { createSdkRpc } from '../../src/chains/stellar/index.ts';
import { Keypair } from '@stellar/stellar-sdk';

const PRICE_BASE_UNITS = '10000'; // "$0.001" on a 7-decimal USDC
let stack: Stack;
let seller: StockSeller;
let dataDir: string;
let offline: OfflineHttps;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-interop-'));
  // 1 s ledgers: the 2.9.0 client assumes 5 s ledgers (Horizon is unreachable), so it signs for
  // ceil(60 / 5) = 12 ledgers; at 1 s that is 12 s of validity, ample on a loaded machine.
  stack = await startStack({ dataDir, ledgerMs: 1000 });
  offline = trustCertAndBlockDns(stack.devnet.caCertPem!);
  seller = await startStockSeller({
    facilitatorUrl: stack.svc.url,
    routes: {
      'GET /weather': {
        accepts: {
          scheme: 'exact',
          network: 'stellar:testnet',
          payTo: stack.accounts.seller.publicKey,
          price: '$0.001',
          maxTimeoutSeconds: 60,
        },
        description: 'Current weather for a city (interop seller)',
        mimeType: 'application/json',
        extensions: declareDiscoveryExtension({
          input: { city: 'Lisbon' },
          inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] },
          output: { example: { city: 'Lisbon', tempC: 21 } },
        }),
      },
    },
    handlers: { 'GET /weather': ({ query }) => ({ city: query.city ?? 'unknown', tempC: 21 }) },
  });
}, 60_000);

afterAll(async () => {
  offline?.restore();
  await seller?.close();
  await stack?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function stockBuyer(secret: string) {
  const client = x402Client.fromConfig({
    schemes: [
      {
        network: 'stellar:testnet',
        client: new StellarClientScheme(createEd25519Signer(secret, 'stellar:testnet'), { url: stack.devnet.httpsRpcUrl! }),
      },
    ],
    // @x402/stellar 2.9.0 predates core's default-asset table: without this, core 2.27's spend
    // controls reject every Stellar requirement (docs/INTEROP.md, incompatibility 1).
    spendControls: {
      allowedAssets: [{ network: 'stellar:testnet', asset: stack.devnet.usdc.contractId, maxAmountPerPayment: '10000000' }],
    },
  });
  return { client, fetchWithPayment: wrapFetchWithPayment(fetch, client) };
}

describe('stock seller + stock buyer through svc on the devnet', () => {
  it('completes a paid GET; seller gets the decoded EXTENSION-RESPONSES; the listing is discoverable', async () => {
    const buyer = stack.accounts.buyer;
    const before = {
      buyer: stack.devnet.balances(buyer.publicKey).usdc!,
      seller: stack.devnet.balances(stack.accounts.seller.publicKey).usdc!,
    };

    const unpaid = await fetch(`${seller.url}/weather?city=Lisbon`);
    expect(unpaid.status).toBe(402);
    const terms = JSON.parse(Buffer.from(unpaid.headers.get('payment-required')!, 'base64').toString('utf8'));
    expect(terms.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'stellar:testnet',
      asset: stack.devnet.usdc.contractId,
      amount: PRICE_BASE_UNITS,
      payTo: stack.accounts.seller.publicKey,
      extra: { areFeesSponsored: true },
    });

    // The stock seller's facilitator client logs the EXTENSION-RESPONSES it read (console.log).
    const { result: res, lines } = await expectConsole('log', EXTENSION_RESPONSES_LOG, () =>
      stockBuyer(buyer.secret).fetchWithPayment(`${seller.url}/weather?city=Lisbon`),
    );
    expect(lines).toEqual(['[x402] extension responses: {"bazaar":{"status":"processing"}}']); // a new listing: its server is asked first
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ city: 'Lisbon', tempC: 21 });
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, network: 'stellar:testnet', payer: buyer.publicKey });
    expect(receipt.transaction).toMatch(/^[0-9a-f]{64}$/);
    expect(offline.blockedLookups).toContain('horizon-testnet.stellar.org'); // the stock client tried Horizon, offline

    // On chain: exactly the price moved, and the receipt's hash is a successful transaction.
    expect(stack.devnet.balances(buyer.publicKey).usdc).toBe(before.buyer - BigInt(PRICE_BASE_UNITS));
    expect(stack.devnet.balances(stack.accounts.seller.publicKey).usdc).toBe(before.seller + BigInt(PRICE_BASE_UNITS));
    const tx = await fetch(stack.devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTransaction', params: { hash: receipt.transaction } }),
    }).then((r) => r.json() as Promise<{ result: { status: string } }>);
    expect(tx.result.status).toBe('SUCCESS');

    // The seller's resource server received svc's EXTENSION-RESPONSES, decoded by the stock client.
    expect(seller.settlements).toHaveLength(1);
    expect(seller.settlements[0]).toMatchObject({
      success: true,
      transaction: receipt.transaction,
      // A new listing waits for svc to ask the seller's server (docs/CATALOG.md "Ownership and refresh").
      extensionResponses: { bazaar: { status: 'processing' } },
    });

    // The listing, within seconds: canonical URL (query dropped), terms from the settled requirements.
    const httpListings = () =>
      fetch(`${stack.svc.url}/discovery/resources?type=http`).then((r) => r.json() as Promise<{ items: Array<Record<string, unknown>> }>);
    await expect.poll(async () => (await httpListings()).items.length).toBe(1);
    const listing = await httpListings();
    expect(listing.items[0]).toMatchObject({
      resource: `${seller.url}/weather`,
      type: 'http',
      x402Version: 2,
      description: 'Current weather for a city (interop seller)',
      accepts: [
        expect.objectContaining({ amount: PRICE_BASE_UNITS, payTo: stack.accounts.seller.publicKey, asset: stack.devnet.usdc.contractId }),
      ],
    });
    const found = await fetch(`${stack.svc.url}/discovery/search?query=weather%20city`).then(
      (r) => r.json() as Promise<{ resources: Array<{ resource: string }> }>,
    );
    expect(found.resources.map((r) => r.resource)).toContain(`${seller.url}/weather`);
  }, 60_000);

  it('payment-identifier from a stock buyer: the first payment settles with its id; a new payment reusing the id is refused 409 svc_idempotency_key_conflict and moves nothing', async () => {
    const payer = await stack.devnet.createAccount({ usdc: 10n * 10_000_000n });
    const keyed = await startStockSeller({
      facilitatorUrl: stack.svc.url,
      routes: {
        'GET /ticket': {
          accepts: { scheme: 'exact', network: 'stellar:testnet', payTo: stack.accounts.seller.publicKey, price: '$0.001' },
          extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() },
        },
      },
      handlers: { 'GET /ticket': () => ({ ticket: 'A1' }) },
    });
    try {
      // The upstream client example: one id per logical request, appended before each payment is created.
      const id = generatePaymentId();
      const { client, fetchWithPayment } = stockBuyer(payer.secret);
      client.onBeforePaymentCreation(async ({ paymentRequired }) => {
        appendPaymentIdentifierToExtensions((paymentRequired.extensions ??= {}), id);
      });
      const first = await fetchWithPayment(`${keyed.url}/ticket`);
      expect(first.status).toBe(200);
      // The same id on a new payment (a new signed authorization): a conflict at svc, nothing submitted.
      const second = await fetchWithPayment(`${keyed.url}/ticket`);
      expect(second.status).not.toBe(200);
      expect(keyed.settlements.map((x) => [x.success, x.errorReason])).toEqual([
        [true, undefined],
        [false, 'svc_idempotency_key_conflict'],
      ]);
      expect(stack.devnet.balances(payer.publicKey).usdc).toBe(10n * 10_000_000n - BigInt(PRICE_BASE_UNITS));
    } finally {
      await keyed.close();
    }
  }, 30_000);

  it('a payment svc rejects reaches the stock seller as the scheme code; the buyer gets a 402 and pays nothing', async () => {
    const payer = await stack.devnet.createAccount({ usdc: 10n * 10_000_000n });
    const verdicts: Array<{ isValid: boolean; invalidReason?: string; payer?: string }> = [];
    const rejecting = await startStockSeller({
      facilitatorUrl: stack.svc.url,
      routes: {
        'GET /quote': { accepts: { scheme: 'exact', network: 'stellar:testnet', payTo: stack.accounts.seller.publicKey, price: '$0.002' } },
      },
      handlers: { 'GET /quote': () => ({ quote: 'never served' }) },
      onVerify: (_route, result) => verdicts.push(result),
    });
    try {
      const { client, fetchWithPayment } = stockBuyer(payer.secret);
      // Between signing and presenting, the issuer freezes the payer's USDC: the signed transfer
      // no longer simulates, so svc's verify refuses it with the scheme's code.
      client.onAfterPaymentCreation(async () => stack.devnet.setUsdcAuthorized(payer.publicKey, false));
      const res = await fetchWithPayment(`${rejecting.url}/quote`);
      expect(res.status).toBe(402);
      expect(verdicts).toHaveLength(1);
      expect(verdicts[0]).toMatchObject({
        isValid: false,
        invalidReason: 'invalid_exact_stellar_payload_simulation_failed',
        payer: payer.publicKey,
      });
      expect(rejecting.settlements).toHaveLength(0);
      expect(stack.devnet.balances(payer.publicKey).usdc).toBe(10n * 10_000_000n);
    } finally {
      await rejecting.close();
    }
  }, 30_000);

  it("the buyer's spend controls refuse a price over its cap before anything is signed", async () => {
    const pricey = await startStockSeller({
      facilitatorUrl: stack.svc.url,
      routes: {
        'GET /gold': { accepts: { scheme: 'exact', network: 'stellar:testnet', payTo: stack.accounts.seller.publicKey, price: '$2' } },
      },
      handlers: { 'GET /gold': () => ({ gold: true }) },
    });
    try {
      const before = stack.devnet.balances(stack.accounts.buyer.publicKey).usdc;
      await expect(stockBuyer(stack.accounts.buyer.secret).fetchWithPayment(`${pricey.url}/gold`)).rejects.toThrow(/spendControls|spend/i);
      expect(stack.devnet.balances(stack.accounts.buyer.publicKey).usdc).toBe(before);
      expect(pricey.settlements).toHaveLength(0);
    } finally {
      await pricey.close();
    }
  }, 30_000);
});

describe("stock buyer against svc's own seller toolkit", () => {
  it('@x402/fetch with the 2.9.0 client pays a route of startPaidHttpServer (POST with a JSON body)', async () => {
    const toolkitSeller = await startPaidHttpServer({
      facilitator: createFacilitatorClient(stack.svc.url),
      routes: [
        {
          method: 'POST',
          path: '/echo',
          accepts: [
            {
              scheme: 'exact',
              network: 'stellar:testnet',
              asset: stack.devnet.usdc.contractId,
              amount: '15000',
              payTo: stack.accounts.seller.publicKey,
              maxTimeoutSeconds: 60,
              extra: { areFeesSponsored: true },
            },
          ],
          description: 'Echo a JSON body (toolkit seller, stock buyer)',
          inputSchema: { type: 'object', properties: { say: { type: 'string' } }, required: ['say'] },
          example: { say: 'hello' },
          handle: ({ body }) => ({ status: 200, body: { echoed: body } }),
        },
      ],
    });
    try {
      const payer = await stack.devnet.createAccount({ usdc: 10_000_000n });
      const res = await stockBuyer(payer.secret).fetchWithPayment(toolkitSeller.urlOf('/echo'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ say: 'hi from a stock client' }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ echoed: { say: 'hi from a stock client' } });
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, payer: payer.publicKey });
      expect(stack.devnet.balances(payer.publicKey).usdc).toBe(10_000_000n - 15_000n);
      const listed = () =>
        fetch(`${stack.svc.url}/discovery/resources?type=http`).then((r) => r.json() as Promise<{ items: Array<{ resource: string }> }>);
      await expect.poll(async () => (await listed()).items.map((i) => i.resource)).toContain(toolkitSeller.urlOf('/echo'));
    } finally {
      await toolkitSeller.close();
    }
  }, 30_000);
});

describe("svc's own buyer against the stock seller", () => {
  it('createStellarPayment answers the stock 402 (PAYMENT-REQUIRED in, PAYMENT-SIGNATURE out) and gets the resource', async () => {
    const payer = await stack.devnet.createAccount({ usdc: 10_000_000n });
    const unpaid = await fetch(`${seller.url}/weather?city=Oslo`);
    const required = decodeX402Header(unpaid.headers.get(PAYMENT_REQUIRED_HEADER)) as {
      accepts: PaymentRequirements[];
      resource: never;
      extensions: Record<string, unknown>;
    };
    const payload = await createStellarPayment({
      requirements: required.accepts[0]!,
      signer: Keypair.fromSecret(payer.secret),
      rpc: createSdkRpc({ url: stack.devnet.rpcUrl }),
      resource: required.resource,
      extensions: required.extensions,
    });
    const { result: paid, lines } = await expectConsole('log', EXTENSION_RESPONSES_LOG, () =>
      fetch(`${seller.url}/weather?city=Oslo`, { headers: { [PAYMENT_SIGNATURE_HEADER]: encodeX402Header(payload) } }),
    );
    expect(lines).toEqual(['[x402] extension responses: {"bazaar":{"status":"success"}}']);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ city: 'Oslo', tempC: 21 });
    expect(decodeX402Header(paid.headers.get(PAYMENT_RESPONSE_HEADER))).toMatchObject({ success: true, payer: payer.publicKey });
    expect(stack.devnet.balances(payer.publicKey).usdc).toBe(10_000_000n - BigInt(PRICE_BASE_UNITS));
  }, 30_000);
});

describe('stock HTTPFacilitatorClient against svc', () => {
  const requirements = () => ({
    scheme: 'exact',
    network: 'stellar:testnet' as const,
    asset: stack.devnet.usdc.contractId,
    amount: '5000',
    payTo: stack.accounts.seller.publicKey,
    maxTimeoutSeconds: 60,
    extra: { areFeesSponsored: true },
  });

  it('reads /supported: the exact kind with areFeesSponsored, bazaar, and every signer', async () => {
    const supported = await new HTTPFacilitatorClient({ url: stack.svc.url }).getSupported();
    expect(supported.kinds).toEqual([
      {
        x402Version: 2,
        scheme: 'exact',
        network: 'stellar:testnet',
        extra: { areFeesSponsored: true, maxTransactionFeeStroops: 1_100_000, inclusionFeeStroops: 100 },
      },
    ]);
    expect(supported.extensions).toEqual(['bazaar', 'payment-identifier']);
    expect(supported.signers['stellar:*']).toEqual([
      ...stack.accounts.submitters.map((a) => a.publicKey),
      stack.accounts.feeBump.publicKey,
    ]);
  });

  it('gets the scheme codes intact from /verify and /settle for an invalid payment', async () => {
    const facilitator = new HTTPFacilitatorClient({ url: stack.svc.url });
    const req = requirements();
    // A real signed payment (our buyer builder), then presented against different terms.
    const payload = await createStellarPayment({
      requirements: req,
      signer: Keypair.fromSecret(stack.accounts.buyer.secret),
      rpc: createSdkRpc({ url: stack.devnet.rpcUrl }),
    });
    const wrongAmount = { ...req, amount: '5001' };
    const tampered = { ...payload, accepted: wrongAmount };

    const verified = await facilitator.verify(tampered as never, wrongAmount);
    expect(verified).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_stellar_payload_wrong_amount' });
    expect(typeof verified.invalidMessage).toBe('string');

    const settled = await facilitator.settle(tampered as never, wrongAmount);
    expect(settled).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_wrong_amount', transaction: '' });
    expect(settled.extensionResponses).toBeUndefined();

    // A payload that is not a transaction at all: the malformed code, on both paths.
    const garbage = { ...payload, payload: { transaction: 'bm90IGEgdHJhbnNhY3Rpb24=' } };
    expect(await facilitator.verify(garbage as never, req as never)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_stellar_payload_malformed',
    });
    expect(await facilitator.settle(garbage as never, req as never)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_stellar_payload_malformed',
    });

    // An unsupported kind: svc's own code, still a 200 the stock client parses.
    const otherNet = { ...req, network: 'stellar:pubnet' as const };
    expect(await facilitator.verify({ ...payload, accepted: otherNet } as never, otherNet as never)).toMatchObject({
      isValid: false,
      invalidReason: 'svc_unsupported_kind',
    });

    // An envelope svc cannot interpret is a 400 in the route's shape: the stock client turns it
    // into VerifyError / SettleError carrying svc's code and reason.
    const v1 = { ...payload, x402Version: 1 };
    await expect(facilitator.verify(v1 as never, req as never)).rejects.toMatchObject({
      name: 'VerifyError',
      statusCode: 400,
      invalidReason: 'svc_unsupported_x402_version',
    });
    await expect(facilitator.settle(v1 as never, req as never)).rejects.toMatchObject({
      name: 'SettleError',
      statusCode: 400,
      errorReason: 'svc_unsupported_x402_version',
    });
  }, 30_000);
});

describe('the HTTPFacilitatorClient of @x402/core 2.9.0 (the core @x402/stellar 2.9.0 pins)', () => {
  // Loaded from where @x402/stellar resolves it, so it is the nested 2.9.0 build, not 2.27.
  const nestedRequire = createRequire(createRequire(import.meta.url).resolve('@x402/stellar'));
  const { HTTPFacilitatorClient: Client290 } = nestedRequire('@x402/core/server') as typeof import('@x402/core/server');

  it('parses /supported and /verify; settles, but drops the EXTENSION-RESPONSES header (docs/INTEROP.md)', async () => {
    expect(nestedRequire.resolve('@x402/core/server')).toContain('@x402/stellar/node_modules/@x402/core');
    const facilitator = new Client290({ url: stack.svc.url });
    const live = await fetch(`${seller.url}/weather?city=Oslo`);
    const bazaarFromLive402 = JSON.parse(Buffer.from(live.headers.get('payment-required')!, 'base64').toString('utf8')) as {
      extensions: Record<string, unknown>;
    };
    const supported = await facilitator.getSupported();
    expect(supported.kinds[0]).toMatchObject({ scheme: 'exact', network: 'stellar:testnet', extra: { areFeesSponsored: true } });

    const req = {
      scheme: 'exact',
      network: 'stellar:testnet' as const,
      asset: stack.devnet.usdc.contractId,
      amount: '7000',
      payTo: stack.accounts.seller.publicKey,
      maxTimeoutSeconds: 60,
      extra: { areFeesSponsored: true },
    };
    const payload = await createStellarPayment({
      requirements: req,
      signer: Keypair.fromSecret(stack.accounts.agent.secret),
      rpc: createSdkRpc({ url: stack.devnet.rpcUrl }),
      // The seller's own route (its server names this payTo: ownership from the origin), already listed: refreshed at once.
      resource: { url: `${seller.url}/weather?probe=290`, description: 'core 2.9.0 probe' },
      // The bazaar extension exactly as the stock seller's 402 declares it (method filled in).
      extensions: bazaarFromLive402.extensions,
    });
    expect(await facilitator.verify(payload as never, req as never)).toMatchObject({
      isValid: true,
      payer: stack.accounts.agent.publicKey,
    });
    const settled = (await facilitator.settle(payload as never, req)) as {
      success: boolean;
      transaction: string;
      extensionResponses?: unknown;
    };
    expect(settled.success).toBe(true);
    expect(settled.transaction).toMatch(/^[0-9a-f]{64}$/);
    // svc sent the header (the listing exists), but this client version never reads it.
    expect(settled.extensionResponses).toBeUndefined();
    const listed = () =>
      fetch(`${stack.svc.url}/discovery/resources?payTo=${stack.accounts.seller.publicKey}`).then(
        (r) => r.json() as Promise<{ items: Array<{ resource: string }> }>,
      );
    await expect.poll(async () => (await listed()).items.map((i) => i.resource)).toContain(`${seller.url}/weather`);
  }, 30_000);
});
