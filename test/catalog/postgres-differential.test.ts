/**
 * The PostgreSQL catalog store against the SQLite one (docs/CATALOG.md "Postgres"): one generated
 * corpus is written to a SQLite file and to a real Postgres database, draft by draft with the same
 * clock (a Zipf vocabulary with diacritics and Hangul, repeated words, two owners, three networks,
 * two schemes, http and mcp, refreshes that change text and add terms, squatting attempts, ties in
 * lastUpdated). Then more than a thousand generated queries must answer identically on both:
 * searches with every filter shape (the price filters beside a query too: asset, asset + maxAmount,
 * + type) and page size, cursor walks to the end, and list pages at
 * random and deep offsets with exact totals (the price filters, with network and scheme too, among them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import type { DiscoveryFilters, SearchPage, WriteOutcome } from '../../src/catalog/types.ts';
import { freshCatalogDatabase } from '../helpers/postgres.ts';
import { PAY_TO_A, PAY_TO_B, seededRandom, tempDir, zipfWords } from './fixtures.ts';
import { DEEP, caseRandom, cases, sampleCovering } from '../helpers/cases.ts';

const rand = seededRandom(0x2545f491);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const VOCAB = [
  ...Array.from({ length: 90 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`),
  'café',
  'crème',
  '날씨',
  'über',
  'forecast',
  'weather',
  'Weather',
  'x402',
];
const { word, words } = zipfWords(VOCAB, rand);
/**
 * The queries' own draw, new each run (TEST_SEED; the corpus, from `rand`, is the same every run):
 * the default run draws a sample of each test's cases, `npm run test:deep` the counts in the titles.
 */
const caseRand = caseRandom('postgres-differential');
const pickCase = <T>(items: readonly T[]): T => items[Math.floor(caseRand() * items.length)]!;
const caseWord = zipfWords(VOCAB, caseRand).word;
/** `n` of `0 .. count-1` (all under test:deep), one at least in each class of `classOf`. */
const someOf = (count: number, n: number, classOf: (q: number) => number | string) =>
  sampleCovering(
    Array.from({ length: count }, (_, q) => q),
    (q) => String(classOf(q)),
    Math.max(1, Math.round(n / new Set(Array.from({ length: count }, (_, q) => classOf(q))).size)),
    caseRand,
  );

const NETWORKS = ['stellar:testnet', 'stellar:pubnet', 'eip155:8453'] as const;
const SCHEMES = ['exact', 'upto'] as const;
const ASSETS = ['CASSET', 'CASSET', 'CASSET', 'COTHER'] as const;
/** Amounts of several digit counts (a price is compared by digit count, then digits: src/filters.ts amountKey). */
const AMOUNTS = ['100', '100', '200', '7', '99', '150', '1000', '100000'] as const;
/** maxAmount bounds: below every amount, on amounts, between them, above all. */
const BOUNDS = ['0', '6', '7', '99', '100', '149', '150', '999', '1000', '100000', '1000000'] as const;
const LISTINGS = 1_200;
const REFRESHES = 300;

interface Identity {
  i: number;
  owner: string;
  type: 'http' | 'mcp';
}

function draft(id: Identity, network: string, scheme: string, amount: string, asset: string): ListingDraft {
  // Some texts repeat a word many times (scores of tf/(tf+1) with large tf).
  const description =
    rand() < 0.05 ? Array.from({ length: 15 + Math.floor(rand() * 20) }, () => 'weather').join(' ') : words(1 + Math.floor(rand() * 10));
  return {
    resource: `https://d${id.i}.example.com/r`,
    type: id.type,
    toolName: id.type === 'mcp' ? `tool${id.i % 3}` : '',
    owner: id.owner,
    x402Version: 2,
    terms: { scheme, network, asset, amount, payTo: id.owner, maxTimeoutSeconds: 60 },
    metadata: {
      description,
      ...(rand() < 0.5 ? { serviceName: `${word()} ${word()}`.slice(0, 32) } : {}),
      ...(rand() < 0.5 ? { tags: Array.from({ length: 1 + Math.floor(rand() * 3) }, word) } : {}),
    },
    bazaar: { info: { input: { type: id.type } } },
    parameterText: rand() < 0.3 ? words(2) : '',
    dropped: [],
  };
}

const dir = tempDir();
const sqlite = new CatalogStore(`${dir.dir}/catalog.sqlite`);
let postgres: PostgresCatalogStore;
let postgresUrl: string;
const start = Date.parse('2026-01-01T00:00:00Z');
let now = start;

beforeAll(async () => {
  postgresUrl = await freshCatalogDatabase();
  postgres = await PostgresCatalogStore.open(postgresUrl);
  const ids: Identity[] = [];
  const outcomes: string[] = [];
  // SQLite takes the corpus in one transaction (its store joins a transaction already open, as a
  // bulk load does): each write's own commit was most of SQLite's share of this file's time. Postgres
  // takes the writes in runs (writeListings: one transaction, each statement parsed once), each with
  // SQLite's outcome, but one in 25 and every other squatter alone (writeListing, its own transaction):
  // both paths take fresh listings, refreshes and squatters. Written one by one, the corpus was about
  // 37 of this file's CPU-s (client and server), in runs about 22.
  let batch: { draft: ListingDraft; now: Date }[] = [];
  let batchOutcomes: WriteOutcome[] = [];
  let squatters = 0;
  const flush = async () => {
    expect(await postgres.writeListings(batch)).toEqual(batchOutcomes);
    [batch, batchOutcomes] = [[], []];
  };
  sqlite.db.exec('BEGIN IMMEDIATE');
  for (let n = 0; n < LISTINGS + REFRESHES; n++) {
    const fresh = n < LISTINGS;
    const id = fresh
      ? { i: n, owner: rand() < 0.6 ? PAY_TO_A : PAY_TO_B, type: rand() < 0.8 ? ('http' as const) : ('mcp' as const) }
      : pick(ids);
    if (fresh) ids.push(id);
    // One in twenty refreshes is a squatter: the other seller settles the same resource.
    const squatter = !fresh && rand() < 0.05;
    const d = draft(
      squatter ? { ...id, owner: id.owner === PAY_TO_A ? PAY_TO_B : PAY_TO_A } : id,
      pick(NETWORKS),
      pick(SCHEMES),
      pick(AMOUNTS),
      pick(ASSETS),
    );
    // Two or three writes share each millisecond: order ties break on id.
    if (rand() < 0.4) now += 1000;
    const at = new Date(now);
    const a = sqlite.writeListing(d, at);
    outcomes.push(a.status);
    if (n % 25 !== 24 && !(squatter && squatters++ % 2 === 0)) {
      batch.push({ draft: d, now: at });
      batchOutcomes.push(a);
      continue;
    }
    await flush();
    expect(await postgres.writeListing(d, at)).toEqual(a);
  }
  await flush();
  sqlite.db.exec('COMMIT');
  expect(outcomes.filter((o) => o === 'owned_by_other').length).toBeGreaterThan(5);
  // Fresh tables have no statistics until autovacuum's first pass (about a minute): take them now,
  // as a running database has them, so the planner's choices (not the answers) are the usual ones.
  await postgres.analyze();
}, 300_000);
afterAll(async () => {
  sqlite.close();
  await postgres?.end();
  dir.cleanup();
});

const FILTERS: DiscoveryFilters[] = [
  {},
  { type: 'mcp' },
  { type: 'http' },
  { payTo: PAY_TO_B },
  { network: 'stellar:pubnet' },
  { scheme: 'upto' },
  { scheme: 'upto', network: 'eip155:8453' },
  { extensions: 'bazaar' },
  { extensions: 'other' },
  { type: 'http', payTo: PAY_TO_A, network: 'stellar:testnet' },
  { payTo: PAY_TO_A, scheme: 'exact' },
  // url: a few listings, a tenth of them, with another filter, and one that no URL holds.
  { url: 'D7.example' },
  { url: '1.EXAMPLE' },
  { url: '/d3', type: 'http' },
  { url: 'bd7' },
];
/**
 * The price filters beside a query (openapi.yaml AssetFilter, MaxAmountFilter): `asset` alone or
 * with `maxAmount` (one accepted entry must hold both, and `scheme`/`network` too when given),
 * with or without `type` and another filter.
 */
function priceFilters(shape = Math.floor(caseRand() * 8)): DiscoveryFilters {
  // Shapes 0-5 with maxAmount, 6-7 without; odd shapes with a type.
  const filters: DiscoveryFilters = { asset: pickCase(ASSETS) };
  if (shape % 8 < 6) filters.maxAmount = pickCase(BOUNDS);
  if (shape % 2 === 1) filters.type = pickCase(['http', 'mcp'] as const);
  return {
    ...filters,
    ...pickCase([{}, {}, {}, { payTo: PAY_TO_B }, { extensions: 'bazaar' }, { scheme: 'upto' }, { network: 'stellar:pubnet' }]),
  };
}
let updated: string[] | undefined;
/** Every listing's lastUpdated: cut points for hiding the older listings. */
const updatedTimes = () => (updated ??= sqlite.list({}, { limit: 5_000, offset: 0 }, new Date()).items.map((i) => i.lastUpdated));
const query = () => Array.from({ length: 1 + Math.floor(caseRand() * 4) }, () => (caseRand() < 0.1 ? 'absentword' : caseWord())).join(' ');
const sqlitePages = new Map<string, SearchPage>();
/**
 * SQLite's page (the oracle), read once per question: several Postgres stores (driver caps, plans)
 * are held to the same SQLite pages, and a read does not change the catalog.
 */
function sqliteSearch(text: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }, since?: string): SearchPage {
  const key = JSON.stringify([text, filters, page, since]);
  let answer = sqlitePages.get(key);
  if (!answer) sqlitePages.set(key, (answer = sqlite.search(text, filters, page, new Date(now), 2, since)));
  return answer;
}
/** A page without its cursor (each catalog signs its own). */
const comparable = (page: SearchPage) => ({ ...page, pagination: { ...page.pagination, cursor: page.pagination.cursor !== null } });

/**
 * Reads `text`'s pages from both stores, cursor by cursor from the first, expecting the same page
 * at each step, up to `maxPages` or the last page; returns the first page and how many were compared.
 */
async function expectSameWalk(
  store: PostgresCatalogStore,
  text: string,
  filters: DiscoveryFilters,
  limit: number,
  maxPages = Infinity,
): Promise<{ first: SearchPage; pages: number }> {
  let cursorA: string | undefined;
  let cursorB: string | undefined;
  let first: SearchPage | undefined;
  for (let pages = 1; ; pages++) {
    const a = sqliteSearch(text, filters, { limit, ...(cursorA ? { cursor: cursorA } : {}) });
    const b = await store.search(text, filters, { limit, ...(cursorB ? { cursor: cursorB } : {}) }, new Date(now), 2);
    expect(comparable(b), `${text} ${JSON.stringify(filters)} page ${pages}`).toEqual(comparable(a));
    first ??= a;
    if (!a.pagination.cursor || pages >= maxPages) return { first, pages };
    cursorA = a.pagination.cursor;
    cursorB = b.pagination.cursor!;
  }
}

describe('PostgreSQL answers exactly as SQLite', () => {
  it('holds the same listings in the same list order with the same totals', async () => {
    const a = sqlite.list({}, { limit: 5_000, offset: 0 }, new Date());
    const b = await postgres.list({}, { limit: 5_000, offset: 0 }, new Date());
    expect(a.total).toBe(LISTINGS);
    expect(b).toEqual(a);
  });

  it('searches (1,000 deep; every filter shape, page sizes 1–60) return the same pages', async () => {
    let nonEmpty = 0;
    const searches = cases(1_000, 100);
    for (let q = 0; q < searches; q++) {
      const text = query();
      const filters = q < FILTERS.length ? FILTERS[q]! : pickCase(FILTERS);
      const limit = pickCase([1, 5, 10, 20, 60]);
      const since = q % 4 === 1 ? pickCase(updatedTimes()) : undefined;
      const a = sqliteSearch(text, filters, { limit }, since);
      const b = await postgres.search(text, filters, { limit }, new Date(now), 2, since);
      expect(comparable(b), `${text} ${JSON.stringify(filters)}`).toEqual(comparable(a));
      if (a.resources.length > 0) nonEmpty++;
    }
    // Most searches must find something for the comparison to mean much: 82–88 of 100 on most seeds, 70 on one
    // (TEST_SEED=476620325), so the floor sits below the sample's spread, not at its edge.
    expect(nonEmpty).toBeGreaterThan(0.6 * searches);
  }, 180_000);

  /**
   * Natural queries (common words mixed with rarer content words and words no listing holds, 3 to 8
   * terms): the tiers read from the rarest terms' rows (postgres/term-tiers.ts) decide them when
   * those rows are under the driver cap. Directly, each page they decide is the aggregate's over
   * every row, and a page reaching below the tiers the cap allows is left to the caller (null).
   * Through the store, with the cap at its default, at 150 rows (a few rare terms drive, the walk
   * takes the lower tiers) and at 0 (the walk, the common-word paths and the aggregates), first
   * pages and cursor walks to the end, with and without filters, are SQLite's.
   */
  it('natural queries of 3 to 8 terms return the same pages and cursor walks', async () => {
    const shapes: Array<(n: number, v: number) => string[]> = [
      // content word, common word, content word, ... (the benchmark's natural queries)
      (n, v) => Array.from({ length: n }, (_, k) => (k % 2 === 1 ? VOCAB[k >> 1]! : VOCAB[12 + ((v * 7 + k * 5) % 70)]!)),
      // one rare word among common ones
      (n, v) => Array.from({ length: n }, (_, k) => (k === 0 ? VOCAB[30 + v]! : VOCAB[(k + v) % 8]!)),
      // rare words only, and an absent one
      (n, v) => Array.from({ length: n }, (_, k) => (k === n - 1 ? 'absentword' : VOCAB[20 + ((v * 11 + k * 5) % 70)]!)),
    ];
    // By default one query of each length, every shape and both filter kinds among them (the
    // pairs of length and shape drawn anew each run).
    const queries = sampleCovering(
      [3, 4, 5, 6, 7, 8].flatMap((n) => shapes.flatMap((shape, s) => [0, 1].map((v) => ({ n, s, v, terms: [...new Set(shape(n, v))] })))),
      ({ n }) => String(n),
      1,
      caseRand,
      ({ n, s, v }) => [`shape ${s}`, `filtered ${(n + s + v) % 3 === 0}`],
    );
    const stores = [await PostgresCatalogStore.open(postgresUrl)];
    try {
      let full = 0;
      for (const [q, { n, s, v, terms }] of queries.entries()) {
        const text = terms.join(' ');
        const filters: DiscoveryFilters = (n + s + v) % 3 === 0 ? FILTERS[(n * 3 + s + v) % FILTERS.length]! : {};
        for (const [i, store] of stores.entries()) {
          for (const limit of [1, 5, 21]) {
            const { first } = await expectSameWalk(store, text, filters, limit, 1);
            if (limit === 21 && first.resources.length === 21) full++;
          }
          await expectSameWalk(store, text, filters, 4, 12);
          // Pages of 50 to the end: every match once, in SQLite's order. One driver cap in turn per
          // query (twelve walks each): past the first pages every cap reads the same deep pages, and
          // a walk to the end for every cap was most of this test's time.
          if (q % stores.length === i) await expectSameWalk(store, text, filters, 50);
        }
      }
      // Some walks reach past a full first page on every store: by default (six queries, drawn per
      // run) at least one query does, which some seeds' draws hold to two; the deep run most of them.
      expect(full).toBeGreaterThanOrEqual(DEEP ? queries.length + 1 : stores.length);
    } finally {
      await Promise.all(stores.map((store) => store.end()));
    }
  }, 300_000);

  it('cursor walks to the end visit the same listings in the same order, page by page', async () => {
    let pages = 0;
    // By default four walks, two with filters (the natural-query, common-word and price tests of
    // this file walk too); the deep run walks 24.
    const walks = cases(24, 4);
    for (let q = 0; q < walks; q++) {
      const text = query();
      const filters = q % 2 === 0 ? {} : pickCase(FILTERS);
      const limit = pickCase([10, 25, 60]);
      pages += (await expectSameWalk(postgres, text, filters, limit)).pages;
    }
    expect(pages).toBeGreaterThan(2.5 * walks);
  }, 180_000);

  it('queries no text holds, searched in the resource URLs, give the same pages and cursor walks', async () => {
    const id = () => pickCase(Array.from({ length: LISTINGS }, (_, i) => i));
    for (const [q, text] of ['example', 'com r', `d${id()} d${id()} absentword`, `d${id()} example d${id()}`].entries()) {
      const filters = q % 2 === 0 ? {} : pickCase(FILTERS);
      const { first } = await expectSameWalk(postgres, text, filters, pickCase([25, 60]), 8);
      expect(first.searchMethod, text).toBe('url');
    }
  }, 120_000);

  it('queries searched by meaning alone give the same pages, each ordered by meaning, and cursor walks', async () => {
    // No listing holds these words: their related words and neighbours (forecast, weather) are searched, and each
    // page, none of whose results holds a word of the query, is ordered by meaning (docs/CATALOG.md "Ranking").
    for (const [q, text] of ['meteorological', 'meteorological prediction', 'prediction meteorological sunny'].entries()) {
      const filters = q % 2 === 0 ? {} : pickCase(FILTERS);
      for (const limit of [1, 7, 40]) {
        const { first } = await expectSameWalk(postgres, text, filters, limit, 6);
        expect(first.relevance, text).toBe('none');
        // A filter drawn at random may leave none of the weather listings: only an unfiltered walk must find several.
        if (limit === 40 && q % 2 === 0) expect(first.resources.length, text).toBeGreaterThan(1);
      }
    }
  }, 120_000);

  it('searches (400 deep) with asset, asset + maxAmount, + type (and another filter) return the same pages', async () => {
    const shapes = new Set<string>();
    let nonEmpty = 0;
    /** One search on both stores, held to the same page; whether it found anything. */
    const same = async (text: string, filters: DiscoveryFilters, since?: string) => {
      const limit = pickCase([1, 5, 10, 20, 60]);
      const a = sqliteSearch(text, filters, { limit }, since);
      const b = await postgres.search(text, filters, { limit }, new Date(now), 2, since);
      expect(comparable(b), `${text} ${JSON.stringify(filters)}`).toEqual(comparable(a));
      if (a.resources.length > 0) shapes.add(Object.keys(filters).sort().join('+'));
      return a.resources.length > 0;
    };
    const searches = cases(400, 50);
    for (let q = 0; q < searches; q++) {
      const text = q % 5 === 0 ? caseWord() : query();
      // Each shape (with and without maxAmount and type) in turn.
      const since = q % 4 === 1 ? pickCase(updatedTimes()) : undefined;
      if (await same(text, priceFilters(q), since)) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(0.4 * searches);
    // Each of the four shapes alone must have answered with listings. A sample of 50 can miss one
    // (TEST_SEED=467404876 drew no 'asset' search that found anything), so a missing shape is searched
    // for until it answers, on both stores as above: twenty searches of drawn words in the main asset
    // finding nothing is a fault.
    const alone: Record<string, () => DiscoveryFilters> = {
      asset: () => ({ asset: 'CASSET' }),
      'asset+maxAmount': () => ({ asset: 'CASSET', maxAmount: pickCase(BOUNDS) }),
      'asset+maxAmount+type': () => ({ asset: 'CASSET', maxAmount: pickCase(BOUNDS), type: pickCase(['http', 'mcp'] as const) }),
      'asset+type': () => ({ asset: 'CASSET', type: pickCase(['http', 'mcp'] as const) }),
    };
    for (const [shape, filters] of Object.entries(alone))
      for (let tries = 0; tries < 20 && !shapes.has(shape); tries++) await same(caseWord(), filters());
    for (const shape of Object.keys(alone)) expect(shapes).toContain(shape);
  }, 180_000);

  it('cursor walks with asset + maxAmount (+ type) visit the same listings in the same order, page by page', async () => {
    let pages = 0;
    // Each of a word, a query with a type and a query without, with maxAmount and without.
    const chosen = someOf(20, 6, (q) => `${q % 3} ${q % 5 === 4}`);
    for (const q of chosen) {
      const text = q % 3 === 0 ? caseWord() : query();
      const filters: DiscoveryFilters = { asset: 'CASSET', maxAmount: pickCase(['99', '100', '150', '1000', '1000000']) };
      if (q % 3 === 1) filters.type = pickCase(['http', 'mcp'] as const);
      if (q % 5 === 4) delete filters.maxAmount;
      const limit = pickCase([10, 25]);
      pages += (await expectSameWalk(postgres, text, filters, limit)).pages;
    }
    expect(pages).toBeGreaterThan(2 * chosen.length);
  }, 180_000);

  it('list pages (300 deep) at random and deep offsets give the same items and totals', async () => {
    for (let q = 0; q < cases(300, 60); q++) {
      // Each filter shape once first (q 1 to 12; 10 is a resource), then at random.
      const filters =
        q % 10 === 0
          ? { resource: `https://d${Math.floor(caseRand() * LISTINGS)}.example.com/r` }
          : q <= 12
            ? FILTERS[q - 1 - Math.floor(q / 10)]!
            : pickCase(FILTERS);
      const offset = pickCase([0, 1, 1_023, 1_024, 1_100, Math.floor(caseRand() * 1_300)]);
      const limit = pickCase([1, 20, 100]);
      // A third with the older listings hidden (LISTING_TTL_DAYS): totals from the blocks and the cut.
      const since = q % 3 === 1 ? pickCase(updatedTimes()) : undefined;
      const a = sqlite.list(filters, { limit, offset }, new Date(), since);
      const b = await postgres.list(filters, { limit, offset }, new Date(), since);
      expect(b, `${JSON.stringify(filters)} offset ${offset}`).toEqual(a);
    }
  }, 180_000);
  it('asset + maxAmount list pages (200 deep; + type, + network, + scheme, + another filter) at shallow and deep offsets give the same items and exact totals', async () => {
    let deep = 0;
    const pages = cases(200, 50);
    for (let q = 0; q < pages; q++) {
      // Half on one network, a third under one scheme: the price index's network, scheme and scheme+network keys.
      const scheme = q % 3 === 0 ? { scheme: pickCase(SCHEMES) } : {};
      // Each price shape in turn, on a network and not, under a scheme and not.
      const filters = { ...priceFilters(Math.floor(q / 2)), ...(q % 2 === 0 ? { network: pickCase(NETWORKS) } : {}), ...scheme };
      // From DEEP_OFFSET (1,024) the price counts carry the page's class ranges (postgres/price-index.ts priceCountsSql).
      const offset = pickCase([0, 7, 300, 1_023, 1_024, 1_100, Math.floor(caseRand() * 1_300)]);
      const limit = pickCase([1, 20, 100]);
      const since = q % 3 === 1 ? pickCase(updatedTimes()) : undefined;
      const a = sqlite.list(filters, { limit, offset }, new Date(), since);
      const b = await postgres.list(filters, { limit, offset }, new Date(), since);
      expect(b, `${JSON.stringify(filters)} offset ${offset}`).toEqual(a);
      if (offset + limit >= 1_024 && filters.maxAmount !== undefined) deep++;
    }
    expect(deep).toBeGreaterThan(0.15 * pages);
  }, 180_000);
});
