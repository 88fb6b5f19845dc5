/**
 * The two answers test/catalog/price-index.test.ts holds each price page to: the store's price
 * index read with a forced plan (ForcedPage, on SQLite and Postgres), and the accepted entries
 * themselves (byAcceptedEntries), which never read the price index.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { expect } from 'vitest';
import type { Catalog, DiscoveryFilters, ListPage } from '../../src/catalog/types.ts';
import { DEEP_OFFSET, filterKeys, toDiscoveryResource, type ListingKey } from '../../src/catalog/listing.ts';
import { failingBefore } from '../../src/catalog/liveness.ts';
import { listPriced } from '../../src/catalog/sqlite/price-index.ts';
import { listPriced as listPricedOnPostgres } from '../../src/catalog/postgres/price-index.ts';
import { priceCountsSql, type PriceCounts } from '../../src/catalog/postgres/price-counts.ts';
import { parameters } from '../../src/catalog/postgres/queries.ts';
import type { PricePagePlan } from '../../src/catalog/price.ts';
import type { tempCatalog } from './fixtures.ts';

/** The liveness grace period of the catalogs these pages read (their `livenessGraceMs`). */
export const GRACE = 3_600_000;

/** Every `k`-th listing due for a liveness check (from the first) fails it now: its failing period starts at `t`'s clock. */
export async function failEvery(t: TempCatalog, k: number): Promise<void> {
  const live = t.catalog.liveness!;
  const claimedAt = t.clock().getTime();
  const due = await live.claimDue(claimedAt, claimedAt, 1000);
  const failedAt = t.clock().toISOString();
  for (const l of due.filter((_, i) => i % k === 0))
    await live.writeLiveness(l.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimedAt);
}

/** Each list key of `filters` with its listings (listing_counts) on Postgres, fewest first, as the store counts them. */
export async function listKeyCounts(
  db: pg.Pool | pg.PoolClient,
  filters: DiscoveryFilters,
): Promise<Array<{ key: ListingKey; n: number }>> {
  const counted: Array<{ key: ListingKey; n: number }> = [];
  for (const key of filterKeys(filters)) {
    const { rows } = await db.query<{ n: string }>('SELECT n FROM listing_counts WHERE kind = $1 AND value = $2', [key.kind, key.value]);
    counted.push({ key, n: Number(rows[0]?.n ?? 0) });
  }
  return counted.sort((x, y) => x.n - y.n);
}

/**
 * The accepted entries' answer to a price filter: the listings of the same filters without
 * `maxAmount` (asset alone is a list key, with `scheme` or `network` a per-row check of the
 * accepted entries: no price index either way), kept when one of their accepted entries is in the
 * asset, under the scheme and on the network when given, and at most `maxAmount` (whole numbers in
 * base units, src/filters.ts amountKey), then paged.
 */
export async function byAcceptedEntries(
  catalog: Catalog,
  filters: DiscoveryFilters,
  page: { limit: number; offset: number },
  /** Unpriced lists already read from this catalog in its present state, by their filters (to share them). */
  unpricedLists?: Map<string, Promise<ListPage>>,
): Promise<ListPage> {
  const { maxAmount, ...unpriced } = filters;
  const key = JSON.stringify(Object.entries(unpriced).sort());
  let listed = unpricedLists?.get(key);
  if (!listed) {
    listed = catalog.list(unpriced, { limit: 10_000, offset: 0 });
    unpricedLists?.set(key, listed);
  }
  const all = await listed;
  expect(all.items.length).toBe(all.pagination.total);
  const matching = all.items.filter((item) =>
    item.accepts.some(
      (a) =>
        a.asset === filters.asset &&
        (filters.scheme === undefined || a.scheme === filters.scheme) &&
        (filters.network === undefined || a.network === filters.network) &&
        /^[0-9]+$/.test(a.amount) &&
        BigInt(a.amount) <= BigInt(maxAmount!),
    ),
  );
  return { ...all, items: matching.slice(page.offset, page.offset + page.limit), pagination: { ...page, total: matching.length } };
}

export type TempCatalog = ReturnType<typeof tempCatalog>;

/** A list page read from the store's price index with a forced plan: its listings' identities and total (undefined: not a price page). */
export type ForcedPage = (
  filters: DiscoveryFilters,
  page: { limit: number; offset: number },
  plan: PricePagePlan,
) => Promise<{ identities: string[]; total: number } | undefined>;

/** A listed item's identity: type, resource and (MCP) tool name. */
export function identity(item: { type: string; resource: string; extensions?: unknown }): string {
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
export function forcedPostgresPage(t: TempCatalog, ttlMs: number): ForcedPage & { close(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
  const forced = async (filters: DiscoveryFilters, page: { limit: number; offset: number }, plan: PricePagePlan) => {
    const counted = await listKeyCounts(pool, filters);
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
export function forcedSqlitePage(t: TempCatalog, ttlMs: number): ForcedPage & { close(): Promise<void> } {
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
