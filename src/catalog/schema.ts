/**
 * The client-supplied JSON Schema (SPEC §4.6 items 3–4): neutralization, the node cap, the
 * reference rule, validation with ajv, and the parameter text the search indexes.
 * Every walk is iterative with an explicit stack and a depth bound, so no input can blow the
 * call stack or run unbounded.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isPlainObject } from './sanitize.ts';

export const MAX_SCHEMA_NODES = 2000;
/** Deeper than this is treated as too complex too: ajv compiles recursively. */
export const MAX_SCHEMA_DEPTH = 64;
/** Keywords that carry regular expressions (ReDoS) or format checkers: removed before use. */
const STRIPPED_KEYWORDS = new Set(['pattern', 'patternProperties', 'format']);
/** Keywords whose value is a map from names to subschemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is a subschema or an array of subschemas. */
const SUBSCHEMA_KEYWORDS = new Set([
  'items', 'prefixItems', 'additionalItems', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else',
  'contains', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'propertyNames',
]);
/** Reference keywords that must stay inside the document (start with `#`). */
const REFERENCE_KEYWORDS = new Set(['$ref', '$id', '$dynamicRef', '$recursiveRef']);

export type NeutralizeResult =
  | { ok: true; schema: Record<string, unknown> | boolean }
  | { ok: false; code: 'bazaar_schema_too_complex' | 'bazaar_schema_validation_failed'; reason: string };

/** Counts every JSON value (objects, arrays, primitives) up to a cap, iteratively. */
export function measureJson(value: unknown, maxNodes: number, maxDepth: number): { nodes: number; depth: number; overflow: boolean } {
  const stack: Array<[unknown, number]> = [[value, 1]];
  let nodes = 0;
  let depth = 0;
  while (stack.length > 0) {
    const [node, d] = stack.pop()!;
    nodes++;
    if (d > depth) depth = d;
    if (nodes > maxNodes || depth > maxDepth) return { nodes, depth, overflow: true };
    if (Array.isArray(node)) for (const child of node) stack.push([child, d + 1]);
    else if (isPlainObject(node)) for (const key of Object.keys(node)) stack.push([node[key], d + 1]);
  }
  return { nodes, depth, overflow: false };
}

type Position = 'schema' | 'map' | 'data';

/**
 * Returns a neutralized copy: `pattern`, `patternProperties` and `format` removed wherever they
 * sit in keyword position (a property *named* "pattern" is kept), `$schema` removed so every
 * schema is read as draft 2020-12, any `$ref`/`$id` not starting with `#` refused, and the
 * remaining (local) `$id`s removed.
 */
export function neutralizeSchema(schema: unknown): NeutralizeResult {
  const size = measureJson(schema, MAX_SCHEMA_NODES, MAX_SCHEMA_DEPTH);
  if (size.overflow) {
    return {
      ok: false,
      code: 'bazaar_schema_too_complex',
      reason: size.nodes > MAX_SCHEMA_NODES
        ? `The schema has more than ${MAX_SCHEMA_NODES} nodes.`
        : `The schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels.`,
    };
  }
  if (typeof schema === 'boolean') return { ok: true, schema };
  if (!isPlainObject(schema)) return { ok: false, code: 'bazaar_schema_validation_failed', reason: 'The schema is not an object.' };

  type Task = { source: unknown; position: Position; assign: (copy: unknown) => void };
  let result: unknown;
  const stack: Task[] = [{ source: schema, position: 'schema', assign: (copy) => (result = copy) }];
  while (stack.length > 0) {
    const { source, position, assign } = stack.pop()!;
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array(source.length);
      assign(copy);
      // Elements of a subschema array (allOf, prefixItems, …) are schemas; anything else is data.
      const childPosition: Position = position === 'schema' ? 'schema' : 'data';
      source.forEach((item, i) => stack.push({ source: item, position: childPosition, assign: (c) => (copy[i] = c) }));
      continue;
    }
    if (!isPlainObject(source)) {
      assign(source);
      continue;
    }
    const copy: Record<string, unknown> = {};
    assign(copy);
    for (const [k, v] of Object.entries(source)) {
      let childPosition: Position = 'data';
      if (position === 'schema') {
        if (STRIPPED_KEYWORDS.has(k) || k === '$schema') continue;
        if (REFERENCE_KEYWORDS.has(k) && (typeof v !== 'string' || !v.startsWith('#'))) {
          return { ok: false, code: 'bazaar_schema_validation_failed', reason: `${k} must be a local reference starting with #.` };
        }
        // A local $id adds nothing to resolution but would register a global id in the shared ajv.
        if (k === '$id') continue;
        if (SCHEMA_MAP_KEYWORDS.has(k)) childPosition = isPlainObject(v) ? 'map' : 'data';
        else if (SUBSCHEMA_KEYWORDS.has(k)) childPosition = 'schema';
      } else if (position === 'map') {
        childPosition = 'schema';
      }
      setOwn(copy, k, undefined); // keeps the key order of the source
      stack.push({ source: v, position: childPosition, assign: (c) => setOwn(copy, k, c) });
    }
  }
  return { ok: true, schema: result as Record<string, unknown> };
}

/** Own-property write that is safe for keys such as `__proto__`. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** One ajv instance; compiled schemas live only as long as they sit in the LRU below. */
// optimize: false halves compile time; the generated code validates a ≤ 64 KiB `info` either way.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, inlineRefs: false, code: { optimize: false } });
type Validator = ReturnType<typeof ajv.compile>;
/**
 * Compiling costs ~1.5 ms while validating costs microseconds, and a seller settles with the same
 * schema again and again; so compiled validators are kept by schema text, at most 128 of them
 * (≤ 8 MiB of 64 KiB schemas). An evicted schema is removed from ajv too, so nothing grows.
 */
const VALIDATOR_CACHE_SIZE = 128;
const validators = new Map<string, { schema: object | boolean; validate: Validator }>();

function compiled(schema: Record<string, unknown> | boolean): Validator {
  const key = JSON.stringify(schema);
  const hit = validators.get(key);
  if (hit) {
    validators.delete(key); // re-insert: most recently used last
    validators.set(key, hit);
    return hit.validate;
  }
  let validate: Validator;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    if (typeof schema === 'object') ajv.removeSchema(schema);
    throw err;
  }
  validators.set(key, { schema, validate });
  if (validators.size > VALIDATOR_CACHE_SIZE) {
    const [oldestKey, oldest] = validators.entries().next().value!;
    validators.delete(oldestKey);
    if (typeof oldest.schema === 'object') ajv.removeSchema(oldest.schema);
  }
  return validate;
}

/** Validates `info` against the neutralized schema; compile errors are the client's defect. */
export function validateAgainstSchema(schema: Record<string, unknown> | boolean, info: unknown): { ok: true } | { ok: false; reason: string } {
  let validate: Validator;
  try {
    validate = compiled(schema);
  } catch (err) {
    return { ok: false, reason: `The schema does not compile: ${(err as Error).message}`.slice(0, 300) };
  }
  if (validate(info)) return { ok: true };
  const first = validate.errors?.[0];
  const where = first?.instancePath || '(root)';
  return { ok: false, reason: `info does not match the schema at ${where}: ${first?.message ?? 'invalid'}`.slice(0, 300) };
}

export const MAX_PARAMETER_TEXT = 4096;
/** The bazaar envelope's own property names: structure, not parameters, so not indexed. */
const STRUCTURAL_NAMES = new Set([
  'input', 'output', 'type', 'method', 'bodyType', 'body', 'queryParams', 'pathParams', 'headers',
  'toolName', 'inputSchema', 'transport', 'example', 'description', 'format',
]);

/**
 * Parameter text for search: property names and `description` annotations found in schema
 * positions. Example values (`examples`, `default`, `const`, `enum`, query/body examples) are
 * never read. Bounded by node count and output length.
 */
export function parameterText(schemas: unknown[]): string {
  const parts: string[] = [];
  let length = 0;
  let visited = 0;
  const stack: Array<{ node: unknown; position: 'schema' | 'map'; depth: number }> = schemas.map((node) => ({ node, position: 'schema' as const, depth: 0 }));
  const push = (text: string) => {
    if (length >= MAX_PARAMETER_TEXT) return;
    parts.push(text);
    length += text.length + 1;
  };
  while (stack.length > 0 && visited < MAX_SCHEMA_NODES * 2 && length < MAX_PARAMETER_TEXT) {
    const { node, position, depth } = stack.pop()!;
    visited++;
    if (depth > MAX_SCHEMA_DEPTH) continue;
    if (Array.isArray(node)) {
      if (position === 'schema') for (const item of node) stack.push({ node: item, position, depth: depth + 1 });
      continue;
    }
    if (!isPlainObject(node)) continue;
    if (position === 'map') {
      for (const [name, sub] of Object.entries(node)) {
        if (!STRUCTURAL_NAMES.has(name)) push(name);
        stack.push({ node: sub, position: 'schema', depth: depth + 1 });
      }
      continue;
    }
    if (typeof node.description === 'string') push(node.description);
    for (const [k, v] of Object.entries(node)) {
      if (SCHEMA_MAP_KEYWORDS.has(k)) stack.push({ node: v, position: 'map', depth: depth + 1 });
      else if (SUBSCHEMA_KEYWORDS.has(k) || k === 'patternProperties') stack.push({ node: v, position: 'schema', depth: depth + 1 });
    }
  }
  return parts.join(' ').slice(0, MAX_PARAMETER_TEXT);
}

/** Names only (never values) of an example object such as `queryParams` or `pathParams`. */
export function exampleNames(value: unknown): string[] {
  return isPlainObject(value) ? Object.keys(value).slice(0, 100) : [];
}
