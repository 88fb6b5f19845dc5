/**
 * Deep `offset` pages of the list endpoint (docs/CATALOG.md, src/catalog/sqlite/list-index.ts): the block index that
 * finds an offset without skipping every entry before it must give exactly the page a plain
 * ORDER BY … OFFSET gives. A real SQLite file gets 2,700 listings over two sellers and three
 * networks (timestamps with ties), then 900 refreshes that move listings to the front; every
 * filter is then paged at offsets around block edges and at random, against the listings table
 * ordered by SQL as the oracle. The block counts must add up to the totals.
 */
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { BLOCK_SIZE } from '../../src/catalog/listing.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { PAY_TO_A, PAY_TO_B, seededRandom, tempDir } from './fixtures.ts';

const rand = seededRandom(0x1234567);
const NETWORKS = ['stellar:testnet', 'stellar:pubnet', 'eip155:8453'];
const LISTINGS = 2_700;
const REFRESHES = 900;

function draft(i: number, owner: string, network: string): ListingDraft {
  return {
    resource: `https://api.example.com/r${i}`,
    type: 'http',
    toolName: '',
    owner,
    x402Version: 2,
    terms: { scheme: 'exact', network, asset: 'CASSET', amount: '100', payTo: owner, maxTimeoutSeconds: 60 },
    // Five terms or more, one of them repeated, so a revision's 4 largest shares (migration 12) are not all of them.
    metadata: { description: `listing ${i} for the api ${'weather '.repeat(1 + (i % 3))}` },
    bazaar: { info: { input: { type: 'http', method: 'GET' } } },
    parameterText: '',
    dropped: [],
  };
}

const dir = tempDir();
const dbPath = `${dir.dir}/catalog.sqlite`;
const owners = new Map<number, { owner: string; network: string }>();
beforeAll(() => {
  const store = new CatalogStore(dbPath);
  const start = Date.parse('2026-01-01T00:00:00Z');
  store.db.exec('BEGIN IMMEDIATE');
  for (let i = 0; i < LISTINGS + REFRESHES; i++) {
    // Three listings share each second (ties break on id); refreshes move a listing to the front.
    const n = i < LISTINGS ? i : Math.floor(rand() * LISTINGS);
    if (!owners.has(n)) owners.set(n, { owner: rand() < 0.7 ? PAY_TO_A : PAY_TO_B, network: NETWORKS[Math.floor(rand() * 3)]! });
    const { owner, network } = owners.get(n)!;
    expect(store.writeListing(draft(n, owner, network), new Date(start + Math.floor(i / 3) * 1000)).status).toBe('written');
  }
  store.db.exec('COMMIT');
  store.close();
});
afterAll(() => dir.cleanup());

/** The oracle: the listings table in page order, filtered by plain SQL. */
function expected(db: DatabaseSync, filters: DiscoveryFilters): string[] {
  const where: string[] = [];
  const params: string[] = [];
  if (filters.payTo) {
    where.push('l.owner = ?');
    params.push(filters.payTo);
  }
  if (filters.network) {
    where.push("EXISTS (SELECT 1 FROM json_each(l.body, '$.accepts') a WHERE a.value ->> 'network' = ?)");
    params.push(filters.network);
  }
  if (filters.asset) {
    where.push("EXISTS (SELECT 1 FROM json_each(l.body, '$.accepts') a WHERE a.value ->> 'asset' = ?)");
    params.push(filters.asset);
  }
  const sql = `SELECT resource FROM listings l ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY l.last_updated DESC, l.id DESC`;
  return (db.prepare(sql).all(...params) as Array<{ resource: string }>).map((r) => r.resource);
}

const FILTERS: DiscoveryFilters[] = [
  {},
  { payTo: PAY_TO_A },
  { payTo: PAY_TO_B },
  { network: 'stellar:pubnet' },
  { type: 'http' },
  { asset: 'CASSET' },
];

function checkPages(store: CatalogStore): number {
  let pages = 0;
  for (const filters of FILTERS) {
    const order = expected(store.db, filters);
    const edges = [
      0,
      1,
      2 * BLOCK_SIZE - 1,
      2 * BLOCK_SIZE,
      BLOCK_SIZE * 3 + 7,
      order.length - 20,
      order.length - 1,
      order.length,
      order.length + 5,
    ];
    const random = Array.from({ length: 25 }, () => Math.floor(rand() * order.length));
    for (const offset of [...edges, ...random].filter((o) => o >= 0)) {
      const page = store.list(filters, { limit: 20, offset }, new Date());
      expect(page.total).toBe(order.length);
      expect(
        page.items.map((l) => l.resource),
        `${JSON.stringify(filters)} offset ${offset}`,
      ).toEqual(order.slice(offset, offset + 20));
      pages++;
    }
  }
  return pages;
}

/**
 * With listings hidden by LISTING_TTL_DAYS (`visibleSince`): the total counts only the newer ones
 * (from the blocks and the one block holding the cut), and pages show only them.
 */
function checkHidden(store: CatalogStore): void {
  for (const filters of FILTERS) {
    const order = expected(store.db, filters);
    const updated = new Map(
      (store.db.prepare('SELECT resource, last_updated FROM listings').all() as Array<{ resource: string; last_updated: string }>).map(
        (r) => [r.resource, r.last_updated],
      ),
    );
    for (const at of [0, 1, BLOCK_SIZE - 1, 2 * BLOCK_SIZE + 3, Math.floor(order.length / 2), order.length - 1]) {
      if (at >= order.length) continue;
      const since = updated.get(order[at]!)!;
      const visible = order.filter((r) => updated.get(r)! >= since);
      const page = store.list(filters, { limit: 20, offset: Math.max(0, visible.length - 10) }, new Date(), since);
      expect(page.total, `${JSON.stringify(filters)} since ${since}`).toBe(visible.length);
      expect(page.items.map((l) => l.resource)).toEqual(visible.slice(Math.max(0, visible.length - 10)));
    }
  }
}

function checkBlockCounts(db: DatabaseSync): void {
  const sums = db
    .prepare(
      `SELECT c.kind, c.value, c.n AS total, (SELECT count(*) FROM listing_keys k WHERE k.kind = c.kind AND k.value = c.value) AS entries,
              (SELECT max(b.n) FROM listing_key_blocks b WHERE b.kind = c.kind AND b.value = c.value) AS largest
       FROM listing_counts c`,
    )
    .all() as Array<{ total: number; entries: number; largest: number }>;
  expect(sums.length).toBeGreaterThan(5);
  // Every key's total (the sum of its blocks) is its number of entries, and every key with entries has a total.
  for (const s of sums) {
    expect(s.total).toBe(s.entries);
    expect(s.largest).toBeLessThanOrEqual(2 * BLOCK_SIZE);
  }
  expect(sums.filter((s) => s.total > 0).length).toBe(
    (db.prepare('SELECT count(*) AS n FROM (SELECT DISTINCT kind, value FROM listing_keys)').get() as { n: number }).n,
  );
  // Emptied blocks are removed: only the newest block of a value may hold nothing.
  expect(db.prepare("SELECT count(*) AS n FROM listing_key_blocks WHERE n = 0 AND start_updated <> '~'").get()).toEqual({ n: 0 });
}

describe('list at any offset', () => {
  it('every filter pages exactly like ORDER BY … OFFSET, at block edges and at random offsets, after refreshes', () => {
    const store = new CatalogStore(dbPath);
    try {
      const blocks = store.db.prepare("SELECT count(*) AS n FROM listing_key_blocks WHERE kind = 'all'").get() as { n: number };
      expect(Number(blocks.n)).toBeGreaterThan(2); // the corpus spans several blocks, splits and moves happened
      checkBlockCounts(store.db);
      expect(checkPages(store)).toBeGreaterThan(150);
      checkHidden(store);
    } finally {
      store.close();
    }
  });
});
