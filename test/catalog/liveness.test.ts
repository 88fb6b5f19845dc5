/**
 * Liveness records in the catalog (docs/CATALOG.md "Liveness"), on SQLite and PostgreSQL: a
 * settlement makes a listing's next check due one interval later; a claim takes due listings once
 * (on Postgres two instances sharing the database never claim one listing twice); records show on
 * list and search items; a listing failing for longer than the grace period leaves list (items and
 * total, every list path) and search until a check passes or a settlement resets it.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { claimDue } from '../../src/catalog/postgres/liveness.ts';
import type { Catalog } from '../../src/catalog/types.ts';
import { PAY_TO_A, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

const HOUR = 3_600_000;
const GRACE = 24 * HOUR;
const A = 'https://a.example.com/weather';
const B = 'https://b.example.com/weather';

describe.each(BACKENDS)('on %s', (backend) => {
  const open = async (databaseUrl?: string, listingTtlDays?: number) =>
    tempCatalog(undefined, {
      databaseUrl: backend === 'Postgres' ? (databaseUrl ?? (await freshCatalogDatabase())) : undefined,
      livenessGraceMs: GRACE,
      ...(listingTtlDays !== undefined ? { listingTtlDays } : {}),
    });
  const shown = async (catalog: Catalog, filters: Record<string, string> = {}) => {
    const page = await catalog.list(filters, { limit: 100, offset: 0 });
    const found = await catalog.search('weather', filters, { limit: 100 });
    const resources = page.items.map((i) => i.resource).sort();
    expect(found.resources.map((r) => r.resource).sort()).toEqual(resources);
    expect(page.pagination.total).toBe(resources.length);
    return resources;
  };

  it("a check's record sets when the listing is next due (a failing one's back-off, net/liveness.ts nextCheckAfter)", async () => {
    const t = await open();
    try {
      const live = t.catalog.liveness!;
      await t.catalog.recordSettlement(settlement({ url: A, description: 'weather' }));
      t.tick(6 * HOUR);
      const claimedAt = t.clock().getTime();
      const [a] = await live.claimDue(claimedAt, claimedAt - 6 * HOUR, 10);
      const failedAt = t.clock().toISOString();
      // Due again 12 h after this check, not 6: its basis is 6 h later than the check.
      await live.writeLiveness(
        a!.key,
        { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt },
        claimedAt,
        claimedAt + 6 * HOUR,
      );
      t.tick(6 * HOUR);
      expect(await live.claimDue(t.clock().getTime(), t.clock().getTime() - 6 * HOUR, 10)).toEqual([]);
      t.tick(6 * HOUR);
      expect(await live.claimDue(t.clock().getTime(), t.clock().getTime() - 6 * HOUR, 10)).toMatchObject([{ resource: A }]);
    } finally {
      t.close();
    }
  });

  it('claims due listings once; records show on items; failing past the grace period hides until a pass or a settlement', async () => {
    const t = await open(undefined, 2);
    try {
      const live = t.catalog.liveness!;
      await t.catalog.recordSettlement(settlement({ url: A, description: 'weather' }));
      await t.catalog.recordSettlement(settlement({ url: B, description: 'weather', method: 'POST' }));
      const now = () => t.clock().getTime();
      // Just paid: not due before an interval has passed since.
      expect(await live.claimDue(now(), now() - 6 * HOUR, 10)).toEqual([]);
      t.tick(6 * HOUR);
      expect(await live.countDue!(now() - 6 * HOUR)).toBe(2); // the /metrics gauge of checks waiting
      const claimedAt = now();
      const due = await live.claimDue(claimedAt, claimedAt - 6 * HOUR, 10);
      expect(due.map((l) => l.resource).sort()).toEqual([A, B]);
      const a = due.find((l) => l.resource === A)!;
      const b = due.find((l) => l.resource === B)!;
      // What a check needs: the declared method, never the example input (docs/SECURITY.md).
      expect(a).toMatchObject({ type: 'http', method: 'GET', payTo: PAY_TO_A, toolName: '' });
      expect(a).not.toHaveProperty('input');
      expect(b.method).toBe('POST');
      expect(a.previous).toBeUndefined();
      // Claimed: not handed out again.
      expect(await live.claimDue(claimedAt, claimedAt - 6 * HOUR, 10)).toEqual([]);
      expect(await live.countDue!(claimedAt - 6 * HOUR)).toBe(0);

      const failedAt = t.clock().toISOString();
      await live.writeLiveness(a.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimedAt);
      await live.writeLiveness(b.key, { status: 'live', checkedAt: failedAt, failingSince: null }, claimedAt);
      const items = (await t.catalog.list({}, { limit: 10, offset: 0 })).items;
      expect(items.find((i) => i.resource === A)!.liveness).toEqual({ status: 'unreachable', checkedAt: failedAt });
      expect(items.find((i) => i.resource === B)!.liveness).toEqual({ status: 'live', checkedAt: failedAt });
      expect((await t.catalog.search('weather', {}, { limit: 10 })).resources.find((r) => r.resource === A)!.liveness).toEqual({
        status: 'unreachable',
        checkedAt: failedAt,
      });

      t.tick(GRACE); // failing for exactly the grace period: still shown
      expect(await shown(t.catalog)).toEqual([A, B]);
      t.tick(1);
      expect(await shown(t.catalog)).toEqual([B]);
      expect(await shown(t.catalog, { payTo: PAY_TO_A })).toEqual([B]); // one list key: count less hidden
      expect(await shown(t.catalog, { payTo: PAY_TO_A, type: 'http' })).toEqual([B]); // several keys
      expect(await shown(t.catalog, { resource: A })).toEqual([]); // the identity columns
      expect(await shown(t.catalog, { url: '://' })).toEqual([B]); // the url filter, checked on each listing's row
      expect(await t.catalog.listingCounts!()).toEqual({ listed: 1, pending: 0, hidden: { expired: 0, liveness: 1 } });
      // The next claim hands the record back as `previous` (the run of failures keeps its start).
      const again = await live.claimDue(now(), now() - 6 * HOUR, 10);
      expect(again.find((l) => l.resource === A)!.previous).toEqual({ status: 'unreachable', checkedAt: failedAt, failingSince: failedAt });

      // A settlement ends the run of failures: shown again, not checked since.
      await t.catalog.recordSettlement(settlement({ url: A, description: 'weather' }));
      expect(await shown(t.catalog)).toEqual([A, B]);
      expect((await t.catalog.list({ resource: A }, { limit: 1, offset: 0 })).items[0]!.liveness).toBeNull();
      // A write from a claim made before that settlement is dropped (the listing was touched since).
      const stale = again.find((l) => l.resource === A)!;
      await live.writeLiveness(stale.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimedAt);
      expect((await t.catalog.list({ resource: A }, { limit: 1, offset: 0 })).items[0]!.liveness).toBeNull();
      // A settlement of a live listing keeps its record.
      await t.catalog.recordSettlement(settlement({ url: B, description: 'weather', method: 'POST' }));
      expect((await t.catalog.list({ resource: B }, { limit: 1, offset: 0 })).items[0]!.liveness).toEqual({
        status: 'live',
        checkedAt: failedAt,
      });
      expect(await t.catalog.listingCounts!()).toEqual({ listed: 2, pending: 0, hidden: { expired: 0, liveness: 0 } });
      // Past LISTING_TTL_DAYS without a settlement: hidden as expired, whatever their liveness.
      t.tick(2 * 24 * HOUR + 1);
      expect(await t.catalog.listingCounts!()).toEqual({ listed: 0, pending: 0, hidden: { expired: 2, liveness: 0 } });
    } finally {
      t.close();
    }
  });

  it('a postponed listing is due again at its new basis', async () => {
    const t = await open();
    try {
      const live = t.catalog.liveness!;
      await t.catalog.recordSettlement(settlement({ url: A, description: 'weather' }));
      t.tick(6 * HOUR);
      const at = t.clock().getTime();
      const [a] = await live.claimDue(at, at - 6 * HOUR, 10);
      await live.postponeLiveness([a!.key], at + 60_000 - 6 * HOUR, at);
      expect(await live.claimDue(at, at - 6 * HOUR, 10)).toEqual([]);
      expect((await live.claimDue(at + 60_000, at + 60_000 - 6 * HOUR, 10)).map((l) => l.resource)).toEqual([A]);
    } finally {
      t.close();
    }
  });

  if (backend === 'Postgres')
    it('two instances sharing the database never claim one listing twice', async () => {
      const url = await freshCatalogDatabase();
      const one = await open(url);
      const two = await open(url);
      try {
        for (let i = 0; i < 30; i++) await one.catalog.recordSettlement(settlement({ url: `https://s${i}.example.com/w` }));
        const at = one.clock().getTime() + 6 * HOUR;
        const claims = await Promise.all([
          one.catalog.liveness!.claimDue(at, at - 6 * HOUR, 20),
          two.catalog.liveness!.claimDue(at, at - 6 * HOUR, 20),
        ]);
        const keys = claims.flat().map((l) => l.key);
        expect(new Set(keys).size).toBe(keys.length);
        expect(keys.length).toBe(30);

        // Deterministic: one instance's claim holds its rows (not committed yet) while the other claims.
        for (let i = 0; i < 10; i++) await one.catalog.recordSettlement(settlement({ url: `https://t${i}.example.com/w` }));
        const later = at + 12 * HOUR;
        const holder = new pg.Client({ connectionString: url });
        await holder.connect();
        try {
          await holder.query('BEGIN');
          const held = await claimDue(holder, later, later - 6 * HOUR, 25);
          const other = two.catalog.liveness!.claimDue(later, later - 6 * HOUR, 40);
          // The other claim skips the held rows and answers at once; were it to wait on them instead, commit and see.
          let settled = false;
          void other.finally(() => (settled = true));
          for (let waited = 0; !settled && waited < 600; waited++) {
            const waiting = new pg.Client({ connectionString: url });
            await waiting.connect();
            const n = Number((await waiting.query('SELECT count(*) AS n FROM pg_locks WHERE NOT granted')).rows[0].n);
            await waiting.end();
            if (n > 0) break;
            await new Promise((r) => setTimeout(r, 50));
          }
          await holder.query('COMMIT');
          const got = await other;
          expect(held.length + got.length).toBe(40);
          expect(got.filter((l) => held.some((h) => h.key === l.key))).toEqual([]);
        } finally {
          await holder.end();
        }
      } finally {
        one.close();
        two.close();
      }
    });
});
