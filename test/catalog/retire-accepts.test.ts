/**
 * The accepted entries' table retired (SQLite migration 33, Postgres 45: docs/CATALOG.md "List"): a catalog written
 * while it existed, whose entry keys from before the sequences were kept carry none, upgrades to the keys' sequences
 * the table knew and answers every filtered list and search page as before, on both stores.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/index.ts';
import { CATALOG_MIGRATIONS } from '../../src/catalog/postgres/migrations.ts';
import { RETIRE_LISTING_ACCEPTS_MIGRATION } from '../../src/catalog/postgres/list-index.ts';
import { MIGRATIONS } from '../../src/catalog/sqlite/migrations.ts';
import { DEFAULT_USD_ASSETS } from '../../src/filters.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { ASSET, seededRandom, settlement, tempCatalog } from './fixtures.ts';
import { BACKENDS, freshCatalogDatabase } from './fresh.ts';
import { recreateListingAccepts, recreatePostgresListingAccepts } from './listing-accepts.ts';

const OTHER_USD = DEFAULT_USD_ASSETS[1]!.asset;
const OTHER_ASSET = 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC';
const ENTRY_KINDS = ['scheme', 'network', 'scheme+network', 'asset', 'network+asset', 'scheme+asset', 'scheme+network+asset'];
const ENTRY_KINDS_SQL = ENTRY_KINDS.map((kind) => `'${kind}'`).join(', ');

const FILTERS: DiscoveryFilters[] = [
  { network: 'stellar:pubnet' },
  { scheme: 'upto' },
  { scheme: 'upto', network: 'stellar:testnet' },
  { asset: OTHER_ASSET },
  { asset: ASSET, network: 'stellar:pubnet' },
  { asset: ASSET, scheme: 'upto', network: 'stellar:pubnet' },
  { asset: ASSET, maxAmount: '5000' },
  { asset: ASSET, maxAmount: '5000', scheme: 'exact', network: 'stellar:testnet' },
  { asset: ASSET, maxAmount: '5000', type: 'http' },
  { maxUsdPrice: '0.0005' },
  { maxUsdPrice: '0.0005', network: 'stellar:pubnet' },
  { maxUsdPrice: '0.0005', asset: OTHER_USD },
  { maxUsdPrice: '0.0005', asset: ASSET, maxAmount: '2000' },
  { maxUsdPrice: '0.0005', asset: OTHER_ASSET },
];

/** Every filter's list page and search page (resources in page order, and totals). */
async function pages(catalog: Catalog) {
  const answers: unknown[] = [];
  for (const filters of FILTERS) {
    const list = await catalog.list(filters, { limit: 100, offset: 0 });
    const found = await catalog.search('weather', filters, { limit: 100 });
    answers.push([filters, list.pagination.total, list.items.map((i) => i.resource), found.resources.map((i) => i.resource)]);
  }
  return answers;
}

describe.each(BACKENDS)('on %s', (backend) => {
  it('a catalog with the accepted entries in a table of their own upgrades to the same keys and the same pages', async () => {
    const databaseUrl = backend === 'Postgres' ? await freshCatalogDatabase() : undefined;
    const t = tempCatalog(undefined, { databaseUrl });
    let reopened: Catalog | undefined;
    try {
      const random = seededRandom(0xacce);
      const pick = <T>(values: T[]) => values[Math.floor(random() * values.length)]!;
      // 40 listings, each with one to three entries: schemes, networks, assets (two USD-pegged) and amounts mixed.
      for (let i = 0; i < 40; i++)
        for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
          const s = settlement({
            url: `https://s${i}.example.com/r`,
            description: 'weather forecast',
            scheme: pick(['exact', 'upto']),
            network: pick(['stellar:testnet', 'stellar:pubnet']),
            amount: String(Math.floor(random() * 10_000)),
          });
          s.paymentRequirements.asset = pick([ASSET, ASSET, OTHER_USD, OTHER_ASSET]);
          expect(await t.catalog.recordSettlement(s)).toEqual({ status: 'success' });
          t.tick();
        }
      const expected = await pages(t.catalog);
      // Every filter selects some listings and leaves some out (so the pages compared say something), but the last:
      // maxUsdPrice in an asset not pegged, none.
      expect(expected.at(-1)).toEqual([FILTERS.at(-1), 0, [], []]);
      for (const [filters, total] of expected.slice(0, -1) as Array<[DiscoveryFilters, number]>) {
        expect([filters, total]).not.toEqual([filters, 0]);
        expect([filters, total]).not.toEqual([filters, 40]);
      }
      await t.catalog.close();
      const keysSql = `SELECT kind, value, listing_id, added_seq FROM listing_keys WHERE kind IN (${ENTRY_KINDS_SQL}) ORDER BY 1, 2, 3`;
      // Back to the version before the table went, with it rebuilt, and the entry keys without their sequences (as
      // before the list keys kept them).
      let keysBefore: unknown[];
      if (databaseUrl === undefined) {
        const db = new DatabaseSync(t.dbPath);
        keysBefore = db.prepare(keysSql).all();
        recreateListingAccepts(db);
        const before = MIGRATIONS.findIndex((migration) => migration.name === 'retireListingAccepts');
        expect(before).toBeGreaterThan(0);
        db.exec(`UPDATE listing_keys SET added_seq = 0 WHERE kind IN (${ENTRY_KINDS_SQL}); PRAGMA user_version = ${before}`);
        db.close();
      } else {
        const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
        keysBefore = (await pool.query(keysSql)).rows;
        await recreatePostgresListingAccepts(pool);
        await pool.query(`UPDATE listing_keys SET added_seq = 0 WHERE kind IN (${ENTRY_KINDS_SQL})`);
        // The version before the migration that retires the table (a version is its migration's place from 1).
        const before = CATALOG_MIGRATIONS.indexOf(RETIRE_LISTING_ACCEPTS_MIGRATION);
        expect(before).toBeGreaterThan(0);
        await pool.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [before]);
        await pool.end();
      }
      expect(keysBefore.length).toBeGreaterThan(200);
      reopened = t.reopen();
      expect(await pages(reopened)).toEqual(expected);
      await reopened.close();
      reopened = undefined;
      // The keys have their sequences back, and the table is gone.
      if (databaseUrl === undefined) {
        const db = new DatabaseSync(t.dbPath, { readOnly: true });
        expect(db.prepare(keysSql).all()).toEqual(keysBefore);
        expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'listing_accepts'").all()).toEqual([]);
        db.close();
      } else {
        const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
        expect((await pool.query(keysSql)).rows).toEqual(keysBefore);
        expect((await pool.query("SELECT to_regclass('listing_accepts') AS t")).rows).toEqual([{ t: null }]);
        await pool.end();
      }
    } finally {
      await reopened?.close();
      t.close();
    }
  }, 120_000);
});
