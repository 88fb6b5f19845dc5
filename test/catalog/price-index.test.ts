/**
 * The list endpoint's `asset` + `maxAmount` pages (docs/CATALOG.md "Price filters"), on SQLite and
 * PostgreSQL: asset + maxAmount alone, with `type` (part of the price index) or with other key
 * filters is answered from the price index, asset + maxAmount + scheme from the accepted entries
 * themselves. Every listing here accepts only scheme `exact`, so both must give the same items in
 * the same order and the same exact total, at every price bound, type and page, as HTTP and MCP
 * listings are refreshed with cheaper and dearer terms, age out (LISTING_TTL_DAYS), fail their
 * liveness checks past the grace period, and are withdrawn; and a catalog from before the index
 * kept the type gets it at open and answers the same. Every plan a price page may be read by
 * (by time, by price, by classes: sqlite/price-classes.ts) is also forced on the store itself,
 * at offsets past several price classes, and must give the same page and total: the counts
 * choose a plan by cost alone, so each must be right wherever it is chosen.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openCatalog, type Catalog } from '../../src/catalog/index.ts';
import { PRICE_INDEX_MIGRATION, TYPED_PRICE_INDEX_MIGRATION } from '../../src/catalog/postgres/price-index.ts';
import { CATALOG_MIGRATIONS } from '../../src/catalog/postgres/migrations.ts';
import { migrateToPriceIndex } from '../../src/catalog/sqlite/price-migrations.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { DEEP_OFFSET, filterKeys, toDiscoveryResource, type ListingKey } from '../../src/catalog/listing.ts';
import { failingBefore } from '../../src/catalog/liveness.ts';
import { listPriced, priceMatches } from '../../src/catalog/sqlite/price-index.ts';
import { listPriced as listPricedOnPostgres, priceCountsSql, type PriceCounts } from '../../src/catalog/postgres/price-index.ts';
import { parameters } from '../../src/catalog/postgres/queries.ts';
import { classPageSql, classPlan } from '../../src/catalog/sqlite/price-classes.ts';
import { priceIndexKey, priceKey, type PricePagePlan } from '../../src/catalog/price.ts';
import { ASSET, PAY_TO_A, PAY_TO_B, recordingLogger, seededRandom, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

const DAY = 86_400_000;
const GRACE = 3_600_000;
const OTHER_ASSET = 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC';
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
/** Settled on either network; the price filter alone, or on one of them (the network's price index keys). */
const NETWORK_A = 'stellar:pubnet';
const NETWORK_B = 'stellar:testnet';
const NETWORKS: Array<string | undefined> = [undefined, NETWORK_A, NETWORK_B];
/**
 * The other filters beside a network, in ASSET only (fewer than EXTRAS: each page and plan is a few
 * round trips on Postgres; the network test below has payTo driving beside a network).
 */
const NETWORK_EXTRAS: DiscoveryFilters[] = [{}, { type: 'http' }];

interface Listed {
  url: string;
  payTo: string;
  method: 'GET' | 'POST';
  /** Set for an MCP tool listing. */
  tool?: string;
}

type TempCatalog = ReturnType<typeof tempCatalog>;

/** A list page read from the store's price index with a forced plan: its listings' identities and total (undefined: not a price page). */
type ForcedPage = (
  filters: DiscoveryFilters,
  page: { limit: number; offset: number },
  plan: PricePagePlan,
) => Promise<{ identities: string[]; total: number } | undefined>;

/** A listed item's identity: type, resource and (MCP) tool name. */
function identity(item: { type: string; resource: string; extensions?: unknown }): string {
  const tool = (item.extensions as { bazaar?: { info?: { input?: { toolName?: string } } } } | undefined)?.bazaar?.info?.input?.toolName;
  return `${item.type} ${item.resource} ${item.type === 'mcp' ? (tool ?? '') : ''}`;
}

/** The price counts a Postgres list page reaching `reach` reads with its list counts (store.ts), read on their own. */
async function readPriceCounts(
  pool: pg.Pool,
  filters: DiscoveryFilters,
  visibleSince: string | undefined,
  failing: string | undefined,
  reach: number,
): Promise<PriceCounts> {
  const { values, p } = parameters();
  return (await pool.query<PriceCounts>(priceCountsSql(filters, p, visibleSince, failing, reach), values)).rows[0]!;
}

/**
 * ForcedPage on the Postgres database of `t` (its own pool), hiding what the catalog hides at its
 * clock. A by-classes page is read twice, its class ranges read apart (a shallow page's counts) and
 * carried by the counts (as a page reaching DEEP_OFFSET reads them): both must give the same page.
 */
function forcedPostgresPage(t: TempCatalog, ttlMs: number): ForcedPage & { close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
  const forced = async (filters: DiscoveryFilters, page: { limit: number; offset: number }, plan: PricePagePlan) => {
    const counted: Array<{ key: ListingKey; n: number }> = [];
    for (const key of filterKeys(filters)) {
      const { rows } = await pool.query<{ n: string }>('SELECT n FROM listing_counts WHERE kind = $1 AND value = $2', [
        key.kind,
        key.value,
      ]);
      counted.push({ key, n: Number(rows[0]?.n ?? 0) });
    }
    counted.sort((x, y) => x.n - y.n);
    const now = t.clock().getTime();
    const [visibleSince, failing] = [new Date(now - ttlMs).toISOString(), failingBefore(now, GRACE)];
    const counts = await readPriceCounts(pool, filters, visibleSince, failing, page.offset + page.limit);
    expect(counts.class_ranges).toBeNull();
    const listed = await listPricedOnPostgres(pool, filters, counted, counts, page, new Date(now), visibleSince, failing, plan);
    if (!listed) return undefined;
    const identities = listed.rows.map((row) => identity(toDiscoveryResource(row)));
    if (plan.startsWith('by-classes')) {
      const carrying = await readPriceCounts(pool, filters, visibleSince, failing, DEEP_OFFSET);
      expect(carrying.class_ranges).not.toBeNull();
      const carried = await listPricedOnPostgres(pool, filters, counted, carrying, page, new Date(now), visibleSince, failing, plan);
      expect({ identities: carried!.rows.map((row) => identity(toDiscoveryResource(row))), total: carried!.total }).toEqual({
        identities,
        total: listed.total,
      });
    }
    return { identities, total: listed.total };
  };
  return Object.assign(forced, { close: () => pool.end() });
}

/** ForcedPage on the SQLite file of `t` (its own read connection), hiding what the catalog hides at its clock. */
function forcedSqlitePage(t: TempCatalog, ttlMs: number): ForcedPage & { close(): Promise<void> } {
  const db = new DatabaseSync(t.dbPath, { readOnly: true });
  const forced = async (filters: DiscoveryFilters, page: { limit: number; offset: number }, plan: PricePagePlan) => {
    const counted = filterKeys(filters)
      .map((key) => ({
        key,
        n: Number(
          (db.prepare('SELECT n FROM listing_counts WHERE kind = ? AND value = ?').get(key.kind, key.value) as { n: number } | undefined)
            ?.n ?? 0,
        ),
      }))
      .sort((x, y) => x.n - y.n);
    const now = t.clock().getTime();
    const listed = listPriced(db, filters, counted, page, new Date(now - ttlMs).toISOString(), failingBefore(now, GRACE), plan);
    if (!listed) return undefined;
    const row = db.prepare('SELECT type, resource, tool_name FROM listings WHERE id = ?');
    const identities = listed.ids.map((id) => {
      const l = row.get(id) as { type: string; resource: string; tool_name: string };
      return `${l.type} ${l.resource} ${l.type === 'mcp' ? l.tool_name : ''}`;
    });
    return { identities, total: listed.total };
  };
  return Object.assign(forced, { close: () => Promise.resolve(db.close()) });
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
   * Every bound, network, filter combination and page answered by the price index and by the
   * accepted entries alike (`scheme` keeps a page on the accepted entries); the matches seen
   * without a network.
   */
  const same = async (catalog: Catalog, forced?: ForcedPage) => {
    const matched = { all: 0, http: 0, mcp: 0 };
    let forcedPages = 0;
    for (const asset of [ASSET, OTHER_ASSET])
      for (const network of asset === ASSET ? NETWORKS : [undefined])
        for (const maxAmount of BOUNDS)
          for (const extra of network === undefined ? EXTRAS : NETWORK_EXTRAS)
            for (const page of forced ? DEEP_PAGES : PAGES) {
              const filters: DiscoveryFilters = { asset, maxAmount, ...extra, ...(network === undefined ? {} : { network }) };
              const byEntries = await catalog.list({ ...filters, scheme: 'exact' }, page);
              const label = JSON.stringify({ ...filters, ...page });
              if (forced)
                for (const plan of PLANS) {
                  const got = await forced(filters, page, plan);
                  if (!got) continue; // another key filter drives the page (fewer listings than matches)
                  forcedPages++;
                  expect(got.identities, `${label} ${plan}`).toEqual(byEntries.items.map(identity));
                  expect(got.total, `${label} ${plan}`).toBe(byEntries.pagination.total);
                }
              if (!PAGES.includes(page)) continue;
              const byPrice = await catalog.list(filters, page);
              expect(
                byPrice.items.map((i) => [i.type, i.resource]),
                label,
              ).toEqual(byEntries.items.map((i) => [i.type, i.resource]));
              expect(byPrice.pagination.total, label).toBe(byEntries.pagination.total);
              if (extra.type !== undefined) for (const item of byPrice.items) expect(item.type, label).toBe(extra.type);
              if (page.offset === 0 && extra.payTo === undefined && network === undefined)
                matched[(extra.type ?? 'all') as keyof typeof matched] += byPrice.pagination.total;
            }
    // Most pages are price pages (a payTo holds about half the listings, more than most bounds match).
    if (forced) expect(forcedPages).toBeGreaterThan(2 * BOUNDS.length * DEEP_PAGES.length * PLANS.length);
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
      const live = t.catalog.liveness!;
      const claimedAt = t.clock().getTime();
      const due = await live.claimDue(claimedAt, claimedAt, 1000);
      const failedAt = t.clock().toISOString();
      for (const l of due.filter((_, i) => i % 4 === 0))
        await live.writeLiveness(l.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimedAt);
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
    // About 1,500 list pages against their accepted-entry twins (each forced plan too): 160 s on Postgres at load 11.
  }, 400_000);

  it('network + asset + maxAmount: one accepted entry holds all three, no asset spells another key, offset pages visit each match once', async () => {
    const t = tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    try {
      const pay = async (name: string, network: string, amount: string, asset = ASSET, payTo = PAY_TO_A) => {
        const s = settlement({ url: `https://${name}.example.com/r`, amount, payTo, description: 'network price listing' });
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
      const listed = async (filters: DiscoveryFilters) => {
        const page = await t.catalog.list(filters, { limit: 100, offset: 0 });
        // The accepted entries agree (`scheme` keeps a page off the price index).
        const byEntries = await t.catalog.list({ ...filters, scheme: 'exact' }, { limit: 100, offset: 0 });
        expect(page, JSON.stringify(filters)).toEqual(byEntries);
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

      // More listings on both networks at spread prices: offset pages of the network's price range visit each match once.
      const rand = seededRandom(0x0ff5e7);
      for (let i = 0; i < 60; i++)
        await pay(
          `walk${i}`,
          rand() < 0.5 ? NETWORK_A : NETWORK_B,
          String(1 + Math.floor(rand() * 2000)),
          ASSET,
          i % 6 === 0 ? PAY_TO_B : PAY_TO_A,
        );
      // A payTo holding fewer listings than the matches drives the page instead, with one price lookup per row.
      expect((await listed({ asset: ASSET, maxAmount: '1000', network: NETWORK_A, payTo: PAY_TO_B })).length).toBeGreaterThan(0);
      expect((await listed({ asset: ASSET, maxAmount: '1000', network: NETWORK_B, payTo: PAY_TO_A })).length).toBeGreaterThan(5);
      for (const filters of [
        { asset: ASSET, maxAmount: '1000', network: NETWORK_A },
        { asset: ASSET, maxAmount: '1000', network: NETWORK_B, type: 'http' },
      ]) {
        const whole = await t.catalog.list(filters, { limit: 100, offset: 0 });
        expect(whole.pagination.total).toBeGreaterThan(10);
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

  it('a catalog from before the price index kept the type gets it at open and lists the same', async () => {
    const databaseUrl = backend === 'Postgres' ? await freshCatalogDatabase() : undefined;
    const t = tempCatalog(undefined, { databaseUrl });
    let reopened: Catalog | undefined;
    try {
      const { add, same } = pricedCatalog(t, 0xbeef);
      await add(50);
      const expected = await same(t.catalog);
      expect(expected.mcp).toBeGreaterThan(0);
      await t.catalog.close();
      // Back to the untyped index as the price index's first migration built it, to schema 8 (on
      // SQLite also without the term signatures of migration 10).
      if (databaseUrl === undefined) {
        const db = new DatabaseSync(t.dbPath);
        db.exec('DROP TABLE listing_prices; DROP TABLE price_counts; DROP TABLE price_buckets');
        migrateToPriceIndex(db);
        db.exec(`DROP INDEX search_terms_top; ALTER TABLE search_terms DROP COLUMN sig; ALTER TABLE search_terms DROP COLUMN sketch_a;
          ALTER TABLE search_terms DROP COLUMN sketch_b; CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC, from_seq, to_seq);
          DROP INDEX search_revisions_by_top; ALTER TABLE search_revisions DROP COLUMN top_shares; ALTER TABLE search_revisions DROP COLUMN sig;
          ALTER TABLE search_revisions DROP COLUMN sketch_a; ALTER TABLE search_revisions DROP COLUMN sketch_b`);
        db.exec('PRAGMA user_version = 8');
        db.close();
      } else {
        const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
        await pool.query(`DROP TABLE listing_prices; DROP TABLE price_counts; DROP TABLE price_buckets; ${PRICE_INDEX_MIGRATION}`);
        // Back to the version before the typed index (its migration and every later one run again).
        await pool.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [
          CATALOG_MIGRATIONS.indexOf(TYPED_PRICE_INDEX_MIGRATION),
        ]);
        await pool.end();
      }
      reopened = openCatalog({
        dbPath: t.dbPath,
        databaseUrl,
        logger: recordingLogger(),
        clock: t.clock,
        readDeadlineMs: 30_000,
        writeDeadlineMs: 30_000,
        schemaWallMs: 10_000,
      });
      expect(await same(reopened)).toEqual(expected);
    } finally {
      await reopened?.close();
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
      const counts = priceMatches(db, { asset: ASSET, type: undefined }, max);
      const rest = { sql: ' AND p.last_updated >= ?', params: ['2026-01-01T00:00:00.000Z'] };
      const plan = (maxByPrice: boolean) => {
        const { arms } = classPlan(db, { asset: ASSET, type: undefined }, max, counts, 20, maxByPrice);
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
        const { sql, params } = classPageSql(arms, ASSET, max, rest);
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
