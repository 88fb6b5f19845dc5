/**
 * The client-supplied JSON Schema (docs/CATALOG.md "Seller schemas"): neutralization, the node cap, the
 * reference rules, validation (on a worker thread, src/catalog/ingest/schema-validator.ts), and the
 * parameter text the search indexes.
 * Every walk is iterative with an explicit stack and a depth bound, so no input can blow the
 * call stack or run unbounded.
 */
import { isPlainObject } from './sanitize.ts';
import { SchemaValidator, type SchemaValidatorOptions, type SchemaVerdict, type ValidationContext } from './schema-validator.ts';

export type { SchemaVerdict } from './schema-validator.ts';

const MAX_SCHEMA_NODES = 2000;
/** Deeper than this is treated as too complex too: validators walk schemas recursively. */
export const MAX_SCHEMA_DEPTH = 64;
/** Keywords that carry regular expressions (ReDoS) or format checkers: removed before use. */
const STRIPPED_KEYWORDS = new Set(['pattern', 'patternProperties', 'format']);
/** Keywords whose value is a map from names to subschemas (`dependencies` is draft-07's). */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
/** Keywords whose value is a subschema or an array of subschemas. */
const SUBSCHEMA_KEYWORDS = new Set([
  'items',
  'prefixItems',
  'additionalItems',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
]);
/** Reference keywords that must stay inside the document (start with `#`). */
const REFERENCE_KEYWORDS = new Set(['$ref', '$id', '$dynamicRef', '$recursiveRef']);
/** Dynamic references and anchors resolve at run time: refused, so recursion can be checked statically. */
const DYNAMIC_KEYWORDS = new Set(['$dynamicRef', '$recursiveRef', '$anchor', '$dynamicAnchor', '$recursiveAnchor']);
/**
 * Keywords whose cost grows with the square of the data or with every evaluated path
 * (uniqueItems over objects, contains, unevaluated*, dependencies): at most this many per schema.
 */
const MAX_COSTLY_KEYWORDS = 8;
const COSTLY_KEYWORDS = new Set([
  'uniqueItems',
  'contains',
  'unevaluatedProperties',
  'unevaluatedItems',
  'dependentSchemas',
  'dependencies',
]);
/** At most this many `$ref`s per schema (the recursion check is quadratic in them). */
const MAX_SCHEMA_REFERENCES = 64;
/** Applicators that evaluate the same data again, in place: a reference cycle through only these never ends. */
const IN_PLACE_SINGLE = new Set(['not', 'if', 'then', 'else']);
const IN_PLACE_LIST = new Set(['allOf', 'anyOf', 'oneOf']);

type NeutralizeResult =
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
type Refusal = Extract<NeutralizeResult, { ok: false }>;
const tooComplex = (reason: string): Refusal => ({ ok: false, code: 'bazaar_schema_too_complex', reason });

/**
 * Returns a neutralized copy: `pattern`, `patternProperties` and `format` removed wherever they
 * sit in keyword position (a property *named* "pattern" is kept), `$schema` removed so every
 * schema is read as draft 2020-12, any `$ref`/`$id` not starting with `#` refused, and the
 * remaining (local) `$id`s removed. Too complex: over the node or depth cap, more than
 * MAX_COSTLY_KEYWORDS costly keywords, dynamic references, and a `$ref` cycle that re-enters
 * the same data without descending into it (`{"$ref": "#"}`), which would never end.
 */
export function neutralizeSchema(schema: unknown): NeutralizeResult {
  const size = measureJson(schema, MAX_SCHEMA_NODES, MAX_SCHEMA_DEPTH);
  if (size.overflow) {
    return tooComplex(
      size.nodes > MAX_SCHEMA_NODES
        ? `The schema has more than ${MAX_SCHEMA_NODES} nodes.`
        : `The schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels.`,
    );
  }
  if (typeof schema === 'boolean') return { ok: true, schema };
  if (!isPlainObject(schema)) return { ok: false, code: 'bazaar_schema_validation_failed', reason: 'The schema is not an object.' };

  type Task = { source: unknown; position: Position; path: string[]; assign: (copy: unknown) => void };
  let result: unknown;
  let costly = 0;
  const references: Array<{ at: string[]; target: string[] }> = [];
  const stack: Task[] = [{ source: schema, position: 'schema', path: [], assign: (copy) => (result = copy) }];
  while (stack.length > 0) {
    const { source, position, path, assign } = stack.pop()!;
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array(source.length);
      assign(copy);
      // Elements of a subschema array (allOf, prefixItems, …) are schemas; anything else is data.
      const childPosition: Position = position === 'schema' ? 'schema' : 'data';
      source.forEach((item, i) =>
        stack.push({ source: item, position: childPosition, path: [...path, String(i)], assign: (c) => (copy[i] = c) }),
      );
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
        if (DYNAMIC_KEYWORDS.has(k)) return tooComplex(`${k} is not supported; use $ref with a JSON pointer.`);
        if (REFERENCE_KEYWORDS.has(k) && (typeof v !== 'string' || !v.startsWith('#'))) {
          return { ok: false, code: 'bazaar_schema_validation_failed', reason: `${k} must be a local reference starting with #.` };
        }
        // A local $id adds nothing to resolution and would change the base URI references resolve against.
        if (k === '$id') continue;
        if (k === '$ref') {
          const target = pointerSegments(v as string);
          if (!target) return tooComplex('$ref must be a JSON pointer such as #/$defs/name.');
          references.push({ at: path, target });
          if (references.length > MAX_SCHEMA_REFERENCES) return tooComplex(`The schema has more than ${MAX_SCHEMA_REFERENCES} references.`);
        }
        if (COSTLY_KEYWORDS.has(k) && v !== false && ++costly > MAX_COSTLY_KEYWORDS) {
          return tooComplex(`The schema uses more than ${MAX_COSTLY_KEYWORDS} of ${[...COSTLY_KEYWORDS].join(', ')}.`);
        }
        if (SCHEMA_MAP_KEYWORDS.has(k)) childPosition = isPlainObject(v) ? 'map' : 'data';
        else if (SUBSCHEMA_KEYWORDS.has(k)) childPosition = 'schema';
      } else if (position === 'map') {
        childPosition = 'schema';
      }
      setOwn(copy, k, undefined); // keeps the key order of the source
      stack.push({ source: v, position: childPosition, path: [...path, k], assign: (c) => setOwn(copy, k, c) });
    }
  }
  if (hasInPlaceCycle(references))
    return tooComplex('The schema refers to itself without descending into the data ($ref recursion that never ends).');
  return { ok: true, schema: result as Record<string, unknown> };
}

/** Segments of a `#/a/b` JSON pointer (RFC 6901 escapes, percent-decoded); null for a plain-name anchor. */
function pointerSegments(ref: string): string[] | null {
  if (ref === '#') return [];
  if (!ref.startsWith('#/')) return null;
  try {
    return ref
      .slice(2)
      .split('/')
      .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return null;
  }
}

/** True when `rest` is a path of in-place applicators only (allOf/0, not, then…). */
function inPlacePath(rest: string[]): boolean {
  for (let i = 0; i < rest.length; i++) {
    if (IN_PLACE_SINGLE.has(rest[i]!)) continue;
    if ((IN_PLACE_LIST.has(rest[i]!) || rest[i] === 'dependentSchemas') && i + 1 < rest.length) {
      i++;
      continue;
    }
    return false;
  }
  return true;
}

/**
 * A reference R leads, on the same data, to every reference that sits at its target followed by
 * in-place applicators only. A cycle in that graph re-validates the same value forever; cycles
 * that pass through `properties`, `items`… descend into the data and end with it.
 */
function hasInPlaceCycle(references: Array<{ at: string[]; target: string[] }>): boolean {
  const next = references.map(({ target }) =>
    references.flatMap((other, j) =>
      target.every((seg, i) => other.at[i] === seg) && other.at.length >= target.length && inPlacePath(other.at.slice(target.length))
        ? [j]
        : [],
    ),
  );
  const state = new Array<0 | 1 | 2>(references.length).fill(0); // unvisited, on the path, done
  for (let start = 0; start < references.length; start++) {
    if (state[start] !== 0) continue;
    const stack: Array<[number, number]> = [[start, 0]];
    state[start] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [node, edge] = top;
      if (edge >= next[node]!.length) {
        state[node] = 2;
        stack.pop();
        continue;
      }
      top[1]++;
      const to = next[node]![edge]!;
      if (state[to] === 1) return true;
      if (state[to] === 0) {
        state[to] = 1;
        stack.push([to, 0]);
      }
    }
  }
  return false;
}

/** Own-property write that is safe for keys such as `__proto__`. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The thread's validator (its worker threads), created on first use: every thread that imports
 * this module (svc's main thread, each catalog reader) would otherwise start a validation worker
 * it never uses, and even the catalog writer starts none until a settlement that echoes `bazaar`
 * begins (startSchemaValidation) or a seller's schema arrives (each is an isolate of its own in
 * svc's resident memory, docs/BENCHMARKS.md "svc memory and its Node flags"). A schema that
 * arrives before the thread has booted waits for it (SchemaValidator's startup wait).
 */
let sharedValidator: SchemaValidator | undefined;
let validatorOptions: SchemaValidatorOptions = {};
const validator = () => (sharedValidator ??= new SchemaValidator(validatorOptions));

/** The options the thread's validator is created with, on first use. */
export function configureSchemaValidation(options: SchemaValidatorOptions): void {
  validatorOptions = options;
}

/** Starts the thread's validator now (its thread boots while the settlement waits for the chain), if not yet started. */
export function startSchemaValidation(): void {
  validator();
}

/**
 * How long after `since` (performance.now()) the validator's first thread became ready: the part
 * of a step spent waiting for that thread to boot, a one-off cost of the thread's start. 0 when it
 * was ready before `since` or has not started.
 */
export function schemaThreadBootWait(since: number): number {
  const readyAt = sharedValidator?.firstReadyAt;
  return readyAt === undefined ? 0 : Math.max(0, readyAt - since);
}

/**
 * Validates `info` against the neutralized schema off the calling thread, within the schema time
 * budget (src/catalog/ingest/schema-validator.ts); `context.startedAt` (performance.now(), default now) is
 * when the hook began, so the whole hook is bounded, and `context.scope` the payee, whose recent
 * too-complex verdicts are remembered. Never rejects: a compile error or a mismatch is
 * `bazaar_schema_validation_failed`, a schema seen to cost too much or to crash the validator
 * `bazaar_schema_too_complex`, and one svc could not judge in time `not_judged`.
 */
export function validateAgainstSchema(
  schema: Record<string, unknown> | boolean,
  info: unknown,
  context?: ValidationContext,
): Promise<SchemaVerdict> {
  return validator().validate(schema, info, context);
}

const MAX_PARAMETER_TEXT = 4096;
/** The bazaar envelope's own property names: structure, not parameters, so not indexed. */
const STRUCTURAL_NAMES = new Set([
  'input',
  'output',
  'type',
  'method',
  'bodyType',
  'body',
  'queryParams',
  'pathParams',
  'headers',
  'toolName',
  'inputSchema',
  'transport',
  'example',
  'description',
  'format',
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
  const stack: Array<{ node: unknown; position: 'schema' | 'map'; depth: number }> = schemas.map((node) => ({
    node,
    position: 'schema' as const,
    depth: 0,
  }));
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
