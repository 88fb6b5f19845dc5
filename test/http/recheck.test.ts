/**
 * POST /discovery/recheck (openapi.yaml; docs/SELLER.md "Checked again without paying"), over HTTP:
 * a claim rejected because its resource's server named another payTo is listed, without another
 * payment, once the server is fixed and the claimant signs a re-check; a re-check signed by another
 * key, a withdrawal's signature, and a payTo without a claim are refused and ask nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeX402Header } from '../../src/client/seller.ts';
import { api } from '../helpers/contract.ts';
import { FakeScheme, exactKind } from '../helpers/fake-scheme.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { ASSET, httpBazaar, settlement } from '../catalog/fixtures.ts';

const seller = Keypair.random();
const stranger = Keypair.random();
const OTHER = `G${'D'.repeat(55)}`;

let svc: TestServer;
let origin: http.Server;
let base: string;
let dir: string;
/** The payTo the origin's 402 names (the seller's, once "fixed"). */
let named = OTHER;
let asked = 0;

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    asked++;
    const required = {
      x402Version: 2,
      resource: { url: `${base}${req.url}` },
      accepts: [{ scheme: 'exact', network: 'stellar:testnet', amount: '1000', asset: ASSET, payTo: named, maxTimeoutSeconds: 60 }],
    };
    res.writeHead(402, { 'payment-required': encodeX402Header(required) }).end('{}');
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.9', resolve));
  base = `http://127.0.0.9:${(origin.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'svc-recheck-'));
  svc = await startTestServer({
    scheme: new FakeScheme({
      kinds: [exactKind('stellar:testnet')],
      settle: { success: true, transaction: 'ab'.repeat(32), network: 'stellar:testnet', payer: stranger.publicKey() },
    }),
    // The bound of one request per host per interval holds for re-checks too; 1 s keeps the test short.
    config: testConfig({
      LISTING_OWNERSHIP: 'origin',
      DB_PATH: join(dir, 'catalog.sqlite'),
      PROBE_HOST_INTERVAL_SECONDS: '1',
      VALIDATE_RATE_PER_MINUTE: '1000',
    }),
  });
});
afterAll(async () => {
  await svc?.close();
  await new Promise((resolve) => origin?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const client = () => api(svc.url);
const listing = () => ({ resource: `${base}/weather`, type: 'http', toolName: '' });

/** A re-check of the listing by `payTo`, signed by `signer` over the text GET /discovery/{action} hands out. */
async function recheck(payTo: string, signer: Keypair, action: 'recheck' | 'delist' = 'recheck') {
  const text = await client().get(`/discovery/${action}?${new URLSearchParams({ ...listing(), payTo }).toString()}`);
  expect(text.status).toBe(200);
  const signature = Buffer.from(signer.signMessage(text.body.message)).toString('base64');
  return client().post('/discovery/recheck', { ...listing(), payTo, issuedAt: text.body.issuedAt, catalog: text.body.catalog, signature });
}

const ownership = async () =>
  (await client().post('/discovery/validate', { url: `${base}/weather` })).body.ownership as Array<Record<string, string>>;

describe('POST /discovery/recheck', () => {
  it('a rejected claim is listed without another payment once its origin names its payTo', async () => {
    const settled = await client().post('/settle', {
      x402Version: 2,
      ...settlement({ url: `${base}/weather`, payTo: seller.publicKey(), bazaar: httpBazaar({ description: 'weather' }) }),
    });
    expect(settled.status).toBe(200);
    // The origin names another payTo: an answer, rejected at once.
    const deadline = Date.now() + 15_000;
    while (!(await ownership()).some((c) => c.status === 'rejected') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await ownership()).toMatchObject([{ payTo: seller.publicKey(), status: 'rejected', code: 'bazaar_origin_names_other_payee' }]);

    // Refused, nothing asked: another key, a withdrawal's signature, a payTo without a claim.
    const before = asked;
    const forged = await recheck(seller.publicKey(), stranger);
    expect(forged.status).toBe(403);
    expect(forged.body.error.code).toBe('svc_delist_signature_invalid');
    const withdrawal = await recheck(seller.publicKey(), seller, 'delist');
    expect(withdrawal.body.error.code).toBe('svc_delist_signature_invalid');
    const none = await recheck(stranger.publicKey(), stranger);
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('svc_recheck_no_claim');
    expect(asked).toBe(before);

    // Fixed: the same claim, checked again on request, is listed; nothing more was paid.
    named = seller.publicKey();
    await new Promise((r) => setTimeout(r, 1_100)); // the host's slot (validate asked it just now)
    const fixed = await recheck(seller.publicKey(), seller);
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ status: 'listed' });
    expect(asked).toBe(before + 1);
    const listed = await client().get(`/discovery/resources?payTo=${seller.publicKey()}`);
    expect((listed.body.items as Array<{ resource: string }>).map((i) => i.resource)).toEqual([`${base}/weather`]);
    expect(await ownership()).toEqual([]);
  }, 60_000);
});
