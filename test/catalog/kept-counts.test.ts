/**
 * The term counts a reader keeps between its searches (src/catalog/search-engine.ts KeptCounts; docs/CATALOG.md "The
 * search budget"), on both stores: a search that opens at the sequence the reader's counts were read at reads none of
 * them again, and every change to the term rows takes a sequence number (a write; a prune of old revisions by the
 * lifecycle pass too), so a kept count is never used past a change. The oracle: the same search by a reader that keeps
 * no counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { DatabaseSync } from 'node:sqlite';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { textIndex as sqliteTextIndex } from '../../src/catalog/sqlite/search.ts';
import { textIndex as postgresTextIndex } from '../../src/catalog/postgres/search.ts';
import { openPool } from '../../src/db/postgres.ts';
import { KeptCounts, MAX_KEPT_COUNTS, runAsync, searchPage, type TextIndex } from '../../src/catalog/search-engine.ts';
import { settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

/** Rows a term may have before it is past the lowered budget. */
const BUDGET = 10;
const HOUR = 3_600_000;

describe.each(BACKENDS)('kept term counts (%s)', (backend) => {
  let t: ReturnType<typeof tempCatalog>;
  let pool: pg.Pool | undefined;
  let sqlite: CatalogStore | undefined;
  /** The counts each search read, as `term@cap` (any snapshot) and `term@asOf` (at its snapshot). */
  let counted: string[] = [];
  /** The store's statements for one search (Postgres's read the snapshot once per search), its counts recorded. */
  let index: () => TextIndex;

  const settle = async (i: number, description: string) => {
    t.tick();
    expect(await t.catalog.recordSettlement(settlement({ url: `https://s${i}.example.com/api`, description }))).toEqual({
      status: 'success',
    });
  };
  const search = (query: string, keptCounts?: KeptCounts) => {
    counted = [];
    const request = { query, filters: {}, page: { limit: 5 }, now: t.clock(), x402Version: DISCOVERY_X402_VERSION };
    return runAsync(index(), searchPage({ ...request, secret: Buffer.alloc(32, 7), scale: { searchRowBudget: BUDGET }, keptCounts }));
  };
  const currentSeq = () => index().currentSeq();

  beforeAll(async () => {
    t = tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    // "weather" and "report" past the budget; "alpha", "beta" and "kappa" within it.
    for (let i = 0; i < 30; i++) await settle(i, i < 4 ? 'alpha weather report' : i < 7 ? 'beta kappa weather report' : 'weather report');
    pool = backend === 'Postgres' ? openPool(t.databaseUrl!, { max: 1 }) : undefined;
    sqlite = backend === 'SQLite' ? new CatalogStore(t.dbPath) : undefined;
    index = () => {
      const store: TextIndex = pool ? postgresTextIndex(pool) : sqliteTextIndex(sqlite!);
      return {
        ...store,
        countTerms: (terms, cap) => (counted.push(...terms.map((term) => `${term}@${cap}`)), store.countTerms(terms, cap)),
        countTermsAt: (terms, asOf, cap) => (counted.push(...terms.map((term) => `${term}@${asOf}`)), store.countTermsAt(terms, asOf, cap)),
      };
    };
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    sqlite?.close();
    t?.close();
  });

  it('a search at the sequence its reader last read counts at reads none again, and answers the same page', async () => {
    const kept = new KeptCounts();
    const first = await search('alpha weather', kept);
    expect(counted).toContain(`~alpha@${BUDGET + 1}`);
    const seq = await currentSeq();
    expect(counted).toContain(`~alpha@${seq}`);
    const again = await search('alpha weather', kept);
    expect(counted).toEqual([]);
    expect(again).toEqual(first);
    // A query sharing a word reads only the other's counts.
    const other = await search('alpha report', kept);
    expect(counted).toContain(`~report@${BUDGET + 1}`);
    expect(counted.filter((c) => c.includes('alpha'))).toEqual([]);
    expect(other).toEqual(await search('alpha report'));
  });

  it('a reader keeping fewer keys than a search counts forgets some of them mid-search, and still answers the same page', async () => {
    const few = new KeptCounts(2);
    const fresh = await search('alpha beta kappa', undefined);
    expect(new Set(counted.map((c) => c.split('@')[0])).size).toBeGreaterThan(2);
    for (let i = 0; i < 3; i++) expect(await search('alpha beta kappa', few)).toEqual(fresh);
  });

  it('after a write that takes a word past the budget, the kept counts are not used, and the next page counts in its first round', async () => {
    const kept = new KeptCounts();
    const before = await search('alpha weather', kept);
    for (let i = 30; i < 30 + BUDGET; i++) await settle(i, 'alpha weather report'); // "alpha" now past the budget too
    const after = await search('alpha weather', kept);
    expect(counted).toContain(`~alpha@${BUDGET + 1}`);
    const fresh = await search('alpha weather');
    expect(after).toEqual(fresh);
    // The budget's choice changed with the counts: a reader that used the old ones would have answered as before.
    expect([before.searchMethod, after.searchMethod]).toEqual(['text_budgeted', 'text_partial']);
    // A write came between its last two pages: the reader's next page counts its words in its first round trip, as if it
    // kept none (a write may well come again); the page after that, at the same sequence, reads none.
    const rounds: string[][] = [];
    const countTerms = index;
    index = () => {
      const store = countTerms();
      return { ...store, countTerms: (terms, cap) => (rounds.push(terms), store.countTerms(terms, cap)) };
    };
    try {
      expect(await search('alpha weather', kept)).toEqual(fresh);
      expect(rounds[0]).toEqual(expect.arrayContaining(['~alpha', '~weather']));
      expect(await search('alpha weather', kept)).toEqual(fresh);
      expect(counted).toEqual([]);
    } finally {
      index = countTerms;
    }
  });

  it('a prune of old revisions by the lifecycle pass takes a sequence number', async () => {
    await settle(100, 'gamma report');
    await settle(100, 'delta report'); // supersedes the revision holding "gamma"
    const kept = new KeptCounts();
    await search('gamma', kept);
    const gammaRows = async () => {
      const sql = "SELECT count(*) AS n FROM search_terms WHERE term = 'gamma'";
      if (t.databaseUrl) {
        const client = new pg.Client({ connectionString: t.databaseUrl });
        await client.connect();
        const n = Number((await client.query<{ n: string }>(sql)).rows[0]!.n);
        await client.end();
        return n;
      }
      const db = new DatabaseSync(t.dbPath, { readOnly: true });
      const n = Number((db.prepare(sql).get() as { n: number }).n);
      db.close();
      return n;
    };
    expect(await gammaRows()).toBe(1);
    const seq = await currentSeq();
    t.tick(2 * HOUR); // past a cursor's life: the superseded revision is due
    await t.catalog.maintainLifecycle!();
    expect(await gammaRows()).toBe(0);
    expect(await currentSeq()).toBeGreaterThan(seq);
    await search('gamma', kept);
    expect(counted).toContain(`~gamma@${BUDGET + 1}`);
  });
});

it('kept counts are bounded: past MAX_KEPT_COUNTS keys a reader forgets them and starts again', () => {
  const kept = new KeptCounts();
  const rows = kept.opened(1);
  for (let i = 0; i < 3 * MAX_KEPT_COUNTS; i++) rows.set(`word${i}`, { n: 1, cap: 2 });
  expect(kept.guess.size).toBeLessThanOrEqual(MAX_KEPT_COUNTS);
  expect(kept.guess.get(`word${3 * MAX_KEPT_COUNTS - 1}`)).toEqual({ n: 1, cap: 2 });
});
