/**
 * POST /verify and POST /settle over real HTTP on loopback. The payment scheme is replaced by the
 * shared FakeScheme (the named boundary: PaymentScheme in src/scheme/types.ts); everything else is real.
 * Every response is checked against openapi.yaml by the contract helper.
 */
import { Writable } from 'node:stream';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BazaarOutcome, CatalogPort } from '../../src/catalog/types.ts';
import { SERVICE_CODES } from '../../src/codes.ts';
import { createLogger } from '../../src/log.ts';
import { api, expectResponseMatchesContract } from '../helpers/contract.ts';
import {
  FAKE_ENVELOPE,
  FAKE_HASH as HASH,
  FAKE_PAYER as PAYER,
  FAKE_PAYLOAD,
  FAKE_REQUIREMENTS,
  FakeScheme,
} from '../helpers/fake-scheme.ts';
import { startTestServer, testConfig } from '../helpers/server.ts';

const requirements = FAKE_REQUIREMENTS;
const payload = FAKE_PAYLOAD;
const envelope = FAKE_ENVELOPE;

/** A catalog whose hook answers what the test sets (the named boundary: src/catalog/types.ts). */
class ScriptedCatalog implements CatalogPort {
  outcome: BazaarOutcome | null | Error = { status: 'success' };
  recorded: unknown[] = [];
  async recordSettlement(settled: unknown) {
    this.recorded.push(settled);
    if (this.outcome instanceof Error) throw this.outcome;
    return this.outcome;
  }
  list(): never {
    throw new Error('not used');
  }
  search(): never {
    throw new Error('not used');
  }
}

const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
    done();
  },
});

const SUBMITTER_SEED = Keypair.random().secret();
const scheme = new FakeScheme();
const catalog = new ScriptedCatalog();
let server: Awaited<ReturnType<typeof startTestServer>>;
let noScheme: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer({
    scheme,
    catalog,
    config: testConfig({ SUBMITTER_SECRET: SUBMITTER_SEED }),
    logger: createLogger('info', logSink),
  });
  // Every server has a scheme (createService registers one); this one cannot decide anything.
  const undecided = new Error('no scheme can decide this payment');
  noScheme = await startTestServer({ scheme: new FakeScheme({ verify: undecided, settle: undecided }) });
  client = api(server.url);
});
afterAll(async () => {
  await server.close();
  await noScheme.close();
});

const routes = [
  { path: '/verify', code: 'invalidReason', message: 'invalidMessage', flag: 'isValid' },
  { path: '/settle', code: 'errorReason', message: 'errorMessage', flag: 'success' },
] as const;

describe.each(routes)('POST $path envelope errors', ({ path, code, message, flag }) => {
  const raw = (body: string | undefined, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    client.request('POST', path, { body, headers });

  it.each([
    ['absent body', undefined, undefined],
    ['empty JSON body', '', undefined],
    ['invalid JSON', '{"paymentPayload":', undefined],
    ['JSON array', '[1,2]', undefined],
    ['JSON string', '"hello"', undefined],
    ['JSON null', 'null', undefined],
    ['JSON number', '42', undefined],
    ['wrong Content-Type', JSON.stringify(envelope), { 'content-type': 'text/plain' }],
    ['form Content-Type', 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['__proto__ poisoning', '{"__proto__":{"x":1}}', undefined],
  ])('%s → 400 svc_malformed_request_body', async (_name, body, headers) => {
    const res = await raw(body, headers);
    expect(res.status).toBe(400);
    expect(res.body[flag]).toBe(false);
    expect(res.body[code]).toBe('svc_malformed_request_body');
    expect(res.body[message]).toMatch(/\S/);
  });

  it.each([
    ['missing paymentPayload', { paymentRequirements: requirements }, 'svc_missing_payment_payload'],
    ['paymentPayload not an object', { paymentPayload: 'x', paymentRequirements: requirements }, 'svc_missing_payment_payload'],
    ['paymentPayload an array', { paymentPayload: [], paymentRequirements: requirements }, 'svc_missing_payment_payload'],
    ['missing paymentRequirements', { paymentPayload: payload }, 'svc_missing_payment_requirements'],
    ['paymentRequirements null', { paymentPayload: payload, paymentRequirements: null }, 'svc_missing_payment_requirements'],
    [
      'x402Version 1',
      { paymentPayload: { ...payload, x402Version: 1 }, paymentRequirements: requirements },
      'svc_unsupported_x402_version',
    ],
    ['x402Version missing', { paymentPayload: { payload: {} }, paymentRequirements: requirements }, 'svc_unsupported_x402_version'],
    [
      'x402Version "2" as a string',
      { paymentPayload: { ...payload, x402Version: '2' }, paymentRequirements: requirements },
      'svc_unsupported_x402_version',
    ],
    [
      'requirements without asset',
      { paymentPayload: payload, paymentRequirements: { ...requirements, asset: undefined } },
      'svc_malformed_request_body',
    ],
    ['amount not a string', { paymentPayload: payload, paymentRequirements: { ...requirements, amount: 5 } }, 'svc_malformed_request_body'],
  ])('%s → 400 %s', async (_name, body, expected) => {
    scheme.calls = [];
    const res = await client.post(path, body);
    expect(res.status).toBe(400);
    expect(res.body[code]).toBe(expected);
    expect(res.body[message]).toMatch(/\S/);
    expect(scheme.calls).toEqual([]);
  });

  it('echoes the network in the settle shape when it is known', async () => {
    const res = await client.post(path, { paymentRequirements: requirements });
    if (path === '/settle') {
      expect(res.body.network).toBe('stellar:testnet');
      expect(res.body.transaction).toBe('');
    }
  });

  it('a body over 256 KiB → 413 in the route shape (declared length and chunked)', async () => {
    const big = JSON.stringify({ ...envelope, padding: 'x'.repeat(256 * 1024) });
    const res = await raw(big);
    expect(res.status).toBe(413);
    expect(res.body[code]).toBe('svc_malformed_request_body');
    expect(res.body[message]).toBe('The request body exceeds 256 KiB.');
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const chunked = await fetch(server.url + path, {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    });
    const res2 = await expectResponseMatchesContract(chunked, { method: 'POST', path });
    expect(res2.status).toBe(413);
    expect(res2.body[code]).toBe('svc_malformed_request_body');
  });

  it('a body just under 256 KiB is read', async () => {
    const padding = 'x'.repeat(256 * 1024 - JSON.stringify({ ...envelope, padding: '' }).length);
    const res = await client.post(path, { ...envelope, padding });
    expect(res.status).toBe(200);
  });

  it('an unadvertised (scheme, network) → 200 svc_unsupported_kind, scheme not called', async () => {
    scheme.calls = [];
    for (const reqs of [
      { ...requirements, network: 'stellar:pubnet' },
      { ...requirements, scheme: 'upto' },
    ]) {
      const res = await client.post(path, { paymentPayload: payload, paymentRequirements: reqs });
      expect(res.status).toBe(200);
      expect(res.body[flag]).toBe(false);
      expect(res.body[code]).toBe('svc_unsupported_kind');
      expect(res.body[message]).toMatch(/check GET \/supported/);
    }
    expect(scheme.calls).toEqual([]);
  });

  it('a throwing scheme → 500 svc_internal_error in the route shape, no stack or secret', async () => {
    const boom = new Error(`boom with ${SUBMITTER_SEED}`);
    scheme.verifyResult = boom;
    scheme.settleResult = boom;
    try {
      const res = await client.post(path, envelope);
      expect(res.status).toBe(500);
      expect(res.body[flag]).toBe(false);
      expect(res.body[code]).toBe('svc_internal_error');
      expect(res.text).not.toContain('boom');
      expect(res.text).not.toContain('at ');
      expect(res.text).not.toContain(SUBMITTER_SEED);
    } finally {
      scheme.verifyResult = { isValid: true, payer: PAYER };
      scheme.settleResult = { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER };
    }
  });

  it('a scheme that cannot decide → 500 svc_internal_error, never a success', async () => {
    const res = await api(noScheme.url).post(path, envelope);
    expect(res.status).toBe(500);
    expect(res.body[flag]).toBe(false);
    expect(res.body[code]).toBe('svc_internal_error');
  });

  it('wrong method on the path → 405 svc_unknown_route with Allow, naming the accepted method', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS']) {
      const res = await client.request(method, path);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.body.error.code).toBe('svc_unknown_route');
      expect(res.body.error.reason).toContain('accepts POST');
    }
  });
});

describe('POST /verify delegation', () => {
  it('ignores a query string', async () => {
    scheme.verifyResult = { isValid: true, payer: PAYER };
    const res = await client.post('/verify?foo=1&foo=2', envelope);
    expect(res.status).toBe(200);
    expect(res.body.isValid).toBe(true);
  });

  it('passes a valid verdict through', async () => {
    scheme.verifyResult = { isValid: true, payer: PAYER };
    const res = await client.post('/verify', envelope);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ isValid: true, payer: PAYER });
  });

  it('fills invalidMessage from the code registry when the scheme gives none', async () => {
    scheme.verifyResult = { isValid: false, invalidReason: 'invalid_exact_stellar_payload_wrong_amount', payer: PAYER };
    const res = await client.post('/verify', envelope);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      isValid: false,
      invalidReason: 'invalid_exact_stellar_payload_wrong_amount',
      invalidMessage: 'The transfer amount differs from the required amount.',
      payer: PAYER,
    });
  });

  it("keeps the scheme's own message", async () => {
    scheme.verifyResult = { isValid: false, invalidReason: 'invalid_network', invalidMessage: 'custom words' };
    const res = await client.post('/verify', envelope);
    expect(res.body.invalidMessage).toBe('custom words');
    scheme.verifyResult = { isValid: true, payer: PAYER };
  });
});

describe('POST /settle delegation and the catalog hook', () => {
  const decode = (h: string | null) => JSON.parse(Buffer.from(h!, 'base64').toString('utf8'));

  it('success + catalog outcome → EXTENSION-RESPONSES {bazaar: outcome}, body untouched', async () => {
    catalog.outcome = { status: 'success' };
    catalog.recorded = [];
    const res = await client.post('/settle', envelope);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER });
    expect(decode(res.headers.get('extension-responses'))).toEqual({ bazaar: { status: 'success' } });
    // The catalog gets the payment as settled, and who paid it (its quality signals count payers).
    expect(catalog.recorded).toEqual([{ paymentPayload: payload, paymentRequirements: requirements, payment: { id: HASH, payer: PAYER } }]);
  });

  it('a rejected outcome carries its code', async () => {
    catalog.outcome = { status: 'rejected', rejectedReason: 'owned by another payee', code: 'bazaar_listing_owned_by_other_payee' };
    const res = await client.post('/settle', envelope);
    expect(decode(res.headers.get('extension-responses'))).toEqual({ bazaar: catalog.outcome });
    expect(res.body.success).toBe(true);
  });

  it('null outcome or a throwing catalog → no header, same body', async () => {
    for (const outcome of [null, new Error('disk on fire')]) {
      catalog.outcome = outcome;
      const res = await client.post('/settle', envelope);
      expect(res.status).toBe(200);
      expect(res.headers.get('extension-responses')).toBeNull();
      expect(res.body).toEqual({ success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER });
    }
    catalog.outcome = { status: 'success' };
  });

  it('a failed settlement never runs the hook and fills errorMessage', async () => {
    catalog.recorded = [];
    scheme.settleResult = {
      success: false,
      transaction: '',
      network: 'stellar:testnet',
      errorReason: 'settle_exact_stellar_transaction_failed',
    };
    const res = await client.post('/settle', envelope);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: false,
      transaction: '',
      network: 'stellar:testnet',
      errorReason: 'settle_exact_stellar_transaction_failed',
      errorMessage: 'The transaction was submitted but did not reach SUCCESS on-chain.',
    });
    expect(res.headers.get('extension-responses')).toBeNull();
    expect(catalog.recorded).toEqual([]);
    scheme.settleResult = { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER };
  });

  it('a failure that reports a hash answers transaction "" and logs the hash', async () => {
    logLines.length = 0;
    scheme.settleResult = {
      success: false,
      transaction: HASH,
      network: 'stellar:testnet',
      errorReason: 'settle_exact_stellar_transaction_failed',
    };
    const res = await client.post('/settle', envelope, { headers: { 'X-Request-Id': 'req-failed-hash' } });
    expect(res.body.transaction).toBe('');
    expect(res.body.errorReason).toBe('settle_exact_stellar_transaction_failed');
    const decision = logLines.find((l) => l.reqId === 'req-failed-hash' && l.msg === 'payment decision');
    expect(decision).toMatchObject({ code: 'settle_exact_stellar_transaction_failed', transaction: HASH });
    scheme.settleResult = { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER };
  });

  it('a scheme "success" without a 64-hex hash is a 500, never a fake success', async () => {
    scheme.settleResult = { success: true, transaction: 'nothex', network: 'stellar:testnet' };
    const res = await client.post('/settle', envelope);
    expect(res.status).toBe(500);
    expect(res.body.errorReason).toBe('svc_internal_error');
    scheme.settleResult = { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER };
  });
});

describe('logs and request ids', () => {
  it('echoes a sane X-Request-Id and replaces an insane one', async () => {
    const sane = await client.request('GET', '/health', { headers: { 'X-Request-Id': 'abc-123.x:y_z' } });
    expect(sane.headers.get('x-request-id')).toBe('abc-123.x:y_z');
    const insane = await client.request('GET', '/health', { headers: { 'X-Request-Id': 'bad id <script>' } });
    expect(insane.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs one access line per request and one decision line per payment, never a secret', async () => {
    logLines.length = 0;
    const res = await client.post('/settle', envelope, { headers: { 'X-Request-Id': 'req-log-1' } });
    expect(res.status).toBe(200);
    const mine = logLines.filter((l) => l.reqId === 'req-log-1');
    const access = mine.filter((l) => l.msg === 'request');
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ method: 'POST', route: 'POST /settle', status: 200 });
    expect(typeof access[0]!.durationMs).toBe('number');
    const decision = mine.filter((l) => l.msg === 'payment decision');
    expect(decision).toEqual([
      expect.objectContaining({ route: 'POST /settle', code: null, payer: PAYER, amount: '100000', transaction: HASH }),
    ]);
    expect(JSON.stringify(logLines)).not.toContain(SUBMITTER_SEED);
  });

  it('every service code has a default message', () => {
    for (const message of Object.values(SERVICE_CODES)) expect(message).toMatch(/\S/);
  });
});

describe('payload content is the scheme’s to judge', () => {
  it('a non-object payload is delegated, not an envelope error', async () => {
    scheme.calls = [];
    scheme.verifyResult = { isValid: false, invalidReason: 'invalid_exact_stellar_payload_malformed' };
    const res = await client.post('/verify', {
      paymentPayload: { x402Version: 2, payload: 'not an object', accepted: requirements },
      paymentRequirements: requirements,
    });
    expect(res.status).toBe(200);
    expect(res.body.invalidReason).toBe('invalid_exact_stellar_payload_malformed');
    expect(scheme.calls).toEqual(['verify']);
    scheme.verifyResult = { isValid: true, payer: PAYER };
  });

  // openapi.yaml (PaymentRequirements): x402 v2's constraints, in paymentRequirements and in accepted alike.
  it.each([
    ['accepted not an object', { accepted: 7 }, {}],
    ['accepted.asset empty', { accepted: { ...requirements, asset: '' } }, {}],
    ['accepted.payTo empty', { accepted: { ...requirements, payTo: '' } }, {}],
    ['accepted.maxTimeoutSeconds 0', { accepted: { ...requirements, maxTimeoutSeconds: 0 } }, {}],
    ['accepted.network without a colon', { accepted: { ...requirements, network: 'stellar' } }, {}],
    ['requirements amount empty', {}, { amount: '' }],
    ['requirements maxTimeoutSeconds negative', {}, { maxTimeoutSeconds: -5.2e-276 }],
  ])('%s → 400 svc_malformed_request_body, the scheme is not asked', async (_name, payloadChange, requirementsChange) => {
    for (const [path, code] of [
      ['/verify', 'invalidReason'],
      ['/settle', 'errorReason'],
    ] as const) {
      scheme.calls = [];
      const res = await client.post(path, {
        paymentPayload: { ...payload, ...payloadChange },
        paymentRequirements: { ...requirements, ...requirementsChange },
      });
      expect(res.status).toBe(400);
      expect(res.body[code]).toBe('svc_malformed_request_body');
      expect(scheme.calls).toEqual([]);
    }
  });
});

describe('odd encodings', () => {
  it('an unsupported Content-Encoding → 400 svc_malformed_request_body', async () => {
    const res = await client.request('POST', '/verify', {
      body: JSON.stringify(envelope),
      headers: { 'content-type': 'application/json', 'content-encoding': 'x-unknown' },
    });
    expect(res.status).toBe(400);
    expect(res.body.invalidReason).toBe('svc_malformed_request_body');
    expect(res.body.invalidMessage).toMatch(/Content-Encoding/);
  });

  it('a gzip body that is not gzip → 400 svc_malformed_request_body', async () => {
    const res = await client.request('POST', '/settle', {
      body: JSON.stringify(envelope),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errorReason).toBe('svc_malformed_request_body');
    expect(res.body.network).toBe('');
  });

  it('a gzip body that inflates past 256 KiB → 413', async () => {
    const { gzipSync } = await import('node:zlib');
    const bomb = gzipSync(JSON.stringify({ ...envelope, padding: 'x'.repeat(1024 * 1024) }));
    expect(bomb.length).toBeLessThan(16 * 1024);
    const res = await client.request('POST', '/verify', {
      body: bomb,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(413);
    expect(res.body.invalidReason).toBe('svc_malformed_request_body');
  });

  it('a gzip body is inflated and read', async () => {
    const { gzipSync } = await import('node:zlib');
    const res = await client.request('POST', '/verify', {
      body: gzipSync(JSON.stringify(envelope)),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(200);
  });
});
