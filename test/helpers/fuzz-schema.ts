/**
 * A small JSON-Schema-driven generator for fast-check, fed by the schemas in openapi.yaml.
 *
 * - `validValue(schema)` produces values the schema accepts (the subset openapi.yaml uses:
 *   `$ref`, `type` (also as an array), `const`, `enum`, `anyOf`/`oneOf`, `properties`,
 *   `required`, `additionalProperties`, `items`, `min/maxLength`, `pattern`, `minimum`/`maximum`,
 *   `exclusiveMinimum`/`exclusiveMaximum`, `maxItems`, `format: date-time`). A schema without
 *   `type` accepts anything. Strings mix ASCII, any code point and unusual Unicode (controls,
 *   bidi marks, Latin-1, CJK, astral characters).
 * - `hints` add realistic values by property name (a real network, a real asset, a real signed
 *   transaction) so generated requests reach past the first check into the scheme and catalog.
 * - `mutatedValue(schema)` starts from a valid value and breaks it in one of the ways a hostile
 *   or buggy client would: a wrong type, a missing required field, an extra field, a huge or
 *   negative number, an empty or huge string, unicode and control characters, deep nesting.
 * - `negativeValue(schema)` starts from a valid value and breaks one keyword of the schema that
 *   governs one place in it, however deep (`paymentPayload.accepted.asset` one character short of
 *   `minLength`, `maxTimeoutSeconds` at its `exclusiveMinimum`, a string outside its `pattern`, a
 *   required key removed, another `const`): the schema-aware negative data Schemathesis generates.
 *   Whether the result is really invalid (another `anyOf` branch may still accept it) is the
 *   oracle's to decide (fuzz-checks.ts).
 */
import fc from 'fast-check';
import { deref } from './contract.ts';

export type Schema = Record<string, any>;
export type Hints = Record<string, fc.Arbitrary<unknown>>;

/** Strings a parser or a database tends to choke on. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\r\n',
  '\t\u0007\u001b[31m',
  '\u202e\u200b\ufeff',
  '\ud800',
  '\udfff\ud800',
  '😀🏳️‍🌈',
  'é',
  'e\u0301',
  '%00',
  '%',
  '%zz',
  '../../etc/passwd',
  "'; DROP TABLE listings; --",
  '" OR 1=1 --',
  'NEAR(a b)',
  '*',
  'a OR b AND NOT c',
  '{"$ref":"#"}',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-0',
  '1e400',
  '0x10',
  'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF',
  'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
  'stellar:testnet',
  'stellar:*',
  'exact',
];

/** Numbers at the edges of every integer and float representation on the way. */
export const NASTY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  2,
  1.5,
  -1.5,
  2 ** 31,
  -(2 ** 31),
  2 ** 32,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 63,
  -(2 ** 63),
  2 ** 64,
  1e308,
  -1e308,
  5e-324,
];

/**
 * Text a client may well send and a server may mishandle: Latin-1 and controls (the string an
 * independent fuzzer sent as `amount`), bidi and zero-width marks, line and paragraph separators,
 * the BOM, Unicode spaces, combining marks, CJK and astral characters.
 */
export const UNUSUAL_UNICODE = [
  '«Îë뻡\u0007ß»',
  'Ωμέγα',
  '\u0085',
  '\u00a0',
  '\u1680',
  '\u2028\u2029',
  '\u3000',
  '\ufeffa',
  '\u200f\u202e',
  'a\u0301\u0302\u0303',
  '日本語',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '\u{10ffff}',
  '\u001c\u001f',
];

/** The surrogate code points, which no unit draws on its own. */
const SURROGATES = 0xe000 - 0xd800;

/**
 * Any code point but a surrogate: fast-check's `unit: 'binary'`, the same code point for the same
 * draw, whose unmapper reads the code point instead of a table. fc.string unmaps a list of
 * dangerous strings through its unit once per unit, and the built-in unit's table of 1.1 million
 * code points cost about 2.5 CPU-s (and as much again in garbage collection) in every worker that
 * loaded the fuzz helpers.
 */
export const anyCodePoint: fc.Arbitrary<string> = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (value) => {
    const codePoint = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (codePoint === undefined || String.fromCodePoint(codePoint) !== value || (codePoint >= 0xd800 && codePoint < 0xe000))
      throw new Error('not a single code point');
    return codePoint < 0xd800 ? codePoint : codePoint - SURROGATES;
  },
);

/** JSON Schema counts a string's length in code points. */
const codePoints = (t: string) => [...t].length;

/** Strings of any code point, of graphemes, and the unusual ones, within length bounds (in code points). */
function unicodeText(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: anyCodePoint, minLength, maxLength }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...UNUSUAL_UNICODE), fc.string({ maxLength: 4 }))
        .map((parts) => parts.join(''))
        .filter((t) => codePoints(t) >= minLength && codePoints(t) <= maxLength),
    },
  );
}

const anyText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: anyCodePoint, maxLength: 24 }) },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom(...UNUSUAL_UNICODE) },
);

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: anyText },
  // huge strings: large but below the 256 KiB body limit, and above it
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(20_000, 70_000, 300_000)
      .chain((n) => fc.constantFrom('a', 'é', '\u0000', '😀').map((c) => c.repeat(n / c.length))),
  },
);

export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...NASTY_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any JSON value, small, occasionally with nasty leaves. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    nastyNumber,
    anyText,
    fc.array(tie('value'), { maxLength: 4 }),
    // No "__proto__" key: openapi.yaml (NoPrototypeKey) refuses it, so a valid value has none;
    // test/fuzz/stateful.test.ts and regressions.test.ts send it on purpose.
    fc.dictionary(
      anyText.filter((k) => k !== '__proto__'),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

function resolve(schema: Schema): Schema {
  return deref(schema, '').node ?? {};
}

const ISO_MIN = Date.parse('1970-01-01T00:00:00Z');
const ISO_MAX = Date.parse('2100-01-01T00:00:00Z');

/** Values the schema accepts. `hints` are mixed in for properties of that name. */
export function validValue(schemaIn: Schema, hints: Hints = {}, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(schemaIn);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) return fc.oneof(...branches.map((b: Schema) => validValue(b, hints, depth + 1)));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((t: string) => validValue({ ...schema, type: t }, hints, depth + 1)));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: schema.exclusiveMinimum !== undefined ? Math.floor(schema.exclusiveMinimum) + 1 : (schema.minimum ?? Number.MIN_SAFE_INTEGER),
        max: schema.exclusiveMaximum !== undefined ? Math.ceil(schema.exclusiveMaximum) - 1 : (schema.maximum ?? Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: schema.exclusiveMinimum ?? schema.minimum,
        minExcluded: schema.exclusiveMinimum !== undefined,
        max: schema.exclusiveMaximum ?? schema.maximum,
        maxExcluded: schema.exclusiveMaximum !== undefined,
      });
    case 'string':
      return stringValue(schema);
    case 'array':
      return fc.array(validValue(schema.items ?? {}, hints, depth + 1), { maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object':
      return objectValue(schema, hints, depth);
    default:
      return depth > 4 ? fc.constant(null) : anyJson;
  }
}

function stringValue(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'date-time') return fc.integer({ min: ISO_MIN, max: ISO_MAX }).map((t) => new Date(t).toISOString());
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number = schema.maxLength ?? Infinity;
  const text = unicodeText(minLength, Math.max(minLength, Math.min(maxLength, 64)));
  if (typeof schema.pattern !== 'string') return text;
  // JSON Schema patterns are ECMA-262 regular expressions, unanchored unless they say so: an
  // unanchored one is also met inside any text.
  const pattern = new RegExp(schema.pattern, 'u');
  const fits = (t: string) => codePoints(t) >= minLength && codePoints(t) <= maxLength && pattern.test(t);
  const matching = fc.stringMatching(pattern);
  if (schema.pattern.startsWith('^')) return matching.filter(fits);
  return fc.oneof(
    matching.filter(fits),
    fc
      .tuple(unicodeText(0, 8), matching, unicodeText(0, 8))
      .map((parts) => parts.join(''))
      .filter(fits),
  );
}

function objectValue(schema: Schema, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required = new Set<string>(schema.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties)) {
    const generated = validValue(sub, hints, depth + 1);
    // A hint is realistic but may not satisfy the schema (e.g. a payload object where the
    // schema is open); hints only apply where the schema accepts anything or a string.
    const hint = hints[name];
    model[name] = hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: generated }) : generated;
  }
  const known = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
  if (schema.additionalProperties === false || depth > 3) return known;
  const extra = fc.dictionary(
    fc.string({ maxLength: 10 }).filter((k) => !(k in properties) && k !== '__proto__'),
    schema.additionalProperties && typeof schema.additionalProperties === 'object'
      ? validValue(schema.additionalProperties, hints, depth + 1)
      : anyJson,
    { maxKeys: 2 },
  );
  return fc.tuple(known, fc.option(extra, { freq: 4 })).map(([k, e]) => ({ ...(e ?? {}), ...k }));
}

/** A JSON path into a value: object keys and array indexes. */
type Path = (string | number)[];

function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (prefix.length > 6) return out;
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, k], out);
  return out;
}

function setAt(root: unknown, path: Path, change: (parent: any, key: string | number) => void): unknown {
  const copy = structuredClone(root);
  if (path.length === 0) return copy;
  let parent: any = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  change(parent, path[path.length - 1]!);
  return copy;
}

/** A value of a different JSON type than `value`. */
function wrongTypeFor(value: unknown): fc.Arbitrary<unknown> {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const options: fc.Arbitrary<unknown>[] = [];
  if (kind !== 'null') options.push(fc.constant(null));
  if (kind !== 'boolean') options.push(fc.boolean());
  if (kind !== 'number') options.push(nastyNumber);
  if (kind !== 'string') options.push(nastyString);
  if (kind !== 'array') options.push(fc.array(anyJson, { maxLength: 3 }));
  if (kind !== 'object') options.push(fc.dictionary(anyText, anyJson, { maxKeys: 3 }));
  return fc.oneof(...options);
}

/** `depth` nested arrays or objects around a leaf, built iteratively (no recursion limit here). */
export function deeplyNested(depth: number, kind: 'array' | 'object'): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

export type Mutation = 'wrongType' | 'remove' | 'extraField' | 'nastyString' | 'nastyNumber' | 'deep';

/** A valid value broken at one random place (shrinks towards the valid value's simplest form). */
export function mutatedValue(schema: Schema, hints: Hints = {}): fc.Arbitrary<unknown> {
  return validValue(schema, hints).chain((valid) => {
    const paths = pathsOf(valid);
    return fc
      .record({
        path: fc.constantFrom(...paths),
        how: fc.constantFrom<Mutation>('wrongType', 'remove', 'extraField', 'nastyString', 'nastyNumber', 'deep'),
        replacement: fc.oneof(anyJson, nastyString, nastyNumber),
        key: fc.oneof(anyText, fc.constantFrom('__proto__', 'constructor', 'x402Version', 'extensions', 'bazaar')),
        depth: fc.constantFrom(50, 1_000, 3_000),
      })
      .chain(({ path, how, replacement, key, depth }) => {
        const target = path.reduce<any>((node, k) => node?.[k], valid);
        switch (how) {
          case 'wrongType':
            return wrongTypeFor(target).map((w) => (path.length ? setAt(valid, path, (p, k) => (p[k] = w)) : w));
          case 'remove':
            return fc.constant(
              path.length ? setAt(valid, path, (p, k) => (Array.isArray(p) ? p.splice(Number(k), 1) : delete p[k])) : undefined,
            );
          case 'extraField':
            return fc.constant(
              target && typeof target === 'object' && !Array.isArray(target)
                ? path.length
                  ? setAt(valid, path, (p, k) =>
                      Object.defineProperty(p[k], key, { value: replacement, enumerable: true, writable: true, configurable: true }),
                    )
                  : Object.defineProperty(structuredClone(target), key, {
                      value: replacement,
                      enumerable: true,
                      writable: true,
                      configurable: true,
                    })
                : valid,
            );
          case 'nastyString':
            return nastyString.map((s) => (path.length ? setAt(valid, path, (p, k) => (p[k] = s)) : s));
          case 'nastyNumber':
            return nastyNumber.map((n) => (path.length ? setAt(valid, path, (p, k) => (p[k] = n)) : n));
          case 'deep':
            return fc.constantFrom<'array' | 'object'>('array', 'object').map((kind) => {
              const deep = deeplyNested(depth, kind);
              return path.length ? setAt(valid, path, (p, k) => (p[k] = deep)) : deep;
            });
        }
      });
  });
}

/** One place in a value and a schema that governs it (every `anyOf`/`oneOf` branch counts). */
interface Site {
  path: Path;
  schema: Schema;
}

function sitesOf(value: unknown, schemaIn: Schema, path: Path = [], out: Site[] = []): Site[] {
  const schema = resolve(schemaIn);
  out.push({ path, schema });
  if (path.length > 8) return out;
  for (const branch of schema.anyOf ?? schema.oneOf ?? []) sitesOf(value, branch, path, out);
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => sitesOf(v, schema.items, [...path, i], out));
  else if (value && typeof value === 'object' && schema.properties) {
    for (const [key, sub] of Object.entries<Schema>(schema.properties)) {
      if (Object.hasOwn(value, key)) sitesOf((value as Record<string, unknown>)[key], sub, [...path, key], out);
    }
  }
  return out;
}

/** Strings that break common patterns: empty, blank, controls, Unicode spaces, non-ASCII, no colon. */
const PATTERN_BREAKERS = [
  '',
  ' ',
  '\t',
  'a',
  'a b',
  ' a',
  'a ',
  '\u0000',
  'a\u0007b',
  '\u00a0',
  '\ufeff',
  '\u0085',
  'é',
  ...UNUSUAL_UNICODE,
];

const REMOVE = Symbol('remove');

/** Values at one site that break one keyword of its schema (`REMOVE`: drop a required key of the object there). */
function violationsAt(site: Site, current: unknown): fc.Arbitrary<{ keyword: string; value: unknown }>[] {
  const s = site.schema;
  const out: fc.Arbitrary<{ keyword: string; value: unknown }>[] = [];
  const as = (keyword: string, arb: fc.Arbitrary<unknown>) => out.push(arb.map((value) => ({ keyword, value })));
  if (s.type !== undefined) as('type', wrongTypeFor(current));
  if ('const' in s) as('const', fc.constantFrom(typeof s.const === 'number' ? s.const + 1 : 'x', String(s.const), null));
  if (Array.isArray(s.enum)) as('enum', fc.constantFrom('not-in-the-enum', ...s.enum.map((v: unknown) => String(v).toUpperCase())));
  if (typeof s.minLength === 'number' && s.minLength > 0) as('minLength', fc.constant('a'.repeat(s.minLength - 1)));
  if (typeof s.maxLength === 'number') as('maxLength', fc.constant('a'.repeat(s.maxLength + 1)));
  if (typeof s.pattern === 'string') {
    const pattern = new RegExp(s.pattern, 'u');
    const breakers = PATTERN_BREAKERS.filter((t) => !pattern.test(t));
    if (breakers.length) as('pattern', fc.constantFrom(...breakers));
  }
  // Just below a bound: 0.5 below, or the tiniest negative below 0 (-5.2e-276 was an independent fuzzer's).
  const below = (bound: number) => (bound === 0 ? -5.2e-276 : bound - 0.5);
  if (typeof s.minimum === 'number') as('minimum', fc.constantFrom(s.minimum - 1, below(s.minimum)));
  if (typeof s.exclusiveMinimum === 'number') as('exclusiveMinimum', fc.constantFrom(s.exclusiveMinimum, below(s.exclusiveMinimum)));
  if (typeof s.maximum === 'number') as('maximum', fc.constant(s.maximum + 1));
  if (typeof s.exclusiveMaximum === 'number') as('exclusiveMaximum', fc.constant(s.exclusiveMaximum));
  if (current && typeof current === 'object' && !Array.isArray(current)) {
    const present = (s.required ?? []).filter((k: string) => Object.hasOwn(current, k));
    if (present.length)
      as(
        'required',
        fc.constantFrom(...present).map((k) => ({ [REMOVE]: k })),
      );
    if (s.additionalProperties === false) as('additionalProperties', fc.constant({ ...current, 'not-declared': 1 }));
  }
  if (Array.isArray(current) && typeof s.maxItems === 'number')
    as('maxItems', fc.constant([...current, ...Array(s.maxItems + 1 - current.length).fill(current[0] ?? null)]));
  return out;
}

/**
 * A valid value with one keyword of one governing schema broken, anywhere in it; `keyword` and
 * `path` say where (the request's kind in the fuzz report). Shrinks towards the valid value.
 */
export function negativeValue(schema: Schema, hints: Hints = {}): fc.Arbitrary<{ value: unknown; keyword: string; path: string }> {
  return validValue(schema, hints).chain((valid) => {
    const sites = sitesOf(valid, schema).flatMap((site) => {
      const current = site.path.reduce<any>((node, k) => node?.[k], valid);
      return violationsAt(site, current).map((arb) => ({ site, arb }));
    });
    if (!sites.length) return fc.constant({ value: valid, keyword: 'none', path: '' });
    return fc.constantFrom(...sites).chain(({ site, arb }) =>
      arb.map(({ keyword, value }) => {
        const where = site.path.join('.') || '(root)';
        const removed = value && typeof value === 'object' && REMOVE in value ? (value as Record<symbol, string>)[REMOVE] : undefined;
        if (removed !== undefined) {
          const broken = setAt(valid, [...site.path, removed], (p, k) => delete p[k]);
          return { value: broken, keyword, path: `${where}.${removed}` };
        }
        return { value: site.path.length ? setAt(valid, site.path, (p, k) => (p[k] = value)) : value, keyword, path: where };
      }),
    );
  });
}
