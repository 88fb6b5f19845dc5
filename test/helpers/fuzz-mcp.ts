/**
 * Bodies and headers for POST /mcp (openapi.yaml callHostedMcp) in the contract fuzzer: the
 * messages an MCP client sends (initialize, tools/list, tools/call of search_resources with
 * words present in listings, notifications, responses), JSON-RPC messages from the document's
 * JsonRpcMessage schema (valid, mutated, breaking one keyword), junk, and Accept and
 * Content-Type variations (an absent Accept or one that takes JSON is answered; the others the transport refuses: 406, 415).
 */
import fc from 'fast-check';
import { jsonBody } from './fuzz-http.ts';
import { mutatedValue, nastyString, negativeValue, validValue } from './fuzz-schema.ts';

export type McpBodyPart = { headers: Record<string, string>; body?: Buffer | undefined; kind: string };

const MESSAGE_SCHEMA = { $ref: '#/components/schemas/JsonRpcMessage' };
const BOTH = 'application/json, text/event-stream';
const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07', '1999-01-01'];

/** Accept: what MCP clients send most of the time, else none or one that takes JSON (taken as both), or what the transport refuses (406). */
const accept: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Record<string, string>>({ accept: BOTH }) },
  { weight: 1, arbitrary: fc.constant<Record<string, string>>({ accept: 'text/event-stream, application/json;q=0.9' }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Record<string, string>>(
      {},
      { accept: 'application/json' },
      { accept: 'text/event-stream' },
      { accept: '*/*' },
      { accept: '' },
    ),
  },
);

const id = fc.oneof(fc.integer({ min: -5, max: 1_000 }), fc.string({ maxLength: 8 }), fc.constantFrom(2 ** 53 - 1, 2 ** 53, 1.5, null));

/** search_resources arguments: mostly what an agent sends, sometimes what the tool refuses. */
function searchArguments(words: string[]): fc.Arbitrary<unknown> {
  const word = words.length ? fc.constantFrom(...words) : fc.string({ maxLength: 8 });
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        {
          query: fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
          filters: fc.record(
            { type: fc.constantFrom('http', 'mcp', 'other'), network: fc.constantFrom('stellar:testnet', 'stellar:pubnet') },
            { requiredKeys: [] },
          ),
          limit: fc.integer({ min: -1, max: 120 }),
          cursor: fc.constantFrom('abc.def', '', 'x'),
        },
        { requiredKeys: ['query'] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(
        nastyString.map((query) => ({ query })),
        fc.constant({}),
        fc.constant({ query: 'a b c d e f g h i' }),
      ),
    },
  );
}

/** The messages a client sends, on the route's happy paths and next to them. */
function clientMessage(words: string[]): fc.Arbitrary<unknown> {
  const request = (method: string, params?: fc.Arbitrary<unknown>) =>
    fc
      .tuple(id, params ?? fc.constant(undefined))
      .map(([i, p]) => ({ jsonrpc: '2.0', id: i, method, ...(p === undefined ? {} : { params: p }) }));
  return fc.oneof(
    request(
      'initialize',
      fc.constantFrom(...VERSIONS).map((protocolVersion) => ({
        protocolVersion,
        capabilities: {},
        clientInfo: { name: 'fuzz', version: '1.0.0' },
      })),
    ),
    request('tools/list'),
    request(
      'tools/call',
      searchArguments(words).map((args) => ({ name: 'search_resources', arguments: args })),
    ),
    request('tools/call', fc.constantFrom({ name: 'paid_call', arguments: { url: 'https://x.example.com' } }, { name: 'nope' }, {})),
    fc.constantFrom('ping', 'resources/list', 'prompts/list', 'completion/complete', '').chain((method) => request(method)),
    fc.constantFrom(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'no' } },
    ),
  );
}

/** Bodies for POST /mcp; `rawJunk` and `wrongTypes` are the fuzzer's shared junk bodies and Content-Types. */
export function mcpBody(words: string[], rawJunk: fc.Arbitrary<McpBodyPart>, wrongTypes: string[]): fc.Arbitrary<McpBodyPart> {
  const asJson =
    (kind: string) =>
    (value: unknown): McpBodyPart => ({ headers: { 'content-type': 'application/json' }, body: jsonBody(value), kind });
  const body: fc.Arbitrary<McpBodyPart> = fc.oneof(
    { weight: 6, arbitrary: clientMessage(words).map(asJson('MCP client message')) },
    { weight: 3, arbitrary: validValue(MESSAGE_SCHEMA).map(asJson('schema-valid JSON-RPC message')) },
    { weight: 2, arbitrary: mutatedValue(MESSAGE_SCHEMA).map(asJson('mutated JSON-RPC message')) },
    {
      weight: 2,
      arbitrary: negativeValue(MESSAGE_SCHEMA).map(({ value, keyword, path }) => asJson(`negative message: ${keyword} at ${path}`)(value)),
    },
    { weight: 1, arbitrary: fc.array(clientMessage(words), { maxLength: 3 }).map(asJson('batch array')) },
    { weight: 2, arbitrary: rawJunk },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.option(fc.constantFrom(...wrongTypes), { nil: undefined }), clientMessage(words))
        .map(([type, value]): McpBodyPart => ({
          headers: type === undefined ? {} : { 'content-type': type },
          body: jsonBody(value),
          kind: `content-type ${type ?? '(none)'}`,
        })),
    },
  );
  return fc
    .tuple(body, accept)
    .map(([b, a]) => ({ ...b, headers: { ...a, ...b.headers }, kind: `${b.kind}, accept ${a.accept ?? '(none)'}` }));
}
