/**
 * The search engine's bounded path (docs/CATALOG.md "The three paths"), where a page may differ from
 * the exact ranking and says so, on both stores with the search budget lowered to reach it on a
 * small catalog: keys past the budget, ranked among each key's first rows (the window), or, when the filters name few
 * listings, over those listings' rows.
 * The oracle is the same catalog searched with the default budget, whose pages the differential
 * tests hold to the reference ranking. Also the path each page names (query-paths.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { takenPaths } from '../../src/catalog/query-paths.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';
import { PAY_TO_A, PAY_TO_B, seededRandom, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';
import { textIndex as sqliteTextIndex } from '../../src/catalog/sqlite/search.ts';
import { textIndex as postgresTextIndex } from '../../src/catalog/postgres/search.ts';
import { openPool } from '../../src/db/postgres.ts';
import { runAsync, searchPage, type TextIndex } from '../../src/catalog/search-engine.ts';

type Search = (query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }) => Promise<SearchPage>;
/** The search paths the in-process stores named since the last call (their kept counts' outcome left out). */
const searchPathsTaken = () => takenPaths().filter(([kind]) => kind === 'search');
const LISTINGS = 160;
/** Rows a term may have before it is past the lowered budget. */
const BUDGET = 30;
const WIDER_BUDGET = 100;

describe.each(BACKENDS)('the bounded paths (%s)', (backend) => {
  let t: ReturnType<typeof tempCatalog>;
  let exact: { search: Search; close: () => Promise<void> };
  let bounded: { search: Search; close: () => Promise<void> };
  /** A budget that `weather` is still past, and that reads a few listings' rows by primary key (LOOKUP_ROWS each). */
  let wider: { search: Search; close: () => Promise<void> };
  /** The listings PAY_TO_B owns (few), by resource. */
  const ownedByB = new Set<string>();

  beforeAll(async () => {
    t = tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    const rand = seededRandom(0x51ab);
    for (let i = 0; i < LISTINGS; i++) {
      // "weather" and "data" in most listings (both past the budget), with varying weight; "rare" in a few.
      const words = ['weather', 'data', 'forecast', 'rare'].filter((_, k) => rand() < [0.8, 0.7, 0.3, 0.05][k]!);
      const repeat = 1 + Math.floor(rand() * 3);
      const payTo = i % 16 === 0 ? PAY_TO_B : PAY_TO_A;
      const url = `https://s${i}.example.com/api`;
      if (payTo === PAY_TO_B) ownedByB.add(url);
      t.tick();
      await t.catalog.recordSettlement(
        settlement({
          url,
          payTo,
          description: `${words.join(' ')} `.repeat(repeat) || 'other',
          serviceName: rand() < 0.3 ? words[0] : undefined,
        }),
      );
    }
    const open = async (budget?: number) => {
      if (backend === 'Postgres') {
        const store = await PostgresCatalogStore.open(t.databaseUrl!, budget === undefined ? {} : { searchRowBudget: budget });
        return { search: ((q, f, p) => store.search(q, f, p, t.clock(), DISCOVERY_X402_VERSION)) as Search, close: () => store.end() };
      }
      const store = new CatalogStore(t.dbPath, budget === undefined ? {} : { searchRowBudget: budget });
      return {
        search: (async (q, f, p) => store.search(q, f, p, t.clock(), DISCOVERY_X402_VERSION)) as Search,
        close: async () => store.close(),
      };
    };
    exact = await open();
    bounded = await open(BUDGET);
    wider = await open(WIDER_BUDGET);
  }, 120_000);
  afterAll(async () => {
    await exact?.close();
    await bounded?.close();
    await wider?.close();
    t?.close();
  });

  /** Every page of a walk of `limit`, to its end. */
  async function walk(search: Search, query: string, filters: DiscoveryFilters, limit: number): Promise<SearchPage[]> {
    const pages: SearchPage[] = [];
    let cursor: string | undefined;
    do {
      const page = await search(query, filters, { limit, ...(cursor ? { cursor } : {}) });
      pages.push(page);
      cursor = page.pagination.cursor ?? undefined;
    } while (cursor && pages.length < 200);
    return pages;
  }
  const resources = (pages: SearchPage[]) => pages.flatMap((p) => p.resources.map((r) => r.resource));

  it('words past the budget rank a window: named, said partial where it may miss matches, each listing once, every one a match', async () => {
    takenPaths();
    const first = await bounded.search('weather data', {}, { limit: 5 });
    // In-process stores name their paths here (the catalog threads hand theirs to /metrics: test/catalog/query-paths.test.ts).
    expect(searchPathsTaken()).toEqual([['search', 'window']]);
    expect(first.resources).toHaveLength(5);
    const pages = await walk(bounded.search, 'weather data', {}, 7);
    const walked = resources(pages);
    const all = resources(await walk(exact.search, 'weather data', {}, 50));
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked.every((r) => all.includes(r))).toBe(true);
    // The window holds fewer than every match, and the walk says so before it ends.
    expect(walked.length).toBeLessThan(all.length);
    expect(pages.some((p) => p.searchMethod === 'text_partial' && p.partialResults)).toBe(true);
  });

  it('the window ranks its listings exactly: a listing in several keys’ windows counts once, in the exact order', async () => {
    for (const query of ['weather data', 'forecasting weather', 'data']) {
      const walked = resources(await walk(bounded.search, query, {}, 7));
      const order = resources(await walk(exact.search, query, {}, 50));
      // The window's listings come in the order the exact ranking gives them.
      expect(walked.length).toBeGreaterThan(0);
      expect(walked).toEqual(order.filter((r) => walked.includes(r)));
    }
  });

  it('a window ranks each of its listings as every row of the keys would, once however many windows hold it', async () => {
    const pool = backend === 'Postgres' ? openPool(t.databaseUrl!, { max: 1 }) : undefined;
    const sqlite = backend === 'SQLite' ? new CatalogStore(t.dbPath) : undefined;
    try {
      const index: TextIndex = pool ? postgresTextIndex(pool) : sqliteTextIndex(sqlite!);
      const asOf = await index.currentSeq();
      // A word's exact and stem keys hold the same listings: each listing of the windows is in two at least.
      const read = {
        asOf,
        filters: {},
        after: undefined,
        want: 1000,
        terms: ['weather', '~weather', 'data', '~data'],
        weights: [7, 5, 3, 2],
      };
      const all = new Map((await index.rankTerms(read)).map((r) => [r.listing_id, r]));
      const held = (row: { keys?: string[] }) => [...(row.keys ?? [])].sort();
      const windowed = await index.rankTerms({ ...read, window: 6 });
      expect(windowed.length).toBeGreaterThan(6);
      for (const row of windowed) expect([row.listing_id, row.rank]).toEqual([row.listing_id, all.get(row.listing_id)!.rank]);
      // Each row names the keys its listing holds, the same however it was ranked, and however many keys were searched
      // (Postgres numbers them in bit masks of MASK_BITS each: postgres/search.ts keyMasksSql); keys no listing holds are named by none.
      for (const row of windowed) expect(held(row)).toEqual(held(all.get(row.listing_id)!));
      // The candidates' rows alone (the filters' few listings): their exact ranks and keys, whatever windows would hold.
      const some = [...all.keys()].filter((_, i) => i % 9 === 4);
      const candidates = [...some, 1_000_000];
      const byCandidates = await index.rankTerms({ ...read, candidates, byCandidates: true });
      expect(byCandidates.map((r) => [r.listing_id, r.rank, held(r)]).sort()).toEqual(
        some.map((id) => [id, all.get(id)!.rank, held(all.get(id)!)]).sort(),
      );
      const absent = Array.from({ length: 66 }, (_, i) => `absent${i}`);
      const many = { ...read, terms: [...absent, ...read.terms], weights: [...absent.map(() => 1), ...read.weights] };
      for (const rows of [await index.rankTerms(many), await index.rankTerms({ ...many, window: 6 })]) {
        expect(rows.length).toBeGreaterThan(6);
        for (const row of rows) expect(held(row)).toEqual(held(all.get(row.listing_id)!));
      }
    } finally {
      await pool?.end();
      sqlite?.close();
    }
  });

  it('no key is counted twice to the same cap: the path’s choice reads only what the budget’s choice has not', async () => {
    const pool = backend === 'Postgres' ? openPool(t.databaseUrl!, { max: 1 }) : undefined;
    const sqlite = backend === 'SQLite' ? new CatalogStore(t.dbPath) : undefined;
    try {
      const index: TextIndex = pool ? postgresTextIndex(pool) : sqliteTextIndex(sqlite!);
      const counts: string[] = [];
      const counting: TextIndex = {
        ...index,
        countTerms: (terms, cap) => (counts.push(...terms.map((term) => `${term}@${cap}`)), index.countTerms(terms, cap)),
      };
      const request = { query: 'weather data', filters: {}, page: { limit: 5 }, now: t.clock(), x402Version: DISCOVERY_X402_VERSION };
      const page = await runAsync(counting, searchPage({ ...request, secret: Buffer.alloc(32, 7), scale: { searchRowBudget: BUDGET } }));
      expect(page.resources).toHaveLength(5);
      // Both stems are past the budget: counted to BUDGET + 1 by the budget's choice, which tells the path's choice too.
      expect(counts).toContain(`~weather@${BUDGET + 1}`);
      expect(counts.length).toBe(new Set(counts).size);
    } finally {
      await pool?.end();
      sqlite?.close();
    }
  });

  it('under a filter the window keeps to it: only the filtered listings, each once', async () => {
    const filters = { payTo: PAY_TO_B };
    const walked = resources(await walk(bounded.search, 'weather', filters, 3));
    const expected = resources(await walk(exact.search, 'weather', filters, 50));
    expect(expected.length).toBeGreaterThan(3);
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked.every((r) => ownedByB.has(r) && expected.includes(r))).toBe(true);
  });

  it('words past the budget under a filter that names few listings rank those listings’ rows: exact, nothing partial', async () => {
    // `s12` names s12 and s120–s129 (the URL index's candidates): 11 listings × 2 keys × LOOKUP_ROWS, within the budget.
    // "forecasting" is one key (the stem alone holds rows), which a walk would otherwise read.
    for (const [query, filters] of [
      ['weather', { url: 's12' }],
      ['weather', { url: 's12', payTo: PAY_TO_A }],
      ['forecasting', { url: 's12' }],
      ['forecasting', { url: 's13' }],
    ] as const) {
      takenPaths();
      const got = await walk(wider.search, query, filters, 2);
      expect(searchPathsTaken()).toEqual([['search', 'aggregate']]);
      const expected = resources(await walk(exact.search, query, filters, 50));
      expect(expected.length).toBeGreaterThan(2);
      expect(resources(got)).toEqual(expected);
      expect(got.every((p) => p.searchMethod !== 'text_partial')).toBe(true);
    }
    // Too many candidates for the budget (`s1`: 71 listings; `s12` at the lower budget): the window, as without them.
    for (const [store, url] of [
      [wider, 's1'],
      [bounded, 's12'],
    ] as const) {
      takenPaths();
      await store.search('weather', { url }, { limit: 2 });
      expect(searchPathsTaken()).toEqual([['search', 'window']]);
    }
  });

  it('words within the budget are ranked exactly: the same walk as the default budget, nothing partial', async () => {
    const got = await walk(bounded.search, 'rare', {}, 2);
    expect(resources(got)).toEqual(resources(await walk(exact.search, 'rare', {}, 50)));
    expect(got.every((p) => p.searchMethod === 'text')).toBe(true);
  });
});
