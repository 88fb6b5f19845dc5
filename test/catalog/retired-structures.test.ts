/**
 * A catalog written by an svc from before the one search engine (docs/CATALOG.md "Search") holds
 * structures the engine no longer reads: term signatures and sketches, revision share bounds and
 * common-term masks, chosen common terms, pair tops, the threshold walk's functions. Opening it
 * drops them (SQLite catalog migration 25, Postgres 36; the migrations after them run again) and its search answers
 * as before. And on Postgres, the `url` filter's structures other than the URL suffixes (docs/CATALOG.md "List"): the
 * trigram indexes of the resource URLs and the URLs spelled in letters, with their triggers and functions (catalog
 * migration 40); its list pages answer as before.
 */
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { CATALOG_MIGRATIONS } from '../../src/catalog/postgres/migrations.ts';
import { CURRENT_SEQ_SQL } from '../../src/catalog/postgres/queries.ts';
import { urlKeysSql } from '../../src/catalog/terms.ts';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { MIGRATIONS } from '../../src/catalog/sqlite/migrations.ts';
import { DISCOVERY_X402_VERSION } from '../../src/catalog/index.ts';
import { settlement, storeDraft, tempCatalog } from './fixtures.ts';
import type { DiscoveryFilters } from '../../src/catalog/types.ts';
import { freshCatalogDatabase } from './fresh.ts';

const QUERIES = ['weather', 'weather forecast', 'forecast city lisbon', 'nothing here'];

/** A small catalog's search pages for QUERIES. */
async function pages(search: (query: string) => Promise<{ resources: Array<{ resource: string }> }>): Promise<string[][]> {
  const out: string[][] = [];
  for (const query of QUERIES) out.push((await search(query)).resources.map((r) => r.resource));
  return out;
}

async function fill(t: ReturnType<typeof tempCatalog>): Promise<void> {
  for (let i = 0; i < 12; i++) {
    t.tick();
    await t.catalog.recordSettlement(
      settlement({
        url: `https://api${i}.example.com/weather`,
        description: `Weather forecast ${i % 3 === 0 ? 'for a city' : ''} lisbon`.repeat(1 + (i % 2)),
      }),
    );
  }
}

/** A filled catalog on a temp SQLite file for `work`, deleted after. */
async function onSqlite(work: (t: ReturnType<typeof tempCatalog>) => Promise<void>): Promise<void> {
  const t = tempCatalog();
  try {
    await fill(t);
    await work(t);
  } finally {
    t.close();
  }
}

/** A filled catalog on a fresh Postgres database for `work`, with a pool of its own for the test's changes. */
async function onPostgres(work: (t: ReturnType<typeof tempCatalog>, pool: pg.Pool, databaseUrl: string) => Promise<void>): Promise<void> {
  const databaseUrl = await freshCatalogDatabase();
  const t = tempCatalog(undefined, { databaseUrl });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    await fill(t);
    await work(t, pool, databaseUrl);
  } finally {
    await pool.end();
    t.close();
  }
}

describe('a catalog from before the one search engine', () => {
  it('on SQLite: its retired structures are dropped at open and its pages stay the same', () =>
    onSqlite(async (t) => {
      const search = (store: CatalogStore) => async (query: string) =>
        store.search(query, {}, { limit: 20 }, t.clock(), DISCOVERY_X402_VERSION);
      const first = new CatalogStore(t.dbPath);
      const before = await pages(search(first));
      first.close();
      // As an older svc left it (migrations 10, 12, 15–17): columns, indexes and tables the engine does not read.
      const old = new DatabaseSync(t.dbPath);
      old.exec(`
        ALTER TABLE search_terms ADD COLUMN sig INTEGER NOT NULL DEFAULT -1;
        ALTER TABLE search_terms ADD COLUMN sketch_a INTEGER NOT NULL DEFAULT -1;
        ALTER TABLE search_terms ADD COLUMN sketch_b INTEGER NOT NULL DEFAULT -1;
        DROP INDEX search_terms_top;
        CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC, from_seq, to_seq, sig, sketch_a, sketch_b);
        ALTER TABLE search_revisions ADD COLUMN top_shares INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE search_revisions ADD COLUMN common_mask INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX search_revisions_by_top ON search_revisions (top_shares DESC, rev);
        CREATE TABLE search_common_terms (term TEXT PRIMARY KEY, bit INTEGER NOT NULL);
        CREATE TABLE search_pair_tops (pair INTEGER, rev INTEGER, listing_id INTEGER, rank INTEGER);
        CREATE TABLE search_pair_bounds (pair INTEGER PRIMARY KEY, rank INTEGER, listing_id INTEGER);
        PRAGMA user_version = ${MIGRATIONS.findIndex((m) => m.name === 'dropRetiredSearchStructures')};
      `);
      old.close();
      const store = new CatalogStore(t.dbPath);
      try {
        const columns = (table: string) =>
          (store.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
        expect(columns('search_terms')).toEqual(['term', 'rev', 'listing_id', 'score', 'milli', 'from_seq', 'to_seq']);
        expect(columns('search_revisions')).toEqual(['rev', 'listing_id', 'from_seq', 'to_seq', 'superseded_at', 'text_hash']);
        const tables = store.db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'search_%' ORDER BY name").all() as Array<{
          name: string;
        }>;
        expect(tables.map((r) => r.name)).toEqual([
          'search_revisions',
          'search_revisions_by_listing',
          'search_revisions_current',
          'search_revisions_superseded',
          'search_terms',
          'search_terms_by_rev',
          'search_terms_top',
        ]);
        expect(await pages(search(store))).toEqual(before);
      } finally {
        store.close();
      }
    }));

  it('on Postgres: its retired structures are dropped at open and its pages stay the same', () =>
    onPostgres(async (t, pool, databaseUrl) => {
      const first = await PostgresCatalogStore.open(databaseUrl);
      const search = (store: PostgresCatalogStore) => (query: string) =>
        store.search(query, {}, { limit: 20 }, t.clock(), DISCOVERY_X402_VERSION);
      const before = await pages(search(first));
      await first.end();
      await pool.query(`
        ALTER TABLE search_terms ADD COLUMN sig BIGINT NOT NULL DEFAULT -1, ADD COLUMN sketch_a BIGINT NOT NULL DEFAULT -1,
          ADD COLUMN sketch_b BIGINT NOT NULL DEFAULT -1;
        ALTER TABLE search_revisions ADD COLUMN top_shares BIGINT NOT NULL DEFAULT 0, ADD COLUMN common_mask INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX search_revisions_by_top ON search_revisions (top_shares DESC, rev ASC);
        CREATE TABLE search_common_terms (term TEXT PRIMARY KEY, term_bit INTEGER NOT NULL);
        CREATE FUNCTION catalog_term_bit(p_term TEXT) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS $$ SELECT 1::bigint $$;`);
      await pool.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [
        CATALOG_MIGRATIONS.findIndex((m) => m.includes('DROP FUNCTION IF EXISTS catalog_walk')),
      ]);
      const store = await PostgresCatalogStore.open(databaseUrl);
      try {
        const columns = async (table: string) =>
          (
            await pool.query<{ column_name: string }>(
              'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position',
              [table],
            )
          ).rows.map((r) => r.column_name);
        expect(await columns('search_terms')).toEqual(['term', 'rev', 'listing_id', 'units', 'milli', 'from_seq', 'to_seq']);
        expect(await columns('search_revisions')).toEqual(['rev', 'listing_id', 'from_seq', 'to_seq', 'superseded_at', 'text_hash']);
        expect(await columns('search_common_terms')).toEqual([]);
        const functions = await pool.query("SELECT proname FROM pg_proc WHERE proname IN ('catalog_term_bit', 'catalog_walk')");
        expect(functions.rows).toEqual([]);
        expect(await pages(search(store))).toEqual(before);
      } finally {
        await store.end();
      }
    }));
});

/** A search's every page, one listing a page from `cursor` on (or from the first page). */
async function walk(
  search: (query: string, cursor?: string) => Promise<{ resources: Array<{ resource: string }>; pagination: { cursor: string | null } }>,
  query: string,
  cursor?: string,
): Promise<string[]> {
  const out: string[] = [];
  for (let next = cursor, first = true; first || next; first = false) {
    const page = await search(query, next);
    out.push(...page.resources.map((r) => r.resource));
    next = page.pagination.cursor ?? undefined;
  }
  return out;
}

const URL_QUERIES = ['api3', 'api3 api5 com', 'example'];

/**
 * A catalog from before the write sequence moved into `catalog_meta` and the URL terms into the postings (SQLite catalog
 * migrations 27–28, Postgres 38–39): its `catalog_seq` and `listing_url_terms` go, its sequence goes on where it was,
 * its text and URL searches answer as before, and a URL search's cursor issued before the migration walks on.
 */
describe('a catalog from before the write sequence and the URL terms moved', () => {
  const search = (store: CatalogStore | PostgresCatalogStore, now: () => Date) => async (query: string, cursor?: string) =>
    store.search(query, {}, { limit: 1, ...(cursor ? { cursor } : {}) }, now(), DISCOVERY_X402_VERSION);

  it('on SQLite', () =>
    onSqlite(async (t) => {
      const first = new CatalogStore(t.dbPath);
      const find = search(first, t.clock);
      const before = { pages: await pages((q) => find(q)), urls: await Promise.all(URL_QUERIES.map((q) => walk(find, q))) };
      const cursor = (await find('example')).pagination.cursor!;
      const seq = first.currentSeq();
      first.close();
      // As an older svc left it: the sequence in its own table, the URL terms of the current revisions in theirs.
      const old = new DatabaseSync(t.dbPath);
      old.exec(`
        CREATE TABLE catalog_seq (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL) STRICT;
        INSERT INTO catalog_seq (id, seq) SELECT 1, value FROM catalog_meta WHERE key = 'seq';
        DELETE FROM catalog_meta WHERE key = 'seq';
        CREATE TABLE listing_url_terms (term TEXT NOT NULL, listing_id INTEGER NOT NULL, PRIMARY KEY (term, listing_id)) STRICT, WITHOUT ROWID;
        INSERT INTO listing_url_terms SELECT substr(term, 2), listing_id FROM search_terms WHERE ${urlKeysSql('term')} AND to_seq IS NULL;
        DELETE FROM search_terms WHERE ${urlKeysSql('term')};
        PRAGMA user_version = ${MIGRATIONS.findIndex((m) => m.name === 'moveSeqToMeta')};
      `);
      old.close();
      const store = new CatalogStore(t.dbPath);
      try {
        const tables = store.db.prepare("SELECT name FROM sqlite_master WHERE name IN ('catalog_seq', 'listing_url_terms')").all();
        expect(tables).toEqual([]);
        expect(store.currentSeq()).toBe(seq);
        const find = search(store, t.clock);
        expect(await pages((q) => find(q))).toEqual(before.pages);
        expect(await Promise.all(URL_QUERIES.map((q) => walk(find, q)))).toEqual(before.urls);
        expect([before.urls[2]![0], ...(await walk(find, 'example', cursor))]).toEqual(before.urls[2]);
      } finally {
        store.close();
      }
      t.tick();
      await t.catalog.recordSettlement(settlement({ url: 'https://api12.example.com/weather', description: 'weather' }));
      const again = new CatalogStore(t.dbPath);
      expect(again.currentSeq()).toBe(seq + 1);
      again.close();
    }));

  it('on Postgres', () =>
    onPostgres(async (t, pool, databaseUrl) => {
      const first = await PostgresCatalogStore.open(databaseUrl);
      const find = search(first, t.clock);
      const before = { pages: await pages((q) => find(q)), urls: await Promise.all(URL_QUERIES.map((q) => walk(find, q))) };
      const cursor = (await find('example')).pagination.cursor!;
      await first.end();
      const seq = async () => (await pool.query<{ seq: string }>(CURRENT_SEQ_SQL)).rows[0]?.seq;
      const at = await seq();
      await pool.query(`
        CREATE TABLE catalog_seq (id INTEGER PRIMARY KEY CHECK (id = 1), seq BIGINT NOT NULL);
        INSERT INTO catalog_seq (id, seq) SELECT 1, value::bigint FROM catalog_meta WHERE key = 'seq';
        DELETE FROM catalog_meta WHERE key = 'seq';
        CREATE TABLE listing_url_terms (term TEXT COLLATE "C" NOT NULL, listing_id BIGINT NOT NULL, PRIMARY KEY (term, listing_id));
        INSERT INTO listing_url_terms SELECT substr(term, 2), listing_id FROM search_terms WHERE ${urlKeysSql('term')} AND to_seq IS NULL;
        DELETE FROM search_terms WHERE ${urlKeysSql('term')};`);
      await pool.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [
        CATALOG_MIGRATIONS.findIndex((m) => m.includes('DROP TABLE catalog_seq')),
      ]);
      const store = await PostgresCatalogStore.open(databaseUrl);
      try {
        const tables = await pool.query("SELECT to_regclass('catalog_seq') AS seq, to_regclass('listing_url_terms') AS url");
        expect(tables.rows).toEqual([{ seq: null, url: null }]);
        expect(await seq()).toBe(at);
        const find = search(store, t.clock);
        expect(await pages((q) => find(q))).toEqual(before.pages);
        expect(await Promise.all(URL_QUERIES.map((q) => walk(find, q)))).toEqual(before.urls);
        expect([before.urls[2]![0], ...(await walk(find, 'example', cursor))]).toEqual(before.urls[2]);
      } finally {
        await store.end();
      }
      t.tick();
      await t.catalog.recordSettlement(settlement({ url: 'https://api12.example.com/weather', description: 'weather' }));
      expect(await seq()).toBe(String(Number(at) + 1));
    }));
});

/** A small catalog's `url` list pages: few listings, all of them, none, with another filter, and past the first page. */
async function urlPages(
  list: (
    filters: DiscoveryFilters,
    page: { limit: number; offset: number },
  ) => Promise<{ items: Array<{ resource: string }>; total: number }>,
): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const filters of [{ url: 'API3.' }, { url: 'example.com/WEATHER' }, { url: 'nowhere' }, { url: 'api1', network: 'stellar:testnet' }])
    for (const page of [
      { limit: 5, offset: 0 },
      { limit: 5, offset: 5 },
    ]) {
      const { items, total } = await list(filters, page);
      out.push({ filters, page, total, items: items.map((item) => item.resource) });
    }
  return out;
}

/** As catalog migrations 29–33 left a catalog (their names; the spelling simplified): what migration 40 drops. */
const URL_STRUCTURES_BEFORE = `
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
  CREATE INDEX listings_resource_trigrams ON listings USING gin (resource gin_trgm_ops);
  CREATE INDEX listings_resource_lower_trigrams ON listings USING gin (lower(resource) gin_trgm_ops);
  CREATE FUNCTION catalog_url_letters(url text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT lower(url) $$;
  CREATE FUNCTION catalog_key_bits(kind text, value text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT 1::bigint $$;
  CREATE TABLE listing_url_letters (
    listing_id BIGINT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE,
    letters TEXT NOT NULL,
    last_updated TEXT COLLATE "C" NOT NULL DEFAULT '',
    key_bits BIGINT NOT NULL DEFAULT 0
  );
  INSERT INTO listing_url_letters (listing_id, letters, last_updated) SELECT id, catalog_url_letters(resource), last_updated FROM listings;
  CREATE INDEX listing_url_letters_trigrams ON listing_url_letters USING gin (letters gin_trgm_ops);
  CREATE INDEX listing_url_letters_page ON listing_url_letters (last_updated, listing_id);
  CREATE FUNCTION catalog_spell_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO listing_url_letters (listing_id, letters, last_updated) VALUES (NEW.id, catalog_url_letters(NEW.resource), NEW.last_updated);
    RETURN NULL;
  END $$;
  CREATE TRIGGER listings_spell_url AFTER INSERT ON listings FOR EACH ROW EXECUTE FUNCTION catalog_spell_listing_url();
  CREATE FUNCTION catalog_date_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE listing_url_letters SET last_updated = NEW.last_updated WHERE listing_id = NEW.id;
    RETURN NULL;
  END $$;
  CREATE TRIGGER listings_date_url AFTER UPDATE OF last_updated ON listings FOR EACH ROW EXECUTE FUNCTION catalog_date_listing_url();
  CREATE FUNCTION catalog_key_listing_url() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE listing_url_letters SET key_bits = key_bits | catalog_key_bits(NEW.kind, NEW.value) WHERE listing_id = NEW.listing_id;
    RETURN NULL;
  END $$;
  CREATE CONSTRAINT TRIGGER listing_keys_url_bits AFTER INSERT ON listing_keys DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION catalog_key_listing_url();`;

describe('a Postgres catalog from before the suffixes alone served the url filter', () => {
  it('has the other structures dropped at open, and its url pages stay the same', async () => {
    const databaseUrl = await freshCatalogDatabase();
    const t = tempCatalog(undefined, { databaseUrl });
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    try {
      await fill(t);
      const scale = { urlIndexCap: 3, urlWalkBudget: 6 }; // so a small catalog's pages take both the index and the walk
      const first = await PostgresCatalogStore.open(databaseUrl, scale);
      const list = (store: PostgresCatalogStore) => (filters: DiscoveryFilters, page: { limit: number; offset: number }) =>
        store.list(filters, page, t.clock());
      const before = await urlPages(list(first));
      await first.end();
      await pool.query(URL_STRUCTURES_BEFORE);
      await pool.query("UPDATE svc_schema_versions SET version = $1 WHERE component = 'catalog'", [
        CATALOG_MIGRATIONS.findIndex((m) => m.includes('DROP TABLE IF EXISTS listing_url_letters')),
      ]);
      const store = await PostgresCatalogStore.open(databaseUrl, scale);
      try {
        const named = async (sql: string) => (await pool.query<{ name: string }>(sql)).rows.map((r) => r.name);
        expect(
          await named(
            "SELECT relname AS name FROM pg_class WHERE relname LIKE 'listing_url_letters%' OR relname LIKE 'listings_resource%trigrams'",
          ),
        ).toEqual([]);
        expect(
          await named(
            "SELECT proname AS name FROM pg_proc WHERE proname IN ('catalog_url_letters', 'catalog_key_bits', 'catalog_spell_listing_url', 'catalog_date_listing_url', 'catalog_key_listing_url')",
          ),
        ).toEqual([]);
        expect(
          await named(
            "SELECT tgname AS name FROM pg_trigger WHERE tgname IN ('listings_spell_url', 'listings_date_url', 'listing_keys_url_bits')",
          ),
        ).toEqual([]);
        expect(await urlPages(list(store))).toEqual(before);
        // A listing written after: found as any other (the suffixes kept by their own trigger).
        t.tick();
        const draft = storeDraft(77, { network: 'stellar:testnet', asset: 'CASSET', metadata: { description: 'a listing' } });
        await store.writeListing({ ...draft, resource: 'https://api77.example.com/weather' }, t.clock());
        expect((await store.list({ url: 'API77' }, { limit: 5, offset: 0 }, t.clock())).items.map((item) => item.resource)).toEqual([
          'https://api77.example.com/weather',
        ]);
      } finally {
        await store.end();
      }
    } finally {
      await pool.end();
      t.close();
    }
  });
});
