/**
 * The price counts of the Postgres catalog (`price_counts`, src/catalog/postgres/price-index.ts): per
 * price index key, level (a price point, its class: digit count and leading digit, its bucket) and
 * type the number of listings whose smallest amount there is at that point, class or bucket. A price
 * page's counts sum them below `maxAmount`'s class (docs/CATALOG.md "List"), so each must be what
 * `listing_prices` holds, exactly, through prices on class boundaries, re-settles that move a
 * listing to a lower class (and dearer ones that move nothing), withdrawals, and many settles at
 * once from two instances (two stores with their own pools on one database: no count lost); the
 * totals of `asset` + `maxAmount` pages at and around each boundary, with and without `type`, and
 * with entries hidden by age, are then what the written amounts say.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { priceIndexKey } from '../../src/catalog/price.ts';
import { freshDatabase } from '../helpers/postgres.ts';
import { PAY_TO_A, seededRandom } from './fixtures.ts';

const ASSET = 'CCLASSCOUNTSASSETXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX';
const NETWORK = 'stellar:testnet';
/** Amounts on and beside class boundaries: 1–9 | 10–19 | 20–29 … 90–99 | 100–199 … | 1000–1999. */
const AMOUNTS = ['1', '9', '10', '19', '20', '99', '100', '101', '199', '200', '999', '1000', '1999', '2000'];
/** Bounds on, just below and just above the boundaries, below every amount and above all. */
const BOUNDS = ['0', '1', '8', '9', '10', '11', '19', '20', '98', '99', '100', '199', '200', '999', '1000', '1001', '2000', '99999'];

interface Listed {
  resource: string;
  type: 'http' | 'mcp';
  /** Its smallest amount so far (accepts only grow), and when it was last written. */
  min: bigint;
  at: number;
}

function draft(listed: Listed, amount: string): ListingDraft {
  return {
    resource: listed.resource,
    type: listed.type,
    toolName: listed.type === 'mcp' ? 'tool' : '',
    owner: PAY_TO_A,
    x402Version: 2,
    terms: { scheme: 'exact', network: NETWORK, asset: ASSET, amount, payTo: PAY_TO_A, maxTimeoutSeconds: 60 },
    metadata: { description: 'class counts listing' },
    bazaar: { info: { input: { type: listed.type } } },
    parameterText: '',
    dropped: [],
  };
}

/** The counts per level (points, classes, buckets) as kept, and as `listing_prices` says they should be (zero rows left out). */
async function classCounts(pool: pg.Pool): Promise<{ kept: string[]; expected: string[] }> {
  const kept = await pool.query<{ row: string }>(
    "SELECT concat_ws(' ', asset, level, price, type, n) AS row FROM price_counts WHERE n <> 0 ORDER BY asset, level, price, type",
  );
  const expected = await pool.query<{ row: string }>(
    `SELECT concat_ws(' ', asset, level, price, type, count(*)) AS row FROM (
       SELECT asset, 0 AS level, price, type FROM listing_prices
       UNION ALL SELECT asset, 10, left(price, 10), type FROM listing_prices
       UNION ALL SELECT asset, 12, left(price, 12), type FROM listing_prices) x
     GROUP BY asset, level, price, type ORDER BY asset, level, price, type`,
  );
  return { kept: kept.rows.map((r) => r.row), expected: expected.rows.map((r) => r.row) };
}

describe('price class counts on Postgres', () => {
  let url: string;
  let one: PostgresCatalogStore;
  let two: PostgresCatalogStore;
  let pool: pg.Pool;
  const listed: Listed[] = [];
  const start = Date.parse('2026-01-01T00:00:00Z');
  let now = start;
  const rand = seededRandom(0xc1a55);

  beforeAll(async () => {
    url = await freshDatabase();
    [one, two] = await Promise.all([PostgresCatalogStore.open(url), PostgresCatalogStore.open(url)]);
    pool = new pg.Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    await one?.end();
    await two?.end();
    await pool?.end();
  });

  const write = async (store: PostgresCatalogStore, l: Listed, amount: string) => {
    const at = new Date(now);
    expect((await store.writeListing(draft(l, amount), at)).status).toBe('written');
    if (BigInt(amount) < l.min) l.min = BigInt(amount);
    l.at = now;
  };

  /** Every bound, with and without each type and with entries hidden by age: the totals the written amounts say. */
  const sameTotals = async (visibleSince?: number) => {
    for (const maxAmount of BOUNDS)
      for (const type of [undefined, 'http', 'mcp'] as const) {
        const expected = listed.filter(
          (l) =>
            l.min <= BigInt(maxAmount) && (type === undefined || l.type === type) && (visibleSince === undefined || l.at >= visibleSince),
        ).length;
        const filters = { asset: ASSET, maxAmount, ...(type ? { type } : {}) };
        const since = visibleSince === undefined ? undefined : new Date(visibleSince).toISOString();
        for (const store of [one, two]) {
          const page = await store.list(filters, { limit: 5, offset: 0 }, new Date(now), since);
          expect(page.total, `${JSON.stringify(filters)} since ${since}`).toBe(expected);
          expect(page.items.length).toBe(Math.min(5, expected));
        }
      }
  };

  it('hold what listing_prices holds, and price pages count right, through boundary prices, re-settles, concurrent settles and withdrawals', async () => {
    // One listing per boundary amount and type, from both instances.
    for (const amount of AMOUNTS)
      for (const type of ['http', 'mcp'] as const) {
        const l: Listed = { resource: `https://c${listed.length}.example.com/r`, type, min: BigInt(amount), at: now };
        listed.push(l);
        await write(listed.length % 2 ? one : two, l, amount);
        now += 1000;
      }
    {
      const { kept, expected } = await classCounts(pool);
      expect(kept).toEqual(expected);
    }
    // Each price index key of the listings (the asset, on the network, under the scheme, both) has its classes.
    const keys = (await pool.query<{ asset: string }>('SELECT DISTINCT asset FROM price_counts ORDER BY asset')).rows.map((r) => r.asset);
    expect(keys).toEqual(
      [ASSET, priceIndexKey(ASSET, NETWORK), priceIndexKey(ASSET, undefined, 'exact'), priceIndexKey(ASSET, NETWORK, 'exact')].sort(),
    );
    await sameTotals();

    // Re-settles: cheaper ones move a listing down a class or a digit count (100 -> 99, 20 -> 19,
    // 1000 -> 999), dearer ones (and equal ones) move nothing.
    const moves: Array<[string, string]> = [
      ['100', '99'],
      ['20', '19'],
      ['1000', '999'],
      ['10', '9'],
      ['200', '2000'],
      ['1999', '1999'],
    ];
    for (const [from, to] of moves)
      for (const l of listed.filter((x) => x.min === BigInt(from))) {
        now += 1000;
        await write(rand() < 0.5 ? one : two, l, to);
      }
    {
      const { kept, expected } = await classCounts(pool);
      expect(kept).toEqual(expected);
    }
    // A class emptied by the moves (20–29 held only the listings at 20) counts nothing.
    expect(listed.some((l) => l.min >= 20n && l.min <= 29n)).toBe(false);
    await sameTotals();

    // Many settles at once from both instances, new listings and cheaper re-settles into the same
    // classes: every one counted (a lost update would leave a class short).
    now += 1000;
    const burst: Array<Promise<void>> = [];
    for (let k = 0; k < 40; k++) {
      const l: Listed =
        k % 4 === 0
          ? listed[Math.floor(rand() * listed.length)]!
          : { resource: `https://burst${k}.example.com/r`, type: k % 3 ? 'http' : 'mcp', min: 1n << 62n, at: now };
      if (!listed.includes(l)) listed.push(l);
      burst.push(write(k % 2 ? one : two, l, AMOUNTS[Math.floor(rand() * AMOUNTS.length)]!));
    }
    // Two writes of one listing in the burst: its smallest amount is the smaller either way.
    await Promise.all(burst);
    {
      const { kept, expected } = await classCounts(pool);
      expect(kept).toEqual(expected);
    }
    await sameTotals();

    // Entries hidden by age: written before the cut, counted out of the totals.
    now += 60_000;
    for (const l of listed.slice(0, 10)) {
      await write(one, l, '1999');
      now += 1000;
    }
    await sameTotals(now - 5_000);
    await sameTotals(start + 20_000);

    // Withdrawals leave the classes of every key of the listing.
    for (const l of listed.filter((_, i) => i % 3 === 0)) {
      const store = rand() < 0.5 ? one : two;
      now += 1000;
      expect(
        await store.withdraw(
          { resource: l.resource, type: l.type, toolName: l.type === 'mcp' ? 'tool' : '', owner: PAY_TO_A, issuedAtMs: now },
          new Date(now),
        ),
      ).toEqual({ status: 'delisted' });
      listed.splice(listed.indexOf(l), 1);
    }
    {
      const { kept, expected } = await classCounts(pool);
      expect(kept).toEqual(expected);
    }
    await sameTotals();
  }, 120_000);
});
