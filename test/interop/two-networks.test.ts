/**
 * One svc serving two networks (docs/OPERATIONS.md "Several networks"): a testnet devnet and a
 * pubnet devnet (pubnet's passphrase and USDC contract id), NETWORK=stellar:testnet,stellar:pubnet
 * with each network's own RPC_URL_… and SUBMITTER_SECRET_…. A stock seller (@x402/core pieces with
 * the @x402/stellar 2.9.0 server scheme) charges on each network and a stock buyer pays on each;
 * /supported lists both kinds with each network's signers, /ready is 200 with each network's
 * checks, metrics (each network's own fee caps among them) and the catalog keep the networks apart, and a payment signed for one network
 * is refused on the other. Certificates and DNS: the named boundary of stock-clients.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { x402Client } from '@x402/core/client';
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as StellarClientScheme } from '@x402/stellar/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { createSdkRpc } from '../../src/chains/stellar/index.ts';
import { loadConfig } from '../../src/config.ts';
import { startDevnet, type Devnet, type DevnetExtras } from '../../src/devnet/index.ts';
import type { RunningServer } from '../../src/http/app.ts';
import { silentLogger } from '../../src/log.ts';
import type { PaymentRequirements } from '../../src/scheme/types.ts';
import { createService, type Service } from '../../src/service.ts';
import { BUSY_MACHINE_BOUNDS } from '../catalog/fixtures.ts';
import { trustCertAndBlockDns, type OfflineHttps } from '../helpers/offline-https.ts';
import { startStockSeller, type StockSeller } from './stock-seller.ts';

type Net = 'stellar:testnet' | 'stellar:pubnet';
const NETS: Net[] = ['stellar:testnet', 'stellar:pubnet'];
const PRICE = '10000';

const devnets = {} as Record<Net, Devnet & DevnetExtras>;
const offline: OfflineHttps[] = [];
const submitters = { 'stellar:testnet': Keypair.random(), 'stellar:pubnet': Keypair.random() };
/** One key, funded on both ledgers: the buyer. */
const buyer = Keypair.random();
const payTo = Keypair.random();
let service: Service;
let running: RunningServer;
let seller: StockSeller;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-two-networks-'));
  for (const network of NETS) {
    const devnet = await startDevnet({ network, ledgerMs: 1000, https: true });
    devnets[network] = devnet;
    offline.push(trustCertAndBlockDns(devnet.caCertPem!));
    await devnet.fund(submitters[network].publicKey(), { usdcTrustline: false });
    await devnet.fund(buyer.publicKey(), { usdc: 10n * 10_000_000n });
    await devnet.fund(payTo.publicKey());
  }
  const config = loadConfig({
    NETWORK: 'stellar:testnet,stellar:pubnet',
    RPC_URL_TESTNET: devnets['stellar:testnet'].rpcUrl,
    RPC_URL_PUBNET: devnets['stellar:pubnet'].rpcUrl,
    SUBMITTER_SECRET_TESTNET: submitters['stellar:testnet'].secret(),
    SUBMITTER_SECRET_PUBNET: submitters['stellar:pubnet'].secret(),
    // Pubnet's own daily fee cap (testnet keeps the default 10 XLM), as /metrics shows it.
    FEE_BUDGET_DAILY_STROOPS_PUBNET: '50000000',
    DB_PATH: join(dataDir, 'svc.sqlite'),
    DISCOVERY_YIELD_PERCENT: '100',
    LIVENESS_CHECKS_PER_MINUTE: '0',
    // This file is about networks: a settlement lists at once (ownership from the origin: test/catalog/ownership-e2e.test.ts).
    LISTING_OWNERSHIP: 'first-settlement',
  });
  service = createService(config, { logger: silentLogger(), catalogBounds: BUSY_MACHINE_BOUNDS });
  running = await service.listen(0, '127.0.0.1');
  const route = (network: Net) => ({
    accepts: { scheme: 'exact', network, payTo: payTo.publicKey(), price: '$0.001', maxTimeoutSeconds: 60 },
    description: `A report paid on ${network}`,
    mimeType: 'application/json',
    extensions: declareDiscoveryExtension({ output: { example: { paid: network } } }),
  });
  seller = await startStockSeller({
    facilitatorUrl: running.url,
    routes: { 'GET /testnet': route('stellar:testnet'), 'GET /pubnet': route('stellar:pubnet') },
    handlers: { 'GET /testnet': () => ({ paid: 'testnet' }), 'GET /pubnet': () => ({ paid: 'pubnet' }) },
  });
}, 90_000);

afterAll(async () => {
  await seller?.close();
  await service?.close();
  for (const o of offline.reverse()) o.restore();
  for (const devnet of Object.values(devnets)) await devnet.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function stockBuyer() {
  const client = x402Client.fromConfig({
    schemes: NETS.map((network) => ({
      network,
      client: new StellarClientScheme(createEd25519Signer(buyer.secret(), network), { url: devnets[network].httpsRpcUrl! }),
    })),
    spendControls: {
      allowedAssets: NETS.map((network) => ({ network, asset: devnets[network].usdc.contractId, maxAmountPerPayment: '10000000' })),
    },
  });
  return wrapFetchWithPayment(fetch, client);
}

const get = <T>(path: string) => fetch(`${running.url}${path}`).then(async (r) => ({ status: r.status, body: (await r.json()) as T }));

describe('one svc, a testnet devnet and a pubnet devnet', () => {
  it('lists a kind per network with its own signers, and is ready with each network’s checks', async () => {
    expect(devnets['stellar:pubnet'].usdc.contractId).toBe('CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75');
    const supported = await get<{ kinds: unknown[]; signers: Record<string, string[]> }>('/supported');
    expect(supported.body.kinds).toEqual([
      {
        x402Version: 2,
        scheme: 'exact',
        network: 'stellar:testnet',
        extra: { areFeesSponsored: true, maxTransactionFeeStroops: 1_100_000, inclusionFeeStroops: 100 },
      },
      {
        x402Version: 2,
        scheme: 'exact',
        network: 'stellar:pubnet',
        extra: { areFeesSponsored: true, maxTransactionFeeStroops: 550_000, inclusionFeeStroops: 100 },
      },
    ]);
    expect(supported.body.signers).toEqual({
      'stellar:testnet': [submitters['stellar:testnet'].publicKey()],
      'stellar:pubnet': [submitters['stellar:pubnet'].publicKey()],
    });
    const ready = await get<{ status: string; checks: Record<string, { ok: boolean }> }>('/ready');
    expect(ready.status).toBe(200);
    expect(Object.keys(ready.body.checks).sort()).toEqual(
      ['balances:stellar:pubnet', 'balances:stellar:testnet', 'database', 'draining', 'rpc:stellar:pubnet', 'rpc:stellar:testnet'].sort(),
    );
    const health = await get<{ network: string; networks: Array<{ network: string; submitters: string[] }> }>('/health');
    expect(health.body.network).toBe('stellar:testnet,stellar:pubnet');
    expect(health.body.networks.map((n) => [n.network, n.submitters])).toEqual([
      ['stellar:testnet', [submitters['stellar:testnet'].publicKey()]],
      ['stellar:pubnet', [submitters['stellar:pubnet'].publicKey()]],
    ]);
  }, 30_000);

  it('settles a stock client’s payment on each network, on that network’s ledger', async () => {
    const pay = stockBuyer();
    for (const network of NETS) {
      const other = devnets[network === 'stellar:testnet' ? 'stellar:pubnet' : 'stellar:testnet'];
      const before = { here: devnets[network].balances(payTo.publicKey()).usdc!, there: other.balances(payTo.publicKey()).usdc! };
      const res = await pay(`${seller.url}/${network.slice('stellar:'.length)}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ paid: network.slice('stellar:'.length) });
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, network, payer: buyer.publicKey() });
      expect(devnets[network].balances(payTo.publicKey()).usdc).toBe(before.here + BigInt(PRICE));
      expect(other.balances(payTo.publicKey()).usdc).toBe(before.there);
      const status = await createSdkRpc({ url: devnets[network].rpcUrl }).getTransaction(receipt.transaction);
      expect(status?.status).toBe('SUCCESS');
      const record = await get<{ network: string; state: string }>(`/settlements/${receipt.transaction}`);
      expect(record.body).toMatchObject({ network, state: 'settled' });
    }
    // Each network's outcomes under its own label; the catalog keeps each listing's network.
    const metrics = await fetch(`${running.url}/metrics`).then((r) => r.text());
    for (const network of NETS) expect(metrics).toContain(`svc_settle_outcomes_total{network="${network}",code="success"} 1`);
    expect(metrics).toContain('svc_fee_budget_cap_stroops{network="stellar:testnet",budget="daily"} 100000000');
    expect(metrics).toContain('svc_fee_budget_cap_stroops{network="stellar:pubnet",budget="daily"} 50000000');
    const listings = await get<{ items: Array<{ resource: string; accepts: Array<{ network: string }> }> }>(
      '/discovery/resources?network=stellar:pubnet',
    );
    expect(listings.body.items.map((i) => [i.resource, i.accepts.map((a) => a.network)])).toEqual([
      [`${seller.url}/pubnet`, ['stellar:pubnet']],
    ]);
  }, 60_000);

  it('refuses a payment signed for one network on the other', async () => {
    const requirements: PaymentRequirements = {
      scheme: 'exact',
      network: 'stellar:testnet',
      asset: devnets['stellar:testnet'].usdc.contractId,
      amount: PRICE,
      payTo: payTo.publicKey(),
      maxTimeoutSeconds: 60,
      extra: { areFeesSponsored: true },
    };
    const signed = await createStellarPayment({
      signer: buyer,
      requirements,
      rpc: createSdkRpc({ url: devnets['stellar:testnet'].rpcUrl }),
    });
    const verify = (body: unknown) =>
      fetch(`${running.url}/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
        (r) => r.json() as Promise<{ isValid: boolean; invalidReason?: string }>,
      );
    // Presented for pubnet as it was accepted (testnet): the networks differ.
    const onPubnet = { ...requirements, network: 'stellar:pubnet', asset: devnets['stellar:pubnet'].usdc.contractId };
    expect(await verify({ x402Version: 2, paymentPayload: signed, paymentRequirements: onPubnet })).toMatchObject({
      isValid: false,
      invalidReason: 'network_mismatch',
    });
    // Relabelled as a pubnet payment throughout: it pays testnet's USDC contract, which is not pubnet's.
    const relabelled = { ...signed, accepted: onPubnet };
    expect(await verify({ x402Version: 2, paymentPayload: relabelled, paymentRequirements: onPubnet })).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_stellar_payload_wrong_asset',
    });
    // …and even naming testnet's asset on pubnet, pubnet's ledger has no such contract and testnet's signature is not pubnet's.
    const sameAsset = { ...requirements, network: 'stellar:pubnet' };
    const answer = await verify({ x402Version: 2, paymentPayload: { ...signed, accepted: sameAsset }, paymentRequirements: sameAsset });
    expect(answer).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_stellar_payload_simulation_failed' });
    // On its own network it is valid.
    expect(await verify({ x402Version: 2, paymentPayload: signed, paymentRequirements: requirements })).toMatchObject({ isValid: true });
  }, 30_000);
});
