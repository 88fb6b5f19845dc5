/**
 * The requests svc sends to a listing's URL (docs/SECURITY.md "Requests svc makes of sellers'
 * hosts"): a buyer's (`unpaidHttpRequest`: paid_call's, the listing's method with its input as the
 * query or a JSON body) and svc's own check (`checkHttpRequest`: ownership, validate, re-check,
 * liveness: a safe method, no body, no query, the URL as the catalog identifies the resource).
 * Both fill a templated URL's path parameters and refuse a value that would leave its template
 * (`filledUrl`).
 */
import { canonicalResourceUrl } from '../catalog/ingest/sanitize.ts';
import { isBodyMethod } from '../client/seller.ts';

/** What svc may ask: an HTTP route, or an MCP tool (live-402.ts asks it). */
export type LiveTarget =
  | {
      type: 'http';
      /** A templated listing's URL keeps its `:name` segments; `pathParams` fills them. */
      url: string;
      method: string;
      input?: Record<string, unknown>;
      /** The listing's declared example path parameters (bazaar `info.input.pathParams`). */
      pathParams?: Record<string, unknown>;
    }
  /** An MCP tool is only ever checked (live-402.ts): its example arguments are never sent. */
  | { type: 'mcp'; url: string; toolName: string };

/** A route template or path parameter that would leave its template (code bazaar_path_params_invalid). */
export class TemplateEscapeError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'TemplateEscapeError';
  }
}

/** Percent-decoding passes a value is checked through (a server may decode more than once). */
const DECODE_PASSES = 5;

/** Why a filled path parameter would step out of its one segment, or null. */
function pathParamDefect(value: string): string | null {
  if (value === '') return 'is empty (the path would gain an empty segment)';
  let layer = value;
  for (let pass = 0; pass < DECODE_PASSES; pass++) {
    if (layer === '.' || layer === '..') return `is a dot segment (${JSON.stringify(layer)}) after ${pass} decode pass(es)`;
    if (/[/\\]/.test(layer)) return `holds a path separator (/ or \\) after ${pass} decode pass(es)`;
    let next: string;
    try {
      next = decodeURIComponent(layer);
    } catch {
      return null; // not an escape a server decodes: sent as the literal text it is
    }
    if (next === layer) return null;
    layer = next;
  }
  return `does not stabilize within ${DECODE_PASSES} decode passes`;
}

/**
 * A templated URL (origin + routeTemplate, e.g. `/users/:id`) with each `:name` of its path that
 * `pathParams` names replaced by that value, percent-encoded as one segment; the URL as it is when
 * there is nothing to fill. A buyer calls `/users/42`, never `/users/:id`. Throws
 * TemplateEscapeError when the result could name a path outside the template: a template without a
 * literal segment (`/:anything`), or a value that is empty, a dot segment, or holds a separator
 * (raw or percent-encoded, at any decode depth) — docs/CATALOG.md "Templated listings".
 */
export function filledUrl(url: string, pathParams: Record<string, unknown> | undefined): URL {
  const parsed = new URL(url);
  const segments = parsed.pathname.split('/').filter((segment) => segment !== '');
  const templated = segments.some((segment) => /^:[A-Za-z_]/.test(segment));
  if (templated && !segments.some((segment) => !segment.startsWith(':')))
    throw new TemplateEscapeError(
      `the route template ${parsed.pathname} has no literal path segment, so it would name every path of ${parsed.host}; a template keeps at least one literal segment after the host.`,
    );
  if (!pathParams) return parsed;
  const defects: string[] = [];
  parsed.pathname = parsed.pathname.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (whole, name: string) => {
    const value = Object.hasOwn(pathParams, name) ? pathParams[name] : undefined;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return whole;
    const defect = pathParamDefect(String(value));
    if (defect) defects.push(`pathParams.${name} ${defect}`);
    return encodeURIComponent(String(value));
  });
  if (defects.length > 0)
    throw new TemplateEscapeError(`${defects.join('; ')}: the filled URL would leave the template ${new URL(url).pathname}.`);
  return parsed;
}

/** Methods that change nothing on a server that follows HTTP's semantics (RFC 9110 §9.2.1). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Answers to a safe request that say the route does not answer that method. */
const METHOD_REFUSED = new Set([404, 405, 501]);

/**
 * Whether a check's answer says its route answers only its declared method: the safe request sent
 * in its place was answered 404, 405 or 501. Remembered, so the next check sends the declared method.
 */
export function refusedSafeRequest(declared: string, sent: string, url: string, status: number): boolean {
  if (sent === declared || !METHOD_REFUSED.has(status)) return false;
  safeRefusals.add(`${declared} ${url}`);
  return true;
}

/**
 * Routes whose safe request was answered as if the route did not exist (404, 405, 501): the next
 * check of each sends its declared method, without a body. Per process, bounded, forgotten after a
 * week (a new instance asks safely once more).
 */
class SafeRefusals {
  private readonly at = new Map<string, number>();
  static readonly MAX = 10_000;
  static readonly MEMORY_MS = 7 * 24 * 3_600_000;
  has(key: string, now = Date.now()): boolean {
    const at = this.at.get(key);
    if (at === undefined) return false;
    if (now - at < SafeRefusals.MEMORY_MS) return true;
    this.at.delete(key);
    return false;
  }
  add(key: string, now = Date.now()): void {
    this.at.delete(key);
    this.at.set(key, now);
    if (this.at.size > SafeRefusals.MAX) this.at.delete(this.at.keys().next().value!);
  }
}
const safeRefusals = new SafeRefusals();

/**
 * The URL a check asks, HTTP or MCP: the resource as the catalog identifies and lists it
 * (canonicalResourceUrl: origin and path; never a query or a fragment, whoever wrote them), so a
 * check of `https://h/pay?cmd=transfer` asks `https://h/pay`, the listing a settlement would make.
 */
export function checkedUrl(url: string): string {
  return canonicalResourceUrl(new URL(url), undefined);
}

/**
 * The request svc's checks send (ownership, validate, re-check, liveness; docs/SECURITY.md
 * "Requests svc makes of sellers' hosts"): never a body, never a query (the listing's example or
 * the caller's: `checkedUrl`), the URL only as it identifies the resource (path parameters filled
 * and checked); a safe method (GET, or the declared HEAD/OPTIONS) unless that route answered a
 * safe request as if it did not exist, and then the declared method without a body. `method` is
 * what is sent.
 */
export function checkHttpRequest(target: Extract<LiveTarget, { type: 'http' }>): { url: string; method: string; init: RequestInit } {
  const declared = target.method.toUpperCase();
  const url = filledUrl(checkedUrl(target.url), target.pathParams).href;
  const method = SAFE_METHODS.has(declared) || safeRefusals.has(`${declared} ${url}`) ? declared : 'GET';
  return { url, method, init: { method } };
}

/** The unpaid request a buyer makes from a listing's calling convention (extra headers: paid_call's payment). */
export function unpaidHttpRequest(
  target: Extract<LiveTarget, { type: 'http' }>,
  headers: Record<string, string> = {},
): { url: string; init: RequestInit } {
  const method = target.method.toUpperCase();
  const url = filledUrl(target.url, target.pathParams);
  if (isBodyMethod(method)) {
    return {
      url: url.href,
      init: { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(target.input ?? {}) },
    };
  }
  for (const [name, value] of Object.entries(target.input ?? {})) {
    for (const item of Array.isArray(value) ? value : [value])
      url.searchParams.append(name, typeof item === 'string' ? item : JSON.stringify(item));
  }
  return { url: url.href, init: { method, headers } };
}

/** How far checkToolArguments builds: nesting depth, values in all, and the longest string or array it fills. */
const NEUTRAL_MAX_DEPTH = 8;
const NEUTRAL_MAX_VALUES = 256;
const NEUTRAL_MAX_FILL = 64;

const isSchema = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
/** The declared type svc fills, the most inert first: `["string","null"]` gets null. */
const NEUTRAL_TYPE_ORDER = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'];

/**
 * The arguments svc's check of an MCP tool sends (docs/SECURITY.md "Requests svc makes of sellers'
 * hosts"): from the tool's own inputSchema (what its server answers to tools/list; never a
 * listing's), each required property with svc's neutral value of its declared type — null, false,
 * 0, "", [], an object of its own required properties — so a server that validates arguments before
 * its payment wrapper (the MCP SDK's McpServer) reaches the wrapper. Only the schema's own bounds
 * move a value: a number is 0 or the bound nearest 0, a string or array the shortest its minLength
 * or minItems allows ("x" filler, at most 64). Never an `enum`, `const`, `default`, `examples` or
 * `pattern`/`format` value: a property that needs one gets the neutral value and fails
 * validation, the seller's fix being to ask for payment before validating (docs/SELLER.md).
 * A local `$ref` is followed within the schema. Bounded: depth 8, 256 values in all; beyond,
 * nothing more is filled.
 */
export function checkToolArguments(inputSchema: unknown): Record<string, unknown> {
  let budget = NEUTRAL_MAX_VALUES;
  const neutral = (given: unknown, depth: number): unknown => {
    budget -= 1;
    // A local reference (`#/$defs/…`) is the schema it names, each hop a level deeper: a cycle ends at the depth bound.
    let schema = given;
    while (isSchema(schema) && typeof schema.$ref === 'string' && depth < NEUTRAL_MAX_DEPTH) {
      schema = localSchema(inputSchema, schema.$ref);
      depth += 1;
    }
    if (!isSchema(schema) || budget < 0 || typeof schema.$ref === 'string') return null;
    const declared = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t): t is string => typeof t === 'string');
    const type =
      NEUTRAL_TYPE_ORDER.find((t) => declared.includes(t)) ??
      (declared.length === 0 && (isSchema(schema.properties) || Array.isArray(schema.required)) ? 'object' : 'null');
    switch (type) {
      case 'boolean':
        return false;
      case 'integer':
      case 'number':
        return neutralNumber(schema, type === 'integer');
      case 'string': {
        const min = finite(schema.minLength) ?? 0;
        return min <= NEUTRAL_MAX_FILL ? 'x'.repeat(Math.max(0, Math.ceil(min))) : '';
      }
      case 'array': {
        const min = finite(schema.minItems) ?? 0;
        if (min < 1 || min > NEUTRAL_MAX_FILL || depth >= NEUTRAL_MAX_DEPTH) return [];
        return Array.from({ length: Math.ceil(min) }, () => neutral(schema.items, depth + 1));
      }
      case 'object':
        return depth >= NEUTRAL_MAX_DEPTH ? {} : neutralObject(schema, depth);
      default:
        return null;
    }
  };
  const neutralObject = (schema: Record<string, unknown>, depth: number): Record<string, unknown> => {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required.filter((n): n is string => typeof n === 'string') : [];
    const entries: Array<[string, unknown]> = [];
    for (const name of new Set(required)) {
      if (budget <= 0) break;
      entries.push([name, neutral(Object.hasOwn(properties, name) ? properties[name] : undefined, depth + 1)]);
    }
    // fromEntries defines own properties: a required "__proto__" is a key like any other.
    return Object.fromEntries(entries);
  };
  return isSchema(inputSchema) ? neutralObject(inputSchema, 0) : {};
}

/** The schema a local JSON pointer (`#/$defs/Address`) names in `root`; undefined for any other reference. */
function localSchema(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const token of ref.slice(2).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    at = isSchema(at) && Object.hasOwn(at, key) ? at[key] : undefined;
  }
  return at;
}

/**
 * 0, or the schema's bound nearest 0 when 0 is outside its range: an inclusive bound itself (an
 * integer's rounded inward), an exclusive one the next integer inside it (a number's: 1 inside it,
 * or halfway to the other bound when that is nearer).
 */
function neutralNumber(schema: Record<string, unknown>, integer: boolean): number {
  const [min, max, exMin, exMax] = [schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum].map(finite);
  const inside = (bound: number, toward: 1 | -1, other: number | undefined): number => {
    if (integer) return toward > 0 ? Math.floor(bound) + 1 : Math.ceil(bound) - 1;
    const step = bound + toward;
    return other !== undefined && (step - other) * toward > 0 ? (bound + other) / 2 : step;
  };
  const lows = [
    min === undefined ? undefined : integer ? Math.ceil(min) : min,
    exMin === undefined ? undefined : inside(exMin, 1, max ?? exMax),
  ];
  const highs = [
    max === undefined ? undefined : integer ? Math.floor(max) : max,
    exMax === undefined ? undefined : inside(exMax, -1, min ?? exMin),
  ];
  const low = Math.max(...lows.filter((n) => n !== undefined));
  const high = Math.min(...highs.filter((n) => n !== undefined));
  return low > 0 ? low : high < 0 ? high : 0;
}
