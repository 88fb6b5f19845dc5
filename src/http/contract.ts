/**
 * The OpenAPI document as the running service sees it: the YAML text served at /openapi.yaml,
 * the openapi-backend instance that routes by operationId and validates requests, and the list
 * of mounted routes used in `svc_unknown_route` reasons.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document, type Operation, type Request as OpenApiRequest } from 'openapi-backend';
import { parse } from 'yaml';
import { projectFile } from '../files.ts';

export const OPENAPI_PATH = projectFile('openapi.yaml');

/** openapi.yaml as `npm run build` parsed it, with the SHA-256 of the text it parsed (scripts/build.mjs). */
export const PARSED_OPENAPI_PATH = projectFile('dist/openapi.json');

/**
 * The document `yaml` holds: the build's parse when it was made from this very text, else
 * parsed here. Parsing the YAML was about a tenth of svc's start-up; reading the JSON costs a
 * few milliseconds (docs/OPERATIONS.md "Startup").
 */
export function parseDocument(yaml: string): unknown {
  try {
    const built = JSON.parse(readFileSync(PARSED_OPENAPI_PATH, 'utf8')) as { sha256?: unknown; document?: unknown };
    if (built.sha256 === createHash('sha256').update(yaml).digest('hex')) return built.document;
  } catch {
    /* not built, or unreadable: parse the text */
  }
  return parse(yaml);
}

export interface ApiContract {
  /** The YAML text, served verbatim. */
  yaml: string;
  /** openapi-backend, initialized lazily: await `ready` before use. */
  backend: OpenAPIBackend;
  ready: Promise<unknown>;
  /**
   * Compiles the request validators of these operations, one per event-loop turn, so the first
   * payment does not pay for it. Called once the port is bound: compiling every validator before
   * listening was most of svc's startup (docs/OPERATIONS.md "Startup").
   */
  warmUp(operationIds: readonly string[]): Promise<void>;
  /** Every mounted route (method, path, operationId; `cors`: marked `x-svc-cors`, src/http/cors.ts), in document order. */
  routes: { method: string; path: string; operationId: string; cors: boolean }[];
}

/**
 * openapi-backend checks the document against the OpenAPI 3.0 meta-schema, which rejects valid
 * 3.1 documents (info.summary, type arrays, …). The 3.1 document is linted by redocly in
 * `npm run lint` instead; routing, dereferencing and request validation work on 3.1 as is.
 */
class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition() {
    return this.document;
  }

  /**
   * The document is already an object: openapi-backend would hand it to its $ref parser, whose
   * result only its skipped validation reads, and whose module svc's build then need not load at
   * start-up (scripts/build.mjs `LAZY_MODULES`).
   */
  override loadDocument() {
    this.document = this.inputDocument as Document;
    return Promise.resolve(this.document);
  }
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** The string formats openapi.yaml uses, for any Ajv instance that checks against it. */
export function addFormats<A extends { addFormat(name: string, format: (value: string) => boolean): unknown }>(ajv: A): A {
  ajv.addFormat('date-time', (value: string) => ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));
  return ajv;
}

/**
 * The document as openapi-backend validates with it: a schema marked `x-svc-checked-when-parsed`
 * (NoPrototypeKeys) is the empty schema there. svc checks it while reading the body
 * (middleware.ts jsonObjectBody: the same rule, the same 400), and it is recursive, which
 * openapi-backend's dereferencing would turn into a cycle its Ajv cannot compile.
 */
function forValidation(definition: Document): Document {
  const schemas = (definition.components?.schemas ?? {}) as Record<string, Record<string, unknown>>;
  const checked = Object.keys(schemas).filter((name) => schemas[name]!['x-svc-checked-when-parsed'] === true);
  if (checked.length === 0) return definition;
  const emptied = Object.fromEntries(checked.map((name) => [name, {}]));
  return { ...definition, components: { ...definition.components, schemas: { ...schemas, ...emptied } } } as Document;
}

export function loadContract(path: string = OPENAPI_PATH): ApiContract {
  const yaml = readFileSync(path, 'utf8');
  const definition = parseDocument(yaml) as Document & {
    paths: Record<string, Record<string, { operationId: string; 'x-svc-cors'?: boolean }>>;
  };
  const backend = new OpenApi31Backend({
    definition: forValidation(definition),
    strict: true,
    // quick: validators compile on first use (or at warmUp) instead of all at init, response
    // validators (which svc never runs) included; the document is dereferenced synchronously.
    quick: true,
    validate: true,
    ignoreTrailingSlashes: false,
    // validateSchema: false: Ajv would check every schema it compiles against its meta-schema, in a
    // new Ajv per validator (openapi-backend makes one each), about half of the warm-up's CPU; the
    // document is checked once by `npm run lint` (redocly, Spectral) and test/http/contract.test.ts.
    // verbose: an error carries its schema, whose `description` names a refused combination (`not`).
    ajvOpts: { strict: false, allErrors: false, validateSchema: false, verbose: true },
    customizeAjv: (ajv) => addFormats(ajv),
  });
  const ready = backend.init();
  // A failed init surfaces as a 500 on the first request (and is logged there), not as an
  // unhandled rejection that kills the process.
  ready.catch(() => undefined);
  const routes: ApiContract['routes'] = [];
  for (const [path, item] of Object.entries(definition.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete', 'head']) {
      const operation = item[method];
      if (operation)
        routes.push({ method: method.toUpperCase(), path, operationId: operation.operationId, cors: operation['x-svc-cors'] === true });
    }
  }
  const warmUp = async (operationIds: readonly string[]) => {
    await ready;
    for (const operationId of operationIds) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      backend.validator.getRequestValidatorsForOperation(operationId);
    }
  };
  return { yaml, backend, ready, routes, warmUp };
}

interface RouteTable {
  /** path → method (lowercase) → operation */
  exact: Map<string, Map<string, Operation>>;
  /** Every operation with its whole-path pattern, most specific template first. */
  templates: Array<{ pattern: RegExp; operation: Operation }>;
}
const routeTables = new WeakMap<ApiContract, RouteTable>();

function routeTable(contract: ApiContract): RouteTable {
  let table = routeTables.get(contract);
  if (!table) {
    const operations = contract.backend.router.getOperations();
    const exact = new Map<string, Map<string, Operation>>();
    for (const operation of operations) {
      const byMethod = exact.get(operation.path) ?? new Map<string, Operation>();
      if (!byMethod.has(operation.method)) byMethod.set(operation.method, operation);
      exact.set(operation.path, byMethod);
    }
    // Specificity: the template's length without its parameters; a stable sort keeps document order on ties.
    const specificity = (template: string) => template.replace(/\{.*?\}/g, '').length;
    const templates = operations
      .map((operation) => ({ pattern: pathPattern(operation.path), operation }))
      .sort((a, b) => specificity(b.operation.path) - specificity(a.operation.path));
    table = { exact, templates };
    routeTables.set(contract, table);
  }
  return table;
}

/**
 * The operation for this method + path, or undefined: the answer of openapi-backend's
 * router.matchOperation (exact path first, then the path templates, most specific first), from a
 * table built once. The router rebuilds its list of operations with lodash on every call, which was
 * the largest part of routing a request on svc's main thread (docs/BENCHMARKS.md);
 * test/http/contract.test.ts compares the two on every route and on near misses. Call it after
 * `contract.ready`.
 */
export function matchOperation(contract: ApiContract, method: string, path: string): Operation | undefined {
  const { exact, templates } = routeTable(contract);
  let normalized = path.trim();
  if (!normalized.startsWith('/')) normalized = `/${normalized}`;
  normalized = normalized.split('?')[0]!;
  const verb = method.trim().toLowerCase();
  const found = exact.get(normalized)?.get(verb);
  if (found) return found;
  return templates.find(({ pattern, operation }) => operation.method === verb && pattern.test(normalized))?.operation;
}

/**
 * The methods a known path accepts (empty for an unknown path): its operations', then OPTIONS when
 * one of them answers other origins (a CORS preflight, openapi.yaml `x-svc-cors-preflight`).
 */
export function methodsForPath(contract: ApiContract, path: string): string[] {
  const routes = contract.routes.filter((r) => pathPattern(r.path).test(path));
  return [...routes.map((r) => r.method), ...(routes.some((r) => r.cors) ? ['OPTIONS'] : [])];
}

/** "METHOD /path" of every route svc answers, in document order, each path's preflight after its operations. */
export function mountedRoutes(contract: ApiContract): string[] {
  const paths = [...new Set(contract.routes.map((r) => r.path))];
  return paths.flatMap((path) => methodsForPath(contract, path).map((method) => `${method} ${path}`));
}

/** The document path a concrete path is an instance of (templates matched), or undefined. */
export function templateOf(contract: ApiContract, path: string): string | undefined {
  return contract.routes.find((r) => pathPattern(r.path).test(path))?.path;
}

const patterns = new Map<string, RegExp>();

/** A path template of openapi.yaml (e.g. `/settlements/{transaction}`) as a whole-path pattern. */
function pathPattern(template: string): RegExp {
  let pattern = patterns.get(template);
  if (!pattern) {
    const source = template
      .split(/\{[^}]+\}/)
      .map((literal) => literal.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    pattern = new RegExp(`^${source}$`);
    patterns.set(template, pattern);
  }
  return pattern;
}

type ValidationError = { keyword: string; instancePath: string; message?: string; params: unknown; schema?: unknown };

/**
 * The object openapi-backend's validateRequest hands its compiled validators, built without its
 * per-request parsing, for the requests where that parsing has nothing to find or where its
 * result is plain to compute: no path template (no path parameters), no cookie, and either no
 * query string and a JSON object body (the payment routes), or no body, no Content-Type and a
 * plain query string (plainQuery: the discovery routes). Then its parse gives `{}` for path and
 * cookie, the headers as Node already has them (lower-case names), the query as plainQuery
 * decodes it and the body as is; the same compiled validators then judge the same object, so the
 * verdict is the same (test/http/contract.test.ts compares the two). That parse (a header copy
 * through lodash, a cookie and query parse, a path pattern compiled per request) cost more than
 * the validation itself: on a payment route (docs/BENCHMARKS.md "Verify and cheap requests
 * against their floors"), and 55–85 µs of a search's 60–90 µs of validation on the main thread
 * ("Catalog on SQLite at 100k and 1M"). Any other request (undefined here) goes through
 * validateRequest whole.
 */
function parsedWithoutParsing(operation: Operation, request: ValidatedRequest): Record<string, unknown> | undefined {
  const { body, headers } = request;
  if (operation.path.includes('{') || headers.cookie !== undefined) return undefined;
  if (request.query !== '') {
    if (body !== undefined || headers['content-type'] !== undefined) return undefined;
    const query = plainQuery(operation, request.query);
    return query && { path: {}, query, header: { ...headers }, cookie: {} };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  return { path: {}, query: {}, header: { ...headers }, cookie: {}, requestBody: body };
}

/** Brackets (qs reads `%5B`/`%5D` as brackets too) make nested keys, and openapi-backend drops a query's first `?`. */
const QS_SYNTAX = /[?[\]]|%5[bd]/i;

/**
 * A query string as openapi-backend's parse reads it (qs, then each parameter's style), or
 * undefined where that takes more than splitting and decoding: every part `name=value` or `name`,
 * split at its first `=`, each side decoded as qs decodes it (`+` is a space, then
 * decodeURIComponent, which must not fail: qs would keep that side undecoded), each name
 * distinct (qs makes a repeated one an array) and a query parameter of the operation with a
 * plain schema (no array, no `explode: false`, no `content`, which openapi-backend reshapes).
 */
export function plainQuery(operation: Operation, querystring: string): Record<string, string> | undefined {
  if (QS_SYNTAX.test(querystring)) return undefined;
  const query: Record<string, string> = {};
  for (const part of querystring.split('&')) {
    const at = part.indexOf('=');
    const name = qsDecoded(at === -1 ? part : part.slice(0, at));
    const value = at === -1 ? '' : qsDecoded(part.slice(at + 1));
    if (name === undefined || value === undefined || name === '' || Object.hasOwn(query, name)) return undefined;
    const declared = operation.parameters?.find((p) => !('$ref' in p) && p.in === 'query' && p.name === name);
    if (!declared || '$ref' in declared || declared.content || declared.explode === false) return undefined;
    const schema = declared.schema as { type?: unknown } | undefined;
    if (schema?.type === 'array') return undefined;
    query[name] = value;
  }
  return query;
}

function qsDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** A request as the validation reads it. */
export interface ValidatedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

/**
 * The validation errors of a request (empty when valid): through parsedWithoutParsing when it
 * applies, else (or with `whole`) through openapi-backend's validateRequest.
 */
export function requestErrors(contract: ApiContract, operation: Operation, request: ValidatedRequest, whole = false): ValidationError[] {
  const parameters = whole ? undefined : parsedWithoutParsing(operation, request);
  if (parameters) {
    const errors: ValidationError[] = [];
    for (const validate of contract.backend.validator.getRequestValidatorsForOperation(operation.operationId!) ?? []) {
      validate(parameters);
      if (validate.errors) errors.push(...(validate.errors as ValidationError[]));
    }
    return errors;
  }
  const result = contract.backend.validateRequest(
    {
      method: request.method,
      path: request.path,
      query: request.query,
      headers: request.headers as OpenApiRequest['headers'],
      body: request.body,
    },
    operation,
  );
  return result.valid ? [] : ((result.errors ?? [{ keyword: 'unknown', instancePath: '', params: {} }]) as ValidationError[]);
}

/** Runs openapi-backend's request validation; returns a one-line reason, or null when valid. */
export function requestViolation(contract: ApiContract, operation: Operation, request: ValidatedRequest): string | null {
  const errors = requestErrors(contract, operation, request);
  if (errors.length === 0) return null;
  const first = errors[0]!;
  if (first.keyword === 'unknown') return 'the request does not match the OpenAPI document';
  const where = describeLocation(first.instancePath);
  // A combination the document refuses (`not`) says why in its description.
  const refused = first.keyword === 'not' ? (first.schema as { description?: unknown } | undefined)?.description : undefined;
  if (typeof refused === 'string') return refused.replace(/\.$/, '');
  const extra = (first.params as { additionalProperty?: string }).additionalProperty;
  if (first.keyword === 'additionalProperties' && extra !== undefined) {
    return first.instancePath.startsWith('/query') || where === 'the request'
      ? `the query parameter ${JSON.stringify(extra)} is not accepted by this operation`
      : `${where} has an unexpected property ${JSON.stringify(extra)}`;
  }
  return `${where} ${first.message ?? 'is invalid'}`.trim();
}

/** `/requestBody/paymentRequirements/amount` → `paymentRequirements.amount`. */
function describeLocation(instancePath: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (parts[0] === 'requestBody') parts.shift();
  else if (parts[0] === 'query') parts.shift();
  return parts.length ? parts.join('.') : 'the request';
}
