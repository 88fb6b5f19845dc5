/**
 * The lifecycle pass (docs/CATALOG.md "Lifecycle"; src/catalog/lifecycle.ts) on SQLite and
 * PostgreSQL, with a test clock: hidden listings leave the search index without changing what
 * search answers, come back with a settlement or a passing liveness check, and a listing hidden for
 * longer than LISTING_PURGE_DAYS is deleted with its owner binding, so another payTo may list it.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/types.ts';
import { PAY_TO_B, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const A = 'https://a.example.com/weather';
const B = 'https://b.example.com/weather';

describe.each(BACKENDS)('on %s', (backend) => {
  const open = async () =>
    tempCatalog(undefined, {
      databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined,
      listingTtlDays: 2,
      listingPurgeDays: 3,
      livenessGraceMs: DAY,
    });
  /** What the search index holds: the resources with a current revision, and those with URL terms. */
  const indexed = async (t: Awaited<ReturnType<typeof open>>) => {
    const sql = `SELECT l.resource,
        EXISTS (SELECT 1 FROM search_revisions r WHERE r.listing_id = l.id AND r.to_seq IS NULL) AS revision,
        EXISTS (SELECT 1 FROM listing_url_terms u WHERE u.listing_id = l.id) AS url
      FROM listings l ORDER BY l.resource`;
    let rows: Array<{ resource: string; revision: unknown; url: unknown }>;
    if (t.databaseUrl) {
      const client = new pg.Client({ connectionString: t.databaseUrl });
      await client.connect();
      rows = (await client.query(sql)).rows;
      await client.end();
    } else {
      const db = new DatabaseSync(t.dbPath, { readOnly: true });
      rows = db.prepare(sql).all() as typeof rows;
      db.close();
    }
    return rows.map((r) => `${r.resource} ${Number(r.revision) ? 'text' : '-'} ${Number(r.url) ? 'url' : '-'}`);
  };
  const found = async (catalog: Catalog, query = 'weather') =>
    (await catalog.search(query, {}, { limit: 10 })).resources.map((r) => r.resource).sort();

  it('hidden by age: out of the index, the same answers, back when paid; purged past LISTING_PURGE_DAYS with its owner', async () => {
    const t = await open();
    try {
      await t.catalog.recordSettlement(settlement({ url: A, description: 'weather' }));
      await t.catalog.recordSettlement(settlement({ url: B, description: 'weather' }));
      expect(await t.catalog.maintainLifecycle!()).toEqual({ hidden: 0, restored: 0, purged: 0 });
      t.tick(3 * DAY); // both past the 2-day TTL
      const before = [await found(t.catalog), await found(t.catalog, 'example')];
      expect(before).toEqual([[], []]);
      expect(await t.catalog.maintainLifecycle!()).toEqual({ hidden: 2, restored: 0, purged: 0 });
      expect([await found(t.catalog), await found(t.catalog, 'example')]).toEqual(before);
      // Hidden a day already: their rows are pruned at once, not kept a cursor's hour.
      expect(await indexed(t)).toEqual([`${A} - -`, `${B} - -`]);

      // Paid again: back in the index and in search at once (text and URL).
      expect(await t.catalog.recordSettlement(settlement({ url: A, description: 'weather' }))).toEqual({ status: 'success' });
      expect(await found(t.catalog)).toEqual([A]);
      expect(await found(t.catalog, 'example')).toEqual([A]); // by its URL terms (the text holds no 'example')
      expect(await indexed(t)).toEqual([`${A} text url`, `${B} - -`]);
      expect(await t.catalog.maintainLifecycle!()).toEqual({ hidden: 0, restored: 0, purged: 0 });

      // B hidden since day 2: purged past day 5; A (paid on day 3) only hides then.
      t.tick(2.5 * DAY);
      expect(await t.catalog.maintainLifecycle!()).toEqual({ hidden: 1, restored: 0, purged: 1 });
      expect(await indexed(t)).toEqual([`${A} - -`]);
      // B's owner binding went with it: another payTo lists the URL afresh.
      expect(await t.catalog.recordSettlement(settlement({ url: B, description: 'weather', payTo: PAY_TO_B }))).toEqual({
        status: 'success',
      });
      expect(await t.catalog.maintainLifecycle!()).toEqual({ hidden: 0, restored: 0, purged: 0 });
      expect(await found(t.catalog)).toEqual([B]);
      expect((await t.catalog.list({ resource: B }, { limit: 1, offset: 0 })).items[0]?.accepts[0]?.payTo).toBe(PAY_TO_B);
    } finally {
      t.close();
    }
  });

  it('hidden by failures: out of the index, back at the passing check', async () => {
    const t = await open();
    try {
      const live = t.catalog.liveness!;
      await t.catalog.recordSettlement(settlement({ url: A, description: 'weather' }));
      await t.catalog.recordSettlement(settlement({ url: B, description: 'weather' }));
      t.tick(6 * HOUR);
      const claimedAt = t.clock().getTime();
      const due = await live.claimDue(claimedAt, claimedAt, 10);
      const a = due.find((l) => l.resource === A)!;
      const failedAt = t.clock().toISOString();
      await live.writeLiveness(a.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimedAt);
      t.tick(DAY + HOUR); // A failing past the grace period; both within the TTL (a settlement refreshes B)
      await t.catalog.recordSettlement(settlement({ url: B, description: 'weather' }));
      expect(await found(t.catalog)).toEqual([B]);
      expect(await t.catalog.maintainLifecycle!()).toEqual({ hidden: 1, restored: 0, purged: 0 });
      expect(await found(t.catalog)).toEqual([B]);
      expect(await indexed(t)).toEqual([`${A} - -`, `${B} text url`]);

      // A check passes: A is in search at once, before any pass.
      const again = t.clock().getTime();
      const [a2] = await live.claimDue(again, again, 10);
      await live.writeLiveness(a2!.key, { status: 'live', checkedAt: t.clock().toISOString(), failingSince: null }, again);
      expect(await found(t.catalog)).toEqual([A, B]);
      expect(await indexed(t)).toEqual([`${A} text url`, `${B} text url`]);
    } finally {
      t.close();
    }
  });
});
