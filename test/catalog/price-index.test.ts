/**
 * The list endpoint's `asset` + `maxAmount` pages (docs/CATALOG.md "Price filters"), on SQLite and
 * PostgreSQL: alone, with `type`, `network`, `scheme` (all parts of the price index) or other key
 * filters, each page must be what the accepted entries say (price-forced.ts byAcceptedEntries,
 * which never reads the price index): the same items in the same order and the same exact total,
 * at every bound, type, scheme, network and page, as HTTP and MCP listings are refreshed with
 * cheaper and dearer terms under two schemes on two networks, age out (LISTING_TTL_DAYS), fail
 * their liveness checks past the grace period and are withdrawn.
 * Every plan a price page may be read by (by time, by price, by classes: src/catalog/price.ts pricePage)
 * is also forced on the store itself, at offsets past several price classes, with the same page
 * and total: the counts choose a plan by cost alone, so each must be right wherever it is chosen.
 */
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/index.ts';
import type { DiscoveryFilters, ListPage } from '../../src/catalog/types.ts';
import { classPageSql, priceCounts, priceIndex } from '../../src/catalog/sqlite/price-index.ts';
import { SQLITE_CLASS_COSTS, classPlan, priceIndexKey, priceKey, type ClassRanges, type PricePagePlan } from '../../src/catalog/price.ts';
import { ASSET, PAY_TO_A, PAY_TO_B, seededRandom, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';
import { DEEP, caseRandom, sample } from '../helpers/cases.ts';
import {
  GRACE,
  byAcceptedEntries,
  failEvery,
  forcedPostgresPage,
  forcedSqlitePage,
  identity,
  type ForcedPage,
  type TempCatalog,
} from './price-forced.ts';

const DAY = 86_400_000;
const OTHER_ASSET = 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC';
/** The asset of the scheme cases in the scope test. */
const SCHEMED = 'CSCHEMEDASSETXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX';
// Price classes (digit count and leading digit): 5, 7 ('007'); 10–19; 50–59; 100; 1000; 20000.
const AMOUNTS = ['5', '10', '10', '15', '19', '50', '59', '100', '1000', '20000', '007'];
// Below every price, class starts (10, 1000: M on a class boundary, with equal prices), inside a
// class with matches on both sides (15; 55, above a lower class of its digit count), an empty
// class (99), inside a class (20001), above all.
const BOUNDS = ['4', '10', '15', '55', '99', '1000', '20001', '100000'];
const PAGES = [
  { limit: 100, offset: 0 },
  { limit: 7, offset: 3 },
];
/** Pages of the forced plans: offsets past several classes' listings, and past the end. */
const DEEP_PAGES = [...PAGES, { limit: 5, offset: 12 }, { limit: 3, offset: 31 }, { limit: 10, offset: 75 }];
const PLANS: PricePagePlan[] = ['by-time', 'by-price', 'by-classes', 'by-classes-max-by-price'];
const EXTRAS: DiscoveryFilters[] = [{}, { type: 'http' }, { type: 'mcp' }, { type: 'mcp', payTo: PAY_TO_B }, { payTo: PAY_TO_B }];
/**
 * Settled on either network under either scheme. Beside the asset, the price filter alone, or on a
 * network, under a scheme, or under a scheme on a network (their own price index keys).
 */
const NETWORK_A = 'stellar:pubnet';
const NETWORK_B = 'stellar:testnet';
const SCHEMES = ['exact', 'upto'];
const PAIRS: DiscoveryFilters[] = [
  { scheme: 'exact', network: NETWORK_A },
  { scheme: 'upto', network: NETWORK_B },
];
const SCOPES: DiscoveryFilters[] = [{}, { network: NETWORK_A }, { network: NETWORK_B }, { scheme: 'exact' }, { scheme: 'upto' }, ...PAIRS];
/**
 * The other filters beside a network or scheme, in ASSET only (fewer than EXTRAS: each page and
 * plan is a few round trips on Postgres; the scope tests below have payTo driving beside them).
 */
const SCOPED_EXTRAS: DiscoveryFilters[] = [{}, { type: 'http' }];

interface Listed {
  url: string;
  payTo: string;
  method: 'GET' | 'POST';
  /** Set for an MCP tool listing. */
  tool?: string;
}

/** A catalog with HTTP and MCP listings paid at random amounts in two assets, and the checks against the accepted entries. */
function pricedCatalog(t: TempCatalog, seed: number) {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const listed: Listed[] = [];
  const pay = async (i: number) => {
    const { url, payTo, method, tool } = listed[i]!;
    const s = settlement({ url, payTo, method, amount: pick(AMOUNTS), description: 'price index listing', mcpTool: tool });
    s.paymentRequirements.asset = rand() < 0.7 ? ASSET : OTHER_ASSET;
    s.paymentRequirements.network = rand() < 0.6 ? NETWORK_A : NETWORK_B;
    s.paymentRequirements.scheme = pick(SCHEMES);
    expect(await t.catalog.recordSettlement(s)).toEqual({ status: 'success' });
    // Some writes share their time with the one before: pages order those by listing, newest first.
    if (rand() < 0.8) t.tick(1000);
  };
  const add = async (n: number) => {
    for (let k = 0; k < n; k++) {
      const mcp = rand() < 0.4;
      // Some MCP tools share the URL of an HTTP listing: another listing (its identity holds the type and tool).
      const url = mcp && listed.length > 0 && rand() < 0.3 ? listed[listed.length - 1]!.url : `https://p${listed.length}.example.com/r`;
      listed.push({
        url,
        payTo: rand() < 0.5 ? PAY_TO_A : PAY_TO_B,
        method: pick(['GET', 'POST']),
        ...(mcp ? { tool: `tool_${listed.length}` } : {}),
      });
      await pay(listed.length - 1);
      if (rand() < 0.4) await pay(listed.length - 1);
    }
  };
  /**
   * Every bound, scope (network, scheme), filter combination and page answered by the price index
   * and by the accepted entries alike (byAcceptedEntries); the matches seen without a scope.
   */
  let rounds = 0;
  // The bounds of the default run, in an order drawn per run: the first call reads the one above
  // every price and another, each later call the next two, so four states of a catalog check every
  // bound (without a scope) once; the deep run reads every bound in every state.
  const caseRand = caseRandom(`price-index ${seed}`);
  const shuffled = BOUNDS.slice(0, -1)
    .map((bound) => ({ bound, key: caseRand() }))
    .sort((a, b) => a.key - b.key)
    .map(({ bound }) => bound);
  const boundOrder = [BOUNDS.at(-1)!, ...shuffled];
  /** `round`: calls with the same round check the same filters (a catalog reopened answers what it answered before). */
  const same = async (catalog: Catalog, forced?: ForcedPage, round = rounds++) => {
    const matched = { all: 0, http: 0, mcp: 0 };
    let forcedRead = 0;
    const unscoped = DEEP ? BOUNDS : [0, 1].map((k) => boundOrder[(2 * round + k) % boundOrder.length]!);
    // Beside a network or scheme, every other bound, the other half on the next call: each scoped
    // bound is still checked in every other state of the catalog (by default one drawn at random).
    const scoped = () => (DEEP ? BOUNDS.filter((_, b) => b % 2 === round % 2) : [BOUNDS[Math.floor(caseRand() * BOUNDS.length)]!]);
    const chosen = [ASSET, OTHER_ASSET].flatMap((asset) =>
      (asset === ASSET ? SCOPES : [{}]).flatMap((scope) =>
        (Object.keys(scope).length === 0 ? unscoped : scoped()).flatMap((maxAmount) =>
          (Object.keys(scope).length === 0 ? EXTRAS : SCOPED_EXTRAS).map((extra) => ({ asset, scope, maxAmount, extra })),
        ),
      ),
    );
    let forcedAsked = 0;
    // The accepted entries of each unpriced filter set, read once per state (bounds share them).
    const unpricedLists = new Map<string, Promise<ListPage>>();
    for (const { asset, scope, maxAmount, extra } of chosen) {
      const filters: DiscoveryFilters = { asset, maxAmount, ...extra, ...scope };
      const whole = await byAcceptedEntries(catalog, filters, { limit: 10_000, offset: 0 }, unpricedLists);
      // By default each filter set's forced plans read one page, drawn per run (a state's 32 filter
      // sets read every page, each plan on each); the deep run every page.
      const forcedPages = sample(DEEP_PAGES, 1, caseRand);
      for (const page of forced ? DEEP_PAGES : PAGES) {
        const expected = whole.items.slice(page.offset, page.offset + page.limit).map(identity);
        const label = JSON.stringify({ ...filters, ...page });
        if (forced && forcedPages.includes(page))
          for (const plan of PLANS) {
            forcedAsked++;
            const got = await forced(filters, page, plan);
            if (!got) continue; // another key filter drives the page (fewer listings than matches)
            forcedRead++;
            expect(got.identities, `${label} ${plan}`).toEqual(expected);
            expect(got.total, `${label} ${plan}`).toBe(whole.pagination.total);
          }
        if (!PAGES.includes(page)) continue;
        const byPrice = await catalog.list(filters, page);
        expect(byPrice.items.map(identity), label).toEqual(expected);
        expect(byPrice.pagination.total, label).toBe(whole.pagination.total);
        if (extra.type !== undefined) for (const item of byPrice.items) expect(item.type, label).toBe(extra.type);
        if (page.offset === 0 && extra.payTo === undefined && Object.keys(scope).length === 0)
          matched[(extra.type ?? 'all') as keyof typeof matched] += byPrice.pagination.total;
      }
    }
    // Most pages are price pages (a payTo holds about half the listings, more than most bounds match).
    if (forced) expect(forcedRead).toBeGreaterThan(forcedAsked / 8);
    return matched;
  };
  return { listed, pay, add, same, rand };
}

describe.each(BACKENDS)('on %s', (backend) => {
  it('asset + maxAmount, with or without type, lists exactly what the accepted entries say, through refreshes, ageing, failures and withdrawals', async () => {
    const t = tempCatalog(undefined, {
      databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined,
      listingTtlDays: 10,
      livenessGraceMs: GRACE,
    });
    const forced = backend === 'SQLite' ? forcedSqlitePage(t, 10 * DAY) : forcedPostgresPage(t, 10 * DAY);
    try {
      const { listed, pay, add, same, rand } = pricedCatalog(t, 0x5eed);
      await add(40);
      const first = await same(t.catalog, forced);
      // Both types are listed and priced: the typed matches split the untyped ones.
      expect(first.http).toBeGreaterThan(0);
      expect(first.mcp).toBeGreaterThan(0);
      expect(first.http + first.mcp).toBe(first.all);
      t.tick(11 * DAY); // the first 40 age out of the 10-day TTL
      await add(40);
      for (let k = 0; k < 15; k++) await pay(Math.floor(rand() * 40)); // some come back, cheaper or dearer
      await same(t.catalog, forced);

      // Every fourth listing due for a check fails it past the grace period: aged ones and visible ones.
      await failEvery(t, 4);
      t.tick(GRACE + 1000);
      await same(t.catalog, forced);

      // A withdrawn listing, one of each type, leaves the price index and its counts.
      for (const type of ['mcp', 'http']) {
        const filters = { asset: ASSET, maxAmount: '100000', type };
        const before = (await t.catalog.list(filters, { limit: 1, offset: 0 })).pagination.total;
        const gone = (await t.catalog.list(filters, { limit: 1, offset: 0 })).items[0]!;
        const tool =
          type === 'mcp' ? (gone.extensions as { bazaar: { info: { input: { toolName: string } } } }).bazaar.info.input.toolName : '';
        const owner = listed.find((u) => u.url === gone.resource && (u.tool ?? '') === tool)!.payTo;
        expect(
          await t.catalog.withdraw!({ resource: gone.resource, type, toolName: tool, owner, issuedAtMs: t.clock().getTime() }),
        ).toEqual({
          status: 'delisted',
        });
        expect((await t.catalog.list(filters, { limit: 1, offset: 0 })).pagination.total).toBe(before - 1);
      }
      await same(t.catalog, forced);
    } finally {
      await forced.close();
      t.close();
    }
    // Thousands of list pages against the accepted entries (each forced plan too): the longest test here on Postgres.
  }, 400_000);

  it('network and/or scheme + asset + maxAmount: one accepted entry holds them all, no asset, scheme or network spells another key, offset pages visit each match once', async () => {
    const t = tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    try {
      const pay = async (name: string, network: string, amount: string, asset = ASSET, payTo = PAY_TO_A, scheme = 'exact') => {
        const s = settlement({ url: `https://${name}.example.com/r`, amount, payTo, scheme, description: 'scoped price listing' });
        s.paymentRequirements.network = network;
        s.paymentRequirements.asset = asset;
        expect(await t.catalog.recordSettlement(s)).toEqual({ status: 'success' });
        t.tick(1000);
      };
      await pay('split', NETWORK_A, '10'); // cheap on A
      await pay('split', NETWORK_B, '5000'); // dear on B
      await pay('mixed', NETWORK_A, '5000'); // dear in the asset on A,
      await pay('mixed', NETWORK_A, '10', OTHER_ASSET); // cheap in another asset on A
      await pay('mixed', NETWORK_B, '10', OTHER_ASSET);
      // An asset spelled as network A's key of ASSET, and a network and asset that concatenate to A's and ASSET.
      await pay('spoof', NETWORK_B, '1', priceIndexKey(ASSET, NETWORK_A));
      await pay('shift', `${NETWORK_A}${ASSET.slice(0, 1)}`, '1', ASSET.slice(1));
      // In SCHEMED: cheap under exact and dear under upto on A; cheap under upto on A and under exact on B.
      await pay('schemes', NETWORK_A, '10', SCHEMED, PAY_TO_A, 'exact');
      await pay('schemes', NETWORK_A, '5000', SCHEMED, PAY_TO_A, 'upto');
      await pay('cross', NETWORK_A, '10', SCHEMED, PAY_TO_A, 'upto');
      await pay('cross', NETWORK_B, '10', SCHEMED, PAY_TO_A, 'exact');
      // A scheme named as network A; a scheme and asset, and a scheme and network, that concatenate to exact's
      // and SCHEMED, and to exact's and A; assets spelled as exact's key and exact on A's key of SCHEMED.
      await pay('mirror', NETWORK_B, '1', SCHEMED, PAY_TO_A, NETWORK_A);
      await pay('sshift', NETWORK_A, '1', SCHEMED.slice(1), PAY_TO_A, `exact${SCHEMED.slice(0, 1)}`);
      await pay('pshift', NETWORK_A.slice(1), '1', SCHEMED, PAY_TO_A, `exact${NETWORK_A.slice(0, 1)}`);
      const [schemeKey, pairKey] = [priceIndexKey(SCHEMED, undefined, 'exact'), priceIndexKey(SCHEMED, NETWORK_A, 'exact')];
      await pay('sspoof', NETWORK_B, '1', schemeKey, PAY_TO_A, 'upto');
      await pay('sspoof', NETWORK_B, '1', pairKey, PAY_TO_A, 'upto');
      const listed = async (filters: DiscoveryFilters) => {
        const page = await t.catalog.list(filters, { limit: 100, offset: 0 });
        // The accepted entries agree.
        expect(page, JSON.stringify(filters)).toEqual(await byAcceptedEntries(t.catalog, filters, { limit: 100, offset: 0 }));
        expect(page.pagination.total).toBe(page.items.length);
        return page.items.map((i) => new URL(i.resource).hostname.split('.')[0]);
      };
      expect(await listed({ asset: ASSET, maxAmount: '100', network: NETWORK_A })).toEqual(['split']);
      expect(await listed({ asset: ASSET, maxAmount: '100', network: NETWORK_B })).toEqual([]);
      expect(await listed({ asset: ASSET, maxAmount: '5000', network: NETWORK_B })).toEqual(['split']);
      expect(await listed({ asset: ASSET, maxAmount: '5000', network: NETWORK_A })).toEqual(['mixed', 'split']);
      expect(await listed({ asset: ASSET, maxAmount: '100' })).toEqual(['split']);
      expect(await listed({ asset: OTHER_ASSET, maxAmount: '10', network: NETWORK_A })).toEqual(['mixed']);
      expect(await listed({ asset: ASSET, maxAmount: '1', network: NETWORK_A })).toEqual([]);
      expect(await listed({ asset: priceIndexKey(ASSET, NETWORK_A), maxAmount: '1' })).toEqual(['spoof']);
      expect(await listed({ asset: priceIndexKey(ASSET, NETWORK_A), maxAmount: '1', network: NETWORK_B })).toEqual(['spoof']);
      expect(await listed({ asset: priceIndexKey(ASSET, NETWORK_A), maxAmount: '1', network: NETWORK_A })).toEqual([]);
      expect(await listed({ asset: ASSET.slice(1), maxAmount: '1', network: `${NETWORK_A}${ASSET.slice(0, 1)}` })).toEqual(['shift']);
      const priced = (maxAmount: string, scope: DiscoveryFilters) => listed({ asset: SCHEMED, maxAmount, ...scope });
      expect(await priced('100', { scheme: 'exact' })).toEqual(['cross', 'schemes']);
      expect(await priced('100', { scheme: 'upto' })).toEqual(['cross']);
      expect(await priced('5000', { scheme: 'upto' })).toEqual(['cross', 'schemes']);
      expect(await priced('100', { scheme: 'exact', network: NETWORK_A })).toEqual(['schemes']);
      expect(await priced('100', { scheme: 'exact', network: NETWORK_B })).toEqual(['cross']);
      expect(await priced('100', { scheme: 'upto', network: NETWORK_A })).toEqual(['cross']);
      expect(await priced('100', { scheme: 'upto', network: NETWORK_B })).toEqual([]);
      expect(await priced('5000', { scheme: 'upto', network: NETWORK_A })).toEqual(['cross', 'schemes']);
      expect(await priced('100', { network: NETWORK_A })).toEqual(['cross', 'schemes']);
      expect(await priced('1', { scheme: 'exact' })).toEqual([]);
      expect(await priced('1', { scheme: 'exact', network: NETWORK_A })).toEqual([]);
      expect(await priced('1', { scheme: NETWORK_A })).toEqual(['mirror']);
      expect(await priced('1', { network: NETWORK_A })).toEqual([]);
      expect(await priced('1', { scheme: 'upto' })).toEqual([]);
      expect(await priced('1', { scheme: `exact${NETWORK_A.slice(0, 1)}`, network: NETWORK_A.slice(1) })).toEqual(['pshift']);
      expect(await listed({ asset: SCHEMED.slice(1), maxAmount: '1', scheme: `exact${SCHEMED.slice(0, 1)}` })).toEqual(['sshift']);
      expect(await listed({ asset: schemeKey, maxAmount: '1', scheme: 'upto' })).toEqual(['sspoof']);
      expect(await listed({ asset: schemeKey, maxAmount: '1', scheme: 'exact' })).toEqual([]);
      expect(await listed({ asset: pairKey, maxAmount: '1', scheme: 'upto', network: NETWORK_B })).toEqual(['sspoof']);
      expect(await listed({ asset: pairKey, maxAmount: '1', scheme: 'exact', network: NETWORK_A })).toEqual([]);

      // More listings on both networks under both schemes at spread prices: offset pages of each price range
      // visit each match once (the schemes drawn apart, so the networks and amounts are as they were).
      const rand = seededRandom(0x0ff5e7);
      const schemes = seededRandom(0x5c4e3e);
      for (let i = 0; i < 60; i++)
        await pay(
          `walk${i}`,
          rand() < 0.5 ? NETWORK_A : NETWORK_B,
          String(1 + Math.floor(rand() * 2000)),
          ASSET,
          i % 6 === 0 ? PAY_TO_B : PAY_TO_A,
          schemes() < 0.5 ? 'exact' : 'upto',
        );
      // A payTo holding fewer listings than the matches drives the page instead, with one price lookup per row.
      expect((await listed({ asset: ASSET, maxAmount: '1000', network: NETWORK_A, payTo: PAY_TO_B })).length).toBeGreaterThan(0);
      expect((await listed({ asset: ASSET, maxAmount: '1000', network: NETWORK_B, payTo: PAY_TO_A })).length).toBeGreaterThan(5);
      expect((await listed({ asset: ASSET, maxAmount: '1000', scheme: 'upto', payTo: PAY_TO_A })).length).toBeGreaterThan(5);
      await listed({ asset: ASSET, maxAmount: '1000', scheme: 'upto', network: NETWORK_A, payTo: PAY_TO_B });
      for (const filters of [
        { asset: ASSET, maxAmount: '1000', network: NETWORK_A },
        { asset: ASSET, maxAmount: '1000', network: NETWORK_B, type: 'http' },
        { asset: ASSET, maxAmount: '1000', scheme: 'upto' },
        { asset: ASSET, maxAmount: '2000', scheme: 'exact', network: NETWORK_B },
      ]) {
        expect((await listed(filters)).length).toBeGreaterThan(6);
        const whole = await t.catalog.list(filters, { limit: 100, offset: 0 });
        const walked: string[] = [];
        for (let offset = 0; offset < whole.pagination.total + 3; offset += 3) {
          const page = await t.catalog.list(filters, { limit: 3, offset });
          expect(page.pagination.total).toBe(whole.pagination.total);
          walked.push(...page.items.map((i) => i.resource));
        }
        expect(walked).toEqual(whole.items.map((i) => i.resource));
        expect(new Set(walked).size).toBe(walked.length);
      }
    } finally {
      t.close();
    }
  }, 120_000);
});

describe('on SQLite, a by-classes page', () => {
  it('is a merge of index ranges already in page order: no sort, unless max’s class is read by price', async () => {
    const t = tempCatalog();
    const db = new DatabaseSync(t.dbPath, { readOnly: true });
    try {
      await pricedCatalog(t, 0xc1a55).add(40);
      const max = priceKey('55')!;
      const range = { key: ASSET, type: undefined, max };
      const counts = priceCounts(db, range, ASSET, true, undefined);
      const read = { ...range, others: [], visibleSince: '2026-01-01T00:00:00.000Z', failing: undefined };
      const plan = (maxByPrice: boolean) => {
        const matches = { matches: counts.below + counts.within, belowClass: counts.below };
        const { arms } = classPlan(priceIndex(db).classRanges(range) as ClassRanges, range, matches, 20, SQLITE_CLASS_COSTS, maxByPrice);
        // Digit counts 1 (5, 7), class 1 of two digits (10–19), max's class (50–59): for each type.
        expect(arms.map((a) => a.kind).sort()).toEqual(
          [
            'digits',
            'digits',
            'class',
            'class',
            maxByPrice ? 'max-by-price' : 'max-by-time',
            maxByPrice ? 'max-by-price' : 'max-by-time',
          ].sort(),
        );
        const { sql, params } = classPageSql(arms, read);
        return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params, 20, 0) as Array<{ detail: string }>).map((r) => r.detail);
      };
      const walked = plan(false);
      expect(walked.filter((d) => d === 'MERGE (UNION ALL)')).toHaveLength(5);
      expect(walked.filter((d) => d.startsWith('SEARCH'))).toHaveLength(6);
      expect(walked.filter((d) => d.includes('TEMP B-TREE'))).toEqual([]);
      // Max's class read by price: its matches sorted, once per type; the other ranges still merged as they are.
      expect(plan(true).filter((d) => d.includes('TEMP B-TREE'))).toEqual(['USE TEMP B-TREE FOR ORDER BY', 'USE TEMP B-TREE FOR ORDER BY']);
    } finally {
      db.close();
      t.close();
    }
  });
});
