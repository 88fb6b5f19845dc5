/**
 * Differential test of search: the write-time term index against the reference oracle (the
 * query-time ranking it replaced, reference-ranking.ts) on a generated corpus with a Zipf
 * vocabulary, refreshed listings and filters, over 1,200 generated queries. Every query's full
 * result order must be identical, and a cursor walk in small pages must visit the same list once.
 *
 * The corpus is written through the catalog (the settlement hook's ingest decides what is kept);
 * the queries run on the catalog's own store in this thread. Through the catalog they would run on
 * its reader thread, which yields the CPU to any other work (nice 10, src/thread-priority.ts): the
 * thousands of searches here took 13 s on an idle machine and over 120 s beside two busy loops.
 * The reader lane is tested where it is the subject (test/catalog/search.test.ts, isolation.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSET, PAY_TO_A, PAY_TO_B, seededRandom, settlement, storeDraft, tempCatalog, tempDir, zipfWords } from './fixtures.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { listedCorpus, referenceMeaningPages, referenceSearch, walkIds, walkPages, type ReferenceListing } from './reference-ranking.ts';
import { BACKENDS } from '../helpers/postgres.ts';
import { freshCatalogDatabase } from './fresh.ts';
import { DEEP, caseRandom, cases, sample, sampleCovering } from '../helpers/cases.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { searchCatalog, type SearchSource } from '../../src/catalog/sqlite/search.ts';
import type { DiscoveryFilters, SearchPage } from '../../src/catalog/types.ts';

const rand = seededRandom(0x9e3779b9);
const VOCAB = [
  ...Array.from({ length: 120 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`),
  'café',
  'crème',
  'naïve',
  '날씨',
  'über',
  'forecast',
  'weather',
  'Weather',
  'WEATHER',
  'x402',
];
const { word, words } = zipfWords(VOCAB, rand);
/** The generated queries' own draw: new each run (TEST_SEED), the corpus (`rand`) the same every run. */
const queryRand = caseRandom('differential queries');
const queryWord = zipfWords(VOCAB, queryRand).word;
/** Generated queries against the reference: every term count, filter and page kind is among the default run's. */
const GENERATED = cases(1200, 200);
const asciiWord = () =>
  word()
    .normalize('NFD')
    .replace(/[^\x20-\x7e]/g, '') || 'plain';

type Search = (query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }) => Promise<SearchPage>;

/** The store of `t`'s catalog, opened in this thread, searched at `t`'s clock. */
async function storeOf(t: ReturnType<typeof tempCatalog>): Promise<{ search: Search; close: () => Promise<void> }> {
  if (t.databaseUrl) {
    const store = await PostgresCatalogStore.open(t.databaseUrl);
    return { search: (q, f, p) => store.search(q, f, p, t.clock(), DISCOVERY_X402_VERSION), close: () => store.end() };
  }
  const store = new CatalogStore(t.dbPath);
  return { search: async (q, f, p) => store.search(q, f, p, t.clock(), DISCOVERY_X402_VERSION), close: async () => store.close() };
}

const t = tempCatalog();
let store: Awaited<ReturnType<typeof storeOf>>;
const corpus: ReferenceListing[] = [];
const filtersOf = new Map<number, { network: string; payTo: string }>();
const noParams = { queryParams: {}, paramSchema: {} };

beforeAll(async () => {
  const size = 400;
  for (let i = 0; i < size + 80; i++) {
    // The last 80 settlements refresh earlier listings with new text (latest text wins).
    const id = i < size ? i + 1 : 1 + Math.floor(rand() * size);
    const text = {
      serviceName: rand() < 0.6 ? `${asciiWord()} ${asciiWord()}`.slice(0, 32) : undefined,
      tags: rand() < 0.6 ? Array.from({ length: 1 + Math.floor(rand() * 3) }, asciiWord) : undefined,
      description: words(1 + Math.floor(rand() * 12)),
    };
    const net =
      i < size
        ? { network: rand() < 0.3 ? 'stellar:pubnet' : 'stellar:testnet', payTo: rand() < 0.5 ? PAY_TO_A : PAY_TO_B }
        : filtersOf.get(id)!;
    filtersOf.set(id, net);
    t.tick();
    // Paid by one of a few payers, so listings differ in quality (calls and distinct payers).
    const outcome = await t.catalog.recordSettlement({
      ...settlement({ url: `https://d${id}.example.com/r`, ...noParams, ...text, network: net.network, payTo: net.payTo }),
      payment: { payer: `payer-${Math.floor(rand() * 4)}` },
    });
    expect(outcome).toEqual({ status: 'success' });
  }
  corpus.push(...(await listedCorpus((offset) => t.catalog.list({}, { limit: 100, offset }), idOf)));
  expect(corpus).toHaveLength(size);
  store = await storeOf(t);
}, 120_000);
afterAll(async () => {
  await store?.close();
  t.close();
});

/** A settled listing's draft (what the catalog's ingest writes for `settlement()`'s payment): its texts and one accepted entry. */
function tieDraft(id: number, serviceName: string, description: string): ListingDraft {
  return storeDraft(id, { network: 'stellar:testnet', asset: ASSET, metadata: { description, ...(serviceName ? { serviceName } : {}) } });
}

function idOf(resource: unknown): number {
  return Number(/^https:\/\/d(\d+)\.example\.com/.exec(String((resource as { resource: string }).resource))![1]);
}

describe('search against the reference ranking', () => {
  it('generated queries (1,200 deep) return the same order (one page of 500, and a first page of 5), with and without filters', async () => {
    let nonEmpty = 0;
    for (let q = 0; q < GENERATED; q++) {
      const query = Array.from({ length: 1 + Math.floor(queryRand() * 4) }, () => (queryRand() < 0.1 ? 'absentword' : queryWord())).join(
        ' ',
      );
      const filter = q % 3 === 0 ? { network: 'stellar:pubnet' } : q % 3 === 1 ? { payTo: PAY_TO_B } : {};
      const pool = corpus.filter((l) => Object.entries(filter).every(([k, v]) => filtersOf.get(l.id)![k as 'network' | 'payTo'] === v));
      // Every listing is http, in ASSET, under exact, at 100000: these filters add nothing to the pool, but take the
      // list keys' paths (sqlite/filter-set.ts): a combination key, a key every listing holds, the price index's set, the
      // trigram index's set.
      const extra = [
        {},
        { asset: ASSET, type: 'http' },
        { asset: ASSET, scheme: 'exact' },
        { asset: ASSET, maxAmount: '100000' },
        { url: 'EXAMPLE.com/' },
      ][Math.floor(q / 3) % 5]!;
      const asked: DiscoveryFilters = q % 3 === 2 ? filter : { ...filter, ...extra };
      const expected = referenceSearch(pool, query, corpus);
      const page = await store.search(query, asked, { limit: 500 });
      expect(page.resources.map(idOf), `${query} ${JSON.stringify(asked)}`).toEqual(expected);
      // A small first page takes the all-terms tier when it fills the page (search.ts).
      const top = await store.search(query, asked, { limit: 5 });
      expect(top.resources.map(idOf), query).toEqual(expected.slice(0, 5));
      if (expected.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(0.75 * GENERATED);
  }, 120_000);

  /**
   * Several-term queries of the corpus's most common words, as agents send natural language: the
   * all-terms tier is large for two or three of them and small or empty for seven or eight, so
   * the first pages come from the tier read by term signatures (allTermsTopK), from the lower
   * tiers, or from both across a cursor walk.
   */
  it('queries of 2 to 8 of the most common words, with a rarer one or an absent one: first pages of 1, 5 and 21 and cursor walks in pages of 4', async () => {
    const common = (n: number, shift: number) => Array.from({ length: n }, (_, k) => VOCAB[(k + shift) % 12]!);
    let filled = 0;
    for (let n = 2; n <= 8; n++) {
      for (const query of [
        common(n, 0).join(' '),
        common(n, 3).reverse().join(' '),
        [...common(n - 1, 0), VOCAB[40 + n]!].join(' '),
        [...common(n - 1, 1), 'absentword'].join(' '),
      ]) {
        const expected = referenceSearch(corpus, query);
        for (const limit of [1, 5, 21]) {
          const first = await store.search(query, {}, { limit });
          expect(first.resources.map(idOf), `${query} limit ${limit}`).toEqual(expected.slice(0, limit));
        }
        const seen = await walkIds(idOf, (page) => store.search(query, {}, page), 4, 15);
        expect(seen, `${query} pages of 4`).toEqual(expected.slice(0, seen.length));
        // The common words are plain ASCII: a listing holds every term when its tokens include each.
        const allTerms = corpus.filter((l) => {
          const tokens = new Set(`${l.serviceName} ${l.tags} ${l.description}`.toLowerCase().split(/[^a-z0-9]+/));
          return query.split(' ').every((term) => tokens.has(term));
        });
        if (allTerms.length >= 21) filled++;
      }
    }
    // Some of these pages are the all-terms tier alone, some are not.
    expect(filled).toBeGreaterThan(3);
    expect(filled).toBeLessThan(28);
  }, 120_000);

  /**
   * Queries as agents write them: common words mixed with rarer content words and words no listing
   * holds, 2 to 8 terms: the aggregate of their rows (search-engine.ts) ranks them, through the
   * store's own search source (sqlite/search.ts).
   */
  it('natural queries of 2 to 8 terms (common, rare and absent words): first pages of 1, 5 and 21, and cursor walks in pages of 4 and of 50', async () => {
    const stores = ['default'].map((cap) => {
      const own = new CatalogStore(t.dbPath);
      const source: SearchSource = own;
      const search = (query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }, now: Date, x402Version: number) =>
        searchCatalog(source, { query, filters, page, now, x402Version });
      return { cap, store: { search, close: () => own.close() } };
    });
    // Words by how many listings hold them (the fixture's draw is steeper than its Zipf weights: 13 of
    // its words are in use, held by 1 to about 350 of the 400 listings): the six most held, and the rest.
    const tokensOf = (l: ReferenceListing) => new Set(`${l.serviceName} ${l.tags} ${l.description}`.toLowerCase().split(/[^a-z0-9]+/));
    const held = new Map<string, number>();
    for (const l of corpus) for (const token of tokensOf(l)) held.set(token, (held.get(token) ?? 0) + 1);
    const byHeld = [...held].filter(([w]) => /^w[a-z0-9]+$/.test(w)).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const contentWords = byHeld.slice(6).map(([w]) => w);
    expect(contentWords.length).toBeGreaterThan(4);
    const common = (k: number) => byHeld[k % 6]![0];
    const rare = (k: number) => contentWords[k % contentWords.length]!;
    const absent = (k: number) => ['absentword', 'nowhere', 'zzq'][k % 3]!;
    const shapes: Array<(n: number, v: number) => string[]> = [
      // content word, common word, content word, ... (the benchmark's natural queries)
      (n, v) => Array.from({ length: n }, (_, k) => (k % 2 === 1 ? common(k >> 1) : rare(v * 7 + k))),
      // one rare word among common ones
      (n, v) => Array.from({ length: n }, (_, k) => (k === 0 ? rare(v) : common(k + v))),
      // rare words only, and an absent one
      (n, v) => Array.from({ length: n }, (_, k) => (k === n - 1 ? absent(v) : rare(v * 11 + k * 5))),
      // common and absent words
      (n, v) => Array.from({ length: n }, (_, k) => (k % 3 === 2 ? absent(k + v) : common(k + v))),
    ];
    // Every query of every shape, term count and variant, with its reference order and the tier of
    // its 21st listing (how many of the query's terms it lacks: how far below the listings holding
    // every term the page reaches).
    const candidates = [2, 3, 4, 5, 6, 7, 8].flatMap((n) =>
      shapes.flatMap((shape, s) =>
        [0, 1].map((v) => {
          const query = [...new Set(shape(n, v))].join(' ');
          const filter: DiscoveryFilters = (n + s + v) % 4 === 0 ? { network: 'stellar:pubnet' } : {};
          const pool = corpus.filter((l) => !filter.network || filtersOf.get(l.id)!.network === filter.network);
          const expected = referenceSearch(pool, query, corpus);
          const terms = new Set(query.split(' '));
          const twentyFirst = pool.find((l) => l.id === expected[20]);
          const tokens = twentyFirst && tokensOf(twentyFirst);
          const tier = tokens && terms.size - [...terms].filter((term) => tokens.has(term)).length;
          return { n, s, query, filter, expected, tier };
        }),
      ),
    );
    const tiers = new Set(candidates.flatMap(({ tier }) => (tier === undefined ? [] : [tier])));
    // Pages whose 21st listing lacks 0, 1, 2 and more of the query's terms are among the queries.
    expect([...tiers].filter((missing) => missing >= 2).length).toBeGreaterThan(1);
    expect(tiers.has(1)).toBe(true);
    // By default one variant of each shape and term count, and a query of each tier depth and filter.
    const chosen = sampleCovering(
      candidates,
      ({ n, s }) => `${n} ${s}`,
      1,
      caseRandom('differential natural'),
      ({ tier, filter }) => [`tier ${tier}`, `filter ${filter.network ?? ''}`],
    );
    try {
      for (const [q, { query, filter, expected }] of chosen.entries()) {
        for (const [i, { cap, store }] of stores.entries()) {
          const search = (page: { limit: number; cursor?: string }) => store.search(query, filter, page, t.clock(), DISCOVERY_X402_VERSION);
          for (const limit of [1, 5, 21]) {
            expect(search({ limit }).resources.map(idOf), `${query} limit ${limit} cap ${cap}`).toEqual(expected.slice(0, limit));
          }
          const seen = await walkIds(idOf, search, 4, 12);
          expect(seen, `${query} pages of 4 cap ${cap}`).toEqual(expected.slice(0, seen.length));
          // Pages of 50 to the end: every match exactly once. By default with one driver cap in turn
          // per query: past the first pages every cap reads the same deep pages.
          if (DEEP || q % stores.length === i)
            expect(await walkIds(idOf, search, 50, 20), `${query} pages of 50 cap ${cap}`).toEqual(expected);
        }
      }
    } finally {
      for (const { store } of stores) store.close();
    }
  }, 120_000);

  it('queries no listing holds a word of: the reference order cut into pages, each ordered by meaning', async () => {
    // A catalog of its own, of English words (the corpus above holds none a word vector knows).
    const english = ['weather', 'forecast', 'rain', 'storm', 'cafe', 'coffee', 'menu', 'stock', 'price', 'photo', 'image', 'text'];
    const own = tempCatalog();
    const meaningRand = seededRandom(82);
    try {
      for (let id = 1; id <= 40; id++) {
        const pick = () => english[Math.floor(meaningRand() * english.length)]!;
        own.tick();
        const outcome = await own.catalog.recordSettlement(
          settlement({
            url: `https://d${id}.example.com/r`,
            ...noParams,
            serviceName: `${pick()} ${pick()}`,
            description: `${pick()} ${pick()} ${pick()}`,
          }),
        );
        expect(outcome).toEqual({ status: 'success' });
      }
      const listings = await listedCorpus((offset) => own.catalog.list({}, { limit: 100, offset }), idOf);
      const ownStore = await storeOf(own);
      let reordered = 0;
      try {
        // Their related words and neighbours (forecast, weather, cafe, price, …) are what listings hold.
        for (const query of ['meteorological', 'meteorological prediction', 'bistro espresso', 'photograph valuation']) {
          const expected = referenceSearch(listings, query);
          expect(expected.length, query).toBeGreaterThan(3);
          for (const limit of [1, 3, 8, 50]) {
            const pages = await walkPages(idOf, (page) => ownStore.search(query, {}, page), limit, 1_000);
            const reference = referenceMeaningPages(expected, listings, query, limit);
            expect(
              pages.map((page) => page.ids),
              `${query} in pages of ${limit}`,
            ).toEqual(reference);
            reordered += reference.filter((page, i) => page.join() !== expected.slice(i * limit, (i + 1) * limit).join()).length;
          }
        }
      } finally {
        await ownStore.close();
      }
      expect(reordered).toBeGreaterThan(0);
    } finally {
      own.close();
    }
  }, 120_000);

  it('cursor walks in pages of 7 visit the reference order exactly once', async () => {
    for (let q = 0; q < cases(60, 15); q++) {
      const query = Array.from({ length: 1 + (q % 3) }, queryWord).join(' ');
      const expected = referenceSearch(corpus, query);
      const seen = await walkIds(idOf, (page) => store.search(query, {}, page), 7, 200);
      expect(seen, query).toEqual(expected);
    }
  }, 120_000);
});

/**
 * A several-term walk ranks exactly only the listings whose estimate (the sum of their terms'
 * rounded shares) could reach the page or follow the cursor (search.ts thresholdWalk). Here every
 * listing holds each of three terms 0–3 times in its description and often in its name, so the shares 2/3, 4/3
 * and 8/3 (and their sums) round differently from the sum of their roundings, and many listings tie
 * on their exact rank: an estimate margin one short drops or repeats some of them.
 */
describe.each(BACKENDS)('search where the rounded shares and the rounded sum differ (%s)', (backend) => {
  let tiesStore: { search: Search; close: () => Promise<void> };
  const listings: ReferenceListing[] = [];
  const tieRand = seededRandom(0x51ed270b);
  // Short terms: a name of all three, each three times, stays within serviceName's 32 characters.
  const terms = ['al', 'bo', 'ga'];
  const repeat = (term: string) => Array.from({ length: Math.floor(tieRand() * 4) }, () => term);

  // Written through the store in this thread (on SQLite in one transaction, which its writes join):
  // ranking is the subject here, and through the catalog these 1,200 writes were most of the file's time.
  beforeAll(async () => {
    const drafts: ListingDraft[] = [];
    for (let id = 1; id <= 600; id++) {
      const serviceName = terms.flatMap((term) => (tieRand() < 0.3 ? repeat(term) : [])).join(' ');
      const description = [...terms.flatMap(repeat), 'filler'].join(' ');
      listings.push({ id, serviceName, tags: '', description, params: '', url: `https://d${id}.example.com/r` });
      drafts.push(tieDraft(id, serviceName, description));
    }
    const at = (i: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + i * 1000);
    const searchedAt = at(drafts.length);
    if (backend === 'Postgres') {
      const store = await PostgresCatalogStore.open(await freshCatalogDatabase());
      for (const [i, d] of drafts.entries()) expect((await store.writeListing(d, at(i))).status).toBe('written');
      tiesStore = { search: (q, f, p) => store.search(q, f, p, searchedAt, DISCOVERY_X402_VERSION), close: () => store.end() };
    } else {
      const dir = tempDir();
      const store = new CatalogStore(`${dir.dir}/ties.sqlite`);
      store.db.exec('BEGIN IMMEDIATE');
      for (const [i, d] of drafts.entries()) expect(store.writeListing(d, at(i)).status).toBe('written');
      store.db.exec('COMMIT');
      tiesStore = {
        search: async (q, f, p) => store.search(q, f, p, searchedAt, DISCOVERY_X402_VERSION),
        close: async () => (store.close(), dir.cleanup()),
      };
    }
  }, 120_000);
  afterAll(async () => {
    await tiesStore?.close();
  });

  it('first pages of 1 to 6 and cursor walks in pages of 1, 2 and 5 follow the reference order', async () => {
    // By default the three terms and one of the pairs, drawn per run.
    const pairs = ['al bo', 'bo ga', 'ga al'];
    for (const query of ['al bo ga', ...sample(pairs, 1, caseRandom(`differential ties ${backend}`))]) {
      const expected = referenceSearch(listings, query);
      expect(expected.length).toBeGreaterThan(500);
      for (let limit = 1; limit <= 6; limit++) {
        const first = await tiesStore.search(query, {}, { limit });
        expect(first.resources.map(idOf), `${query} limit ${limit}`).toEqual(expected.slice(0, limit));
      }
      for (const limit of [1, 2, 5]) {
        const seen = await walkIds(idOf, (page) => tiesStore.search(query, {}, page), limit, 150, 150);
        expect(seen, `${query} pages of ${limit}`).toEqual(expected.slice(0, seen.length));
        expect(seen.length).toBeGreaterThanOrEqual(150);
      }
    }
  }, 120_000);
});
