/**
 * Contract checks against openapi.yaml, for every engineer's HTTP tests.
 *
 * Every response a test looks at must go through this helper. It fails the test when:
 * - the status is not declared for the operation (method + path); a known path with an undeclared
 *   method must be a 405 `#/x-svc-unmatched-responses/405` whose `Allow` lists exactly the
 *   declared methods, any other request matching no operation a 404 (`x-svc-unmatched-responses/404`);
 * - a declared required header is missing, or a present declared header does not validate
 *   (`EXTENSION-RESPONSES` is base64-decoded and checked against its `contentSchema`);
 * - the Content-Type differs from the declared media type (JSON everywhere, YAML for /openapi.yaml, checked parsed),
 *   or a response declared without content has a body or a Content-Type;
 * - the body does not validate (Ajv, JSON Schema 2020-12) against the declared response schema.
 *
 * Usage:
 *   import { api } from '../helpers/contract.ts';
 *   const client = api(server.url);
 *   const res = await client.post('/verify', { paymentPayload, paymentRequirements });
 *   expect(res.status).toBe(200); expect(res.body.isValid).toBe(false);
 *
 * or, for a fetch you made yourself (raw bodies, odd headers):
 *   const res = await expectResponseMatchesContract(await fetch(url, init), { method: 'POST', path: '/verify' });
 *
 * Both return `{ status, headers, text, body }` (`body` parsed for JSON responses).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { addFormats } from '../../src/http/contract.ts';

export const OPENAPI_FILE = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));
export const openapiDocument: any = parse(readFileSync(OPENAPI_FILE, 'utf8'));

const DOC_ID = 'svc-openapi';
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema(openapiDocument, DOC_ID);

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function resolvePointer(pointer: string): any {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node: any, key) => node?.[key], openapiDocument);
}

/** Follows a local `$ref`, returning the object and its JSON pointer. */
export function deref(node: any, pointer: string): { node: any; pointer: string } {
  while (node && typeof node.$ref === 'string') {
    pointer = node.$ref.slice(1);
    node = resolvePointer(pointer);
  }
  return { node, pointer };
}

const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorAt(pointer: string) {
  let v = validators.get(pointer);
  if (!v) {
    v = ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
    validators.set(pointer, v);
  }
  return v;
}

function check(validator: ReturnType<typeof ajv.compile>, value: unknown, what: string): void {
  if (!validator(value)) {
    throw new Error(
      `${what} violates openapi.yaml: ${ajv.errorsText(validator.errors, { separator: '; ' })}\nvalue: ${JSON.stringify(value)?.slice(0, 2000)}`,
    );
  }
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The methods openapi.yaml declares for a path, upper-case in document order (empty: unknown path),
 * then OPTIONS when one of its operations answers other origins (`x-svc-cors-preflight`).
 */
export function declaredMethods(pathname: string): string[] {
  const item = openapiDocument.paths?.[pathname] ?? {};
  const methods = Object.keys(item).filter((k) => HTTP_METHODS.includes(k));
  const preflight = methods.some((k) => item[k]['x-svc-cors'] === true);
  return [...methods.map((k) => k.toUpperCase()), ...(preflight ? ['OPTIONS'] : [])];
}

/** The declared response (and its pointer) for method + path + status. */
export function declaredResponse(method: string, path: string, status: number): { node: any; pointer: string } {
  const pathname = templateOf(path.split('?')[0]!);
  const operation = openapiDocument.paths?.[pathname]?.[method.toLowerCase()];
  if (!operation) {
    if (method.toUpperCase() === 'OPTIONS' && declaredMethods(pathname).includes('OPTIONS')) {
      if (!openapiDocument['x-svc-cors-preflight'][String(status)])
        throw new Error(`OPTIONS ${pathname} is a CORS preflight, which openapi.yaml does not declare answering ${status}`);
      return deref({ $ref: `#/x-svc-cors-preflight/${status}` }, '');
    }
    if (declaredMethods(pathname).length) {
      if (status !== 405)
        throw new Error(`${method} ${pathname} is a known path without that method, so it must answer 405, got ${status}`);
      return deref({ $ref: '#/x-svc-unmatched-responses/405' }, '');
    }
    if (status !== 404) throw new Error(`${method} ${pathname} is not an operation, so it must answer 404, got ${status}`);
    return deref({ $ref: '#/x-svc-unmatched-responses/404' }, '');
  }
  const base = `/paths/${escapePointer(pathname)}/${method.toLowerCase()}/responses/${status}`;
  const raw = operation.responses?.[String(status)];
  if (!raw) {
    throw new Error(
      `${method} ${pathname} answered ${status}, which openapi.yaml does not declare (declared: ${Object.keys(operation.responses).join(', ')})`,
    );
  }
  return deref(raw, base);
}

/** The declared path (e.g. `/settlements/{transaction}`) a concrete path matches, else the path itself. */
export function templateOf(pathname: string): string {
  if (openapiDocument.paths?.[pathname]) return pathname;
  const segments = pathname.split('/');
  const match = Object.keys(openapiDocument.paths ?? {}).find((template) => {
    const parts = template.split('/');
    return (
      parts.length === segments.length &&
      parts.every((p, i) => (p.startsWith('{') && p.endsWith('}') ? segments[i] !== '' : p === segments[i]))
    );
  });
  return match ?? pathname;
}

/** Checks one received response against the contract; throws with a precise message. */
export function checkContract(
  request: { method: string; path: string },
  response: { status: number; headers: Headers; text: string },
): unknown {
  const what = `${request.method} ${request.path} → ${response.status}`;
  const { node: declared, pointer } = declaredResponse(request.method, request.path, response.status);
  for (const [name, rawHeader] of Object.entries<any>(declared.headers ?? {})) {
    const { node: header, pointer: headerPointer } = deref(rawHeader, `${pointer}/headers/${escapePointer(name)}`);
    const value = response.headers.get(name);
    if (value === null) {
      if (header.required) throw new Error(`${what}: required header ${name} is missing`);
      continue;
    }
    // A header is text: an integer schema is checked on the number it spells, as Schemathesis reads it.
    const typed = header.schema?.type === 'integer' && /^-?(0|[1-9][0-9]*)$/.test(value) ? Number(value) : value;
    check(validatorAt(`${headerPointer}/schema`), typed, `${what}: header ${name}`);
    if (header.schema?.contentEncoding === 'base64' && header.schema?.contentSchema) {
      const decoded = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
      check(validatorAt(`${headerPointer}/schema/contentSchema`), decoded, `${what}: decoded header ${name}`);
    }
  }
  if (response.status === 405) {
    const allow = (response.headers.get('allow') ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean)
      .sort();
    const expected = declaredMethods(templateOf(request.path.split('?')[0]!)).sort();
    if (allow.join(',') !== expected.join(','))
      throw new Error(`${what}: Allow ${JSON.stringify(allow)} is not the declared methods ${JSON.stringify(expected)}`);
  }
  // A response declared without content (POST /mcp's 202) has no body and no Content-Type.
  if (declared.content === undefined) {
    if (response.text !== '') throw new Error(`${what}: declared without a body, got ${JSON.stringify(response.text.slice(0, 200))}`);
    if (response.headers.get('content-type') !== null) throw new Error(`${what}: declared without a body, yet it has a Content-Type`);
    return undefined;
  }
  const mediaTypes = Object.keys(declared.content);
  const contentType = response.headers.get('content-type') ?? '';
  const mediaType = mediaTypes.find((m) => contentType.split(';')[0]!.trim() === m);
  if (!mediaType) throw new Error(`${what}: Content-Type ${JSON.stringify(contentType)} is not one of ${mediaTypes.join(', ')}`);
  const body = mediaType.endsWith('json') ? parseJson(response.text, what) : response.text;
  // A YAML body is checked as the value it spells, as Schemathesis reads it; the caller gets its text.
  const checked = mediaType.endsWith('yaml') ? parsedYaml(response.text) : body;
  check(validatorAt(`${pointer}/content/${escapePointer(mediaType)}/schema`), checked, `${what}: body`);
  return body;
}

/**
 * The last YAML body parsed, by its exact text: svc answers GET /openapi.yaml with the same 140 KB
 * every time, and parsing it cost about 90 ms of CPU per answer (the fuzz suite asks it over 100
 * times). Another text is parsed anew; the schema check still runs on every answer.
 */
let lastYaml: { text: string; value: unknown } | undefined;
function parsedYaml(text: string): unknown {
  if (lastYaml?.text !== text) lastYaml = { text, value: parse(text) as unknown };
  return lastYaml.value;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what}: body is not JSON: ${text.slice(0, 200)}`);
  }
}

/** Reads a fetch Response, checks it against the contract, returns it parsed. */
export async function expectResponseMatchesContract<T = any>(
  res: Response,
  request: { method: string; path: string },
): Promise<ApiResponse<T>> {
  const text = await res.text();
  const body = checkContract(request, { status: res.status, headers: res.headers, text });
  return { status: res.status, headers: res.headers, text, body: body as T };
}

/** A fetch wrapper whose every response is checked against openapi.yaml. */
export function api(baseUrl: string) {
  const request = async <T = any>(method: string, path: string, init: RequestInit = {}): Promise<ApiResponse<T>> => {
    const res = await fetch(baseUrl + path, { ...init, method });
    return expectResponseMatchesContract<T>(res, { method, path });
  };
  return {
    request,
    get: <T = any>(path: string, init?: RequestInit) => request<T>('GET', path, init),
    /** POST a JSON value (or a raw string body with your own headers via `request`). */
    post: <T = any>(path: string, json: unknown, init: RequestInit = {}) =>
      request<T>('POST', path, {
        ...init,
        body: JSON.stringify(json),
        headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
      }),
  };
}
