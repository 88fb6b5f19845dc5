/**
 * A lifecycle pass (src/catalog/lifecycle.ts) runs on every instance every few minutes, beside the searches: each of
 * its reads of candidates must be an index range, never a read of every listing. Postgres has no index on listings by
 * age but the two partial ones by stash, so a read of listings by age that does not say which it wants reads them all.
 * On a small catalog the planners would scan anyway, so this reads the plans: SQLite's must SEARCH listings, and
 * Postgres's, with sequential scans priced out (`enable_seqscan = off`), must read listings by an index condition.
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { lifecycleCuts, maintainBatch, type LifecycleStore } from '../../src/catalog/lifecycle.ts';
import { postgresSql } from '../../src/catalog/postgres/queries.ts';
import { sqliteSql } from '../../src/catalog/sqlite/queries.ts';
import { runAsync, runSync, type Sql } from '../../src/catalog/statements.ts';
import { settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';

const DAY = 86_400_000;

/** The reads of one batch on `sql` (the store's own statements, recorded): purge, hide and restore candidates. */
function recordingStore(sql: Sql): { store: LifecycleStore; reads: Array<{ text: string; params: readonly unknown[] }> } {
  const reads: Array<{ text: string; params: readonly unknown[] }> = [];
  const recording: Sql = { ...sql, rows: (text, params) => (reads.push({ text, params }), sql.rows(text, params)) };
  const none = () => false;
  return { store: { sql: recording, purge: none, hide: none, restore: none, prune: () => 0 }, reads };
}

/** The scans of `table` in a Postgres plan (EXPLAIN's JSON), each with its node type and index condition. */
function scansOf(node: Record<string, unknown>, table: string): Array<{ type: string; indexed: boolean }> {
  const own =
    node['Relation Name'] === table ? [{ type: String(node['Node Type']), indexed: 'Index Cond' in node || 'Recheck Cond' in node }] : [];
  const children = (node.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [...own, ...children.flatMap((child) => scansOf(child, table))];
}

describe.each(BACKENDS)('a lifecycle pass on %s', (backend) => {
  it('reads its candidates by index ranges, never every listing', async () => {
    const t = tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
    try {
      await t.catalog.recordSettlement(settlement({ url: 'https://a.example.com/weather', description: 'weather' }));
      const now = t.clock();
      const cuts = lifecycleCuts(now.getTime(), 30 * DAY, DAY, 90 * DAY);
      expect(cuts.failingBefore).toBeDefined();
      if (t.databaseUrl === undefined) {
        const db = new DatabaseSync(t.dbPath);
        try {
          const { store, reads } = recordingStore(sqliteSql(db));
          runSync(maintainBatch(store, cuts, now, 64));
          expect(reads.length).toBeGreaterThanOrEqual(5);
          for (const { text, params } of reads) {
            const plan = db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...(params as SQLInputValue[])) as Array<{ detail: string }>;
            const listings = plan.filter((step) => /\blistings\b/.test(step.detail));
            expect(listings.length, text).toBeGreaterThan(0);
            for (const step of listings) expect(step.detail, text).toMatch(/^SEARCH listings USING/);
          }
        } finally {
          db.close();
        }
      } else {
        const client = new pg.Client({ connectionString: t.databaseUrl });
        await client.connect();
        try {
          const { store, reads } = recordingStore(postgresSql(client));
          await runAsync(maintainBatch(store, cuts, now, 64));
          expect(reads.length).toBeGreaterThanOrEqual(5);
          await client.query('SET enable_seqscan = off');
          for (const { text, params } of reads) {
            const explained = await client.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(
              `EXPLAIN (FORMAT JSON) ${text}`,
              [...params],
            );
            const scans = scansOf(explained.rows[0]!['QUERY PLAN'][0]!.Plan, 'listings');
            expect(scans.length, text).toBeGreaterThan(0);
            for (const scan of scans) {
              expect(scan.type, text).not.toBe('Seq Scan');
              expect(scan.indexed, `${text}: ${scan.type}`).toBe(true);
            }
          }
        } finally {
          await client.end();
        }
      }
    } finally {
      t.close();
    }
  });
});
