/**
 * Differential test of the 8-term all-terms tier read from the revisions' common-term masks
 * (src/catalog/sqlite/common-terms.ts, SQLite catalog migration 16; docs/CATALOG.md "Search")
 * against the reference ranking (reference-ranking.ts). Twenty common words, each held by 40–95 %
 * of the listings in a random field, once to three times, so many listings hold 8 of them with
 * common words beyond the query's (their masks' share sums overstate the query's) and ties are
 * common. The masks are chosen after a first corpus is written (as migration 16 does on a filled
 * file); refreshes and new listings written after it carry their masks from the settle write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAY_TO_B, revisionsWithWrongCommonMask, seededRandom, settlement, tempCatalog } from './fixtures.ts';
import { listedCorpus, referenceSearch, walkIds, walkPages, windowWalkError, type ReferenceListing } from './reference-ranking.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { searchCatalog, type SearchSource } from '../../src/catalog/sqlite/search.ts';
import { COMMON_TERMS } from '../../src/catalog/common-terms.ts';
import { chooseCommonTerms } from '../../src/catalog/sqlite/common-terms.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';

const rand = seededRandom(0x2545f491);
const COMMON = ['ka', 'ke', 'ki', 'ko', 'ku', 'la', 'le', 'li', 'lo', 'lu', 'ma', 'me', 'mi', 'mo', 'mu', 'na', 'ne', 'ni', 'no', 'nu'];
/** The share of listings holding each common word: decreasing, so the 16 with most rows are the first 16. */
const HELD = COMMON.map((_, k) => 0.95 - k * 0.03);
/** Each listing's parameter text as last written (the oracle's `params`). */
const paramsOf = new Map<number, string>();

const t = tempCatalog();
let own: CatalogStore;
/** Index statements of the common-term scan, by query. */
const scans = new Map<string, number>();
let current = '';
let source: SearchSource;
const network = new Map<number, string>();

/** A listing's text: each common word by its share, in the name (short), a tag, a query parameter's name (once: the least share) or the description, 1–3 times. */
function text(id: number) {
  const name: string[] = [];
  const tags: string[] = [];
  const params: string[] = [];
  const description = [`filler${id % 7}`];
  COMMON.forEach((w, k) => {
    if (rand() >= HELD[k]!) return;
    const times = 1 + Math.floor(rand() * 3);
    const field = rand();
    if (field < 0.1 && name.length < 4) name.push(w);
    else if (field < 0.25 && tags.length < 4) tags.push(w);
    else if (field < 0.4) params.push(w);
    else for (let i = 0; i < times; i++) description.push(w);
  });
  description.sort(() => rand() - 0.5);
  paramsOf.set(id, params.join(' '));
  return {
    serviceName: name.length ? name.join(' ') : undefined,
    tags: tags.length ? tags : undefined,
    description: description.join(' '),
    queryParams: Object.fromEntries(params.map((w) => [w, 'x'])),
    paramSchema: {},
  };
}

async function write(id: number) {
  if (!network.has(id)) network.set(id, rand() < 0.3 ? 'stellar:pubnet' : 'stellar:testnet');
  t.tick();
  const outcome = await t.catalog.recordSettlement({
    ...settlement({ url: `https://d${id}.example.com/r`, ...text(id), network: network.get(id)! }),
    payment: { payer: `payer-${Math.floor(rand() * 4)}` },
  });
  expect(outcome).toEqual({ status: 'success' });
}

/** The corpus as the catalog keeps it now (the oracle's input). */
const corpus = () =>
  listedCorpus(
    (offset) => t.catalog.list({}, { limit: 100, offset }),
    idOf,
    (id) => paramsOf.get(id)!,
  );

function idOf(resource: unknown): number {
  return Number(/^https:\/\/d(\d+)\.example\.com/.exec(String((resource as { resource: string }).resource))![1]);
}

const search = (query: string, filter: DiscoveryFilters, page: { limit: number; cursor?: string }): SearchPage => {
  current = query;
  return searchCatalog(source, query, filter, page, t.clock(), DISCOVERY_X402_VERSION);
};

/** The common words by listings holding them, most first (the order migration 16 gives them bits in), after the first corpus. */
let byHeld: string[] = [];
/** 8-term queries: 8 of the 16 common words (several shifts and orders). */
let QUERIES: string[] = [];
/** 8-term queries with a word that is not common: the driver's rows decide them. */
let NOT_COMMON: string[] = [];

beforeAll(async () => {
  for (let id = 1; id <= 500; id++) await write(id);
  const held = new Map<string, number>();
  for (const l of await corpus())
    for (const token of new Set(`${l.serviceName} ${l.tags} ${l.description} ${l.params}`.split(' ')))
      held.set(token, (held.get(token) ?? 0) + 1);
  byHeld = [...held].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([term]) => term);
  const common = byHeld.slice(0, COMMON_TERMS);
  QUERIES = [
    ...[0, 1, 3, 5, 8].map((shift) => common.slice(shift, shift + 8).join(' ')),
    common.slice(0, 8).reverse().join(' '),
    [0, 2, 4, 6, 8, 10, 12, 14].map((k) => common[k]).join(' '),
    [1, 3, 5, 7, 9, 11, 13, 15].map((k) => common[k]).join(' '),
  ];
  NOT_COMMON = [byHeld.slice(9, 17).join(' '), `${common.slice(0, 7).join(' ')} filler3`, `${common.slice(0, 7).join(' ')} absentword`];
  own = new CatalogStore(t.dbPath);
  own.db.exec('BEGIN IMMEDIATE');
  chooseCommonTerms(own.db);
  own.db.exec('COMMIT');
  // The store itself under a source that sets the driver cap to 0, so every term drives no tier: the
  // all-terms tier decides the first pages, as for common words at 100k and 1M. Its methods run
  // as the store's own (on `this`), as when the store searches.
  source = Object.assign(Object.create(own) as CatalogStore, {
    tierDriverRows: 0,
    // The text paths under filters, not the set driver (sqlite/filter-driver.ts).
    filterDriverListings: 0,
    statement(this: CatalogStore, sql: string) {
      if (sql.includes('INDEXED BY search_revisions_by_common')) scans.set(current, (scans.get(current) ?? 0) + 1);
      return CatalogStore.prototype.statement.call(this, sql);
    },
  });
}, 240_000);
afterAll(() => {
  own?.close();
  t.close();
});

describe('8 common words from the common-term masks against the reference ranking', () => {
  it('the 16 terms with most rows get the bits', () => {
    const chosen = own.db.prepare('SELECT term FROM search_common_terms ORDER BY bit').all() as Array<{ term: string }>;
    expect(chosen.map(({ term }) => term)).toEqual(byHeld.slice(0, COMMON_TERMS));
    expect(new Set(chosen.map(({ term }) => term))).toEqual(new Set(COMMON.slice(0, COMMON_TERMS)));
  });

  it('first pages of 1, 5 and 21 and cursor walks in pages of 1, 4 and 50, with filters; walks pinned across refreshes; then the settle writes keep the masks', async () => {
    const check = async (listings: ReferenceListing[]) => {
      for (const query of [...QUERIES, ...NOT_COMMON])
        for (const filter of [{}, { network: 'stellar:pubnet' }, { payTo: PAY_TO_B }] as DiscoveryFilters[]) {
          const pool = filter.network ? listings.filter((l) => network.get(l.id) === filter.network) : filter.payTo ? [] : listings;
          const expected = referenceSearch(pool, query);
          for (const limit of [1, 5, 21])
            expect(search(query, filter, { limit }).resources.map(idOf), `${query} ${JSON.stringify(filter)} limit ${limit}`).toEqual(
              expected.slice(0, limit),
            );
          for (const limit of [1, 4, 50]) {
            const seen = await walkIds(idOf, (page) => search(query, filter, page), limit, limit === 50 ? 30 : 10);
            expect(seen, `${query} ${JSON.stringify(filter)} pages of ${limit}`).toEqual(
              limit === 50 ? expected : expected.slice(0, seen.length),
            );
          }
        }
    };
    const before = await corpus();
    // Enough listings hold 8 of the common words for the pages to be decided among many.
    expect(referenceSearch(before, QUERIES[0]!).length).toBeGreaterThan(60);
    await check(before);
    // Walks begun before refreshes and new listings end on the pages of their first snapshot.
    const walks = QUERIES.slice(0, 3).map((query) => {
      const first = search(query, {}, { limit: 4 });
      return { query, seen: first.resources.map(idOf), cursor: first.pagination.cursor! };
    });
    for (let i = 0; i < 120; i++) await write(i < 100 ? 1 + Math.floor(rand() * 500) : 501 + i);
    for (const walk of walks) {
      for (let cursor: string | undefined = walk.cursor; cursor;) {
        const result = search(walk.query, {}, { limit: 4, cursor });
        walk.seen.push(...result.resources.map(idOf));
        cursor = result.pagination.cursor ?? undefined;
      }
      expect(walk.seen, walk.query).toEqual(referenceSearch(before, walk.query));
    }
    // Every revision's mask and sum are those of its term rows (the settle write keeps them).
    expect(revisionsWithWrongCommonMask(own.db)).toEqual([]);
    await check(await corpus());
    // The 8 common words were decided from the masks (every first page: 2 corpora × 3 filters × 3 limits), the others were not.
    for (const query of QUERIES) expect(scans.get(query) ?? 0, query).toBeGreaterThanOrEqual(18);
    for (const query of NOT_COMMON) expect(scans.get(query), query).toBeUndefined();
  }, 240_000);

  /**
   * A filtered search that neither its text nor its filters narrow (docs/CATALOG.md "Search with filters"): with the
   * budget lowered to 60 rows and no set driving, two common words under a filter rank the window of each word's
   * first 30 rows (sqlite/filter-driver.ts windowRows). A page that cannot be sure of the window says `text_partial`;
   * every other page is the reference's, and a walk's ids are the reference's in order.
   */
  it('two common words under a filter past a budget of 60 rows: the window pages, exact or flagged partial', async () => {
    const windowed = Object.assign(Object.create(own) as CatalogStore, { searchRowBudget: 60, filterDriverListings: 0 });
    const listings = await corpus();
    const common = byHeld.slice(0, COMMON_TERMS);
    const filter = { network: 'stellar:pubnet' };
    const pool = listings.filter((l) => network.get(l.id) === filter.network);
    let partial = 0;
    for (const [a, b] of [
      [0, 1],
      [2, 9],
      [6, 15],
      [12, 14],
    ] as const) {
      const query = `${common[a]} ${common[b]}`;
      const page = (p: { limit: number; cursor?: string }) => searchCatalog(windowed, query, filter, p, t.clock(), DISCOVERY_X402_VERSION);
      expect(page({ limit: 1 }).searchedTerms).toHaveLength(2);
      const expected = referenceSearch(pool, query);
      for (const limit of [5, 20]) {
        const pages = await walkPages(idOf, page, limit, 40);
        expect(windowWalkError(pages, expected), `${query} pages of ${limit}`).toBeUndefined();
        if (pages.some((p) => p.partial)) partial++;
      }
    }
    expect(partial).toBeGreaterThan(0);
  }, 60_000);
});
