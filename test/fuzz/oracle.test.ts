/**
 * The fuzz oracle and generator checked on their own: the oracle must fail the responses the
 * contract forbids (or the fuzz suites could not fail), the generator's valid values must
 * validate against their schemas and its mutations must be reachable.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openapiDocument } from '../helpers/contract.ts';
import { addFormats } from '../../src/http/contract.ts';
import { checkExchange, describeRequest, fuzzRequest, operationIdOf, type FuzzRequest, type RawResponse } from '../helpers/fuzz-http.ts';
import { mutatedValue, negativeValue, validValue } from '../helpers/fuzz-schema.ts';
import { OPERATION_IDS, operationRequest, unknownRouteRequest } from '../helpers/fuzz-requests.ts';
import {
  ignoredAuth,
  missingRequiredHeader,
  negativeDataRejection,
  positiveDataAcceptance,
  requestConformance,
  ResourceHistory,
  valid,
} from '../helpers/fuzz-checks.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}): RawResponse => ({
  status,
  headers: new Headers({
    'content-type': 'application/json; charset=utf-8',
    'x-request-id': '0b9a8c2e-1d3f-4a5b-8c7d-6e5f4a3b2c1d',
    ...headers,
  }),
  text: JSON.stringify(body),
});
const req = (method: string, target: string, headers: Record<string, string> = {}): FuzzRequest =>
  fuzzRequest({ method, target, headers, kind: 'test' });
const health = { status: 'ok', x402Version: 2, network: 'stellar:testnet' };

/** What every search answer says about its terms (openapi.yaml DiscoverySearchResponse). */
const searched = { searchMethod: 'text', searchedTerms: ['a'], droppedTerms: [], relevance: 'strong' };

describe('checkExchange fails what the contract forbids', () => {
  it('accepts a conforming answer', () => {
    expect(checkExchange(req('GET', '/health'), json(200, health))).toMatchObject({ status: 'ok' });
  });
  it('not_a_server_error: a 5xx, even a well-formed svc_internal_error', () => {
    expect(() => checkExchange(req('GET', '/supported'), json(500, { error: { code: 'svc_internal_error', reason: 'x' } }))).toThrow(/5xx/);
  });
  it('status_code_conformance: an undeclared status, and anything but 404 on an unknown path', () => {
    expect(() => checkExchange(req('GET', '/health'), json(413, { error: { code: 'svc_malformed_request_body', reason: 'x' } }))).toThrow(
      /does not declare/,
    );
    expect(() =>
      checkExchange(req('GET', '/nope'), json(405, { error: { code: 'svc_unknown_route', reason: 'x' } }, { allow: 'GET' })),
    ).toThrow(/must answer 404/);
  });
  it('unsupported_method: a known path with an undeclared method must be 405 with Allow naming the declared methods', () => {
    const refusal = { error: { code: 'svc_unknown_route', reason: '/verify does not accept GET; it accepts POST.' } };
    expect(checkExchange(req('GET', '/verify'), json(405, refusal, { allow: 'POST' }))).toEqual(refusal);
    expect(() => checkExchange(req('GET', '/verify'), json(404, refusal))).toThrow(/must answer 405/);
    expect(() => checkExchange(req('TRACE', '/health'), json(405, refusal))).toThrow(/header Allow is missing/);
    expect(() => checkExchange(req('GET', '/verify'), json(405, refusal, { allow: 'GET, POST' }))).toThrow(/not the declared methods/);
  });
  it('response_schema_conformance and content_type_conformance: a schema violation and a non-JSON Content-Type', () => {
    expect(() => checkExchange(req('GET', '/health'), json(200, { ...health, secret: 'S' }))).toThrow(
      /^response_schema_conformance: .*violates/,
    );
    expect(() => checkExchange(req('GET', '/health'), json(200, health, { 'content-type': 'text/html' }))).toThrow(
      /^content_type_conformance: .*Content-Type/,
    );
  });
  it('response_schema_conformance on the if/then branches: a refusal missing its code, a success carrying one, the wrong shape', () => {
    const base = { success: false, transaction: '', network: '' };
    expect(() => checkExchange(req('POST', '/settle'), json(400, base))).toThrow(/^response_schema_conformance: .*errorReason/);
    expect(() => checkExchange(req('POST', '/settle'), json(200, { ...base, success: true, errorReason: 'svc_internal_error' }))).toThrow(
      /^response_schema_conformance/,
    );
    expect(() => checkExchange(req('POST', '/settle'), json(400, { error: { code: 'svc_malformed_request_body', reason: 'x' } }))).toThrow(
      /^response_schema_conformance/,
    );
    expect(() => checkExchange(req('POST', '/verify'), json(400, { isValid: false, invalidMessage: 'x' }))).toThrow(
      /^response_schema_conformance: .*invalidReason/,
    );
  });
  it('response_headers_conformance: a declared required header missing or invalid', () => {
    const res = json(200, health);
    res.headers.delete('x-request-id');
    expect(() => checkExchange(req('GET', '/health'), res)).toThrow(
      /^response_headers_conformance: .*required header X-Request-Id is missing/,
    );
    expect(() => checkExchange(req('GET', '/health', { 'x-request-id': 'a b' }), json(200, health, { 'x-request-id': 'a b' }))).toThrow(
      /^response_headers_conformance: .*header X-Request-Id violates/,
    );
  });
  it('a rejection with a blank reason', () => {
    expect(() => checkExchange(req('GET', '/nope'), json(404, { error: { code: 'svc_unknown_route', reason: '  ' } }))).toThrow(/reason/);
  });
  it('an unexpected_* scheme failure, however well-formed (the fuzzer injects no fault)', () => {
    const settled = {
      success: false,
      transaction: '',
      network: 'stellar:testnet',
      errorReason: 'unexpected_settle_error',
      errorMessage: 'boom',
    };
    expect(() => checkExchange(req('POST', '/settle'), json(200, settled))).toThrow(/unexpectedly/);
    const verified = { isValid: false, invalidReason: 'unexpected_verify_error', invalidMessage: 'boom' };
    expect(() => checkExchange(req('POST', '/verify'), json(200, verified))).toThrow(/unexpectedly/);
  });
  it('an X-Request-Id that is neither the sane one sent nor a UUID', () => {
    expect(() => checkExchange(req('GET', '/health', { 'x-request-id': 'mine' }), json(200, health))).toThrow(/X-Request-Id/);
    expect(() => checkExchange(req('GET', '/health'), json(200, health, { 'x-request-id': 'not-a-uuid' }))).toThrow(/X-Request-Id/);
  });
  it('a discovery page that breaks paging or a filter', () => {
    const item = {
      resource: 'https://a.example/',
      type: 'http',
      x402Version: 2,
      accepts: [{ scheme: 'exact', network: 'stellar:testnet', asset: 'C', amount: '1', payTo: 'GA', maxTimeoutSeconds: 60 }],
      lastUpdated: '2026-01-01T00:00:00.000Z',
      quality: { l30DaysTotalCalls: 1, l30DaysUniquePayers: 1, lastCalledAt: '2026-01-01T00:00:00.000Z' },
      liveness: null,
    };
    const list = (target: string, items: unknown[], pagination: object) =>
      checkExchange(req('GET', target), json(200, { x402Version: 2, items, pagination }));
    expect(list('/discovery/resources?type=http&limit=500', [item], { limit: 100, offset: 0, total: 1 })).toBeDefined();
    expect(() => list('/discovery/resources?type=mcp', [item], { limit: 20, offset: 0, total: 1 })).toThrow(/filter type/);
    expect(() => list('/discovery/resources?payTo=GB', [item], { limit: 20, offset: 0, total: 1 })).toThrow(/filter payTo/);
    expect(() => list('/discovery/resources?limit=500', [item], { limit: 500, offset: 0, total: 1 })).toThrow(/expected 100/);
    expect(() => list('/discovery/resources?offset=1', [item], { limit: 20, offset: 1, total: 1 })).toThrow(/1 items for total 1/);
    const search = (items: unknown[], pagination: object, partialResults: boolean) =>
      checkExchange(
        req('GET', '/discovery/search?query=a&limit=1'),
        json(200, { x402Version: 2, resources: items, partialResults, pagination, ...searched }),
      );
    expect(() => search([item, item], { limit: 1, cursor: null }, false)).toThrow(/2 results for limit 1/);
    expect(() => search([item], { limit: 2, cursor: null }, false)).toThrow(/pagination.limit 2, expected 1/);
    expect(() => search([item], { limit: 1, cursor: 'c' }, false)).toThrow(/cursor without partialResults/);
  });
  it('a failure prints the request readably (method, target, headers, body)', () => {
    const r = fuzzRequest({
      method: 'POST',
      target: '/verify?x=1',
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from('{"a":"\\u0000"}'),
      kind: 'k',
    });
    expect(describeRequest(r)).toBe('POST /verify?x=1   [k]\ncontent-type: text/plain\n\n"{\\"a\\":\\"\\\\u0000\\"}"');
    expect(fc.stringify(r)).toContain('POST /verify?x=1');
  });
});

describe('the request-side and stateful Schemathesis checks fire', () => {
  const post = (target: string, value: unknown, contentType = 'application/json') =>
    fuzzRequest({
      method: 'POST',
      target,
      headers: { 'content-type': contentType },
      body: Buffer.from(JSON.stringify(value)),
      kind: 'test',
    });
  const envelope = (x402Version: unknown) => ({
    paymentPayload: { x402Version },
    paymentRequirements: { scheme: 'exact', network: 'stellar:testnet', asset: 'C', amount: '1', payTo: 'G', maxTimeoutSeconds: 60 },
  });
  const refused = (code: string, status = 400) => json(status, { error: { code, reason: 'x' } });
  const verifyRefused = (code: string) => json(400, { isValid: false, invalidReason: code, invalidMessage: 'x' });
  const accepted = json(200, { isValid: false, invalidReason: 'svc_unsupported_kind', invalidMessage: 'x' });

  it('requestConformance reads the document: x402Version, blank filters, repeated and undeclared parameters', () => {
    expect(requestConformance(post('/verify', envelope(2)))).toBe('conforming');
    expect(requestConformance(post('/verify', envelope(0)))).toBe('nonconforming');
    expect(requestConformance(post('/verify', { paymentPayload: { x402Version: 2, a: { __proto__: 1 } } }))).toBe('nonconforming');
    // A "__proto__" key (an own key, as JSON.parse makes it) at any depth: the schema refuses it (NoPrototypeKeys).
    const poisoned = JSON.parse('{"__proto__": {"a": 1}}') as object;
    const carrying = (value: unknown) => ({ ...envelope(2), paymentPayload: { ...envelope(2).paymentPayload, extensions: value } });
    expect(requestConformance(post('/verify', carrying({ bazaar: {} })))).toBe('conforming');
    expect(requestConformance(post('/verify', carrying(poisoned)))).toBe('nonconforming');
    expect(requestConformance(post('/verify', carrying({ deep: [1, { x: [poisoned] }] })))).toBe('nonconforming');
    expect(requestConformance(post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: poisoned } }))).toBe(
      'nonconforming',
    );
    expect(requestConformance(post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: {} } }))).toBe('conforming');
    expect(requestConformance(post('/verify', envelope(2), 'text/plain'))).toBe('nonconforming');
    expect(requestConformance(post('/verify', envelope(2), 'application/json;;'))).toBe('undetermined');
    expect(requestConformance(req('GET', '/discovery/resources?type=http&limit=5'))).toBe('conforming');
    // maxAmount requires asset (x-requires-parameters in openapi.yaml).
    expect(requestConformance(req('GET', '/discovery/resources?maxAmount=5'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?maxAmount=5&asset=C1'))).toBe('conforming');
    expect(requestConformance(req('GET', '/discovery/resources?type='))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?type=%20'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?type=a&type=a'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?limit=x'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?limit=%2B5'))).toBe('undetermined');
    expect(requestConformance(req('GET', '/discovery/resources?offset=9007199254740992'))).toBe('nonconforming');
    // An operation that declares query parameters accepts those only; one that declares none ignores a query.
    expect(requestConformance(req('GET', '/discovery/resources?bogus=1'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?__proto__=1'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?=1'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/search?query=a&resource=x'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/resources?resource=a&toolName=null'))).toBe('conforming');
    expect(requestConformance(req('GET', '/discovery/search?query=null'))).toBe('conforming');
    expect(requestConformance(req('GET', '/health?bogus=1'))).toBe('undetermined');
    expect(requestConformance(req('GET', '/discovery/search?query=a&cursor='))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/discovery/search'))).toBe('nonconforming');
    expect(requestConformance(req('GET', '/nope'))).toBe('undetermined');
  });
  it('requestConformance reads header fields as svc reads them, and an HTTP message with a field HTTP forbids conforms to nothing', () => {
    const settle = (headers: Record<string, string>, moreHeaders: [string, string][] = []) =>
      fuzzRequest({ ...post('/settle', envelope(2)), headers: { 'content-type': 'application/json', ...headers }, moreHeaders });
    expect(requestConformance(settle({ 'idempotency-key': 'k-1' }))).toBe('conforming');
    // Spaces and tabs around a value are not part of it (RFC 9110 §5.5).
    expect(requestConformance(settle({ 'idempotency-key': ' k-1\t' }))).toBe('conforming');
    expect(requestConformance(settle({ 'idempotency-key': 'x'.repeat(256) }))).toBe('nonconforming');
    expect(requestConformance(settle({ 'idempotency-key': 'café' }))).toBe('nonconforming');
    expect(requestConformance(settle({ 'idempotency-key': '«Îë뻡\u0007ß»' }))).toBe('nonconforming');
    expect(requestConformance(settle({}, [['X-Odd', 'a\u0007b']]))).toBe('nonconforming');
    expect(requestConformance(settle({}, [['X Y', 'v']]))).toBe('nonconforming');
    expect(
      requestConformance(
        settle({}, [
          ['X-Latin', '\u00e9\u00ff'],
          ['!#$%&*', ''],
          ['X-Latin', 'again'],
        ]),
      ),
    ).toBe('conforming');
  });
  it('every declared header parameter refuses what an HTTP field cannot carry as its schema says', () => {
    // Such a request never reaches svc's validation (the parser refuses it), and the oracle holds
    // it non-conforming; a schema that admitted it would promise what no server can keep.
    const headers = Object.values<any>(openapiDocument.paths)
      .flatMap((item) => Object.values<any>(item))
      .flatMap((operation) => operation?.parameters ?? [])
      .filter((p: any) => p.in === 'header');
    expect(headers.length).toBeGreaterThan(0);
    const ajv = addFormats(new Ajv2020({ strict: false }));
    for (const p of headers) {
      const validate = ajv.compile(p.schema);
      for (const value of ['a\u0007b', '\u0000', '\u001f', 'a\u007fb', ' a', 'a ', '\ta', '«Îë뻡\u0007ß»', 'é']) {
        expect(validate(value), `${p.name}: ${JSON.stringify(value)}`).toBe(false);
      }
    }
  });
  it('negative_data_rejection: a request the document forbids, answered 2xx', () => {
    expect(negativeDataRejection(post('/verify', envelope(0)), accepted)).toMatch(/^negative_data_rejection/);
    expect(negativeDataRejection(post('/verify', envelope(0)), verifyRefused('svc_unsupported_x402_version'))).toBeNull();
    expect(negativeDataRejection(post('/verify', envelope(2)), accepted)).toBeNull();
    expect(() =>
      checkExchange(
        req('GET', '/discovery/search?query=%20'),
        json(200, { x402Version: 2, resources: [], partialResults: false, pagination: { limit: 20, cursor: null }, ...searched }),
      ),
    ).toThrow(/^negative_data_rejection/);
  });
  it('positive_data_acceptance: a request the document allows, refused as malformed (a state-dependent refusal is not)', () => {
    expect(positiveDataAcceptance(post('/verify', envelope(2)), verifyRefused('svc_unsupported_x402_version'))).toMatch(
      /^positive_data_acceptance/,
    );
    expect(positiveDataAcceptance(req('GET', '/discovery/resources?type=http'), refused('svc_invalid_query_parameter'))).toMatch(
      /^positive_data_acceptance/,
    );
    expect(positiveDataAcceptance(req('GET', '/discovery/resources?type='), refused('svc_invalid_query_parameter'))).toBeNull();
    expect(positiveDataAcceptance(req('GET', '/discovery/search?query=a&cursor=a.b'), refused('svc_invalid_search_cursor'))).toBeNull();
    // The refusal is state-dependent only for a request carrying a cursor.
    expect(positiveDataAcceptance(req('GET', '/discovery/search?query=a'), refused('svc_invalid_search_cursor'))).toMatch(
      /^positive_data_acceptance/,
    );
    expect(() => checkExchange(req('GET', '/discovery/resources?type=http'), refused('svc_invalid_query_parameter'))).toThrow(
      /^positive_data_acceptance/,
    );
  });
  // svc declares no required request header, no security and no DELETE: these three rules are
  // proven on a document that has them.
  const securedDoc = {
    components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
    paths: {
      '/things': {
        get: {
          security: [{ key: [] }],
          parameters: [{ name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } }],
          responses: {},
        },
      },
      '/open': { get: { security: [{}, { key: [] }], responses: {} } },
    },
  };
  it('missing_required_header: a declared required header absent, answered other than 4xx', () => {
    expect(missingRequiredHeader(req('GET', '/things'), json(200, {}), securedDoc)).toMatch(/^missing_required_header: X-Tenant/);
    expect(missingRequiredHeader(req('GET', '/things'), json(400, {}), securedDoc)).toBeNull();
    expect(missingRequiredHeader(req('GET', '/things', { 'x-tenant': 't' }), json(200, {}), securedDoc)).toBeNull();
    expect(missingRequiredHeader(req('GET', '/health'), json(200, health))).toBeNull();
  });
  it('ignored_auth: an operation that declares security answered 2xx without credentials', () => {
    expect(ignoredAuth(req('GET', '/things'), json(200, {}), securedDoc)).toMatch(/^ignored_auth/);
    expect(ignoredAuth(req('GET', '/things'), json(401, {}), securedDoc)).toBeNull();
    expect(ignoredAuth(req('GET', '/things', { 'x-api-key': 'k' }), json(200, {}), securedDoc)).toBeNull();
    expect(ignoredAuth(req('GET', '/open'), json(200, {}), securedDoc)).toBeNull();
    expect(ignoredAuth(req('GET', '/supported'), json(200, {}))).toBeNull();
  });
  it('use_after_free and ensure_resource_availability over a sequence of exchanges', () => {
    const history = new ResourceHistory();
    expect(history.observe(req('POST', '/things'), json(201, {}, { location: '/things/1' }))).toBeNull();
    expect(history.observe(req('GET', '/things/1'), json(404, {}))).toMatch(/^ensure_resource_availability/);
    expect(history.observe(req('DELETE', '/things/1'), json(204, {}))).toBeNull();
    expect(history.observe(req('GET', '/things/1'), json(404, {}))).toBeNull();
    expect(history.observe(req('GET', '/things/1'), json(200, {}))).toMatch(/^use_after_free/);
  });
});

describe('the generator', () => {
  const ajv = addFormats(new Ajv2020({ strict: false }));
  ajv.addSchema(openapiDocument, 'doc');
  // Request-side schemas and plain response schemas (the generator does not model if/then/else).
  const schemas = [
    'FacilitatorRequest',
    'PaymentRequirements',
    'PaymentPayload',
    'DiscoveryResource',
    'DiscoveryListResponse',
    'ErrorEnvelope',
    'HealthResponse',
  ];

  it.each(schemas)('valid values of %s validate against it', (name) => {
    const validate = ajv.compile({ $ref: `doc#/components/schemas/${name}` });
    fc.assert(
      fc.property(validValue({ $ref: `#/components/schemas/${name}` }), (v) => {
        expect(validate(v), ajv.errorsText(validate.errors)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('mutations of FacilitatorRequest produce invalid values too', () => {
    // As the oracle judges them (some nest too deep for NoPrototypeKeys' recursion: fuzz-checks.ts valid).
    const validate = (v: unknown) => valid(openapiDocument, { $ref: '#/components/schemas/FacilitatorRequest' }, v);
    const samples = fc.sample(mutatedValue({ $ref: '#/components/schemas/FacilitatorRequest' }), { numRuns: 300, seed: 1 });
    expect(samples.filter((v) => !validate(v)).length).toBeGreaterThan(30);
  });

  it('schema-aware negative values are mostly invalid and reach constraints deep inside the body', () => {
    const validate = (v: unknown) => valid(openapiDocument, { $ref: '#/components/schemas/FacilitatorRequest' }, v);
    const samples = fc.sample(negativeValue({ $ref: '#/components/schemas/FacilitatorRequest' }), { numRuns: 400, seed: 4 });
    expect(samples.filter((s) => !validate(s.value)).length).toBeGreaterThan(200);
    // e.g. paymentPayload.accepted.asset one character short of its minLength
    const nested = samples.filter((s) => s.path.startsWith('paymentPayload.accepted.') && !validate(s.value));
    expect(nested.length).toBeGreaterThan(40);
    for (const keyword of ['type', 'minLength', 'pattern', 'exclusiveMinimum', 'required']) {
      expect(nested.map((s) => s.keyword)).toContain(keyword);
    }
  });

  it('covers every operation and keeps unknown routes unknown', () => {
    const world = { payments: [], addresses: [], assets: [], cursors: [], words: [] };
    for (const id of OPERATION_IDS) {
      for (const r of fc.sample(operationRequest(id, world), { numRuns: 30, seed: 2 })) {
        expect(operationIdOf(r.method, r.target), r.target).toBe(id);
      }
    }
    for (const r of fc.sample(unknownRouteRequest(), { numRuns: 200, seed: 3 })) {
      expect(operationIdOf(r.method, r.target), `${r.method} ${r.target}`).toBeUndefined();
    }
  });
});
