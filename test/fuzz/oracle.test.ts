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
import { checkExchange, describeRequest, fuzzRequest, type FuzzRequest, type RawResponse } from '../helpers/fuzz-http.ts';
import { mutatedValue, validValue } from '../helpers/fuzz-schema.ts';
import { OPERATION_IDS, operationRequest, unknownRouteRequest } from '../helpers/fuzz-requests.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}): RawResponse => ({
  status,
  headers: new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': '0b9a8c2e-1d3f-4a5b-8c7d-6e5f4a3b2c1d', ...headers }),
  text: JSON.stringify(body),
});
const req = (method: string, target: string, headers: Record<string, string> = {}): FuzzRequest => fuzzRequest({ method, target, headers, kind: 'test' });
const health = { status: 'ok', x402Version: 2, network: 'stellar:testnet' };

describe('checkExchange fails what the contract forbids', () => {
  it('accepts a conforming answer', () => {
    expect(checkExchange(req('GET', '/health'), json(200, health))).toMatchObject({ status: 'ok' });
  });
  it('a 5xx, even a well-formed svc_internal_error', () => {
    expect(() => checkExchange(req('GET', '/supported'), json(500, { error: { code: 'svc_internal_error', reason: 'x' } }))).toThrow(/5xx/);
  });
  it('status_code_conformance: an undeclared status, and anything but 404 on an unknown path', () => {
    expect(() => checkExchange(req('GET', '/health'), json(400, { error: { code: 'svc_invalid_query_parameter', reason: 'x' } }))).toThrow(/does not declare/);
    expect(() => checkExchange(req('GET', '/nope'), json(405, { error: { code: 'svc_unknown_route', reason: 'x' } }, { allow: 'GET' }))).toThrow(/must answer 404/);
  });
  it('unsupported_method: a known path with an undeclared method must be 405 with Allow naming the declared methods', () => {
    const refusal = { error: { code: 'svc_unknown_route', reason: '/verify does not accept GET; it accepts POST.' } };
    expect(checkExchange(req('GET', '/verify'), json(405, refusal, { allow: 'POST' }))).toEqual(refusal);
    expect(() => checkExchange(req('GET', '/verify'), json(404, refusal))).toThrow(/must answer 405/);
    expect(() => checkExchange(req('TRACE', '/health'), json(405, refusal))).toThrow(/header Allow is missing/);
    expect(() => checkExchange(req('GET', '/verify'), json(405, refusal, { allow: 'GET, POST' }))).toThrow(/not the declared methods/);
  });
  it('a schema violation and a non-JSON Content-Type', () => {
    expect(() => checkExchange(req('GET', '/health'), json(200, { ...health, secret: 'S' }))).toThrow(/violates/);
    expect(() => checkExchange(req('GET', '/health'), json(200, health, { 'content-type': 'text/html' }))).toThrow(/Content-Type/);
  });
  it('a rejection with a blank reason', () => {
    expect(() => checkExchange(req('GET', '/nope'), json(404, { error: { code: 'svc_unknown_route', reason: '  ' } }))).toThrow(/reason/);
  });
  it('an unexpected_* scheme failure, however well-formed (the fuzzer injects no fault)', () => {
    const settled = { success: false, transaction: '', network: 'stellar:testnet', errorReason: 'unexpected_settle_error', errorMessage: 'boom' };
    expect(() => checkExchange(req('POST', '/settle'), json(200, settled))).toThrow(/unexpectedly/);
    const verified = { isValid: false, invalidReason: 'unexpected_verify_error', invalidMessage: 'boom' };
    expect(() => checkExchange(req('POST', '/verify'), json(200, verified))).toThrow(/unexpectedly/);
  });
  it('an X-Request-Id that is neither the sane one sent nor a UUID', () => {
    expect(() => checkExchange(req('GET', '/health', { 'x-request-id': 'mine' }), json(200, health))).toThrow(/X-Request-Id/);
    expect(() => checkExchange(req('GET', '/health'), json(200, health, { 'x-request-id': 'not-a-uuid' }))).toThrow(/X-Request-Id/);
  });
  it('a discovery page that breaks paging or a filter', () => {
    const item = { resource: 'https://a.example/', type: 'http', x402Version: 2, accepts: [{ scheme: 'exact', network: 'stellar:testnet', asset: 'C', amount: '1', payTo: 'GA', maxTimeoutSeconds: 60 }], lastUpdated: '2026-01-01T00:00:00.000Z' };
    const list = (target: string, items: unknown[], pagination: object) => checkExchange(req('GET', target), json(200, { x402Version: 2, items, pagination }));
    expect(list('/discovery/resources?type=http&limit=500', [item], { limit: 100, offset: 0, total: 1 })).toBeDefined();
    expect(() => list('/discovery/resources?type=mcp', [item], { limit: 20, offset: 0, total: 1 })).toThrow(/filter type/);
    expect(() => list('/discovery/resources?payTo=GB', [item], { limit: 20, offset: 0, total: 1 })).toThrow(/filter payTo/);
    expect(() => list('/discovery/resources?limit=500', [item], { limit: 500, offset: 0, total: 1 })).toThrow(/expected 100/);
    expect(() => list('/discovery/resources?offset=1', [item], { limit: 20, offset: 1, total: 1 })).toThrow(/1 items for total 1/);
    const search = (items: unknown[], pagination: object, partialResults: boolean) =>
      checkExchange(req('GET', '/discovery/search?query=a&limit=1'), json(200, { x402Version: 2, resources: items, partialResults, pagination }));
    expect(() => search([item, item], { limit: 2, cursor: null }, false)).toThrow(/2 results for limit 1/);
    expect(() => search([item], { limit: 1, cursor: 'c' }, false)).toThrow(/cursor without partialResults/);
  });
  it('a failure prints the request readably (method, target, headers, body)', () => {
    const r = fuzzRequest({ method: 'POST', target: '/verify?x=1', headers: { 'content-type': 'text/plain' }, body: Buffer.from('{"a":"\\u0000"}'), kind: 'k' });
    expect(describeRequest(r)).toBe('POST /verify?x=1   [k]\ncontent-type: text/plain\n\n"{\\"a\\":\\"\\\\u0000\\"}"');
    expect(fc.stringify(r)).toContain('POST /verify?x=1');
  });
});

describe('the generator', () => {
  const ajv = addFormats(new Ajv2020({ strict: false }));
  ajv.addSchema(openapiDocument, 'doc');
  // Request-side schemas and plain response schemas (the generator does not model if/then/else).
  const schemas = ['FacilitatorRequest', 'PaymentRequirements', 'PaymentPayload', 'DiscoveryResource', 'DiscoveryListResponse', 'ErrorEnvelope', 'HealthResponse'];

  it.each(schemas)('valid values of %s validate against it', (name) => {
    const validate = ajv.compile({ $ref: `doc#/components/schemas/${name}` });
    fc.assert(fc.property(validValue({ $ref: `#/components/schemas/${name}` }), (v) => {
      expect(validate(v), ajv.errorsText(validate.errors)).toBe(true);
    }), { numRuns: 200 });
  });

  it('mutations of FacilitatorRequest produce invalid values too', () => {
    const validate = ajv.compile({ $ref: 'doc#/components/schemas/FacilitatorRequest' });
    const samples = fc.sample(mutatedValue({ $ref: '#/components/schemas/FacilitatorRequest' }), { numRuns: 300, seed: 1 });
    expect(samples.filter((v) => !validate(v)).length).toBeGreaterThan(30);
  });

  it('covers every operation and keeps unknown routes unknown', () => {
    const world = { payments: [], addresses: [], assets: [], cursors: [], words: [] };
    for (const id of OPERATION_IDS) {
      for (const r of fc.sample(operationRequest(id, world), { numRuns: 30, seed: 2 })) {
        const pathname = r.target.split('?')[0]!;
        expect(openapiDocument.paths[pathname][r.method.toLowerCase()].operationId).toBe(id);
      }
    }
    for (const r of fc.sample(unknownRouteRequest(), { numRuns: 200, seed: 3 })) {
      expect(openapiDocument.paths[r.target.split('?')[0]!]?.[r.method.toLowerCase()]).toBeUndefined();
    }
  });
});
