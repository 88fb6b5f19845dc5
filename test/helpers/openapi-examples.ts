/**
 * The requests openapi.yaml's own examples make, as an outside contract fuzzer's first phase sends
 * them (Schemathesis' "examples" phase): for every operation with an example, a request whose body
 * is each example of its JSON request body in turn, and whose parameters take their examples (the
 * i-th request the i-th example of each, wrapping). Operations without any example are left out,
 * as that phase leaves them out; an example-less parameter is left out too (it is optional: the
 * test that uses this fails on a required one, so every required parameter of an operation with
 * examples has one).
 */
import { fuzzRequest, jsonBody, type FuzzRequest } from './fuzz-http.ts';
import { deref, openapiDocument } from './contract.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head'];

export interface ExampleRequest {
  operation: string;
  request: FuzzRequest;
}

/** A parameter's examples: its own `example`/`examples`, else its schema's. */
function parameterExamples(parameter: any): unknown[] {
  if (parameter.example !== undefined) return [parameter.example];
  if (parameter.examples) return Object.values(parameter.examples).map((e: any) => deref(e, '').node.value);
  const schema = deref(parameter.schema, '').node;
  if (schema?.example !== undefined) return [schema.example];
  return Array.isArray(schema?.examples) ? schema.examples : [];
}

/** A JSON request body's examples: the media type's `example`/`examples`, else its schema's. */
function bodyExamples(media: any): unknown[] {
  if (!media) return [];
  if (media.example !== undefined) return [media.example];
  if (media.examples) return Object.values(media.examples).map((e: any) => deref(e, '').node.value);
  const schema = deref(media.schema, '').node;
  if (schema?.example !== undefined) return [schema.example];
  return Array.isArray(schema?.examples) ? schema.examples : [];
}

export function exampleRequests(doc: any = openapiDocument): ExampleRequest[] {
  const out: ExampleRequest[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const operation = `${method.toUpperCase()} ${path}`;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => deref(p, '').node);
      const withExamples = parameters.map((p: any) => ({ p, examples: parameterExamples(p) }));
      const media = op.requestBody ? deref(op.requestBody, '').node.content?.['application/json'] : undefined;
      const bodies = bodyExamples(media);
      const count = Math.max(bodies.length, ...withExamples.map(({ examples }) => examples.length));
      if (count === 0) continue;
      const missing = withExamples.filter(({ p, examples }) => p.required && examples.length === 0).map(({ p }) => p.name);
      if (missing.length > 0) throw new Error(`${operation}: required parameters without an example: ${missing.join(', ')}`);
      for (let i = 0; i < count; i++) {
        let target = path;
        const query = new URLSearchParams();
        const headers: Record<string, string> = {};
        for (const { p, examples } of withExamples) {
          if (examples.length === 0) continue;
          const value = String(examples[i % examples.length]);
          if (p.in === 'path') target = target.replace(`{${p.name}}`, encodeURIComponent(value));
          else if (p.in === 'query') query.append(p.name, value);
          else if (p.in === 'header') headers[p.name.toLowerCase()] = value;
        }
        const search = query.toString();
        let body: Buffer | undefined;
        if (bodies.length > 0) {
          body = jsonBody(bodies[i % bodies.length]);
          headers['content-type'] = 'application/json';
        }
        // What a generic HTTP client sends (Python's httpx, Schemathesis' own).
        headers.accept ??= '*/*';
        out.push({
          operation,
          request: fuzzRequest({
            method: method.toUpperCase(),
            target: search ? `${target}?${search}` : target,
            headers,
            body,
            kind: `example ${i + 1}`,
          }),
        });
      }
    }
  }
  return out;
}

/**
 * The statuses an answer to a schema-valid request may have (Schemathesis' positive_data_acceptance
 * default): a success, or a refusal of the caller (401, 403) or of the state (404, 409); a 400 or a
 * 422 would say the document allows what svc refuses.
 */
export const ACCEPTED_STATUSES = (status: number) => (status >= 200 && status < 300) || [401, 403, 404, 409].includes(status);
