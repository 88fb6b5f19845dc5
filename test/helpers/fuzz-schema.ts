/**
 * A small JSON-Schema-driven generator for fast-check, fed by the schemas in openapi.yaml.
 *
 * - `validValue(schema)` produces values the schema accepts (the subset openapi.yaml uses:
 *   `$ref`, `type` (also as an array), `const`, `enum`, `anyOf`/`oneOf`, `properties`,
 *   `required`, `additionalProperties`, `items`, `min/maxLength`, `minimum`/`maximum`,
 *   `maxItems`, `format: date-time`). A schema without `type` accepts anything.
 * - `hints` add realistic values by property name (a real network, a real asset, a real signed
 *   transaction) so generated requests reach past the first check into the scheme and catalog.
 * - `mutatedValue(schema)` starts from a valid value and breaks it in one of the ways a hostile
 *   or buggy client would: a wrong type, a missing required field, an extra field, a huge or
 *   negative number, an empty or huge string, unicode and control characters, deep nesting.
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

const anyText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
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
      return fc.integer({ min: schema.minimum ?? Number.MIN_SAFE_INTEGER, max: schema.maximum ?? Number.MAX_SAFE_INTEGER });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum });
    case 'string':
      if (schema.format === 'date-time') return fc.integer({ min: ISO_MIN, max: ISO_MAX }).map((t) => new Date(t).toISOString());
      return fc.string({ unit: 'binary', minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 24, 64) });
    case 'array':
      return fc.array(validValue(schema.items ?? {}, hints, depth + 1), { maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object':
      return objectValue(schema, hints, depth);
    default:
      return depth > 4 ? fc.constant(null) : anyJson;
  }
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
