/** GET /health, GET /supported, GET /openapi.yaml and unknown routes, over real HTTP. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signerAddresses } from '../../src/config.ts';
import { exactKind, FakeScheme } from '../helpers/fake-scheme.ts';
import { api, OPENAPI_FILE, openapiDocument } from '../helpers/contract.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';

const submitters = [Keypair.random(), Keypair.random()];
const feeBump = Keypair.random();
const secrets = [...submitters, feeBump].map((k) => k.secret());
let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;
/** A real database file (its path must not show in /health), outside the checkout. */
const dataDir = mkdtempSync(join(tmpdir(), 'svc-service-'));
const dbPath = join(dataDir, 'svc.sqlite');

beforeAll(async () => {
  const config = testConfig({
    SUBMITTER_SECRET: submitters.map((k) => k.secret()).join(','),
    FEE_BUMP_SECRET: feeBump.secret(),
    PORT: '4555',
    DB_PATH: dbPath,
    MAX_TRANSACTION_FEE_STROOPS: '70000',
  });
  server = await startTestServer({ config });
  client = api(server.url);
});
afterAll(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('GET /health', () => {
  it('reports the public projection: public addresses only, no RPC URL or database path, the bound port', async () => {
    const res = await client.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      x402Version: 2,
      network: 'stellar:testnet',
      submitters: submitters.map((k) => k.publicKey()),
      feeBumpAddress: feeBump.publicKey(),
      port: server.port,
      feeMode: 'free',
      maxTransactionFeeStroops: 70000,
    });
    for (const secret of secrets) expect(res.text).not.toContain(secret);
    expect(res.text).not.toContain(dataDir);
  });

  it('feeBumpAddress is null when not configured', async () => {
    const s = await startTestServer();
    try {
      const res = await api(s.url).get('/health');
      expect(res.body.feeBumpAddress).toBeNull();
    } finally {
      await s.close();
    }
  });
});

describe('GET /supported', () => {
  it('the scheme built from the configuration advertises its exact kind, bazaar and all signers', async () => {
    const res = await client.get('/supported');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kinds: [
        {
          x402Version: 2,
          scheme: 'exact',
          network: 'stellar:testnet',
          extra: { areFeesSponsored: true, maxTransactionFeeStroops: 70_000, inclusionFeeStroops: 100 },
        },
      ],
      extensions: ['bazaar', 'payment-identifier'],
      signers: { 'stellar:*': [...submitters.map((k) => k.publicKey()), feeBump.publicKey()] },
    });
    expect(res.body.signers['stellar:*']).toEqual(signerAddresses(server.config));
  });

  it('with a scheme takes kinds and signers from it', async () => {
    const scheme = new FakeScheme({ kinds: [exactKind('stellar:pubnet')], signers: { 'stellar:*': ['GONE'] } });
    const s = await startTestServer({ scheme, config: testConfig({ NETWORK: 'stellar:pubnet', RPC_URL: 'https://rpc.example.org' }) });
    try {
      const res = await api(s.url).get('/supported');
      expect(res.body.kinds[0].network).toBe('stellar:pubnet');
      expect(res.body.signers).toEqual({ 'stellar:*': ['GONE'] });
      expect(res.body.extensions).toEqual(['bazaar']);
    } finally {
      await s.close();
    }
  });
});

describe('GET /.well-known/x402', () => {
  it('is the experimental facilitator manifest: the routes, and GET /supported mirrored at the same moment', async () => {
    const [manifest, supported] = await Promise.all([client.get('/.well-known/x402'), client.get('/supported')]);
    expect(manifest.status).toBe(200);
    expect(manifest.body).toMatchObject({ x402Version: 2, experimental: true, role: 'facilitator' });
    expect(manifest.body.supported).toEqual(supported.body);
    // Every route it names is an operation svc answers (the document's, GET).
    for (const path of Object.values<string>(manifest.body.endpoints)) {
      const declared = openapiDocument.paths[path];
      expect(declared, path).toBeDefined();
    }
    expect(manifest.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('follows the scheme: another network and signers show there as in /supported', async () => {
    const scheme = new FakeScheme({ kinds: [exactKind('stellar:pubnet')], signers: { 'stellar:*': ['GONE'] } });
    const s = await startTestServer({ scheme, config: testConfig({ NETWORK: 'stellar:pubnet', RPC_URL: 'https://rpc.example.org' }) });
    try {
      const res = await api(s.url).get('/.well-known/x402');
      expect(res.body.supported).toEqual((await api(s.url).get('/supported')).body);
      expect(res.body.supported.kinds[0].network).toBe('stellar:pubnet');
    } finally {
      await s.close();
    }
  });
});

describe('GET /openapi.yaml', () => {
  it('serves the document verbatim as YAML', async () => {
    const res = await client.get('/openapi.yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(res.text).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/nope'],
    ['GET', '/index.html'],
    ['POST', '/nope'],
    ['GET', '/health/extra'],
    ['GET', '/verify/'],
  ])('%s %s → 404 svc_unknown_route listing the mounted routes', async (method, path) => {
    const res = await client.request(method, path);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('svc_unknown_route');
    for (const route of [
      'POST /verify',
      'POST /settle',
      'GET /supported',
      'GET /discovery/resources',
      'GET /discovery/search',
      'GET /health',
      'GET /openapi.yaml',
    ]) {
      expect(res.body.error.reason).toContain(route);
    }
  });

  // The examples of openapi.yaml are what svc answers, so they cannot drift from the routes it serves.
  it.each([
    ['404', 'GET', '/nope'],
    ['405', 'GET', '/verify'],
  ])('the %s example of x-svc-unmatched-responses is the answer to %s %s', async (status, method, path) => {
    const res = await client.request(method, path);
    expect(res.status).toBe(Number(status));
    expect(res.body).toEqual(openapiDocument['x-svc-unmatched-responses'][status].content['application/json'].example);
  });

  it.each([
    ['DELETE', '/discovery/resources', 'GET, OPTIONS'],
    ['POST', '/health', 'GET'],
    ['PUT', '/supported', 'GET, OPTIONS'],
    ['PATCH', '/openapi.yaml', 'GET, OPTIONS'],
    ['OPTIONS', '/verify', 'POST'],
    ['DELETE', '/settle', 'POST'],
    ['DELETE', '/settlements/0a1b.json', 'GET'],
  ])('%s %s (a known path) → 405 svc_unknown_route, Allow: %s', async (method, path, allow) => {
    const res = await client.request(method, path);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.body.error.code).toBe('svc_unknown_route');
    expect(res.body.error.reason).toBe(`${path} does not accept ${method}; it accepts ${allow}.`);
  });

  it('a body sent to an unknown route is not read', async () => {
    const res = await client.request('POST', '/nope', { body: 'x'.repeat(400 * 1024), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(404);
  });
});
