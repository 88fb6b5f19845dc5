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

const found = async (catalog: Catalog, query = 'weather') =>
  (await catalog.search(query, {}, { limit: 10 })).resources.map((r) => r.resource).sort();

describe.each(BACKENDS)('on %s', (backend) => {
  const open = async () =>
    tempCatalog(undefined, {
      databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined,
      listingTtlDays: 2,
      listingPurgeDays: 3,
      livenessGraceMs: DAY,
    });
  /** What the search index holds: the resources with a current revision, and those whose current revision holds URL keys. */
  const indexed = async (t: Awaited<ReturnType<typeof open>>) => {
    // `url`: a row of one of its URL keys ('/' and a term: src/catalog/terms.ts urlKey; '0' follows '/').
    const sql = `SELECT l.resource,
        EXISTS (SELECT 1 FROM search_revisions r WHERE r.listing_id = l.id AND r.to_seq IS NULL) AS revision,
        EXISTS (SELECT 1 FROM search_terms t WHERE t.listing_id = l.id AND t.term >= '/' AND t.term < '0' AND t.to_seq IS NULL) AS url
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

/**
 * A cursor walk while listings leave the search index and come back (docs/CATALOG.md "Cursor format
 * and guarantees"): a listing of the walk's snapshot is served once when it is visible as the walk
 * reaches it, whether the pass had taken it out of the index before the first page or not, and
 * whatever puts it back (a settlement, a passing check).
 */
describe.each(BACKENDS)('a cursor walk across the pass on %s', (backend) => {
  it('serves, once each, the listings hidden at its first page that are back when it reaches them', async () => {
    const t = tempCatalog(undefined, {
      databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined,
      listingTtlDays: 2,
      livenessGraceMs: DAY,
    });
    const url = (name: string) => `https://${name}.example.com/weather`;
    const settle = async (name: string) =>
      expect(await t.catalog.recordSettlement(settlement({ url: url(name), description: 'weather' }))).toEqual({ status: 'success' });
    try {
      // Equal ranks: the walks go in creation (id) order, so each of these comes after the first page's `a`.
      const MINUTE = 60_000;
      for (const name of ['a', 'aged', 'late', 'failing', 'b']) await settle(name);
      t.tick(80 * MINUTE);
      await settle('late'); // past the TTL at 2 days 80 minutes: after the pass below, before the walks
      t.tick(DAY - 50 * MINUTE);
      await settle('failing');
      const live = t.catalog.liveness!;
      const claimed = t.clock().getTime();
      const failing = (await live.claimDue(claimed, claimed, 10)).find((l) => l.resource === url('failing'))!;
      const failedAt = t.clock().toISOString();
      await live.writeLiveness(failing.key, { status: 'unreachable', checkedAt: failedAt, failingSince: failedAt }, claimed);
      t.tick(DAY + 40 * MINUTE); // 2 days 70 minutes
      await settle('a');
      await settle('b');
      // 'aged' (past the TTL 70 minutes ago: its revision is pruned at once) and 'failing' (past the
      // grace period 40 minutes ago: its revision is kept a cursor's hour) leave the index.
      expect(await t.catalog.maintainLifecycle!()).toEqual({ hidden: 2, restored: 0, purged: 0 });
      t.tick(20 * MINUTE); // now 'late' is hidden too, by age, still in the index
      expect(await found(t.catalog)).toEqual(['a', 'b'].map(url));

      // Two walks: the text ('weather'), and the URLs ('example': no listing's text holds it).
      const walks = [{ query: 'weather' }, { query: 'example' }].map((w) => ({
        ...w,
        served: [] as string[],
        cursor: undefined as string | undefined,
      }));
      const step = async (w: (typeof walks)[number]) => {
        const page = await t.catalog.search(w.query, {}, { limit: 1, ...(w.cursor ? { cursor: w.cursor } : {}) });
        w.served.push(...page.resources.map((r) => new URL(r.resource).hostname.split('.')[0]!));
        w.cursor = page.pagination.cursor ?? undefined;
      };
      for (const w of walks) await step(w);
      expect(walks.map((w) => w.served)).toEqual([['a'], ['a']]);

      // All three back before the walks reach them: two settlements and a passing check.
      await settle('aged');
      await settle('late');
      const again = t.clock().getTime();
      const due = (await live.claimDue(again, again, 10)).find((l) => l.resource === url('failing'))!;
      await live.writeLiveness(due.key, { status: 'live', checkedAt: t.clock().toISOString(), failingSince: null }, again);
      expect(await found(t.catalog)).toEqual(['a', 'aged', 'b', 'failing', 'late'].map(url));

      for (const w of walks) while (w.cursor) await step(w);
      expect(walks.map((w) => w.served)).toEqual([
        ['a', 'aged', 'late', 'failing', 'b'],
        ['a', 'aged', 'late', 'failing', 'b'],
      ]);
    } finally {
      t.close();
    }
  });
});
