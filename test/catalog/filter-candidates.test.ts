/**
 * A search under the `url` filter or a price bound (src/catalog/search-engine.ts RankedRead candidates): when at most
 * URL_INDEX_CAP listings hold the substring, or the price bounds' index ranges hold at most PRICED_LISTINGS_CAP rows,
 * the store's index names those listings once and each ranked row is checked by its id first; else each row is checked
 * on its listing's URL and price rows alone. Both ways must give the same pages, save where few enough listings pass to
 * rank their own rows, exactly, where the other way takes the window and says it may miss some. Here, on both stores, the same searches
 * walked page by page with the caps as they are (every filter below lets few enough listings through) and at 0 (every
 * filter some listing meets is checked row by row), with the search budget lowered so that the several-term searches
 * also take the window: text and URL paths, one and several terms, other filters, any letter case, long substrings
 * (past Postgres' suffix length), `maxAmount` and `maxUsdPrice` with and without a network and a `url`, and filters no
 * listing meets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { asciiLower } from '../../src/catalog/url-filter.ts';
import { DEFAULT_USD_ASSETS } from '../../src/filters.ts';
import { SUFFIX_LENGTH } from '../../src/catalog/postgres/url-suffixes.ts';
import { freshCatalogDatabase } from '../helpers/postgres.ts';
import { PAY_TO_A, seededRandom, tempDir } from './fixtures.ts';

const LISTINGS = 150;
const BUDGET = 40;
const rand = seededRandom(0x0f11_7e25);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const HOSTS = ['api.weather.example.com', 'Maps.Example.org', 'tools.data.example', 'pay.example.net'];
const SEGMENTS = ['v1', 'Forecast', 'geo', 'city', 'price', 'tiles', 'radar'];
const WORDS = ['weather', 'forecast', 'city', 'radar', 'price', 'tiles', 'map', 'geocoding', 'data', 'quote'];
/** A USD-pegged asset (7 decimals: 100000 is $0.01), which `maxUsdPrice` applies to, and one it does not. */
const USDC = DEFAULT_USD_ASSETS[0]!.asset;
const ASSETS = [USDC, USDC, 'CASSET'];

function draft(i: number): ListingDraft {
  const path = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(SEGMENTS)).join('/');
  const description = Array.from({ length: 2 + Math.floor(rand() * 5) }, () => pick(WORDS)).join(' ');
  return {
    resource: `https://${rand() < 0.4 ? `n${i}.` : ''}${pick(HOSTS)}/${path}/${i}`,
    type: 'http',
    toolName: '',
    owner: PAY_TO_A,
    x402Version: 2,
    terms: {
      scheme: 'exact',
      network: pick(['stellar:testnet', 'stellar:pubnet']),
      asset: pick(ASSETS),
      amount: String(1 + Math.floor(rand() * 1_000_000)),
      payTo: PAY_TO_A,
      maxTimeoutSeconds: 60,
    },
    metadata: { description },
    bazaar: { info: { input: { type: 'http' } } },
    parameterText: '',
    dropped: [],
  };
}

const dir = tempDir();
const drafts = Array.from({ length: LISTINGS }, (_, i) => draft(i));
/** A long substring of one listing's URL: past SUFFIX_LENGTH, so Postgres checks its first characters' listings on their URLs. */
const LONG = drafts
  .find((d) => d.resource.length > SUFFIX_LENGTH + 12)!
  .resource.slice(4, SUFFIX_LENGTH + 10)
  .toUpperCase();
const URLS = ['example.COM', 'maps.example', 'geo/', '/Forecast/', 'n1', LONG, 'https://n', 'no-such-host'];
const QUERIES = ['weather', 'weather forecast', 'radar price tiles city', 'geocoding quote map data weather', 'n12 maps'];
const FILTERS: DiscoveryFilters[] = [{}, { network: 'stellar:pubnet' }];
const PRICE_FILTERS: DiscoveryFilters[] = [
  { asset: USDC, maxAmount: '60000' },
  { asset: 'CASSET', network: 'stellar:pubnet', maxAmount: '400000' },
  { maxUsdPrice: '0.004' },
  { maxUsdPrice: '0.05', network: 'stellar:testnet' },
  { maxUsdPrice: '0.03', asset: USDC, maxAmount: '200000' },
  { maxUsdPrice: '0.0000001' },
  { maxUsdPrice: '0.06', url: 'maps.example' },
  { asset: USDC, maxAmount: '500000', url: 'example.COM' },
];

/** Caps under which every filter some listing meets is checked on each ranked row. */
const NO_CANDIDATES = { urlIndexCap: 0, pricedListingsCap: 0 };

type Store = { search: CatalogStore['search'] | PostgresCatalogStore['search'] };
const stores: Array<[string, Store]> = [];
/** SQL the default-cap SQLite store ran (its ranked reads check rows by id when the filters let few listings through). */
const sqliteSent: string[] = [];
/** SQL the SQLite store at caps 0 ran (by id only where a filter names no listing at all). */
const everyRowSent: string[] = [];
/** How many ranked reads in `sent` checked their rows by id. */
const byId = (sent: string[]) => sent.filter((sql) => sql.includes('t.listing_id IN (SELECT value FROM json_each(?))')).length;
/** A store whose statements are recorded in `sent`. */
function recorded(store: CatalogStore, sent: string[]): CatalogStore {
  const statement = store.statement.bind(store);
  store.statement = (sql) => (sent.push(sql), statement(sql));
  return store;
}

beforeAll(async () => {
  const databaseUrl = await freshCatalogDatabase();
  const sqlite = new CatalogStore(`${dir.dir}/catalog.sqlite`, { searchRowBudget: BUDGET });
  const postgres = await PostgresCatalogStore.open(databaseUrl, { searchRowBudget: BUDGET });
  let at = Date.parse('2026-01-01T00:00:00Z');
  for (const d of drafts) {
    at += 1000;
    const written = postgres.writeListing(d, new Date(at));
    expect(sqlite.writeListing(d, new Date(at)).status).toBe((await written).status);
  }
  stores.push(
    ['SQLite', recorded(sqlite, sqliteSent)],
    [
      'SQLite, every row checked',
      recorded(new CatalogStore(`${dir.dir}/catalog.sqlite`, { searchRowBudget: BUDGET, ...NO_CANDIDATES }), everyRowSent),
    ],
    ['Postgres', postgres],
    ['Postgres, every row checked', await PostgresCatalogStore.open(databaseUrl, { searchRowBudget: BUDGET, ...NO_CANDIDATES })],
  );
}, 120_000);
afterAll(async () => {
  for (const [, store] of stores) await (store instanceof PostgresCatalogStore ? store.end() : (store as CatalogStore).close());
  dir.cleanup();
});

const now = new Date('2026-02-01T00:00:00Z');

/** Every page of a search, 4 results a page, following the cursors (at most 12 pages). */
async function walk(store: Store, query: string, filters: DiscoveryFilters): Promise<Array<Omit<SearchPage, 'pagination'>>> {
  const pages: Array<Omit<SearchPage, 'pagination'>> = [];
  let cursor: string | undefined;
  for (let n = 0; n < 12; n++) {
    const page = await store.search(query, filters, { limit: 4, ...(cursor ? { cursor } : {}) }, now, DISCOVERY_X402_VERSION);
    const { pagination, ...rest } = page;
    pages.push(rest);
    if (!pagination.cursor) break;
    cursor = pagination.cursor;
  }
  return pages;
}

/** A walk's listings in order. */
const listed = (pages: Array<Omit<SearchPage, 'pagination'>>) => pages.flatMap((page) => page.resources.map((r) => r.resource));
const partial = (pages: Array<Omit<SearchPage, 'pagination'>>) => pages.some((page) => page.searchMethod === 'text_partial');
/** Searches whose candidates were ranked by their own rows where caps 0 took the window and said so (byCandidates). */
let rankedByCandidates = 0;

/**
 * Walks a search on every store: the two stores give the same pages at the same caps, and the caps as they are give the
 * pages of caps 0, save where the filters named few enough listings to rank their own rows (search-engine.ts
 * byCandidates, exact) and caps 0 took the window and said it was partial: then the window's listings are among the
 * exact walk's, in the same order. Returns the first store's results.
 */
async function sameOnEveryStore(query: string, filters: DiscoveryFilters) {
  const walks = [];
  for (const [, store] of stores) walks.push(await walk(store, query, filters));
  const [sqlite, sqliteEveryRow, postgres, postgresEveryRow] = walks as [
    (typeof walks)[0],
    (typeof walks)[0],
    (typeof walks)[0],
    (typeof walks)[0],
  ];
  expect(postgres, 'Postgres').toEqual(sqlite);
  expect(postgresEveryRow, 'Postgres, every row checked').toEqual(sqliteEveryRow);
  if (partial(sqliteEveryRow) && !partial(sqlite)) {
    rankedByCandidates++;
    const [exact, windowed] = [listed(sqlite), listed(sqliteEveryRow)];
    expect(exact.filter((r) => windowed.includes(r))).toEqual(windowed.filter((r) => exact.includes(r)));
    // A window's listing beyond the exact walk only when that walk stopped at its 12 pages.
    if (sqlite.length < 12) expect(windowed.every((r) => exact.includes(r))).toBe(true);
  } else expect(sqliteEveryRow, 'SQLite, every row checked').toEqual(sqlite);
  return sqlite.flatMap((page) => page.resources);
}

describe('a search under the url filter', () => {
  const cases = URLS.flatMap((url) => QUERIES.flatMap((query) => FILTERS.map((filters) => ({ url, query, filters }))));
  let found = 0;

  it.each(cases.map((c) => [`${c.query} | url=${c.url} | ${JSON.stringify(c.filters)}`, c] as const))(
    'gives the same pages by id and by URL: %s',
    async (_name, { url, query, filters }) => {
      const resources = (await sameOnEveryStore(query, { ...filters, url })).map((r) => r.resource);
      for (const resource of resources) expect(asciiLower(resource)).toContain(asciiLower(url));
      found += resources.length;
    },
  );

  it('found listings, by the text and by the URLs, checking rows by id on SQLite (less often at caps 0)', () => {
    expect(found).toBeGreaterThan(100);
    expect(rankedByCandidates).toBeGreaterThan(0);
    expect(byId(sqliteSent)).toBeGreaterThan(byId(everyRowSent));
    checkedByIdBefore = [byId(sqliteSent), byId(everyRowSent)];
    rankedByCandidatesBefore = rankedByCandidates;
  });
});

/** The reads checked by id before the price cases ([caps as they are, caps 0]). */
let checkedByIdBefore = [0, 0];
let rankedByCandidatesBefore = 0;

describe('a search under a price bound', () => {
  const cases = PRICE_FILTERS.flatMap((filters) => QUERIES.map((query) => ({ query, filters })));
  let found = 0;

  it.each(cases.map((c) => [`${c.query} | ${JSON.stringify(c.filters)}`, c] as const))(
    'gives the same pages by id and by price rows: %s',
    async (_name, { query, filters }) => {
      const resources = await sameOnEveryStore(query, filters);
      for (const { accepts } of resources) {
        const entry = accepts[0]!;
        const max = filters.maxUsdPrice === undefined ? Infinity : Number(filters.maxUsdPrice) * 1e7;
        expect(entry.asset === USDC ? Number(entry.amount) <= max : filters.maxUsdPrice === undefined).toBe(true);
        if (filters.maxAmount !== undefined) expect(Number(entry.amount)).toBeLessThanOrEqual(Number(filters.maxAmount));
      }
      found += resources.length;
    },
  );

  it('found listings, reading the price index to check rows by id on SQLite', () => {
    expect(found).toBeGreaterThan(50);
    expect(rankedByCandidates - rankedByCandidatesBefore).toBeGreaterThan(0);
    expect(sqliteSent.some((sql) => sql.includes('FROM listing_prices WHERE asset = ? AND price <= ?'))).toBe(true);
    expect(byId(sqliteSent) - checkedByIdBefore[0]!).toBeGreaterThan(byId(everyRowSent) - checkedByIdBefore[1]!);
  });
});
