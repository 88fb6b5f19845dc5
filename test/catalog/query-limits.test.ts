/**
 * The search query limit (docs/CATALOG.md "The search budget"): any number of words, at most 2,048
 * characters; longer is refused 400 svc_invalid_query_parameter with a reason naming the cap by
 * every entry point — GET /discovery/search over real HTTP on loopback, the catalog itself, and
 * the MCP search_resources tool (before any request to the facilitator) — and stated by
 * openapi.yaml's `query` schema, so a client can check a query before sending it.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CatalogQueryError } from '../../src/catalog/types.ts';
import { MAX_QUERY_LENGTH } from '../../src/catalog/terms.ts';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import { searchResources } from '../../src/mcp/search.ts';
import { ToolFailure } from '../../src/mcp/results.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer } from '../helpers/server.ts';
import { tempCatalog } from './fixtures.ts';

const document = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'));
const querySchema = document.paths['/discovery/search'].get.parameters.find((p: any) => p.name === 'query').schema;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
const TOO_LONG = 'a '.repeat(3) + 'b'.repeat(MAX_QUERY_LENGTH);

let t: ReturnType<typeof tempCatalog>;
let server: Awaited<ReturnType<typeof startTestServer>>;
let client: ReturnType<typeof api>;
beforeAll(async () => {
  t = tempCatalog();
  server = await startTestServer({ catalog: t.catalog });
  client = api(server.url);
});
afterAll(async () => {
  await server.close();
  t.close();
});

const search = (query: string) => client.get(`/discovery/search?${new URLSearchParams({ query }).toString()}`);

it('the schema carries the same length as the code, and no limit on words', () => {
  expect(MAX_QUERY_LENGTH).toBe(2048);
  expect(querySchema.maxLength).toBe(MAX_QUERY_LENGTH);
  // The pattern says only "not blank" (a character that is not white space, as trim() sees it).
  expect(querySchema.pattern).toBe('\\S');
  for (const blank of [' ', '\t\n', '\u00a0\u3000\ufeff'])
    expect(new RegExp(querySchema.pattern, 'u').test(blank)).toBe(blank.trim() !== '');
});

describe('GET /discovery/search', () => {
  it('any number of words up to 2,048 characters is searched', async () => {
    for (const query of [words(9), words(300), 'x '.repeat(1000), 'q'.repeat(MAX_QUERY_LENGTH), `${words(40)} cafe\u0301`]) {
      const res = await search(query);
      expect(res.status, query.slice(0, 40)).toBe(200);
      expect(res.body).toMatchObject({ searchMethod: 'text', searchedTerms: [], droppedTerms: [] });
    }
  });

  it('a 2,049th character is refused 400 svc_invalid_query_parameter naming the cap (code points, as maxLength counts)', async () => {
    const res = await search('q'.repeat(MAX_QUERY_LENGTH + 1));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'svc_invalid_query_parameter',
      reason: expect.stringMatching(/2049 characters .*at most 2048/),
    });
    // 2,048 accented characters (12 KiB percent-encoded, within the 16 KiB request head) are accepted.
    expect((await search('é'.repeat(MAX_QUERY_LENGTH))).status).toBe(200);
    // 2,048 astral characters are 4,096 UTF-16 units but 2,048 characters: accepted (by the catalog:
    // percent-encoded in a URL they are 24 KiB, past the request head's 16 KiB, answered 431).
    expect((await t.catalog.search('𝐀'.repeat(MAX_QUERY_LENGTH), {}, { limit: 5 })).resources).toEqual([]);
    expect((await search(TOO_LONG)).body.error.reason).toMatch(/at most 2048/);
  });
});

describe('the other entry points refuse with the same reason', () => {
  it('the catalog itself', async () => {
    const http = await search(TOO_LONG);
    const err = await t.catalog.search(TOO_LONG, {}, { limit: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogQueryError);
    expect(err).toMatchObject({ code: 'svc_invalid_query_parameter', message: http.body.error.reason });
  });

  it('MCP search_resources, without asking the facilitator', async () => {
    // Nothing listens on port 9 of loopback: a request would be svc_mcp_facilitator_unreachable.
    const offline = createFacilitatorClient('http://127.0.0.1:9', { timeoutMs: 2_000 });
    const http = await search(TOO_LONG);
    const err = await searchResources({ query: TOO_LONG }, offline, 'stellar:testnet', 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolFailure);
    expect(err).toMatchObject({ code: 'svc_invalid_query_parameter', message: http.body.error.reason });
    const online = await searchResources({ query: words(300) }, createFacilitatorClient(server.url), 'stellar:testnet', 1);
    expect(online).toMatchObject({ hits: [], searchMethod: 'text', searchedTerms: [], droppedTerms: [] });
  });
});
