/**
 * The request-side and stateful rules of the fuzz oracle, named after the checks Schemathesis
 * documents, with openapi.yaml as the only oracle (the response-side rules live in fuzz-http.ts
 * and the contract helper). Each rule returns a one-line violation or null, and takes the
 * document as a parameter so a test can prove it fires on a document that needs it (svc declares
 * no authentication, no required request header and no DELETE, so three rules cannot fire on it).
 *
 * - negative_data_rejection: a request the document forbids must not be answered 2xx.
 * - positive_data_acceptance: a request the document allows must not be refused as malformed.
 * - missing_required_header: a request without a declared required header must be a 4xx.
 * - ignored_auth: an operation that declares security must not answer 2xx without credentials.
 * - use_after_free: after a 2xx DELETE of a resource, the resource must not answer 2xx again.
 * - ensure_resource_availability: a resource just created (201 + Location) must be retrievable.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { addFormats } from '../../src/http/contract.ts';
import { hasProtoKey } from '../../src/http/middleware.ts';
import { openapiDocument } from './contract.ts';
import type { FuzzRequest, RawResponse } from './fuzz-http.ts';

export type Conformance = 'conforming' | 'nonconforming' | 'undetermined';

/**
 * Refusals that depend on state the document cannot express, so a conforming request may get
 * them, with the parameter whose state it is: a well-formed cursor svc did not issue or that has
 * expired (openapi.yaml, `cursor`). Only a request that carries the parameter is excused: an
 * empty or absent cursor can never be refused for what svc issued.
 */
const STATE_DEPENDENT_CODES = new Map([['svc_invalid_search_cursor', 'cursor']]);

/**
 * The same for a field of a JSON body: a withdrawal's `issuedAt` that is well formed but more than
 * 5 minutes from svc's clock (openapi.yaml, POST /discovery/delist: `svc_delist_stale`).
 */
const STATE_DEPENDENT_BODY_CODES = new Map([['svc_delist_stale', 'issuedAt']]);

/** Whether the request's body is a JSON object holding `field`. */
function bodyHolds(r: FuzzRequest, field: string): boolean {
  try {
    const body: unknown = JSON.parse(r.body?.toString('utf8') ?? '');
    return typeof body === 'object' && body !== null && Object.hasOwn(body, field);
  } catch {
    return false;
  }
}

const ajvByDocument = new WeakMap<object, Ajv2020>();
function ajvFor(doc: any): Ajv2020 {
  let ajv = ajvByDocument.get(doc);
  if (!ajv) {
    ajv = addFormats(new Ajv2020({ strict: false }));
    ajv.addSchema(doc, 'doc');
    ajvByDocument.set(doc, ajv);
  }
  return ajv;
}

const rebased = new WeakMap<object, object>();
/** Ajv resolves a `#/…` ref against the schema it compiles; inline schemas point into the document. */
function rebase(schema: any): any {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (!schema || typeof schema !== 'object') return schema;
  let copy = rebased.get(schema);
  if (!copy) {
    copy = Object.fromEntries(
      Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `doc${v}` : rebase(v)]),
    );
    rebased.set(schema, copy);
  }
  return copy;
}

/** The document with its `x-svc-checked-when-parsed` schemas (NoPrototypeKeys) emptied, for values too deep to validate recursively. */
const flatDocs = new WeakMap<object, any>();
function flatDoc(doc: any): any {
  let flat = flatDocs.get(doc);
  if (!flat) {
    const schemas = doc.components?.schemas ?? {};
    const emptied = Object.fromEntries(Object.keys(schemas).map((k) => [k, schemas[k]['x-svc-checked-when-parsed'] ? {} : schemas[k]]));
    flat = { ...doc, components: { ...doc.components, schemas: emptied } };
    flatDocs.set(doc, flat);
  }
  return flat;
}

/**
 * Whether `value` is valid against `schema` of `doc`. NoPrototypeKeys is recursive, and a fuzzed body
 * may nest thousands deep, past what Ajv's recursive validation has stack for: such a value is judged
 * against the document without it, and the same rule (no "__proto__" key at any depth) by a loop.
 * Every request body of openapi.yaml admits no such key anywhere, so the two judgments agree.
 */
export function valid(doc: any, schema: any, value: unknown): boolean {
  try {
    return ajvFor(doc).validate<unknown>(rebase(schema ?? {}), value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return ajvFor(flatDoc(doc)).validate<unknown>(rebase(schema ?? {}), value) && !hasProtoKey(value);
  }
}

const resolve = (doc: any, node: any): any => {
  while (node && typeof node.$ref === 'string') {
    node = node.$ref
      .slice(2)
      .split('/')
      .reduce((n: any, k: string) => n?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return node;
};

/**
 * The document path a request's path is an instance of, with its path parameters (percent-decoded;
 * undefined when one does not decode): the path itself when the document has it, else a template
 * whose `{name}` segments match one non-empty segment each.
 */
function pathOf(doc: any, r: FuzzRequest): { template: string; values: Record<string, string | undefined> } | undefined {
  const pathname = r.target.split('?')[0]!;
  if (doc.paths?.[pathname] && !pathname.includes('{')) return { template: pathname, values: {} };
  const segments = pathname.split('/');
  for (const template of Object.keys(doc.paths ?? {})) {
    const parts = template.split('/');
    if (parts.length !== segments.length || !template.includes('{')) continue;
    const values: Record<string, string | undefined> = {};
    const matches = parts.every((part, i) => {
      const name = /^\{(.+)\}$/.exec(part)?.[1];
      if (name === undefined) return part === segments[i];
      if (segments[i] === '') return false;
      try {
        values[name] = decodeURIComponent(segments[i]!);
      } catch {
        values[name] = undefined;
      }
      return true;
    });
    if (matches) return { template, values };
  }
  return undefined;
}

function operationOf(doc: any, r: FuzzRequest): any {
  const path = pathOf(doc, r);
  return path && doc.paths[path.template][r.method.toLowerCase()];
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}([ \\t]*;[ \\t]*${TOKEN}=(${TOKEN}|"[^"]*"))*[ \\t]*$`);

/** The bytes a header field's text goes out as: Latin-1 when it fits (as node:http sends it), else UTF-8. */
export const fieldBytes = (text: string): Buffer => Buffer.from(text, [...text].every((c) => c.charCodeAt(0) <= 0xff) ? 'latin1' : 'utf8');

/** Every header field of the request, `headers` then `moreHeaders`. */
const fieldsOf = (r: FuzzRequest): [string, string][] => [...Object.entries(r.headers), ...(r.moreHeaders ?? [])];

/**
 * A header's value as svc reads it: the bytes sent (fieldBytes) read as Latin-1, without the
 * leading and trailing spaces and tabs that are not part of a field value (RFC 9110 §5.5).
 */
const headerOf = (r: FuzzRequest, name: string): string | undefined => {
  const value = fieldsOf(r).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  return value === undefined
    ? undefined
    : fieldBytes(value)
        .toString('latin1')
        .replace(/^[ \t]+|[ \t]+$/g, '');
};

const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE_BYTES = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Whether every header field is one HTTP allows: a token for a name, no control character in a value (RFC 9110 §5). */
const validHttpFields = (r: FuzzRequest) =>
  fieldsOf(r).every(([k, v]) => FIELD_NAME.test(k) && FIELD_VALUE_BYTES.test(fieldBytes(v).toString('latin1')));

/** A query value as the schema's type, or `undefined` when its spelling is ambiguous (e.g. `+5`, `007`). */
function typedValue(raw: string, schema: any): unknown {
  const type = schema?.type;
  if (type === 'integer' || type === 'number') {
    if (/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(raw)) return Number(raw);
    return /^[+-]?[0-9.eE+-]+$/.test(raw) ? undefined : raw;
  }
  return raw;
}

/**
 * Whether the request conforms to its operation in `doc`: a valid HTTP message (header names are
 * tokens, no control character in a value), declared query parameters (each at most once, required
 * ones present, values valid, no other name when the operation declares any: its parameters are the
 * ones it accepts, as openapi.yaml's discovery operations say and as Schemathesis reads a query),
 * declared headers, and the JSON body.
 * Undetermined: an unknown route, an undeclared query parameter on an operation that declares none
 * (svc says such a query string is ignored), an undecodable query, an ambiguous number spelling, or
 * a Content-Encoding on the body.
 */
export function requestConformance(r: FuzzRequest, doc: any = openapiDocument): Conformance {
  if (!validHttpFields(r)) return 'nonconforming';
  const operation = operationOf(doc, r);
  if (!operation) return 'undetermined';
  const path = pathOf(doc, r)!;
  const parameters = [...(doc.paths[path.template].parameters ?? []), ...(operation.parameters ?? [])].map((p: any) => resolve(doc, p));
  // A path parameter's value, as the server decodes it (an undecodable one is undetermined).
  for (const p of parameters.filter((p: any) => p.in === 'path')) {
    const value = path.values[p.name];
    if (value === undefined) return 'undetermined';
    if (!valid(doc, p.schema, typedValue(value, p.schema))) return 'nonconforming';
  }
  let params: URLSearchParams;
  try {
    const query = r.target.includes('?') ? r.target.slice(r.target.indexOf('?') + 1) : '';
    decodeURIComponent(query.replace(/\+/g, ' '));
    params = new URLSearchParams(query);
  } catch {
    return 'undetermined';
  }
  const queryParams = parameters.filter((p: any) => p.in === 'query');
  if ([...new Set(params.keys())].some((k) => !queryParams.some((p: any) => p.name === k))) {
    return queryParams.length ? 'nonconforming' : 'undetermined';
  }
  let verdict: Conformance = 'conforming';
  for (const p of queryParams) {
    const values = params.getAll(p.name);
    if (values.length === 0) {
      if (p.required) return 'nonconforming';
      continue;
    }
    if (values.length > 1) return 'nonconforming';
    // OpenAPI: an empty value (`name=`) is sent only where `allowEmptyValue` says so (Schemathesis reads it so).
    if (values[0] === '' && p.allowEmptyValue !== true) return 'nonconforming';
    const value = typedValue(values[0]!, p.schema);
    if (value === undefined) verdict = 'undetermined';
    else if (!valid(doc, p.schema, value)) return 'nonconforming';
    // A dependency between parameters, which a parameter's schema cannot state (openapi.yaml
    // declares it with x-requires-parameters: maxAmount needs asset).
    const requires: string[] = p['x-requires-parameters'] ?? [];
    if (requires.some((name) => !params.has(name))) return 'nonconforming';
  }
  for (const p of parameters.filter((p: any) => p.in === 'header')) {
    const value = headerOf(r, p.name);
    if (value === undefined ? p.required : !valid(doc, p.schema, value)) return 'nonconforming';
  }
  const requestBody = resolve(doc, operation.requestBody);
  if (requestBody) {
    if (!r.body || r.body.length === 0) return requestBody.required ? 'nonconforming' : verdict;
    if (headerOf(r, 'content-encoding') !== undefined) return 'undetermined';
    const declared = headerOf(r, 'content-type') ?? '';
    // A Content-Type outside RFC 9110's grammar (e.g. `application/json;;`) names no media type.
    if (declared !== '' && !MEDIA_TYPE.test(declared)) return 'undetermined';
    const mediaType = declared.split(';')[0]!.trim().toLowerCase();
    const content = requestBody.content?.[mediaType];
    if (!content) return 'nonconforming';
    let body: unknown;
    try {
      body = JSON.parse(r.body.toString('utf8'));
    } catch {
      return 'nonconforming';
    }
    // A "__proto__" key at any depth is refused by the schema itself (NoPrototypeKeys), as outside fuzzers read it.
    if (!valid(doc, content.schema, body)) return 'nonconforming';
  }
  return verdict;
}

const codeOf = (res: RawResponse): unknown => {
  try {
    const body = JSON.parse(res.text);
    return body?.error?.code ?? body?.invalidReason ?? body?.errorReason;
  } catch {
    return undefined;
  }
};

const is2xx = (res: RawResponse) => res.status >= 200 && res.status < 300;

/** negative_data_rejection: the document forbids the request, yet svc accepted it. */
export function negativeDataRejection(r: FuzzRequest, res: RawResponse, doc: any = openapiDocument): string | null {
  if (!is2xx(res) || requestConformance(r, doc) !== 'nonconforming') return null;
  return `negative_data_rejection: the request violates openapi.yaml, yet it was answered ${res.status}`;
}

/** positive_data_acceptance: the document allows the request, yet svc refused it as malformed. */
export function positiveDataAcceptance(r: FuzzRequest, res: RawResponse, doc: any = openapiDocument): string | null {
  if (res.status !== 400 && res.status !== 422) return null;
  const code = codeOf(res);
  const stateOf = typeof code === 'string' ? STATE_DEPENDENT_CODES.get(code) : undefined;
  if (stateOf && new URLSearchParams(r.target.split('?').slice(1).join('?')).get(stateOf)) return null;
  const bodyStateOf = typeof code === 'string' ? STATE_DEPENDENT_BODY_CODES.get(code) : undefined;
  if (bodyStateOf && bodyHolds(r, bodyStateOf)) return null;
  if (requestConformance(r, doc) !== 'conforming') return null;
  return `positive_data_acceptance: the request conforms to openapi.yaml, yet it was refused ${res.status} ${String(code)}`;
}

/** missing_required_header: a declared required header is absent, yet the answer is not a 4xx. */
export function missingRequiredHeader(r: FuzzRequest, res: RawResponse, doc: any = openapiDocument): string | null {
  const operation = operationOf(doc, r);
  if (!operation || (res.status >= 400 && res.status < 500)) return null;
  const missing = (operation.parameters ?? [])
    .map((p: any) => resolve(doc, p))
    .find((p: any) => p.in === 'header' && p.required && headerOf(r, p.name) === undefined);
  return missing ? `missing_required_header: ${missing.name} is required, yet the answer without it is ${res.status}` : null;
}

/** ignored_auth: the operation requires credentials, none were sent, yet the answer is 2xx. */
export function ignoredAuth(r: FuzzRequest, res: RawResponse, doc: any = openapiDocument): string | null {
  const operation = operationOf(doc, r);
  if (!operation || !is2xx(res)) return null;
  const requirements: Record<string, unknown>[] = operation.security ?? doc.security ?? [];
  // An empty requirement object ({}) means anonymous access is one of the options.
  if (requirements.length === 0 || requirements.some((req) => Object.keys(req).length === 0)) return null;
  const schemes = requirements.flatMap((req) => Object.keys(req)).map((name) => resolve(doc, doc.components?.securitySchemes?.[name]));
  const sent = schemes.some((s: any) =>
    s?.type === 'apiKey'
      ? s.in === 'header'
        ? headerOf(r, s.name) !== undefined
        : s.in === 'query'
          ? new URLSearchParams(r.target.split('?')[1] ?? '').has(s.name)
          : headerOf(r, 'cookie')?.includes(`${s.name}=`)
      : headerOf(r, 'authorization') !== undefined,
  );
  return sent
    ? null
    : `ignored_auth: ${r.method} ${r.target.split('?')[0]} declares security, yet it answered ${res.status} without credentials`;
}

/** The per-exchange request-side rules, in the order a failure is reported. */
export const REQUEST_RULES = [negativeDataRejection, positiveDataAcceptance, missingRequiredHeader, ignoredAuth];

/**
 * use_after_free and ensure_resource_availability, over the exchanges of one run against one svc:
 * a 2xx DELETE frees its path; a 201 with `Location` creates one.
 */
export class ResourceHistory {
  private readonly freed = new Set<string>();
  private readonly created = new Set<string>();

  observe(r: FuzzRequest, res: RawResponse): string | null {
    const path = r.target.split('?')[0]!;
    if (r.method === 'DELETE' && is2xx(res)) {
      this.freed.add(path);
      this.created.delete(path);
      return null;
    }
    if (r.method !== 'POST' && r.method !== 'PUT' && this.freed.has(path) && is2xx(res)) {
      return `use_after_free: ${r.method} ${path} answered ${res.status} after it was deleted`;
    }
    if (r.method === 'GET' && this.created.has(path) && res.status === 404) {
      return `ensure_resource_availability: ${path} was just created, yet GET answers 404`;
    }
    const location = res.headers.get('location');
    if (res.status === 201 && location) {
      const created = new URL(location, 'http://svc').pathname;
      this.created.add(created);
      this.freed.delete(created);
    }
    return null;
  }
}
