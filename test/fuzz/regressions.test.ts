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
import { CURSOR_PATTERN, MAX_CURSOR_LENGTH } from '../../src/catalog/search.ts';
import { openapiDocument } from '../helpers/contract.ts';
import { FAKE_REQUIREMENTS } from '../helpers/fake-scheme.ts';
import { requestConformance } from '../helpers/fuzz-checks.ts';
import { exchange, fuzzRequest, send, type FuzzRequest } from '../helpers/fuzz-http.ts';
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

/** The requirements of the cases below: schema-valid, for a kind this svc serves. */
const served = FAKE_REQUIREMENTS;
const paymentBody = (accepted: object, paymentRequirements: object = served) =>
  Buffer.from(
    JSON.stringify({ x402Version: 2, paymentPayload: { x402Version: 2, accepted, payload: { transaction: 'AAAA' } }, paymentRequirements }),
  );
const post = (target: string, body: Buffer, headers: Record<string, string> = {}, moreHeaders: [string, string][] = []): FuzzRequest =>
  fuzzRequest({
    method: 'POST',
    target,
    headers: { 'content-type': 'application/json', ...headers },
    moreHeaders,
    body,
    kind: 'regression',
  });
const get = (target: string): FuzzRequest => fuzzRequest({ method: 'GET', target, headers: {}, kind: 'regression' });

// Each case below is one an independent OpenAPI fuzzer reported as a disagreement between
// openapi.yaml and svc; `exchange` runs the whole oracle, so each also shows the two now agree.
describe('paymentPayload.accepted is an x402 v2 PaymentRequirements (asset "", payTo "", maxTimeoutSeconds 0.0)', () => {
  it.each([
    ['asset ""', { asset: '' }],
    ['payTo ""', { payTo: '' }],
    ['maxTimeoutSeconds 0.0', { maxTimeoutSeconds: 0.0 }],
    ['all three', { asset: '', payTo: '', maxTimeoutSeconds: 0.0 }],
  ])('%s is refused at the envelope (400 svc_malformed_request_body), no longer a 200 scheme rejection', async (_name, change) => {
    for (const target of ['/verify', '/settle']) {
      const request = post(target, paymentBody({ ...served, ...change }));
      expect(requestConformance(request)).toBe('nonconforming');
      const body = (await exchange(server.url, request)) as any;
      expect(body.invalidReason ?? body.errorReason).toBe('svc_malformed_request_body');
      expect(body.invalidMessage ?? body.errorMessage).toMatch(/paymentPayload/);
    }
  });
});

describe('unusual request headers on /settle', () => {
  it("a field HTTP forbids (a control character) is refused by the parser in the SettleResponse shape, with the caller's X-Request-Id", async () => {
    for (const [target, field] of [
      ['/settle', 'isValid'],
      ['/verify', 'success'],
    ] as const) {
      const request = post(target, paymentBody(served), { 'x-request-id': 'regression-1' }, [
        ['X-Unusual', 'a\u0007b'],
        ['Accept', '*/*'],
      ]);
      const res = await send(server.url, request);
      expect(res.status).toBe(400);
      expect(res.headers.get('x-request-id')).toBe('regression-1');
      const body = (await exchange(server.url, request)) as any;
      expect(body[field]).toBeUndefined();
      expect(body.errorReason ?? body.invalidReason).toBe('svc_malformed_request_body');
    }
  });
  it('legal ones reach the handler: an unknown expectation (not a 417), obs-text, token punctuation, repeated names, 1000 fields', async () => {
    const legal: [string, string][] = [
      ['Expect', 'x-custom-expectation'],
      ['TE', 'trailers'],
      ['X-Latin', '\u00e9\u00ff'],
      ["!#$%&'*+.^_`|~", ''],
      ['X-Twice', '1'],
      ['X-Twice', '2'],
      ['Connection', 'close, x-custom-hop'],
    ];
    const body = (await exchange(server.url, post('/settle', paymentBody(served), {}, legal))) as any;
    expect(body.errorReason).toBe('invalid_exact_stellar_payload_malformed');
    // 1000 header fields in all is the most a head may carry; one more is a 431 that says so.
    // Beside these: Host, Content-Type and Content-Length.
    const fields = (n: number) =>
      [['Connection', 'close'], ...Array.from({ length: n - 4 }, (_, i) => [`X-F${i}`, String(i)])] as [string, string][];
    const atLimit = (await exchange(server.url, post('/settle', paymentBody(served), {}, fields(1000)))) as any;
    expect(atLimit.errorReason).toBe('invalid_exact_stellar_payload_malformed');
    const over = (await exchange(server.url, post('/settle', paymentBody(served), {}, fields(1001)))) as any;
    expect(over.error).toEqual({ code: 'svc_malformed_request_body', reason: expect.stringContaining('1000 header fields') });
  });
});

describe('unusual Unicode in a schema-valid /settle', () => {
  const unusual = '«Îë뻡\u0007ß»';
  it("in the body's strings it reaches the scheme and gets its code in a 200", async () => {
    const request = post('/settle', paymentBody({ ...served, amount: unusual, payTo: 'Ωμέγα 日本語' }, { ...served, amount: unusual }));
    expect(requestConformance(request)).toBe('conforming');
    const body = (await exchange(server.url, request)) as any;
    expect(body).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_malformed' });
  });
  it('in Idempotency-Key it breaks the declared pattern (printable ASCII): 400 in the SettleResponse shape', async () => {
    for (const key of [unusual, 'café', ' ', 'x'.repeat(256)]) {
      const request = post('/settle', paymentBody(served), { 'idempotency-key': key });
      expect(requestConformance(request)).toBe('nonconforming');
      const body = (await exchange(server.url, request)) as any;
      expect(body.errorReason).toBe('svc_malformed_request_body');
    }
  });
  it('maxTimeoutSeconds -5.2e-276 is not positive: the schema (x402 v2) refuses it, and so does svc', async () => {
    const request = post('/settle', paymentBody(served, { ...served, maxTimeoutSeconds: -5.2e-276 }));
    expect(requestConformance(request)).toBe('nonconforming');
    expect(((await exchange(server.url, request)) as any).errorReason).toBe('svc_malformed_request_body');
  });
});

describe('discovery query parameters', () => {
  it('resource=…&toolName=null on the list are declared parameters; "null" is the four-letter string', async () => {
    const request = get('/discovery/resources?resource=https%3A%2F%2Fa.example%2F&toolName=null');
    expect(requestConformance(request)).toBe('conforming');
    expect(((await exchange(server.url, request)) as any).pagination).toMatchObject({ total: 0 });
  });
  it.each(['__proto__=1', 'constructor=1', 'toString=x', 'hasOwnProperty=x', '=1', 'a', 'resource=x&valueOf=1'])(
    'an undeclared name a JavaScript object already has, or none, is refused like any other: %s',
    async (query) => {
      const request = get(`/discovery/resources?${query}`);
      expect(requestConformance(request)).toBe('nonconforming');
      expect(((await exchange(server.url, request)) as any).error.code).toBe('svc_invalid_query_parameter');
    },
  );
  it('an empty cursor can never have been issued: the schema refuses it (minLength, pattern) as svc does', async () => {
    const declared = openapiDocument.paths['/discovery/search'].get.parameters.find((p: any) => p.name === 'cursor').schema;
    expect(declared).toMatchObject({ pattern: CURSOR_PATTERN.source, maxLength: MAX_CURSOR_LENGTH });
    for (const cursor of ['', 'a', 'a.', 'no dot', 'a.b.c']) {
      const request = get(`/discovery/search?query=weather&cursor=${encodeURIComponent(cursor)}`);
      expect(requestConformance(request)).toBe('nonconforming');
      expect(((await exchange(server.url, request)) as any).error.code).toBe('svc_invalid_search_cursor');
    }
  });
  it('url=+++ (three spaces, fuzz seed 432563216) is blank: the schema refuses it (pattern) as svc does, on list and search', async () => {
    for (const target of ['/discovery/resources?url=+++', '/discovery/search?query=weather&url=%20%20%20%20']) {
      const request = get(target);
      expect(requestConformance(request)).toBe('nonconforming');
      expect(((await exchange(server.url, request)) as any).error.code).toBe('svc_invalid_query_parameter');
    }
  });
  it('query=null alone is a search for the word "null", as the schema allows', async () => {
    const request = get('/discovery/search?query=null');
    expect(requestConformance(request)).toBe('conforming');
    expect(((await exchange(server.url, request)) as any).resources).toEqual([]);
  });
});
