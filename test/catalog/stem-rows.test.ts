/**
 * The stem rows of revisions written before stems were indexed (docs/CATALOG.md "Ranking"): SQLite's
 * migration 26 and Postgres's catalog migration 37 (with the store's step at open) derive them from
 * each revision's term rows, the same rows a new write makes; "forecasts" then finds "forecast".
 */
import { describe, expect, it } from 'vitest';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { BACKENDS, freshCatalogDatabase } from '../helpers/postgres.ts';
import { addDueStemRows } from '../../src/catalog/postgres/revisions.ts';
import { ASSET, storeDraft, tempDir } from './fixtures.ts';

const at = new Date('2026-01-01T00:00:00Z');
const drafts = [
  storeDraft(1, {
    network: 'stellar:testnet',
    asset: ASSET,
    metadata: { serviceName: 'Weather forecasts', description: 'hourly forecast' },
  }),
  storeDraft(2, { network: 'stellar:testnet', asset: ASSET, metadata: { description: 'converting prices' } }),
];
const STEMS = "SELECT term, rev, milli, from_seq, to_seq FROM search_terms WHERE term LIKE '~%' ORDER BY term, rev";

describe.each(BACKENDS)('%s', (backend) => {
  it('a catalog written before stems were indexed gets the stem rows a new write makes', async () => {
    if (backend === 'SQLite') {
      const dir = tempDir();
      const path = `${dir.dir}/stems.sqlite`;
      try {
        let store = new CatalogStore(path);
        for (const d of drafts) expect(store.writeListing(d, at).status).toBe('written');
        const written = store.db.prepare(STEMS).all();
        expect(written.map((r) => r.term)).toEqual(expect.arrayContaining(['~forecast', '~convert', '~price']));
        // As a file before migration 25: no stem rows, one version earlier.
        store.db.exec("DELETE FROM search_terms WHERE term LIKE '~%'; PRAGMA user_version = 24");
        store.close();
        store = new CatalogStore(path);
        expect(store.db.prepare(STEMS).all()).toEqual(written);
        const page = store.search('forecasting', {}, { limit: 5 }, at, DISCOVERY_X402_VERSION);
        expect(page.resources).toHaveLength(1);
        store.close();
      } finally {
        dir.cleanup();
      }
    } else {
      const url = await freshCatalogDatabase();
      let store = await PostgresCatalogStore.open(url);
      try {
        for (const d of drafts) expect((await store.writeListing(d, at)).status).toBe('written');
        const pool = (store as unknown as { pool: import('pg').Pool }).pool;
        const written = (await pool.query(STEMS)).rows;
        expect(written.map((r: { term: string }) => r.term)).toEqual(expect.arrayContaining(['~forecast', '~convert', '~price']));
        // As a database just past migration 37: no stem rows yet, and due.
        await pool.query(
          "DELETE FROM search_terms WHERE term LIKE '~%'; INSERT INTO catalog_meta (key, value) VALUES ('stem_rows_due', '1')",
        );
        await store.end();
        store = await PostgresCatalogStore.open(url);
        const again = (store as unknown as { pool: import('pg').Pool }).pool;
        expect((await again.query(STEMS)).rows).toEqual(written);
        const page = await store.search('forecasting', {}, { limit: 5 }, at, DISCOVERY_X402_VERSION);
        expect(page.resources).toHaveLength(1);
        // In batches (one revision each here), each committed with the next revision due in the mark: a pass stopped
        // after its first batch goes on from the mark, and the revisions before it are not read again.
        const revs = [...new Set(written.map((r: { rev: string }) => Number(r.rev)))].sort((a, b) => a - b);
        await again.query(
          "DELETE FROM search_terms WHERE term LIKE '~%'; INSERT INTO catalog_meta (key, value) VALUES ('stem_rows_due', '1')",
        );
        await addDueStemRows(again, 1);
        expect((await again.query(STEMS)).rows).toEqual(written);
        await again.query("DELETE FROM search_terms WHERE term LIKE '~%'");
        await again.query("INSERT INTO catalog_meta (key, value) VALUES ('stem_rows_due', $1)", [String(revs[1])]);
        await addDueStemRows(again, 1);
        expect((await again.query(STEMS)).rows).toEqual(written.filter((r: { rev: string }) => Number(r.rev) >= revs[1]!));
        expect((await again.query("SELECT 1 FROM catalog_meta WHERE key = 'stem_rows_due'")).rows).toEqual([]);
      } finally {
        await store.end();
      }
    }
  }, 60_000);
});
