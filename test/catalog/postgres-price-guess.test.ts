/**
 * A priced list page's statement sent with its counts on PostgreSQL (src/catalog/postgres/price-guess.ts): the store
 * guesses the page's statement from the shape (plan, failing cut, class ranges) the last page of the same filters was
 * read in, and listPriced takes the guess's rows only when it is the very statement it chose. Every page must be what the
 * accepted entries say (price-forced.ts byAcceptedEntries) whatever the guess was: a shape of each plan (by time, by
 * price, by classes: docs/CATALOG.md "List") guessed for a page read in each plan, at another offset, with `type`, after
 * a listing starts failing its liveness checks (the guess did not leave it out) and after listings age out of the TTL; a
 * guess of the chosen shape is taken (no statement of its own). Through the store, the same filters listed again and
 * again across those changes give the accepted entries' pages.
 */
import { describe, expect, it } from 'vitest';
import { toDiscoveryResource, type ListingKey } from '../../src/catalog/listing.ts';
import { failingBefore } from '../../src/catalog/liveness.ts';
import { listPriced, pricedPageStatement } from '../../src/catalog/postgres/price-index.ts';
import { PricedPageGuesses } from '../../src/catalog/postgres/price-guess.ts';
import { priceCountsSql, type PriceCounts } from '../../src/catalog/postgres/price-counts.ts';
import { parameters, type Db } from '../../src/catalog/postgres/queries.ts';
import type { PricePagePlan } from '../../src/catalog/price.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { openPool } from '../../src/db/postgres.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import type pg from 'pg';
import { ASSET, PAY_TO_A, seededRandom, settlement, tempCatalog } from './fixtures.ts';
import { freshCatalogDatabase } from './fresh.ts';
import { GRACE, byAcceptedEntries, failEvery, identity, listKeyCounts, type TempCatalog } from './price-forced.ts';

const DAY = 86_400_000;
const TTL_DAYS = 10;
const AMOUNTS = ['5', '10', '15', '19', '50', '59', '100', '1000', '20000'];
const PLANS: PricePagePlan[] = ['by-time', 'by-price', 'by-classes', 'by-classes-max-by-price'];
const PAGES = [
  { limit: 5, offset: 0 },
  { limit: 4, offset: 7 },
];
const FILTERS: DiscoveryFilters[] = [
  { asset: ASSET, maxAmount: '55' },
  { asset: ASSET, maxAmount: '1000', type: 'mcp' },
  { asset: ASSET, maxAmount: '100000', type: 'http' },
];

/** `n` listings more, HTTP and MCP, at random amounts of ASSET, a second apart. */
async function add(t: TempCatalog, rand: () => number, n: number, from: number): Promise<void> {
  for (let k = from; k < from + n; k++) {
    const mcp = rand() < 0.4;
    const s = settlement({
      url: `https://g${k}.example.com/r`,
      payTo: PAY_TO_A,
      amount: AMOUNTS[Math.floor(rand() * AMOUNTS.length)]!,
      description: 'price guess listing',
      ...(mcp ? { mcpTool: `tool_${k}` } : {}),
    });
    expect(await t.catalog.recordSettlement(s)).toEqual({ status: 'success' });
    t.tick(1000);
  }
}

/** Every shape guessed for every plan and page, on one pipelined connection of `t`'s database, against the accepted entries. */
async function everyGuess(t: TempCatalog, failingNow: boolean): Promise<{ taken: number; pages: number }> {
  const pool = openPool(t.databaseUrl!, { max: 1, pipeline: true });
  const client = await pool.connect();
  let statements = 0;
  const db: Db = {
    query: ((config: string | { text: string }, values?: unknown[]) => {
      const text = typeof config === 'string' ? config : config.text;
      if (text.startsWith('WITH page AS MATERIALIZED')) statements++; // a page statement (queries.ts pageListingsStatement)
      return client.query(config as string, values);
    }) as Db['query'],
  };
  let taken = 0;
  let pages = 0;
  try {
    const now = t.clock().getTime();
    const visibleSince = new Date(now - TTL_DAYS * DAY).toISOString();
    const failing = failingNow ? failingBefore(now, GRACE) : undefined;
    for (const filters of FILTERS) {
      const counted = await listKeyCounts(client, filters);
      const whole = await byAcceptedEntries(t.catalog, filters, { limit: 10_000, offset: 0 });
      const read = async (page: (typeof PAGES)[number], plan: PricePagePlan, guesses?: PricedPageGuesses) => {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          const q = parameters();
          const counts = (
            await client.query<PriceCounts>(priceCountsSql(filters, q.p, visibleSince, failing, page.offset + page.limit), q.values)
          ).rows[0]!;
          statements = 0;
          const guessed = guesses?.send(db, filters, page, new Date(now), visibleSince, failingBefore(now, GRACE));
          const listed = (await listPriced(db, filters, counted, counts, page, new Date(now), visibleSince, failing, plan, guessed))!;
          // The page statement's generic plan is forced for it alone (queries.ts readPage): the transaction's later statements are planned as usual.
          expect((await client.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode).toBe('auto');
          return { listed, statements };
        } finally {
          await client.query('COMMIT');
        }
      };
      for (const shapePlan of PLANS)
        for (const shapePage of PAGES)
          for (const guessedFailing of [undefined, failingBefore(now, GRACE)]) {
            // The shape of a page read in shapePlan, remembered leaving failing listings out or not.
            const { shape } = (await read(shapePage, shapePlan)).listed;
            if (!shape) continue;
            const guesses = new PricedPageGuesses();
            guesses.remember(filters, shapePage, visibleSince, { ...shape, failing: guessedFailing });
            for (const plan of PLANS)
              for (const page of PAGES) {
                const label = JSON.stringify({ filters, shapePlan, shapePage, guessedFailing, plan, page, failingNow });
                const { listed, statements: sent } = await read(page, plan, guesses);
                expect(
                  listed.rows.map((row) => identity(toDiscoveryResource(row))),
                  label,
                ).toEqual(whole.items.slice(page.offset, page.offset + page.limit).map(identity));
                expect(listed.total, label).toBe(whole.pagination.total);
                if (listed.total === 0) continue;
                pages++;
                // The guess, then the chosen statement unless the guess was it.
                const own = sent - 1;
                if (own === 0) taken++;
                if (guessedFailing !== failing) expect(own, `${label}: the guess's failing cut is not the page's`).toBe(1);
                else if (plan === shapePlan && page === shapePage) expect(own, `${label}: the guess is the chosen statement`).toBe(0);
              }
          }
    }
    // Every page statement was prepared on the connection and run with its generic plan, planned once (queries.ts readPage).
    const prepared = await client.query<{ name: string; generic_plans: string; custom_plans: string }>(
      "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'svc\\_%'",
    );
    expect(prepared.rows.length).toBeGreaterThan(0);
    for (const row of prepared.rows) expect({ name: row.name, custom: Number(row.custom_plans) }).toEqual({ name: row.name, custom: 0 });
    expect(prepared.rows.reduce((sum, row) => sum + Number(row.generic_plans), 0)).toBeGreaterThan(prepared.rows.length);
  } finally {
    client.release();
    await pool.end();
  }
  return { taken, pages };
}

describe('Postgres, a priced page sent with its counts (postgres/price-guess.ts)', () => {
  it('runs a priced page with its generic plan only without other key filters (their EXISTS is planned with its values)', () => {
    const page = { limit: 5, offset: 0 };
    const bazaar: Array<{ key: ListingKey }> = [{ key: { kind: 'extensions', value: 'bazaar' } }];
    const arms = [{ kind: 'digits' as const, type: 'http', prefix: '000000001' }];
    for (const plan of PLANS) {
      const shape = { plan, failing: undefined, arms: plan.startsWith('by-classes') ? arms : [] };
      expect(pricedPageStatement(FILTERS[0]!, shape, [], page, new Date(), undefined).generic, plan).toBe(true);
      expect(pricedPageStatement({ ...FILTERS[0]!, extensions: 'bazaar' }, shape, bazaar, page, new Date(), undefined).generic, plan).toBe(
        false,
      );
    }
  });

  it('gives the page its own statement would, whatever shape was guessed, and a guess of the chosen shape is taken', async () => {
    const t = tempCatalog(undefined, { databaseUrl: await freshCatalogDatabase(), listingTtlDays: TTL_DAYS, livenessGraceMs: GRACE });
    try {
      const rand = seededRandom(0x9e55);
      await add(t, rand, 30, 0);
      // No listing fails: a guess that leaves failing listings out is never the statement chosen; others may be.
      const quiet = await everyGuess(t, false);
      expect(quiet.taken).toBeGreaterThanOrEqual(quiet.pages / 16);
      // Some listings fail past the grace period and the first ten age out of the TTL.
      await failEvery(t, 3);
      t.tick(TTL_DAYS * DAY - 20_000);
      const failing = await everyGuess(t, true);
      expect(failing.taken).toBeGreaterThanOrEqual(failing.pages / 16);
    } finally {
      t.close();
    }
  }, 200_000);

  it('through the store, the same filters listed again across new listings, failures and ageing give the accepted entries', async () => {
    const t = tempCatalog(undefined, { databaseUrl: await freshCatalogDatabase(), listingTtlDays: TTL_DAYS, livenessGraceMs: GRACE });
    try {
      const rand = seededRandom(0x9e56);
      const same = async () => {
        for (const filters of FILTERS)
          for (const page of [...PAGES, ...PAGES]) {
            const expected = await byAcceptedEntries(t.catalog, filters, page);
            const got = await t.catalog.list(filters, page);
            const label = JSON.stringify({ filters, page });
            expect(got.items.map(identity), label).toEqual(expected.items.map(identity));
            expect(got.pagination.total, label).toBe(expected.pagination.total);
          }
      };
      await add(t, rand, 25, 0);
      await same();
      await add(t, rand, 5, 25);
      await same();
      await failEvery(t, 3);
      t.tick(GRACE + 1000);
      await same();
      t.tick(TTL_DAYS * DAY - 20_000); // the first listings age out
      await same();
      // The store's counts statements, with a price filter or without, and the priced page statement ran with their generic
      // plans (queries.ts queryGeneric), and plan_cache_mode is back to auto for what follows.
      const store = await PostgresCatalogStore.open(t.databaseUrl!);
      const pool = (store as unknown as { pool: pg.Pool }).pool;
      const clients: pg.PoolClient[] = [];
      try {
        const now = t.clock().getTime();
        const cuts = [new Date(now - TTL_DAYS * DAY).toISOString(), failingBefore(now, GRACE)] as const;
        for (let i = 0; i < 8; i++) {
          await store.list(FILTERS[i % FILTERS.length]!, PAGES[0]!, new Date(now), ...cuts);
          await store.list({ type: 'mcp' }, PAGES[0]!, new Date(now), ...cuts);
        }
        clients.push(await pool.connect(), await pool.connect());
        const prepared = [];
        for (const client of clients) {
          expect((await client.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode).toBe('auto');
          prepared.push(
            ...(
              await client.query<{ name: string; custom_plans: string; statement: string }>(
                "SELECT name, custom_plans, statement FROM pg_prepared_statements WHERE name LIKE 'svc\\_%'",
              )
            ).rows,
          );
        }
        const counts = prepared.filter((row) => row.name.startsWith('svc_counts_'));
        expect(counts.some((row) => row.statement.includes('catalog_price_counts'))).toBe(true);
        const unpriced = counts.find((row) => !row.statement.includes('catalog_price_counts'));
        expect(unpriced, 'an unpriced counts statement is prepared').toBeDefined();
        for (const row of prepared) expect({ name: row.name, custom: Number(row.custom_plans) }).toEqual({ name: row.name, custom: 0 });
        // Its generic plan reads each key's count on its own, its blocks summed (by their primary key once the table is larger
        // than a few pages): a join to listing_counts hashed the whole table on every page.
        // On whichever of the two connections prepared it.
        const [first, second] = clients as [pg.PoolClient, pg.PoolClient];
        const owner = (await first.query('SELECT 1 FROM pg_prepared_statements WHERE name = $1', [unpriced!.name])).rowCount
          ? first
          : second;
        await owner.query('SET plan_cache_mode = force_generic_plan');
        const plan = await owner.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (COSTS OFF) EXECUTE ${unpriced!.name}(NULL, NULL, ARRAY['type'], ARRAY['mcp'])`,
        );
        await owner.query('RESET plan_cache_mode');
        const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
        expect(text).toMatch(
          /SubPlan \d+\n\s+-> {2}Subquery Scan on c\n\s+-> {2}GroupAggregate\n\s+-> {2}(Index|Seq) Scan (using listing_key_blocks_pkey )?on listing_key_blocks\n\s+(Index Cond|Filter): \(\(kind = k\.kind\) AND \(value = k\.value\)\)/,
        );
        expect(text).not.toContain('Hash');
      } finally {
        for (const client of clients) client.release();
        await store.end();
      }
    } finally {
      t.close();
    }
  }, 200_000);
});
