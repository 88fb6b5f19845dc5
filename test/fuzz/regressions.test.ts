/**
 * Regressions for what the contract fuzzer found, each as the smallest request that showed it,
 * plus the transport limits Node enforces before svc runs (documented in docs/TESTING.md).
 * The scheme is the real exact scheme built from config; none of these requests reaches its RPC
 * (the RPC URL is a closed loopback port), so no devnet is needed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORBIDDEN_PROTOTYPE_KEY_MESSAGE } from '../../src/http/middleware.ts';
import { createSchemeFromConfig } from '../../src/chains/stellar/from-config.ts';
import { tempCatalog } from '../catalog/fixtures.ts';
import { exchange, fuzzRequest, send } from '../helpers/fuzz-http.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';

let server: Awaited<ReturnType<typeof startTestServer>>;
let catalog: ReturnType<typeof tempCatalog>;
beforeAll(async () => {
  const config = testConfig({ RPC_URL: 'http://127.0.0.1:9' });
  catalog = tempCatalog();
  server = await startTestServer({ config, scheme: createSchemeFromConfig(config), catalog: catalog.catalog });
});
afterAll(async () => {
  await server?.close();
  catalog?.close();
});

const requirements = { scheme: 'upto', network: 'stellar:testnet', asset: 'C', amount: '1', payTo: 'G', maxTimeoutSeconds: 60 };

describe('a JSON body with a "__proto__" key (fuzz seed 887567966)', () => {
  it('is refused as svc_malformed_request_body with a reason naming the key, not "not valid JSON"; nothing is polluted', async () => {
    // Raw text: JSON.stringify of an object literal cannot produce an own "__proto__" key.
    const nested = `{"x402Version":2,"paymentPayload":{"x402Version":2,"resource":{"url":"https://a.example/","serviceName":{"__proto__":{"polluted":true}}}},"paymentRequirements":${JSON.stringify(requirements)}}`;
    const escaped = `{"paymentPayload":{"x402Version":2,"extensions":{"\\u005f_proto__":{"polluted":true}}},"paymentRequirements":{}}`;
    for (const text of [nested, escaped]) {
      for (const target of ['/verify', '/settle']) {
        const body = (await exchange(
          server.url,
          fuzzRequest({
            method: 'POST',
            target,
            headers: { 'content-type': 'application/json' },
            body: Buffer.from(text),
            kind: 'regression',
          }),
        )) as any;
        expect(body.invalidReason ?? body.errorReason).toBe('svc_malformed_request_body');
        expect(body.invalidMessage ?? body.errorMessage).toBe(FORBIDDEN_PROTOTYPE_KEY_MESSAGE);
      }
    }
    expect(({} as any).polluted).toBeUndefined();
    // The same body without the key goes through to kind routing.
    const clean = nested.replace('"__proto__"', '"proto"');
    const body = (await exchange(
      server.url,
      fuzzRequest({
        method: 'POST',
        target: '/verify',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(clean),
        kind: 'regression',
      }),
    )) as any;
    expect(body.invalidReason).toBe('svc_unsupported_kind');
  });
});

describe('requests the HTTP parser refuses before any route is known', () => {
  it('a request head over 16 KiB is a 431 ErrorEnvelope within the contract; svc stays healthy', async () => {
    const body = (await exchange(
      server.url,
      fuzzRequest({ method: 'GET', target: `/discovery/resources?type=${'a'.repeat(20_000)}`, headers: {}, kind: 'oversized head' }),
    )) as any;
    expect(body.error).toEqual({ code: 'svc_malformed_request_body', reason: expect.stringContaining('16 KiB') });
    await exchange(server.url, fuzzRequest({ method: 'GET', target: '/health', headers: {}, kind: 'health' }));
  });
  it('a method name the parser does not know is a 404 svc_unknown_route ErrorEnvelope', async () => {
    const res = await send(server.url, fuzzRequest({ method: 'FOO', target: '/verify', headers: {}, kind: 'unknown method' }));
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'svc_unknown_route', reason: expect.any(String) } });
    await exchange(server.url, fuzzRequest({ method: 'GET', target: '/health', headers: {}, kind: 'health' }));
  });
  it('a request line just under the limit is answered by svc within the contract', async () => {
    const body = (await exchange(
      server.url,
      fuzzRequest({ method: 'GET', target: `/discovery/resources?type=${'a'.repeat(12_000)}`, headers: {}, kind: 'long query' }),
    )) as any;
    expect(body.pagination).toMatchObject({ total: 0 });
  });
});
