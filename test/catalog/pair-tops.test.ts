/**
 * Two common words from their pair's kept first pages (src/catalog/sqlite/pair-tops.ts, SQLite
 * catalog migration 17; docs/CATALOG.md "Search") against the reference ranking
 * (reference-ranking.ts). A real SQLite file written by the store, twenty common words held by
 * 40–95 % of the listings, most of them once in the description (long plateaus of equal shares,
 * as in the bench corpus), payments from a few payers (quality levels, and a new revision when a
 * level changes). Each pair keeps 16 current rows (PAIR_TOP_ROWS lowered), so first pages of 1 and
 * 5 come from the pairs, pages past their rows from the walk, and the settle writes trim the pairs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAY_TO_A, pairTopsOffKey, revisionsWithWrongCommonMask, seededRandom, storeDraft, tempDir } from './fixtures.ts';
import { listedCorpus, referenceSearch, walkIds, type ReferenceListing } from './reference-ranking.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { searchCatalog, type SearchSource } from '../../src/catalog/sqlite/search.ts';
import { chooseCommonTerms } from '../../src/catalog/sqlite/common-terms.ts';
import { COMMON_TERMS } from '../../src/catalog/common-terms.ts';
import { fillPairTops } from '../../src/catalog/sqlite/pair-tops.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';

const KEPT = 16;
const rand = seededRandom(0x9a1257);
const COMMON = ['ka', 'ke', 'ki', 'ko', 'ku', 'la', 'le', 'li', 'lo', 'lu', 'ma', 'me', 'mi', 'mo', 'mu', 'na', 'ne', 'ni', 'no', 'nu'];
const HELD = COMMON.map((_, k) => 0.95 - k * 0.03);
const start = Date.parse('2026-01-01T00:00:00Z');
let clock = start;
const dir = tempDir();
let store: CatalogStore;
let source: SearchSource;
/** The kinds of statement each search prepared: 'pair' (the pairs' rows) and 'walk' (the threshold walk's term rows). */
let used = new Set<string>();
const network = new Map<number, string>();

function draft(id: number): ListingDraft {
  const tags: string[] = [];
  const description = [`filler${id % 5}`];
  COMMON.forEach((w, k) => {
    if (rand() >= HELD[k]!) return;
    const field = rand();
    if (field < 0.08 && tags.length < 3) tags.push(w);
    else description.push(...(field < 0.2 ? [w, w] : [w]));
  });
  if (!network.has(id)) network.set(id, rand() < 0.3 ? 'stellar:pubnet' : 'stellar:testnet');
  return storeDraft(id, {
    network: network.get(id)!,
    asset: 'CASSET',
    metadata: { description: description.join(' '), ...(tags.length ? { tags } : {}) },
    method: 'GET',
  });
}

function write(id: number) {
  clock += 1000;
  const outcome = store.writeListing(draft(id), new Date(clock), { payer: `payer-${Math.floor(rand() * 4)}`, id: `tx-${clock}` });
  expect(outcome.status).toBe('written');
}

const idOf = (item: unknown) => Number(/^https:\/\/d(\d+)\.example\.com/.exec((item as { resource: string }).resource)![1]);
const corpus = () => listedCorpus((offset) => Promise.resolve(store.list({}, { limit: 100, offset }, new Date(clock))), idOf);

function search(query: string, filter: DiscoveryFilters, page: { limit: number; cursor?: string }): SearchPage {
  used = new Set();
  return searchCatalog(source, query, filter, page, new Date(clock), DISCOVERY_X402_VERSION);
}

/** Pairs of the common words (both orders of some), a pair with a word that is not common, and a word twice. */
let QUERIES: string[] = [];

beforeAll(async () => {
  store = new CatalogStore(`${dir.dir}/catalog.sqlite`, { pairTopRows: KEPT });
  for (let id = 1; id <= 300; id++) write(id);
  store.db.exec('BEGIN IMMEDIATE');
  chooseCommonTerms(store.db);
  store.db.exec('COMMIT');
  const common = (store.db.prepare('SELECT term FROM search_common_terms ORDER BY bit').all() as Array<{ term: string }>).map(
    (r) => r.term,
  );
  expect(common.length).toBe(COMMON_TERMS);
  QUERIES = [
    `${common[0]} ${common[1]}`,
    `${common[1]} ${common[0]}`,
    `${common[0]} ${common[15]}`,
    `${common[7]} ${common[3]}`,
    `${common[14]} ${common[15]}`,
  ];
  source = Object.assign(Object.create(store) as CatalogStore, {
    statement(this: CatalogStore, sql: string) {
      if (sql.includes('FROM search_pair_tops p')) used.add('pair');
      if (sql.includes('CASE WHEN (t.sig >>')) used.add('walk');
      return CatalogStore.prototype.statement.call(this, sql);
    },
  });
}, 120_000);
afterAll(() => {
  store?.close();
  dir.cleanup();
});

describe('two common words from their pair’s kept first pages', () => {
  const check = async (listings: ReferenceListing[]) => {
    for (const query of QUERIES)
      for (const filter of [{}, { network: 'stellar:pubnet' }] as DiscoveryFilters[]) {
        const pool = filter.network ? listings.filter((l) => network.get(l.id) === filter.network) : listings;
        const expected = referenceSearch(pool, query);
        for (const limit of [1, 5, 21]) {
          expect(search(query, filter, { limit }).resources.map(idOf), `${query} ${JSON.stringify(filter)} limit ${limit}`).toEqual(
            expected.slice(0, limit),
          );
          // Every unfiltered first page of 1 or 5 is the pair's rows alone; 21 is more than 16 current rows can be sure of.
          if (!filter.network && limit < 21) expect([...used], `${query} limit ${limit}`).toEqual(['pair']);
        }
        for (const limit of [1, 4, 50]) {
          const seen = await walkIds(idOf, (page) => search(query, filter, page), limit, limit === 50 ? 20 : 12);
          expect(seen, `${query} ${JSON.stringify(filter)} pages of ${limit}`).toEqual(
            limit === 50 ? expected : expected.slice(0, seen.length),
          );
        }
      }
  };

  it('the fill keeps every revision that sorts before each key, whatever the number kept (its candidates come from rounded shares, within 1 of the exact rank)', () => {
    for (const kept of [1, 2, 3, 4, 6, 9, 13, 19, 28, 41, 60, 88, 120]) {
      fillPairTops(store.db, kept);
      expect(pairTopsOffKey(store.db), `kept ${kept}`).toEqual([]);
    }
    fillPairTops(store.db, KEPT);
  }, 120_000);

  it('the pairs hold every revision sorting before their keys, first pages and cursor walks are the reference ranking’s, walks stay pinned across refreshes, and the settle writes keep the rule', async () => {
    expect(pairTopsOffKey(store.db)).toEqual([]);
    const before = await corpus();
    expect(referenceSearch(before, QUERIES[0]!).length).toBeGreaterThan(250);
    await check(before);
    // Walks begun on the pairs' rows end on the pages of their first snapshot.
    const walks = QUERIES.slice(0, 3).map((query) => {
      const first = search(query, {}, { limit: 4 });
      return { query, seen: first.resources.map(idOf), cursor: first.pagination.cursor! };
    });
    const keys = () => store.db.prepare('SELECT pair, rank, listing_id FROM search_pair_bounds ORDER BY pair').all();
    const keysBefore = keys();
    for (let i = 0; i < 200; i++) write(i < 170 ? 1 + Math.floor(rand() * 300) : 131 + i);
    for (const walk of walks) {
      for (let cursor: string | undefined = walk.cursor; cursor;) {
        const result = search(walk.query, {}, { limit: 4, cursor });
        walk.seen.push(...result.resources.map(idOf));
        cursor = result.pagination.cursor ?? undefined;
      }
      expect(walk.seen, walk.query).toEqual(referenceSearch(before, walk.query));
    }
    // The writes trimmed pairs (keys moved) and kept the rule.
    expect(keys()).not.toEqual(keysBefore);
    expect(revisionsWithWrongCommonMask(store.db)).toEqual([]);
    expect(pairTopsOffKey(store.db)).toEqual([]);
    await check(await corpus());
  }, 240_000);
});

describe('a pair whose kept listings are withdrawn', () => {
  it('keeps its key when a trim finds fewer current rows than it keeps (the listings after the key were never kept), and pages stay the reference ranking’s', async () => {
    const own = new CatalogStore(`${dir.dir}/withdrawn.sqlite`, { pairTopRows: 4 });
    try {
      let now = start;
      // Twelve listings holding both words, the lower ids the more often (so they rank first).
      const listing = (id: number, extra = '') => ({
        ...draft(id),
        metadata: { description: `${'alpha beta '.repeat(1 + (id < 5 ? 2 : 0))}filler${id} ${extra}`.trim() },
      });
      for (let id = 1; id <= 12; id++) expect(own.writeListing(listing(id), new Date((now += 1000))).status).toBe('written');
      own.db.exec('BEGIN IMMEDIATE');
      chooseCommonTerms(own.db);
      fillPairTops(own.db, 4); // as the store keeps them (the choice fills PAIR_TOP_ROWS)
      own.db.exec('COMMIT');
      const key = () =>
        own.db
          .prepare(
            "SELECT rank, listing_id FROM search_pair_bounds b JOIN search_common_terms a ON a.term = 'alpha' JOIN search_common_terms c ON c.term = 'beta' WHERE b.pair = min(a.bit, c.bit) * 16 + max(a.bit, c.bit)",
          )
          .get();
      const keyAfterFill = key();
      expect(keyAfterFill).toMatchObject({ rank: expect.any(Number) });
      expect(Number((keyAfterFill as { rank: number }).rank)).toBeGreaterThan(0);
      // Three of the four kept listings withdrawn, then the fourth re-settled with new text four times: the trim finds one current row.
      for (const id of [1, 2, 3])
        expect(
          own.withdraw(
            { resource: `https://d${id}.example.com/r`, type: 'http', toolName: '', owner: PAY_TO_A, issuedAtMs: (now += 1000) },
            new Date(now),
          ).status,
        ).toBe('delisted');
      for (let k = 0; k < 4; k++) expect(own.writeListing(listing(4, `again${k}`), new Date((now += 1000))).status).toBe('written');
      expect(key()).toEqual(keyAfterFill);
      expect(pairTopsOffKey(own.db)).toEqual([]);
      const listed = await listedCorpus((offset) => Promise.resolve(own.list({}, { limit: 100, offset }, new Date(now))), idOf);
      const expected = referenceSearch(listed, 'alpha beta');
      for (const limit of [1, 2, 5])
        expect(searchCatalog(own, 'alpha beta', {}, { limit }, new Date(now), DISCOVERY_X402_VERSION).resources.map(idOf)).toEqual(
          expected.slice(0, limit),
        );
    } finally {
      own.close();
    }
  });
});
