/** openapi.yaml against the code registry, the generated types, and the contract helper itself. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateTypes, GENERATED_PATH } from '../../codegen/generate.ts';
import {
  BAZAAR_CODES,
  MCP_CODES,
  POLICY_CODES,
  SERVICE_CODES,
  SETTLE_CODES,
  SETTLEMENT_CODES,
  VALIDATE_CODES,
  VERIFY_CODES,
  DELIST_CODES,
} from '../../src/codes.ts';
import { parse } from 'yaml';
import { checkContract, openapiDocument } from '../helpers/contract.ts';
import { fc } from '@fast-check/vitest';
import { loadContract, matchOperation, plainQuery, requestErrors, requestViolation } from '../../src/http/contract.ts';
import { VALIDATED_OPERATIONS } from '../../src/http/app.ts';

const mcpCodesDocument = parse(readFileSync(new URL('../../mcp-codes.yaml', import.meta.url), 'utf8'));

describe('codes: src/codes.ts ⇔ openapi.yaml enums', () => {
  it.each([
    ['VerifyCode', VERIFY_CODES, 30],
    ['SettleCode', SETTLE_CODES, 7],
    ['ServiceCode', SERVICE_CODES, 17],
    ['SettlementCode', SETTLEMENT_CODES, 15],
    ['BazaarCode', BAZAAR_CODES, 14],
    ['ValidateCode', VALIDATE_CODES, 11],
    ['DelistCode', DELIST_CODES, 8],
    ['McpCode', MCP_CODES, 13],
  ] as const)('%s lists exactly the registry codes, each described by its condition', (name, registry, count) => {
    // The MCP tool codes are not HTTP codes: they live in mcp-codes.yaml, not in openapi.yaml.
    expect(openapiDocument.components.schemas.McpCode).toBeUndefined();
    const schema = name === 'McpCode' ? mcpCodesDocument : openapiDocument.components.schemas[name];
    expect(Object.keys(registry)).toHaveLength(count);
    expect([...schema.enum].sort()).toEqual(Object.keys(registry).sort());
    expect(schema['x-enumDescriptions']).toEqual(registry);
    for (const [code, condition] of Object.entries(registry)) expect(schema.description).toContain(`\`${code}\`: ${condition}`);
  });
});

describe('PolicyCode: the settlement codes /verify answers too', () => {
  it('lists exactly POLICY_CODES, each a SettlementCode, and is one of the codes of VerifyResponse.invalidReason', () => {
    const schemas = openapiDocument.components.schemas;
    expect([...schemas.PolicyCode.enum].sort()).toEqual([...POLICY_CODES].sort());
    for (const code of POLICY_CODES) expect(schemas.SettlementCode.enum).toContain(code);
    expect(schemas.VerifyResponse.properties.invalidReason.anyOf).toContainEqual({ $ref: '#/components/schemas/PolicyCode' });
  });
});

describe('codegen', () => {
  it('the committed src/generated/openapi.ts matches openapi.yaml (run `npm run codegen`)', async () => {
    const fresh = readFileSync(GENERATED_PATH, 'utf8') === (await generateTypes());
    expect(fresh, 'src/generated/openapi.ts is stale: run `npm run codegen`').toBe(true);
  });
});

describe('the contract helper rejects what the document does not declare', () => {
  const headers = (h: Record<string, string>) => new Headers(h);
  const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1' };
  const health = JSON.stringify({ status: 'ok', x402Version: 2, network: 'stellar:testnet' });

  it('accepts a conforming response', () => {
    expect(checkContract({ method: 'GET', path: '/health' }, { status: 200, headers: headers(json), text: health })).toMatchObject({
      status: 'ok',
    });
  });
  it('an undeclared status', () => {
    expect(() => checkContract({ method: 'GET', path: '/health' }, { status: 418, headers: headers(json), text: health })).toThrow(
      /does not declare/,
    );
  });
  it('a missing required header', () => {
    expect(() =>
      checkContract(
        { method: 'GET', path: '/health' },
        { status: 200, headers: headers({ 'content-type': 'application/json' }), text: health },
      ),
    ).toThrow(/X-Request-Id is missing/);
  });
  it('a wrong content type', () => {
    expect(() =>
      checkContract(
        { method: 'GET', path: '/health' },
        { status: 200, headers: headers({ ...json, 'content-type': 'text/plain' }), text: health },
      ),
    ).toThrow(/Content-Type/);
  });
  it('a body that violates the schema (extra field on HealthResponse, a secret say)', () => {
    const leaky = JSON.stringify({ status: 'ok', x402Version: 2, network: 'n', secret: 'S...' });
    expect(() => checkContract({ method: 'GET', path: '/health' }, { status: 200, headers: headers(json), text: leaky })).toThrow(
      /violates/,
    );
  });
  it('a rejection without a code, and a success carrying one', () => {
    for (const body of [{ isValid: false }, { isValid: true, invalidReason: 'invalid_network', invalidMessage: 'x' }]) {
      expect(() =>
        checkContract({ method: 'POST', path: '/verify' }, { status: 200, headers: headers(json), text: JSON.stringify(body) }),
      ).toThrow(/violates/);
    }
  });
  it('an EXTENSION-RESPONSES header with an unknown bazaar status', () => {
    const settled = JSON.stringify({ success: true, transaction: 'a'.repeat(64), network: 'stellar:testnet' });
    const bad = Buffer.from(JSON.stringify({ bazaar: { status: 'pending' } })).toString('base64');
    expect(() =>
      checkContract(
        { method: 'POST', path: '/settle' },
        { status: 200, headers: headers({ ...json, 'extension-responses': bad }), text: settled },
      ),
    ).toThrow(/EXTENSION-RESPONSES/);
  });
  it('a non-404 answer to an unknown route', () => {
    expect(() => checkContract({ method: 'GET', path: '/nope' }, { status: 200, headers: headers(json), text: '{}' })).toThrow(
      /must answer 404/,
    );
  });
});

describe('routing: src/http/contract.ts matchOperation', () => {
  it('answers exactly as openapi-backend router.matchOperation on every route, wrong methods and near misses', async () => {
    const contract = loadContract();
    await contract.ready;
    const paths = contract.routes.flatMap((r) => {
      const concrete = r.path.replace(/\{[^}]+\}/g, 'abc123');
      return [concrete, `${concrete}/`, `${concrete}?x=1`, ` ${concrete} `, concrete.slice(1), `${concrete}/extra`, concrete.toUpperCase()];
    });
    paths.push('/', '', '/settlements/', '/settlements/a/b', '/discovery', '/nope', '/openapi.yaml/');
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'get', ' post '];
    let matched = 0;
    for (const path of paths)
      for (const method of methods) {
        const ours = matchOperation(contract, method, path);
        const theirs = contract.backend.router.matchOperation({ method, path, headers: {} });
        expect(ours?.operationId, `${method} ${JSON.stringify(path)}`).toBe(theirs?.operationId);
        if (theirs) matched++;
      }
    expect(matched).toBeGreaterThan(contract.routes.length * 3);
  });
});

describe('validation: src/http/contract.ts requestErrors', () => {
  /** A /verify body that conforms, for the mutations below to break in places. */
  const requirements = {
    scheme: 'exact',
    network: 'stellar:testnet',
    asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
    amount: '1000',
    payTo: 'GBRSWFJPR7MDK6A6AEHMMAAQH2WAPSGQBVAM7DR4MURMTRSEQY7JHM4Q',
    maxTimeoutSeconds: 60,
    extra: { areFeesSponsored: true },
  };
  const envelope = {
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction: 'AAAA' } },
    paymentRequirements: requirements,
  };
  /** `base` with one value replaced (or removed, for undefined) at a path of keys. */
  const replaced = (base: unknown, path: string[], value: unknown): unknown => {
    if (path.length === 0) return value;
    const copy = { ...(base as Record<string, unknown>) };
    const [key, ...rest] = path as [string, ...string[]];
    const inner = replaced(copy[key] ?? {}, rest, value);
    if (inner === undefined) delete copy[key];
    else copy[key] = inner;
    return copy;
  };
  const paths = [
    [],
    ['x402Version'],
    ['paymentPayload', 'payload', 'transaction'],
    ['paymentPayload', 'accepted', 'network'],
    ['paymentRequirements', 'amount'],
    ['paymentRequirements', 'payTo'],
    ['paymentRequirements', 'maxTimeoutSeconds'],
    ['paymentRequirements', 'extra'],
    ['paymentRequirements', 'unexpected'],
    ['unexpected'],
    ['url'],
  ];
  const body = fc.oneof(
    fc.constant(envelope),
    fc
      .tuple(fc.constantFrom(...paths), fc.oneof(fc.jsonValue(), fc.constant(undefined)))
      .map(([path, value]) => replaced(envelope, path, value)),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })),
  );
  const headers = fc.dictionary(
    fc.constantFrom('idempotency-key', 'content-type', 'x-request-id', 'accept', 'mcp-session-id', 'cookie', 'x-other'),
    fc.oneof(fc.string({ maxLength: 300 }), fc.constantFrom('application/json', 'key-1', '')),
  );

  /** Query strings (the discovery routes') and none; a query or a cookie takes openapi-backend's whole path. */
  const query = fc.constantFrom('', '', 'limit=5', 'x=1', 'query=weather&limit=abc', 'type=http');

  it("the errors without openapi-backend's request parsing are the errors with it, on every body-validated route", async () => {
    const contract = loadContract();
    await contract.ready;
    const operations = contract.backend.router
      .getOperations()
      .filter((o) => VALIDATED_OPERATIONS.includes(o.operationId!) && !o.path.includes('{'));
    // Every validated operation: none has a path template.
    expect(operations.map((o) => o.operationId).sort()).toEqual([...VALIDATED_OPERATIONS].sort());
    let invalid = 0;
    let valid = 0;
    fc.assert(
      fc.property(fc.constantFrom(...operations), body, headers, query, (operation, requestBody, requestHeaders, requestQuery) => {
        const request = {
          method: operation.method.toUpperCase(),
          path: operation.path,
          query: requestQuery,
          headers: requestHeaders,
          body: requestBody,
        };
        const fast = requestErrors(contract, operation, request);
        expect(fast).toEqual(requestErrors(contract, operation, request, true));
        if (fast.length) invalid++;
        else valid++;
      }),
      { numRuns: 600 },
    );
    // Both verdicts were compared, the valid envelope included.
    expect(valid).toBeGreaterThan(10);
    expect(invalid).toBeGreaterThan(100);
    const verify = operations.find((o) => o.operationId === 'verifyPayment')!;
    expect(requestViolation(contract, verify, { method: 'POST', path: '/verify', query: '', headers: {}, body: envelope })).toBeNull();
    const settle = operations.find((o) => o.operationId === 'settlePayment')!;
    const longKey = { method: 'POST', path: '/settle', query: '', headers: { 'idempotency-key': 'k'.repeat(300) }, body: envelope };
    expect(requestViolation(contract, settle, longKey)).toMatch(/idempotency-key/i);
  });

  /** Pieces of a discovery query string: declared names, others, and what qs and URLSearchParams read differently. */
  const queryName = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'query',
        'limit',
        'offset',
        'cursor',
        'type',
        'payTo',
        'network',
        'maxAmount',
        'asset',
        'scheme',
        'extensions',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('q', '', '__proto__', 'constructor', 'limit[]', 'limit%5B0%5D', 'quer%79', 'query%', 'lim+it', 'x.y'),
    },
  );
  const queryValue = fc.oneof(
    fc.constantFrom(
      'weather',
      'weather+forecast',
      'ka%20lo',
      '20',
      '3.0',
      '-1',
      '101',
      'abc',
      '',
      '%',
      '%zz',
      '%FF',
      '%E2%82%AC',
      '%ED%A0%80',
      'a?b',
      'a]=b',
      'a%5D=b',
      'a[b]',
      'x=y',
      'http',
      'mcp',
      'stellar:testnet',
      'GBRSWFJPR7MDK6A6AEHMMAAQH2WAPSGQBVAM7DR4MURMTRSEQY7JHM4Q',
      'AAAA.BBBB',
      'not a cursor',
      '%2B',
      'a,b',
      'é',
      '%C3%A9',
      '天気',
    ),
    fc.string({ maxLength: 12 }),
    fc.string({ minLength: 250, maxLength: 270 }),
  );
  const queryPart = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(queryName, queryValue).map(([name, value]) => `${name}=${value}`) },
    { weight: 1, arbitrary: queryName },
    { weight: 1, arbitrary: fc.constantFrom('', '&', '?query=x') },
  );
  const discoveryQuery = fc.array(queryPart, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('&'));

  it("a discovery query string: the errors without openapi-backend's parsing are the errors with it", async () => {
    const contract = loadContract();
    await contract.ready;
    const operations = contract.backend.router
      .getOperations()
      .filter((o) => o.operationId === 'listDiscoveryResources' || o.operationId === 'searchDiscoveryResources');
    expect(operations).toHaveLength(2);
    const requestHeaders = fc.constantFrom<Record<string, string>>(
      {},
      { host: '127.0.0.1:4021', accept: '*/*' },
      { 'content-type': 'text/plain' },
      { cookie: 'a=b' },
    );
    let plain = 0;
    let plainValid = 0;
    let plainInvalid = 0;
    fc.assert(
      fc.property(fc.constantFrom(0, 1), discoveryQuery, requestHeaders, (which, query, headers) => {
        const operation = operations[which]!;
        const request = { method: 'GET', path: operation.path, query, headers };
        const fast = requestErrors(contract, operation, request);
        expect(fast).toEqual(requestErrors(contract, operation, request, true));
        if (plainQuery(operation, query) && headers['content-type'] === undefined && headers.cookie === undefined) {
          plain++;
          if (fast.length) plainInvalid++;
          else plainValid++;
        }
      }),
      { numRuns: 3000 },
    );
    // The fast path judged many of them, both ways.
    expect(plain).toBeGreaterThan(100);
    expect(plainValid).toBeGreaterThan(20);
    expect(plainInvalid).toBeGreaterThan(20);
    const search = operations.find((o) => o.operationId === 'searchDiscoveryResources')!;
    // What the benchmarks send, on the fast path and valid; a repeated name and a `%5D` are not on it.
    expect(plainQuery(search, 'query=ka%20lo&limit=20')).toEqual({ query: 'ka lo', limit: '20' });
    expect(plainQuery(search, 'query=a&query=b')).toBeUndefined();
    expect(plainQuery(search, 'query=a%5D=b')).toBeUndefined();
    expect(
      requestErrors(contract, search, { method: 'GET', path: '/discovery/search', query: 'query=ka%20lo&limit=20', headers: {} }),
    ).toEqual([]);
  });
});
