/**
 * The search query limits (docs/CATALOG.md "Query limits"): at most 256 characters and 8 terms,
 * refused 400 svc_invalid_query_parameter with a reason naming the limit by every entry point —
 * GET /discovery/search over real HTTP on loopback, the catalog itself, and the MCP
 * search_resources tool (before any request to the facilitator) — and stated exactly by
 * openapi.yaml's `query` schema, so a client can check a query before sending it.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CatalogQueryError } from '../../src/catalog/types.ts';
import { MAX_QUERY_LENGTH, MAX_QUERY_TERMS, QUERY_PATTERN, queryLimitViolation, tokenize } from '../../src/catalog/terms.ts';
import { createFacilitatorClient } from '../../src/client/facilitator.ts';
import { searchResources } from '../../src/mcp/search.ts';
import { ToolFailure } from '../../src/mcp/results.ts';
import { api } from '../helpers/contract.ts';
import { startTestServer } from '../helpers/server.ts';
import { tempCatalog } from './fixtures.ts';

const document = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'));
const querySchema = document.paths['/discovery/search'].get.parameters.find((p: any) => p.name === 'query').schema;
const schemaPattern = new RegExp(querySchema.pattern, 'u');

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
const NINE_TERMS = words(MAX_QUERY_TERMS + 1);
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

describe('the limits as openapi.yaml states them', () => {
  it('the schema carries the same length and the same pattern as the code', () => {
    expect(querySchema.maxLength).toBe(MAX_QUERY_LENGTH);
    expect(querySchema.pattern).toBe(QUERY_PATTERN);
  });

  it('the pattern accepts exactly the non-blank queries of at most 8 terms, counted as the catalog tokenizes', () => {
    const marks = fc.constantFrom('\u0301', '\u0308', '\u20dd', '\u0338');
    const pieces = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
      fc.constantFrom(' ', '  ', '-', '\u00a0', '\u3000', 'İ', 'é', 'e\u0301', '\u2260', '①', '½', '٣'),
      marks,
    );
    const query = fc.array(pieces, { maxLength: 24 }).map((p) => p.join(''));
    fc.assert(
      fc.property(query, (q) => {
        const legal = q.trim() !== '' && tokenize(q).length <= MAX_QUERY_TERMS;
        expect(schemaPattern.test(q)).toBe(legal);
        if (q.trim() !== '' && [...q].length <= MAX_QUERY_LENGTH) expect(queryLimitViolation(q) === undefined).toBe(legal);
      }),
      { numRuns: 1000, seed: 32 },
    );
  });
});

describe('GET /discovery/search', () => {
  it('8 terms and 256 characters are searched', async () => {
    expect((await search(words(MAX_QUERY_TERMS))).status).toBe(200);
    // A repeated term counts again, but 8 occurrences are still within the limit.
    expect((await search('x '.repeat(MAX_QUERY_TERMS))).status).toBe(200);
    expect((await search('q'.repeat(MAX_QUERY_LENGTH))).status).toBe(200);
    // Marks do not split a term: "e\u0301" is one term, as the catalog tokenizes it.
    expect((await search(`${words(MAX_QUERY_TERMS - 1)} cafe\u0301`)).status).toBe(200);
  });

  it('a 9th term is refused 400 svc_invalid_query_parameter naming the limit', async () => {
    for (const query of [NINE_TERMS, 'x '.repeat(MAX_QUERY_TERMS + 1), `${words(MAX_QUERY_TERMS)}-9`]) {
      const res = await search(query);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('svc_invalid_query_parameter');
      expect(res.body.error.reason).toMatch(/has 9 terms .*at most 8 are accepted/);
    }
  });

  it('a 257th character is refused 400 svc_invalid_query_parameter naming the limit (code points, as maxLength counts)', async () => {
    const res = await search('q'.repeat(MAX_QUERY_LENGTH + 1));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'svc_invalid_query_parameter',
      reason: expect.stringMatching(/257 characters .*at most 256/),
    });
    // 256 astral characters are 512 UTF-16 units but 256 characters: accepted.
    expect((await search('𝐀'.repeat(MAX_QUERY_LENGTH))).status).toBe(200);
    expect((await search(TOO_LONG)).body.error.reason).toMatch(/at most 256/);
  });
});

describe('the other entry points refuse with the same reason', () => {
  it('the catalog itself', async () => {
    const http = await search(NINE_TERMS);
    const err = await t.catalog.search(NINE_TERMS, {}, { limit: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CatalogQueryError);
    expect(err).toMatchObject({ code: 'svc_invalid_query_parameter', message: http.body.error.reason });
  });

  it('MCP search_resources, without asking the facilitator', async () => {
    // Nothing listens on port 9 of loopback: a request would be svc_mcp_facilitator_unreachable.
    const offline = createFacilitatorClient('http://127.0.0.1:9', { timeoutMs: 2_000 });
    for (const query of [NINE_TERMS, TOO_LONG]) {
      const http = await search(query);
      const err = await searchResources({ query }, offline, 'stellar:testnet').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolFailure);
      expect(err).toMatchObject({ code: 'svc_invalid_query_parameter', message: http.body.error.reason });
    }
    const online = await searchResources({ query: words(MAX_QUERY_TERMS) }, createFacilitatorClient(server.url), 'stellar:testnet');
    expect(online.hits).toEqual([]);
  });
});
