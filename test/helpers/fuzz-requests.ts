/**
 * Request generators for every operation in openapi.yaml: valid requests from the schemas,
 * deliberately broken ones, raw bodies and headers, and random routes. Realistic values (real
 * signed payments, addresses on the devnet, cursors the server issued) come in through
 * `FuzzWorld` so generated requests reach the scheme and the catalog, not only the envelope.
 */
import { gzipSync } from 'node:zlib';
import { StrKey, nativeToScVal, xdr } from '@stellar/stellar-sdk';
import fc from 'fast-check';
import { craftTransaction, sourceAccountEntry, transferArgs, transferInvocation, unsignedEntry } from '../scheme/fixtures.ts';
import { deref, openapiDocument, templateOf } from './contract.ts';
import { fuzzRequest, jsonBody, type FuzzRequest } from './fuzz-http.ts';
import { mcpBody } from './fuzz-mcp.ts';
import { delistBody } from './fuzz-delist.ts';
import {
  anyCodePoint,
  anyJson,
  deeplyNested,
  mutatedValue,
  nastyNumber,
  nastyString,
  NASTY_STRINGS,
  negativeValue,
  validValue,
  type Hints,
} from './fuzz-schema.ts';

export interface FuzzWorld {
  /** Real signed payments on the devnet (some get settled and become replays). */
  payments: { paymentPayload: Record<string, unknown>; paymentRequirements: Record<string, unknown> }[];
  /** Realistic addresses and ids: sellers, the facilitator's own signers, assets. */
  addresses: string[];
  assets: string[];
  /** Cursors the server issued (filled as search answers arrive). */
  cursors: string[];
  /** Words present in listings, so searches find something. */
  words: string[];
  /** Resource URLs of the listings (for withdrawals to name). */
  resources?: string[];
}

const operations = () => {
  const out: { method: string; path: string; operationId: string; operation: any }[] = [];
  for (const [path, item] of Object.entries<any>(openapiDocument.paths)) {
    for (const [method, operation] of Object.entries<any>(item)) {
      if (operation?.operationId) out.push({ method: method.toUpperCase(), path, operationId: operation.operationId, operation });
    }
  }
  return out;
};

/** Every operationId in openapi.yaml, in document order. */
export const OPERATION_IDS = operations().map((o) => o.operationId);

/** The paths that answer CORS preflights: those with an operation marked x-svc-cors (openapi.yaml `x-svc-cors-preflight`). */
export const PREFLIGHT_PATHS = [
  ...new Set(
    operations()
      .filter((o) => o.operation['x-svc-cors'] === true)
      .map((o) => o.path),
  ),
];

/**
 * CORS preflights (openapi.yaml "Browsers on other origins"), which are not operations: any
 * origin, method and headers asked for, any query string, on every path that answers them.
 */
export function preflightRequest(): fc.Arbitrary<FuzzRequest> {
  const origin = fc.option(fc.constantFrom('https://page.example', 'null', 'http://localhost:5173', 'junk'), { freq: 5 });
  const asked = fc.option(fc.constantFrom('GET', 'POST', 'DELETE', 'junk'), { freq: 5 });
  return fc
    .tuple(fc.constantFrom(...PREFLIGHT_PATHS), junkQuery, requestIdHeader, origin, asked, headersFor(undefined))
    .map(([path, query, rid, o, m, h]) =>
      fuzzRequest({
        method: 'OPTIONS',
        target: withQuery(path, query),
        headers: {
          ...rid,
          ...(o === null ? {} : { origin: o }),
          ...(m === null ? {} : { 'access-control-request-method': m, 'access-control-request-headers': 'content-type' }),
          ...h.headers,
        },
        moreHeaders: h.moreHeaders,
        kind: h.moreHeaders.length ? `preflight; ${h.moreHeaders.length} more header field(s)` : 'preflight',
      }),
    );
}

/** X-Request-Id: absent, sane, or insane (too long, bad characters). */
const requestIdHeader: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.constant({}),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/).map((id) => ({ 'x-request-id': id })),
  fc
    .constantFrom('', 'a'.repeat(129), 'has space', 'semi;colon', 'é'.normalize('NFD').replace(/[^\x20-\x7e]/g, '?'), '../x')
    .map((id) => ({ 'x-request-id': id })),
);

/** A field name RFC 9110 allows (a token): ordinary, or made of the unusual token characters. */
const fieldName = fc.oneof(fc.stringMatching(/^X-[A-Za-z0-9-]{1,16}$/), fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,24}$/));

/** A field value RFC 9110 allows: visible ASCII and obs-text (Latin-1), spaces and tabs inside, or empty. */
const fieldValue = fc.oneof(
  fc.stringMatching(/^[!-~]([ \t!-~]{0,30}[!-~])?$/),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 }),
  fc.constantFrom('', 'a\tb', '"quoted, with comma"', '=?utf-8?q?x?='),
);

/** Fields svc frames or routes the request by; the generators set those themselves. */
const FRAMING_FIELDS = new Set(['content-length', 'transfer-encoding', 'content-type', 'content-encoding', 'host', 'x-request-id']);

/** Well-known fields with legal but unusual values: expectations, content negotiation, conditionals, proxies, upgrades. */
const UNUSUAL_KNOWN_FIELDS: [string, string][] = [
  ['Expect', 'x-custom-expectation'],
  ['Expect', '100-continue'],
  ['TE', 'trailers'],
  ['Accept', 'text/html, application/xml;q=0.9'],
  ['Accept', 'application/yaml'],
  ['Accept-Encoding', 'br, zstd, gzip;q=0'],
  ['Accept-Language', 'pt-BR, *;q=0.1'],
  ['Cache-Control', 'no-cache, no-store, max-age=0'],
  ['Pragma', 'no-cache'],
  ['If-None-Match', '*'],
  ['If-Modified-Since', 'Thu, 01 Jan 1970 00:00:00 GMT'],
  ['Range', 'bytes=0-0'],
  ['Cookie', 'a=b; c=d'],
  ['Authorization', 'Bearer not-a-credential'],
  ['Origin', 'null'],
  ['Referer', 'about:blank'],
  ['Forwarded', 'for=unknown;proto=https'],
  ['X-Forwarded-For', '203.0.113.1, unknown'],
  ['Via', '1.1 proxy, 1.0 other'],
  ['Max-Forwards', '0'],
  ['Upgrade', 'h2c'],
  ['Connection', 'close, x-custom-hop'],
  ['User-Agent', 'Mozilla/5.0 (\u00e9) \u00ff'],
  ['Priority', 'u=0, i'],
];

/**
 * Header fields a client may legally add: known fields with unusual values, many custom fields,
 * repeated names; `crowds` adds heads near and over the 1000-field limit (431).
 */
const unusualLegalHeaders = (crowds: boolean): fc.Arbitrary<[string, string][]> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.array(fc.constantFrom(...UNUSUAL_KNOWN_FIELDS), { minLength: 1, maxLength: 6 }) },
    {
      weight: 4,
      arbitrary: fc.array(
        fc.tuple(
          fieldName.filter((n) => !FRAMING_FIELDS.has(n.toLowerCase())),
          fieldValue,
        ),
        { minLength: 1, maxLength: 40 },
      ),
    },
    ...(crowds
      ? [fc.constantFrom(200, 995, 1_001).map((n) => Array.from({ length: n }, (_, i): [string, string] => [`X-F${i}`, String(i)]))]
      : []),
  );

/** Fields HTTP does not allow: a control character in a value, a name that is not a token, Unicode sent as UTF-8. */
const illegalHeaders: fc.Arbitrary<[string, string][]> = fc
  .array(
    fc.oneof(
      fc.tuple(fieldName, fc.constantFrom('a\u0007b', '\u0000', '\u001b[31m', 'a\u007fb', '\u0001', '«Îë뻡\u0007ß»')),
      fc.tuple(fc.constantFrom('X Y', 'X@Y', '(x)', 'X\u0007', 'Ü'), fieldValue),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((fields) => fields.filter(([k]) => !FRAMING_FIELDS.has(k.toLowerCase())));

/** Values for a declared header parameter: from its schema, or what a careless client sends. */
function declaredHeaderValue(schema: any): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: validValue(schema).map((v) => String(v)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        ' lead',
        'trail ',
        'a\tb',
        'a b',
        'a\u0007b',
        '«Îë뻡\u0007ß»',
        'café',
        '뻡',
        'x'.repeat(255),
        'x'.repeat(256),
      ),
    },
  );
}

/**
 * The header fields of a request to `operation`: its declared header parameters (from their
 * schemas or careless), legal but unusual fields, and now and then fields HTTP does not allow
 * (answered by the parser's refusal, in the route's shape). `legalOnly` for unknown routes, whose
 * only answer is a 404.
 */
/** `arb` `present` times in `present + absent`, else no fields. */
const sometimes = (arb: fc.Arbitrary<[string, string][]>, present: number, absent: number) =>
  fc.oneof({ weight: absent, arbitrary: fc.constant<[string, string][]>([]) }, { weight: present, arbitrary: arb });

function headersFor(operation: any, legalOnly = false): fc.Arbitrary<{ headers: Record<string, string>; moreHeaders: [string, string][] }> {
  const declared: any[] = (operation?.parameters ?? []).map((p: any) => deref(p, '').node).filter((p: any) => p.in === 'header');
  return fc
    .tuple(
      fc.tuple(
        ...declared.map((p) =>
          fc.option(
            declaredHeaderValue(p.schema).map((v) => [p.name, v] as const),
            { freq: 2 },
          ),
        ),
      ),
      // Unusual legal fields on about a third of the requests, fields HTTP forbids on about one in twelve.
      sometimes(unusualLegalHeaders(!legalOnly), 1, 2),
      legalOnly ? fc.constant([]) : sometimes(illegalHeaders, 1, 11),
    )
    .map(([params, unusual, illegal]) => ({
      headers: Object.fromEntries(params.filter((p) => p !== null)),
      moreHeaders: [...unusual, ...illegal],
    }));
}

/** A query string of random (often undeclared) parameters, some repeated, some malformed. */
const junkQuery: fc.Arbitrary<string> = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom('limit', 'offset', 'query', 'cursor', 'type', 'q', 'x'), fc.string({ maxLength: 6 })),
        fc.oneof(
          nastyString.filter((s) => s.length < 200),
          fc.string({ maxLength: 8 }),
        ),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => new URLSearchParams(pairs).toString()),
  fc.constantFrom(
    '&&',
    '=',
    '==&=',
    '%',
    '%zz=1',
    'a=%',
    'a[]=1&a[]=2',
    'a[b]=c',
    '__proto__=1',
    'constructor[prototype]=x',
    '?',
    ';',
    '+=+',
  ),
);

const withQuery = (path: string, query: string) => (query === '' ? path : `${path}?${query}`);

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** A transaction string: real, real with one character changed, truncated, random. */
function transactionArb(world: FuzzWorld): fc.Arbitrary<unknown> {
  const real = world.payments.map((p) => (p.paymentPayload.payload as { transaction: string }).transaction);
  const arbs: fc.Arbitrary<unknown>[] = [fc.base64String({ maxLength: 400 }), nastyString];
  if (real.length) {
    arbs.push(fc.constantFrom(...real));
    arbs.push(
      fc.tuple(fc.constantFrom(...real), fc.nat(), fc.nat({ max: 63 })).map(([tx, at, c]) => {
        const i = at % tx.length;
        return tx.slice(0, i) + BASE64_ALPHABET[c] + tx.slice(i + 1);
      }),
    );
    arbs.push(fc.tuple(fc.constantFrom(...real), fc.nat()).map(([tx, at]) => tx.slice(0, at % tx.length)));
  }
  return fc.oneof(...arbs);
}

const I128_MAX = 2n ** 127n - 1n;

/**
 * A transaction crafted field by field (test/scheme/fixtures.ts): the asset or another contract,
 * `transfer` or another function, the usual or odd arguments, any amount an i128 holds, payer
 * and payee among the real parties (including the facilitator's own signers), no auth, an
 * unsigned entry, a source-account entry, sub-invocations, a facilitator as tx or op source,
 * extra operations. With the matching requirements, so the scheme checks reach past routing.
 */
function craftedPaymentBody(world: FuzzWorld): fc.Arbitrary<unknown> {
  const accounts = world.addresses.filter((a) => StrKey.isValidEd25519PublicKey(a));
  const contracts = [...world.assets, ...world.addresses].filter((a) => StrKey.isValidContract(a));
  if (!accounts.length || !contracts.length) return fc.constant({});
  const account = fc.constantFrom(...accounts);
  const oddArg = fc.oneof(
    fc.string({ maxLength: 8 }).map((v) => nativeToScVal(v)),
    fc.integer().map((v) => nativeToScVal(v, { type: 'i32' })),
    fc.boolean().map((v) => nativeToScVal(v)),
    fc.constant(xdr.ScVal.scvVoid()),
    fc.bigInt({ min: -I128_MAX, max: I128_MAX }).map((v) => nativeToScVal(v, { type: 'i128' })),
  );
  return fc
    .record({
      contract: fc.constantFrom(...contracts),
      fn: fc.constantFrom('transfer', 'transfer', 'transfer', 'mint', 'approve', 'transfer_from'),
      from: account,
      to: account,
      amount: fc.oneof(fc.constantFrom(100_000n, 1n, 0n, -1n, I128_MAX, -I128_MAX), fc.bigInt({ min: -I128_MAX, max: I128_MAX })),
      args: fc.option(fc.array(oddArg, { maxLength: 4 }), { freq: 4 }),
      auth: fc.constantFrom('none', 'unsigned', 'source-account', 'unsigned with sub-invocation', 'two entries'),
      expiration: fc.constantFrom(0, 1, 100, 2 ** 32 - 1),
      source: fc.option(account, { freq: 4 }),
      opSource: fc.option(account, { freq: 4 }),
      extraOps: fc.constantFrom(0, 0, 0, 1),
      requirementsMatch: fc.boolean(),
      requirementsAmount: fc.constantFrom('100000', '1', '0'),
    })
    .map((c) => {
      const args = c.args ?? transferArgs(c.from, c.to, c.amount);
      const invocation = transferInvocation(c.contract, args);
      const entries: Record<string, xdr.SorobanAuthorizationEntry[]> = {
        none: [],
        unsigned: [unsignedEntry(c.from, invocation, c.expiration)],
        'source-account': [sourceAccountEntry(invocation)],
        'unsigned with sub-invocation': [unsignedEntry(c.from, transferInvocation(c.contract, args, [invocation]), c.expiration)],
        'two entries': [unsignedEntry(c.from, invocation, c.expiration), unsignedEntry(c.to, invocation, c.expiration)],
      };
      const transaction = craftTransaction({
        contract: c.contract,
        fn: c.fn,
        args,
        to: c.to,
        auth: entries[c.auth]!,
        ...(c.source ? { source: c.source } : {}),
        ...(c.opSource ? { opSource: c.opSource } : {}),
        extraOps: c.extraOps,
      });
      const amount = c.requirementsMatch ? c.amount.toString() : c.requirementsAmount;
      const requirements = {
        scheme: 'exact',
        network: 'stellar:testnet',
        asset: c.contract,
        amount,
        payTo: c.to,
        maxTimeoutSeconds: 60,
        extra: { areFeesSponsored: true },
      };
      return {
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction } },
        paymentRequirements: requirements,
      };
    });
}

/** A plausible bazaar extension (valid or subtly not), for the catalog hook on settle. */
export function bazaarArb(): fc.Arbitrary<unknown> {
  const http = fc.record({
    info: fc.record({
      input: fc.record({
        type: fc.constant('http'),
        method: fc.constantFrom('GET', 'POST', 'DELETE', 'get'),
        queryParams: fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 2 }),
      }),
    }),
    schema: fc.oneof(
      fc.constant({ type: 'object' }),
      fc.constant({ type: 'object', properties: { input: { type: 'object', required: ['method'] } } }),
      anyJson,
    ),
  });
  const mcp = fc.record({
    info: fc.record({
      input: fc.record({ type: fc.constant('mcp'), toolName: fc.string({ maxLength: 10 }), inputSchema: fc.constant({ type: 'object' }) }),
    }),
    schema: fc.constant({ type: 'object' }),
  });
  return fc.oneof(http, mcp, anyJson, fc.constant({ info: {}, schema: deeplyNested(500, 'object') }));
}

/** Property-name hints for the payment schemas: realistic values that get past the envelope. */
function paymentHints(world: FuzzWorld): Hints {
  const requirements = fc.record({
    scheme: fc.constantFrom('exact', 'EXACT', 'upto'),
    network: fc.constantFrom('stellar:testnet', 'stellar:pubnet', 'eip155:8453', 'stellar:'),
    asset: world.assets.length ? fc.constantFrom(...world.assets) : fc.string(),
    amount: fc.constantFrom('100000', '1', '0', '-1', '1e5', ' 100000', '170141183460469231731687303715884105728', '100000.0'),
    payTo: world.addresses.length ? fc.constantFrom(...world.addresses) : fc.string(),
    maxTimeoutSeconds: fc.constantFrom(30, 60, 0, -1, 1.5, 1e9, 2 ** 53),
    extra: fc.constant({ areFeesSponsored: true }),
  });
  return {
    x402Version: fc.constantFrom(2, 2, 2, 1, 3),
    scheme: requirements.map((r) => r.scheme),
    network: requirements.map((r) => r.network),
    asset: requirements.map((r) => r.asset),
    amount: requirements.map((r) => r.amount),
    payTo: requirements.map((r) => r.payTo),
    maxTimeoutSeconds: requirements.map((r) => r.maxTimeoutSeconds),
    accepted: requirements,
    payload: fc.record({ transaction: transactionArb(world) }, { requiredKeys: [] }),
    resource: fc.record(
      { url: fc.oneof(fc.webUrl(), nastyString), description: fc.string({ maxLength: 30 }), mimeType: fc.constant('application/json') },
      { requiredKeys: ['url'] },
    ),
    extensions: fc.oneof(fc.record({ bazaar: bazaarArb() }), anyJson),
  };
}

const FACILITATOR_SCHEMA = { $ref: '#/components/schemas/FacilitatorRequest' };
const REQUIREMENT_KEYS = ['scheme', 'network', 'asset', 'amount', 'payTo', 'maxTimeoutSeconds'];

/** A real payment, as is or with one requirement changed (the scheme must reject it cleanly). */
function realPaymentBody(world: FuzzWorld, hints: Hints): fc.Arbitrary<unknown> {
  if (!world.payments.length) return validValue(FACILITATOR_SCHEMA, hints);
  return fc
    .tuple(
      fc.constantFrom(...world.payments),
      fc.option(fc.constantFrom(...REQUIREMENT_KEYS)),
      fc.constantFrom('requirements', 'accepted', 'both'),
    )
    .chain(([p, key, where]) => {
      if (key === null) return fc.constant({ x402Version: 2, ...p });
      return hints[key]!.map((v) => {
        const copy = structuredClone(p) as any;
        if (where !== 'accepted') copy.paymentRequirements[key] = v;
        if (where !== 'requirements' && copy.paymentPayload.accepted) copy.paymentPayload.accepted[key] = v;
        return { x402Version: 2, ...copy };
      });
    });
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** A body with the headers that describe it. */
type BodyPart = { headers: Record<string, string>; body?: Buffer | undefined; kind: string };

/** Bodies no JSON parser should accept, or that are JSON but not an object. */
const rawJunkBody: fc.Arbitrary<BodyPart> = fc.oneof(
  fc.constant({ headers: JSON_TYPE, kind: 'empty body with JSON type' }),
  fc
    .constantFrom(
      'null',
      '[]',
      '[{}]',
      '"x"',
      '2',
      'true',
      '{',
      '{"a":',
      '{"paymentPayload":{}',
      '}{',
      '{} {}',
      "{'a':1}",
      'NaN',
      '{"a":1,}',
      '\ufeff{}',
      ' ',
      '\u0000',
    )
    .map((t) => ({ headers: JSON_TYPE, body: Buffer.from(t), kind: 'non-object or broken JSON' })),
  fc.string({ unit: anyCodePoint, maxLength: 200 }).map((t) => ({ headers: JSON_TYPE, body: Buffer.from(t), kind: 'random text as JSON' })),
  fc.uint8Array({ maxLength: 200 }).map((b) => ({ headers: JSON_TYPE, body: Buffer.from(b), kind: 'random bytes as JSON' })),
  fc.constantFrom(2_000, 50_000, 200_000).map((d) => ({
    headers: JSON_TYPE,
    body: Buffer.from(`{"paymentPayload":${'['.repeat(d)}${']'.repeat(d)}}`),
    kind: `JSON nested ${d} deep`,
  })),
  fc
    .constantFrom(2_000, 30_000)
    .map((d) => ({ headers: JSON_TYPE, body: Buffer.from(`${'{"a":'.repeat(d)}1${'}'.repeat(d)}`), kind: `object nested ${d} deep` })),
  fc
    .constantFrom(256 * 1024 + 1, 1024 * 1024)
    .map((n) => ({ headers: JSON_TYPE, body: Buffer.from(`{"x":"${'a'.repeat(n)}"}`), kind: `body of ${n} bytes` })),
  fc.constant({
    headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
    body: gzipSync(Buffer.from(`{"x":"${'a'.repeat(4 * 1024 * 1024)}"}`)),
    kind: 'gzip bomb',
  }),
  fc.constant({ headers: { ...JSON_TYPE, 'content-encoding': 'gzip' }, body: Buffer.from('not gzip at all'), kind: 'bad gzip' }),
  fc
    .constantFrom('br', 'compress', 'x-unknown', 'gzip, gzip')
    .map((e) => ({ headers: { ...JSON_TYPE, 'content-encoding': e }, body: Buffer.from('{}'), kind: `content-encoding ${e}` })),
);

const WRONG_CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/json;;',
  '*/*',
  'json',
];

/** Bodies for /verify and /settle. */
function paymentBody(world: FuzzWorld): fc.Arbitrary<BodyPart> {
  const hints = paymentHints(world);
  const asJson =
    (kind: string) =>
    (value: unknown): BodyPart => ({ headers: JSON_TYPE, body: jsonBody(value), kind });
  return fc.oneof(
    { weight: 3, arbitrary: validValue(FACILITATOR_SCHEMA, hints).map(asJson('schema-valid body')) },
    { weight: 4, arbitrary: realPaymentBody(world, hints).map(asJson('real payment')) },
    { weight: 2, arbitrary: craftedPaymentBody(world).map(asJson('crafted transaction')) },
    { weight: 4, arbitrary: mutatedValue(FACILITATOR_SCHEMA, hints).map(asJson('mutated body')) },
    {
      weight: 4,
      arbitrary: negativeValue(FACILITATOR_SCHEMA, hints).map(({ value, keyword, path }) =>
        asJson(`negative body: ${keyword} at ${path}`)(value),
      ),
    },
    { weight: 2, arbitrary: rawJunkBody },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.option(fc.constantFrom(...WRONG_CONTENT_TYPES), { nil: undefined }), validValue(FACILITATOR_SCHEMA, hints))
        .map(([type, value]): BodyPart => ({
          headers: type === undefined ? {} : { 'content-type': type },
          body: jsonBody(value),
          kind: `content-type ${type ?? '(none)'}`,
        })),
    },
  );
}

/** A query for a discovery operation: valid from its parameters, or broken in one way. */
function discoveryQuery(operation: any, world: FuzzWorld): fc.Arbitrary<{ query: string; kind: string }> {
  const params: any[] = (operation.parameters ?? []).map((p: any) => deref(p, '').node);
  const words = world.words.length ? fc.constantFrom(...world.words) : fc.string({ maxLength: 8 });
  const realistic: Record<string, fc.Arbitrary<string>> = {
    type: fc.constantFrom('http', 'mcp', 'HTTP', 'other'),
    payTo: world.addresses.length ? fc.constantFrom(...world.addresses) : fc.string(),
    scheme: fc.constantFrom('exact', 'upto'),
    network: fc.constantFrom('stellar:testnet', 'stellar:pubnet'),
    extensions: fc.constantFrom('bazaar', 'other'),
    query: fc.array(words, { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
    // Read when generated, so cursors issued earlier in the run are replayed (also across queries).
    cursor: fc
      .tuple(fc.nat(), fc.nat(), fc.nat({ max: 63 }), fc.constantFrom('as is', 'one character changed', 'truncated', 'empty'))
      .map(([i, at, c, how]) => {
        const real = world.cursors.length ? world.cursors[i % world.cursors.length]! : 'no-cursor-issued-yet';
        if (how === 'as is') return real;
        if (how === 'empty') return '';
        const j = at % real.length;
        return how === 'truncated' ? real.slice(0, j) : real.slice(0, j) + BASE64_ALPHABET[c] + real.slice(j + 1);
      }),
    limit: fc.integer({ min: -5, max: 120 }).map(String),
    offset: fc.nat({ max: 30 }).map(String),
  };
  const value = (p: any) => {
    const fromSchema = validValue(p.schema).map((v) => String(v));
    return realistic[p.name] ? fc.oneof({ weight: 3, arbitrary: realistic[p.name]! }, { weight: 1, arbitrary: fromSchema }) : fromSchema;
  };
  const validPairs = fc
    .tuple(
      ...params.map((p) =>
        p.required
          ? value(p).map((v) => [[p.name, v]] as [string, string][])
          : fc.option(
              value(p).map((v) => [[p.name, v]] as [string, string][]),
              { nil: [] as [string, string][], freq: 2 },
            ),
      ),
    )
    .map((groups) => groups.flat());
  const names = params.map((p) => p.name as string);
  const broken = validPairs.chain((pairs) =>
    fc.oneof(
      // a declared parameter repeated
      fc.constantFrom(...names).chain((n) =>
        value(params.find((p) => p.name === n)).map((v) => ({
          pairs: [...pairs, [n, v], [n, v]] as [string, string][],
          kind: `repeated ${n}`,
        })),
      ),
      // an undeclared parameter: another operation's, a near miss, a name a JavaScript object
      // already has (a parser that collects the query into one may lose it), no name at all
      fc
        .tuple(
          fc.oneof(
            fc.constantFrom('q', 'page', 'sort', 'LIMIT', 'Type', 'offset', 'cursor', 'query', 'resource', 'toolName'),
            fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', ''),
            fc.string({ minLength: 1, maxLength: 8 }),
          ),
          fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('null', 'true', '1')),
        )
        .map(([n, v]) => ({
          pairs: [...pairs.filter(([k]) => k !== n), [n, v]] as [string, string][],
          kind: `undeclared or other-operation parameter ${n}`,
        })),
      // a declared parameter with a nasty value (empty, non-integer, huge, unicode, control)
      fc
        .tuple(
          fc.constantFrom(...names),
          fc.oneof(
            nastyString.filter((s) => s.length < 1_000),
            nastyNumber.map(String),
            fc.constantFrom('1e3', '+5', '-0', '0x10', '1.0', ' 3', '3 ', '99999999999999999999999', '-99999999999999999999999', ''),
          ),
        )
        .map(([n, v]) => ({ pairs: [...pairs.filter(([k]) => k !== n), [n, v]] as [string, string][], kind: `nasty ${n}` })),
      // a declared parameter breaking one keyword of its schema (minLength, pattern, …)
      fc
        .constantFrom(...params)
        .chain((p) => negativeValue(p.schema).map(({ value, keyword }) => ({ p, value, keyword })))
        .map(({ p, value, keyword }) => ({
          pairs: [...pairs.filter(([k]) => k !== p.name), [p.name, typeof value === 'string' ? value : JSON.stringify(value)]] as [
            string,
            string,
          ][],
          kind: `${p.name} breaking ${keyword}`,
        })),
      // a required parameter missing
      fc.constant({ pairs: pairs.filter(([k]) => !params.find((p) => p.name === k)?.required), kind: 'required parameter missing' }),
    ),
  );
  // Raw spellings of a declared name that query parsers may read differently (qs brackets and
  // dots, a percent-encoded letter): the refusal or the filter must be the same either way.
  const respelled = fc
    .tuple(validPairs, fc.constantFrom(...names), fc.constantFrom('[]', '[0]', '[a]', '.a', '%5B%5D', 'encoded'))
    .chain(([pairs, n, how]) =>
      value(params.find((p) => p.name === n)).map((v) => {
        const name = how === 'encoded' ? `%${n.charCodeAt(0).toString(16)}${n.slice(1)}` : `${n}${how}`;
        const base = new URLSearchParams(pairs.filter(([k]) => how !== 'encoded' || k !== n)).toString();
        return { query: `${base}${base ? '&' : ''}${name}=${encodeURIComponent(v)}`, kind: `${n} spelled ${name}` };
      }),
    );
  return fc.oneof(
    { weight: 1, arbitrary: respelled },
    { weight: 3, arbitrary: validPairs.map((pairs) => ({ query: new URLSearchParams(pairs).toString(), kind: 'valid query' })) },
    { weight: 4, arbitrary: broken.map(({ pairs, kind }) => ({ query: new URLSearchParams(pairs).toString(), kind })) },
    { weight: 1, arbitrary: junkQuery.map((query) => ({ query, kind: 'junk query' })) },
  );
}

/**
 * Node's HTTP parser refuses a request head over 16 KiB before any route is known (svc answers
 * it with a 431 ErrorEnvelope; see docs/TESTING.md and the regression test), so generated
 * request lines stay under that and exercise the routes themselves.
 */
export const MAX_TARGET_LENGTH = 12_000;

/** Requests for one operation of openapi.yaml. */
export function operationRequest(operationId: string, world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const op = operations().find((o) => o.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId} in openapi.yaml`);
  const headers = headersFor(op.operation);
  /** The request kind, with what its extra header fields were, for the report. */
  const kindWith = (kind: string, h: { moreHeaders: [string, string][] }) =>
    h.moreHeaders.length ? `${kind}; ${h.moreHeaders.length} more header field(s)` : kind;
  if (op.method === 'POST') {
    const bodies =
      op.path === '/mcp'
        ? mcpBody(world.words, rawJunkBody, WRONG_CONTENT_TYPES)
        : op.path === '/discovery/delist'
          ? delistBody(world.resources ?? [], rawJunkBody)
          : paymentBody(world);
    return fc.tuple(bodies, junkQuery, requestIdHeader, fc.boolean(), headers).map(([b, query, rid, chunked, h]) =>
      fuzzRequest({
        method: 'POST',
        target: withQuery(op.path, query),
        headers: { ...b.headers, ...rid, ...h.headers },
        moreHeaders: h.moreHeaders,
        ...(b.body ? { body: b.body } : {}),
        chunked: chunked && b.body !== undefined,
        kind: kindWith(b.kind, h),
      }),
    );
  }
  if (op.operation.parameters?.some((p: any) => deref(p, '').node?.in === 'query')) {
    return fc
      .tuple(discoveryQuery(op.operation, world), requestIdHeader, headers)
      .map(([q, rid, h]) =>
        fuzzRequest({
          method: 'GET',
          target: withQuery(op.path, q.query),
          headers: { ...rid, ...h.headers },
          moreHeaders: h.moreHeaders,
          kind: kindWith(q.kind, h),
        }),
      )
      .filter((r) => r.target.length <= MAX_TARGET_LENGTH);
  }
  // A path template (GET /settlements/{transaction}): its parameters valid, near misses and junk.
  if (op.path.includes('{')) {
    const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
    const value = fc.oneof(
      { weight: 3, arbitrary: hex },
      { weight: 1, arbitrary: hex.map((h) => h.toUpperCase()) },
      {
        weight: 2,
        arbitrary: fc.oneof(
          hex.map((h) => h.slice(1)),
          hex.map((h) => `${h}0`),
          hex.map((h) => `0x${h}`),
          hex.map((h) => `${h.slice(1)}g`),
        ),
      },
      { weight: 2, arbitrary: fc.oneof(fc.string({ minLength: 1, maxLength: 80 }), fc.constantFrom(...NASTY_STRINGS.filter(Boolean))) },
    );
    return fc.tuple(value, junkQuery, requestIdHeader, headers).map(([v, query, rid, h]) =>
      fuzzRequest({
        method: 'GET',
        target: withQuery(op.path.replace(/\{[^}]+\}/, encodeSegment(v)), query),
        headers: { ...rid, ...h.headers },
        moreHeaders: h.moreHeaders,
        kind: kindWith('path parameter', h),
      }),
    );
  }
  // Parameterless GETs: any query string is ignored; a stray body too.
  return fc
    .tuple(junkQuery, requestIdHeader, fc.option(fc.constantFrom('{}', 'junk', '{"a":1}'), { freq: 5 }), headers)
    .map(([query, rid, body, h]) =>
      fuzzRequest({
        method: 'GET',
        target: withQuery(op.path, query),
        headers: { ...rid, ...(body ? JSON_TYPE : {}), ...h.headers },
        moreHeaders: h.moreHeaders,
        ...(body ? { body: Buffer.from(body) } : {}),
        kind: kindWith(body ? 'GET with a body' : 'GET', h),
      }),
    );
}

/**
 * Methods Node's HTTP parser accepts (node:http upper-cases what it sends, and answers a token it
 * does not know, e.g. FOO, with its own bare 400 before svc sees the request).
 */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'M-SEARCH', 'PURGE', 'LINK'];

/** encodeURIComponent throws on a lone surrogate; those become U+FFFD first. */
const encodeSegment = (s: string) =>
  encodeURIComponent(s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));

/** Paths near the real ones (case, slashes, encoding, suffixes) and random ones. */
const pathArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...Object.keys(openapiDocument.paths)),
  fc.constantFrom(...Object.keys(openapiDocument.paths)).chain((p) =>
    fc.constantFrom(
      `${p}/`,
      p.toUpperCase(),
      `/${p}`,
      `${p}/x`,
      `${p}.json`,
      `${p}%2F`,
      p.replace('/', '/%2e/'),
      `${p};x`,
      p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
      `/api${p}`,
      `${p}/..`,
    ),
  ),
  fc.constantFrom(
    '/',
    '*',
    '//',
    '/..',
    '/%00',
    '/%ff',
    '/%',
    '/discovery',
    '/discovery/',
    '/.well-known/x402',
    '/favicon.ico',
    '/verify%00',
    '/settle/../verify',
  ),
  fc
    .array(fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom(...NASTY_STRINGS.filter(Boolean))), {
      minLength: 1,
      maxLength: 4,
    })
    .map((segs) => `/${segs.map(encodeSegment).join('/')}`),
);

/** Random methods on random or real paths; the method + path pair names no operation → 404 (405 + Allow on a known path). */
export function unknownRouteRequest(): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(
      fc.constantFrom(...METHODS),
      pathArb,
      junkQuery,
      requestIdHeader,
      fc.option(fc.constantFrom('{}', 'x'), { freq: 3 }),
      headersFor(undefined, true),
    )
    .filter(([m, p]) => !openapiDocument.paths?.[templateOf(p)]?.[m.toLowerCase()])
    .map(([method, path, query, rid, body, h]) =>
      fuzzRequest({
        method,
        target: withQuery(path, query),
        headers: { ...rid, ...(body ? JSON_TYPE : {}) },
        moreHeaders: h.moreHeaders,
        ...(body ? { body: Buffer.from(body) } : {}),
        kind: 'random route',
      }),
    );
}
