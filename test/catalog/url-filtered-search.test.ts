/**
 * A search under the `url` filter (src/catalog/search-engine.ts RankedRead urlListings): when at most URL_INDEX_CAP
 * listings hold the substring, the store's URL index names them once and each ranked row is checked by its id; else
 * each row is checked on its listing's URL. Both ways must give the same pages. Here, on both stores, the same
 * searches walked page by page with the cap as it is (every substring below is held by few enough listings) and at
 * 0 (every substring some listing holds is checked on the URLs), with the search budget lowered so that the several-term
 * searches also take the window: text and URL paths, one and several terms, other filters, any letter case, long
 * substrings (past Postgres' suffix length), and a substring no listing holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { asciiLower } from '../../src/catalog/url-filter.ts';
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
      asset: 'CASSET',
      amount: '100',
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

type Store = { search: CatalogStore['search'] | PostgresCatalogStore['search'] };
const stores: Array<[string, Store]> = [];
/** SQL the default-cap SQLite store ran (its ranked reads check rows by id when the substring is rare). */
const sqliteSent: string[] = [];

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
  const statement = sqlite.statement.bind(sqlite);
  sqlite.statement = (sql) => (sqliteSent.push(sql), statement(sql));
  stores.push(
    ['SQLite', sqlite],
    ['SQLite, every URL checked', new CatalogStore(`${dir.dir}/catalog.sqlite`, { searchRowBudget: BUDGET, urlIndexCap: 0 })],
    ['Postgres', postgres],
    ['Postgres, every URL checked', await PostgresCatalogStore.open(databaseUrl, { searchRowBudget: BUDGET, urlIndexCap: 0 })],
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

describe('a search under the url filter', () => {
  const cases = URLS.flatMap((url) => QUERIES.flatMap((query) => FILTERS.map((filters) => ({ url, query, filters }))));
  let found = 0;

  it.each(cases.map((c) => [`${c.query} | url=${c.url} | ${JSON.stringify(c.filters)}`, c] as const))(
    'gives the same pages by id and by URL: %s',
    async (_name, { url, query, filters }) => {
      const walks = [];
      for (const [, store] of stores) walks.push(await walk(store, query, { ...filters, url }));
      for (const [i, [name]] of stores.entries()) expect(walks[i], name).toEqual(walks[0]);
      const resources = walks[0]!.flatMap((page) => page.resources.map((r) => r.resource));
      for (const resource of resources) expect(asciiLower(resource)).toContain(asciiLower(url));
      found += resources.length;
    },
  );

  it('found listings, by the text and by the URLs, checking rows by id on SQLite', () => {
    expect(found).toBeGreaterThan(100);
    expect(sqliteSent.some((sql) => sql.includes('t.listing_id IN (SELECT value FROM json_each(?))'))).toBe(true);
  });
});
