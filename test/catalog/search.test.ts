/**
 * GET /discovery/search semantics (openapi.yaml, docs/CATALOG.md), the same on both stores (real
 * SQLite files, a real PostgreSQL database): weighted lexical ranking, OR-compiled quoted terms,
 * filters, partialResults, and the signed keyset cursor.
 */
import { describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/index.ts';
import { CatalogQueryError } from '../../src/catalog/types.ts';
import { ASSET, BUSY_MACHINE_BOUNDS, PAY_TO_B, recordingLogger, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, catalogPerDescribe, freshCatalogPerTest } from './fresh.ts';

type Listing = Record<string, any>;
const urls = (page: { resources: unknown[] }) => (page.resources as Listing[]).map((r) => r.resource);
const noParams = { queryParams: {}, paramSchema: {} };

async function walk(
  catalog: { search: (...args: any[]) => Promise<any> },
  query: string,
  filters: object,
  limit: number,
  between?: (page: number) => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const result = await catalog.search(query, filters, { limit, ...(cursor ? { cursor } : {}) });
    seen.push(...urls(result));
    expect(result.pagination.limit).toBe(limit);
    expect(result.resources.length).toBeLessThanOrEqual(limit);
    expect(result.partialResults).toBe(result.pagination.cursor !== null);
    if (!result.pagination.cursor) return seen;
    cursor = result.pagination.cursor;
    await between?.(page);
  }
  throw new Error('cursor walk did not terminate');
}

describe.each(BACKENDS)('on %s', (backend) => {
  // Each test of a block writes its own URLs and words, so the block shares one catalog.
  describe('ranking', () => {
    const fresh = catalogPerDescribe(backend);
    it('weights serviceName 4 > tags 3 > description 2 > parameter text 1', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(
        settlement({ url: 'https://x.example.com/params', ...noParams, paramSchema: { zebra: { type: 'string' } } }),
      );
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/desc', ...noParams, description: 'zebra crossing' }));
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/tags', ...noParams, tags: ['zebra'] }));
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/name', ...noParams, serviceName: 'Zebra' }));
      expect(urls(await t.catalog.search('zebra', {}, { limit: 10 }))).toEqual([
        'https://x.example.com/name',
        'https://x.example.com/tags',
        'https://x.example.com/desc',
        'https://x.example.com/params',
      ]);
    });

    it('ranks multi-term matches first; filler words cannot veto; hostile syntax is just text', async () => {
      const t = fresh();
      const listed = async () => (await t.catalog.list({}, { limit: 10, offset: 0 })).pagination.total;
      const before = await listed();
      await t.catalog.recordSettlement(
        settlement({ url: 'https://x.example.com/one', ...noParams, serviceName: 'Weather', description: 'weather weather weather' }),
      );
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/both', ...noParams, description: 'weather forecast' }));
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/none', ...noParams, description: 'stock quotes' }));
      // `both` matches two terms in a low-weight field and still beats a strong single-term match.
      expect(urls(await t.catalog.search('weather forecast', {}, { limit: 10 }))).toEqual([
        'https://x.example.com/both',
        'https://x.example.com/one',
      ]);
      // Filler words that match nothing do not remove results (OR, not AND).
      expect(urls(await t.catalog.search('please give me the weather thanks', {}, { limit: 10 }))).toEqual([
        'https://x.example.com/one',
        'https://x.example.com/both',
      ]);
      for (const hostile of [
        '"',
        'weather"',
        'NEAR(a b)',
        'weather AND NOT',
        '*',
        'col:weather',
        '^weather',
        '(((',
        "'; DROP TABLE listings; --",
        '\u0000weather',
      ]) {
        const result = await t.catalog.search(hostile, {}, { limit: 10 });
        expect(Array.isArray(result.resources)).toBe(true);
      }
      expect(urls(await t.catalog.search('col:weather', {}, { limit: 10 }))).toHaveLength(2);
      expect(await t.catalog.search('!!! ???', {}, { limit: 10 })).toEqual({
        x402Version: 2,
        resources: [],
        partialResults: false,
        pagination: { limit: 10, cursor: null },
        searchMethod: 'text',
        searchedTerms: [],
        droppedTerms: [],
        relevance: 'none',
      });
      expect(await listed()).toBe(before + 3);
    });

    it('indexes parameter names and schema descriptions but never example values', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(
        settlement({
          url: 'https://x.example.com/p',
          queryParams: { ticker: 'XYZZYEXAMPLE' },
          paramSchema: { ticker: { type: 'string', description: 'Exchange symbol', examples: ['PLUGHEXAMPLE'], default: 'FROBDEFAULT' } },
        }),
      );
      await t.catalog.recordSettlement(settlement({ url: 'https://m.example.com/mcp', mcpTool: 'summarize' }));
      expect(urls(await t.catalog.search('ticker', {}, { limit: 5 }))).toEqual(['https://x.example.com/p']);
      expect(urls(await t.catalog.search('symbol', {}, { limit: 5 }))).toEqual(['https://x.example.com/p']);
      expect(urls(await t.catalog.search('prompt', {}, { limit: 5 }))).toEqual(['https://m.example.com/mcp']);
      for (const example of ['XYZZYEXAMPLE', 'PLUGHEXAMPLE', 'FROBDEFAULT', 'secret-example-value', 'Lisbon']) {
        // No text holds them (the resource URLs hold `example`, found there when the text finds nothing).
        const found = await t.catalog.search(example, {}, { limit: 5 });
        expect(found.searchMethod === 'url' ? [] : found.resources, example).toHaveLength(0);
      }
      expect((await t.catalog.search('secret-example-value', {}, { limit: 5 })).searchMethod).toBe('url');
    });

    it('finds a listing by meaning when no listing holds the words, and walks such a search page by page', async () => {
      const t = fresh();
      const flights = 'https://x.example.com/flight-status';
      const jokes = 'https://x.example.com/jokes';
      await t.catalog.recordSettlement(
        settlement({ url: flights, ...noParams, serviceName: 'Flight Status', description: 'live departure and arrival status' }),
      );
      await t.catalog.recordSettlement(
        settlement({ url: jokes, ...noParams, serviceName: 'Random Jokes', description: 'a joke by category' }),
      );
      // No listing holds "airplane" or "landed": their word-vector neighbours ("flight") and related words ("arrive") are searched.
      const page = await t.catalog.search('has this airplane landed yet', {}, { limit: 10 });
      expect(urls(page)[0]).toBe(flights);
      expect(page).toMatchObject({ searchMethod: 'text', searchedTerms: [], droppedTerms: [], relevance: 'none' });
      expect(page.resources[0]!.match!.terms).toContainEqual({ term: 'airplane', match: 'related', fields: ['serviceName'] });
      // Such a walk's cursor keeps its words: every page ranks as the first did, so a walk a listing at a time holds
      // each match once; a page none of whose results holds an informative word is ordered by meaning within itself.
      const once = urls(await t.catalog.search('airplane prank', {}, { limit: 10 }));
      expect(once.slice(0, 2).sort()).toEqual([flights, jokes].sort());
      expect((await walk(t.catalog, 'airplane prank', {}, 1)).sort()).toEqual([...once].sort());
    });

    it('is case- and diacritic-insensitive', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/c', ...noParams, description: 'Café Crème ordering' }));
      expect(urls(await t.catalog.search('CAFE creme', {}, { limit: 5 }))).toEqual(['https://x.example.com/c']);
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/k', ...noParams, description: '날씨 예보 서비스' }));
      expect(urls(await t.catalog.search('날씨', {}, { limit: 5 }))).toEqual(['https://x.example.com/k']);
    });
  });

  describe('filters and response shape', () => {
    const fresh = catalogPerDescribe(backend);
    it('applies the five filters and reports partialResults/limit/cursor exactly', async () => {
      const t = fresh();
      await t.catalog.recordSettlement(settlement({ url: 'https://x.example.com/a', description: 'alpha' }));
      await t.catalog.recordSettlement(
        settlement({ url: 'https://x.example.com/b', description: 'alpha', payTo: PAY_TO_B, network: 'stellar:pubnet' }),
      );
      await t.catalog.recordSettlement(settlement({ url: 'https://m.example.com/mcp', mcpTool: 'alpha-tool' }));
      expect(urls(await t.catalog.search('alpha', { type: 'mcp' }, { limit: 10 }))).toEqual(['https://m.example.com/mcp']);
      expect(urls(await t.catalog.search('alpha', { payTo: PAY_TO_B }, { limit: 10 }))).toEqual(['https://x.example.com/b']);
      expect(urls(await t.catalog.search('alpha', { network: 'stellar:pubnet', scheme: 'exact' }, { limit: 10 }))).toEqual([
        'https://x.example.com/b',
      ]);
      expect(urls(await t.catalog.search('alpha', { extensions: 'nope' }, { limit: 10 }))).toEqual([]);
      const full = await t.catalog.search('alpha', { type: 'http' }, { limit: 2 });
      expect(full).toMatchObject({ x402Version: 2, partialResults: false, pagination: { limit: 2, cursor: null } });
      const partial = await t.catalog.search('alpha', { type: 'http' }, { limit: 1 });
      expect(partial.partialResults).toBe(true);
      expect(partial.pagination.limit).toBe(1);
      expect(typeof partial.pagination.cursor).toBe('string');
      const rest = await t.catalog.search('alpha', { type: 'http' }, { limit: 1, cursor: partial.pagination.cursor! });
      expect(rest).toMatchObject({ partialResults: false, pagination: { limit: 1, cursor: null } });
    });

    it('throws svc_missing_search_query for a blank query', async () => {
      const t = fresh();
      for (const q of ['', '   ', '\t\n']) {
        await expect(t.catalog.search(q, {}, { limit: 5 })).rejects.toThrow(expect.objectContaining({ code: 'svc_missing_search_query' }));
      }
    });
  });

  describe('keyset cursor', () => {
    const fresh = freshCatalogPerTest(backend);
    async function seedMany(t: ReturnType<typeof tempCatalog>, n: number) {
      for (let i = 0; i < n; i++) {
        const words = ['solar', 'wind', 'hydro'].filter((_, k) => (i + k) % 2 === 0).join(' ');
        await t.catalog.recordSettlement(
          settlement({
            url: `https://e${i}.example.com/energy`,
            ...noParams,
            description: `energy ${words} ${i}`,
            serviceName: i % 5 === 0 ? 'Energy' : undefined,
          }),
        );
      }
    }

    it('visits each match exactly once, in the same order as one big page', async () => {
      const t = fresh();
      await seedMany(t, 37);
      const once = urls(await t.catalog.search('energy solar wind', {}, { limit: 100 }));
      expect(once).toHaveLength(37);
      for (const limit of [1, 5, 36]) expect(await walk(t.catalog, 'energy solar wind', {}, limit)).toEqual(once);
    });

    it('visits each match exactly once while listings are created and refreshed between pages', async () => {
      const t = fresh();
      await seedMany(t, 30);
      const before = new Set(urls(await t.catalog.search('energy solar', {}, { limit: 100 })));
      const seen = await walk(t.catalog, 'energy solar', {}, 4, async (page) => {
        t.tick();
        // New matches, a refresh that changes text (and therefore the rank), and a refresh that adds terms.
        await t.catalog.recordSettlement(
          settlement({
            url: `https://new${page}.example.com/energy`,
            ...noParams,
            serviceName: 'Energy Solar',
            description: 'energy solar',
          }),
        );
        await t.catalog.recordSettlement(
          settlement({
            url: `https://e${29 - page}.example.com/energy`,
            ...noParams,
            serviceName: 'Solar Energy Solar',
            description: 'energy solar solar solar',
          }),
        );
        await t.catalog.recordSettlement(
          settlement({ url: `https://e${page}.example.com/energy`, ...noParams, description: 'unrelated now' }),
        );
      });
      expect(seen).toHaveLength(new Set(seen).size);
      expect(new Set(seen)).toEqual(before);
      // A fresh search sees the new state.
      expect(urls(await t.catalog.search('energy solar', {}, { limit: 100 }))).toContain('https://new0.example.com/energy');
    });

    it("a filtered walk keeps its first page's matches while a listing gains an entry that would match (the list keys are read only for the current snapshot)", async () => {
      const t = fresh();
      await seedMany(t, 12);
      // Six more listings on pubnet: outside the filter until a refresh adds a testnet entry to one of them per page.
      for (let i = 0; i < 6; i++)
        await t.catalog.recordSettlement(
          settlement({ url: `https://p${i}.example.com/energy`, ...noParams, description: 'energy solar', network: 'stellar:pubnet' }),
        );
      const filters = { asset: ASSET, network: 'stellar:testnet', type: 'http' };
      const before = new Set(urls(await t.catalog.search('energy solar', filters, { limit: 100 })));
      expect(before.size).toBe(12);
      const seen = await walk(t.catalog, 'energy solar', filters, 3, async (page) => {
        t.tick();
        await t.catalog.recordSettlement(
          settlement({ url: `https://p${page}.example.com/energy`, ...noParams, description: 'energy solar', network: 'stellar:testnet' }),
        );
      });
      expect(seen).toHaveLength(new Set(seen).size);
      expect(new Set(seen)).toEqual(before);
      // A fresh search sees the entries added since.
      expect(urls(await t.catalog.search('energy solar', filters, { limit: 100 }))).toContain('https://p0.example.com/energy');
    });

    it('rejects tampered, foreign and mismatched cursors with svc_invalid_search_cursor', async () => {
      const t = fresh();
      await seedMany(t, 6);
      const cursor = (await t.catalog.search('energy', {}, { limit: 2 })).pagination.cursor!;
      const [payload, mac] = cursor.split('.') as [string, string];
      const state = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const forged = `${Buffer.from(JSON.stringify({ ...state, r: 0 })).toString('base64url')}.${mac}`;
      const flipped = `${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
      const bad = ['', 'garbage', `${payload}.`, forged, flipped, 'x'.repeat(5000), `${cursor}x`];
      for (const c of bad) {
        await expect(t.catalog.search('energy', {}, { limit: 2, cursor: c })).rejects.toThrow(CatalogQueryError);
        await expect(t.catalog.search('energy', {}, { limit: 2, cursor: c })).rejects.toThrow(
          expect.objectContaining({ code: 'svc_invalid_search_cursor' }),
        );
      }
      await expect(t.catalog.search('energy solar', {}, { limit: 2, cursor })).rejects.toThrow(
        expect.objectContaining({ code: 'svc_invalid_search_cursor' }),
      );
      await expect(t.catalog.search('energy', { type: 'http' }, { limit: 2, cursor })).rejects.toThrow(
        expect.objectContaining({ code: 'svc_invalid_search_cursor' }),
      );
      // A cursor from another catalog (another secret) is not ours.
      const other = await fresh.another();
      await seedMany(other, 6);
      const foreign = (await other.catalog.search('energy', {}, { limit: 2 })).pagination.cursor!;
      await expect(t.catalog.search('energy', {}, { limit: 2, cursor: foreign })).rejects.toThrow(
        expect.objectContaining({ code: 'svc_invalid_search_cursor' }),
      );
      // Changing the page size mid-walk is allowed.
      expect((await t.catalog.search('energy', {}, { limit: 3, cursor })).resources).toHaveLength(3);
    });

    it('survives a restart (the secret lives in the database) and expires after an hour', async () => {
      const t = fresh();
      await seedMany(t, 6);
      const cursor = (await t.catalog.search('energy', {}, { limit: 2 })).pagination.cursor!;
      const expected = urls(await t.catalog.search('energy', {}, { limit: 2, cursor }));
      await t.catalog.close();
      let now = Date.parse('2026-01-01T00:30:00.000Z');
      // A reopened catalog starts its threads and (Postgres) its pool on the first search: on a loaded
      // machine that took more than the default 2 s read deadline (busy).
      const reopened = openCatalog({
        dbPath: t.dbPath,
        databaseUrl: t.databaseUrl,
        logger: recordingLogger(),
        clock: () => new Date(now),
        ...BUSY_MACHINE_BOUNDS,
      });
      try {
        expect(urls(await reopened.search('energy', {}, { limit: 2, cursor }))).toEqual(expected);
        now = Date.parse('2026-01-01T01:00:01.000Z');
        await expect(reopened.search('energy', {}, { limit: 2, cursor })).rejects.toThrow(
          expect.objectContaining({ code: 'svc_invalid_search_cursor' }),
        );
      } finally {
        await reopened.close();
      }
    });
  });
});
