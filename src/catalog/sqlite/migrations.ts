/**
 * The catalog's SQLite schema, as append-only migrations (MIGRATIONS: migration N brings user_version N-1 to N).
 * Each migration's function says what it does; the list below is the index.
 *
 * 1 listings, revisions · 2 term index and list keys · 3 list key blocks (list-index.ts) · 4 quality signals ·
 * 5 accepted assets and `asset` keys · 6 liveness · 7 withdrawals · 8–9, 11, 13–14 price index, its type, class
 * indexes, network and scheme keys (price-migrations.ts) · 18 catalog identifier · 19 URL trigram index · 20 claims ·
 * 22 hidden listings' stash · 23 asset combination keys · 24 probe hosts · 25 drops the retired search structures ·
 * 26 stem rows · 27 write sequence into `catalog_meta` · 28 URL terms into the postings · 29 price counts per level ·
 * 30 extension keys and counts from the list index · 31–32 quality from the payments kept and `quality_days` ·
 * 33 accepted entries from the list keys and price index. 10, 12, 15–17, 21: retired (no-ops on a new catalog).
 */
import { migrateToClaims } from './claims.ts';
import { probeHostsTableSql } from '../probe-hosts.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { listingKeysOf, type ListingKey } from '../listing.ts';
import { amountKey } from '../../filters.ts';
import { buildBlocks, countKeyChanges, migrateHiddenListEntries, migrateToAssetCombinationKeys, type KeyChanges } from './list-index.ts';
import { inWriteTransaction } from '../../db/sqlite.ts';
import { termScores, urlKeysSql, withStemRows } from '../terms.ts';
import { withUrlKeys } from '../url-search.ts';
import { migrateToPaymentPayers, migrateToQualityDays, migrateToQualitySignals } from './quality.ts';
import { migrateToLiveness } from './liveness.ts';
import { migrateToWithdrawals } from './withdraw.ts';
import {
  migrateToNetworkPriceKeys,
  migrateToPriceClassIndexes,
  migrateToPriceIndex,
  migrateToPriceLevels,
  migrateToSchemePriceKeys,
  migrateToTypedPriceIndex,
} from './price-migrations.ts';
import { insertTermRows } from './revisions.ts';

/** A revision's row as insertTermRows takes it. */
const revisionOf = (r: { rev: number; listing_id: number; from_seq: number; to_seq: number | null }) => ({
  rev: Number(r.rev),
  listingId: Number(r.listing_id),
  fromSeq: Number(r.from_seq),
  toSeq: r.to_seq === null ? null : Number(r.to_seq),
});

/**
 * Migrations 2 and 5: a listing's new keys (at its lastUpdated, as all its keys are), each counted in
 * `listing_counts`, a table of totals until migration 30 made it the sum of the blocks.
 */
function addCountedKeys(db: DatabaseSync, listingId: number, lastUpdated: string, keys: ListingKey[]): KeyChanges {
  const insert = db.prepare('INSERT OR IGNORE INTO listing_keys (kind, value, listing_id, last_updated) VALUES (?, ?, ?, ?)');
  const count = db.prepare(
    'INSERT INTO listing_counts (kind, value, n) VALUES (?, ?, 1) ON CONFLICT (kind, value) DO UPDATE SET n = n + 1',
  );
  const added = keys.filter((key) => Number(insert.run(key.kind, key.value, listingId, lastUpdated).changes) === 1);
  for (const key of added) count.run(key.kind, key.value);
  return { added, moved: [] };
}

function migrateToTermIndex(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE search_terms (
      term TEXT NOT NULL,
      rev INTEGER NOT NULL,
      listing_id INTEGER NOT NULL,
      score REAL NOT NULL,
      milli INTEGER NOT NULL,
      from_seq INTEGER NOT NULL,
      to_seq INTEGER,
      PRIMARY KEY (term, rev)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC, from_seq, to_seq);
    CREATE INDEX search_terms_by_rev ON search_terms (rev);
    CREATE TABLE listing_keys (
      kind TEXT NOT NULL,
      value TEXT NOT NULL,
      listing_id INTEGER NOT NULL,
      last_updated TEXT NOT NULL,
      PRIMARY KEY (kind, value, listing_id)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_keys_page ON listing_keys (kind, value, last_updated DESC, listing_id DESC);
    CREATE INDEX listing_keys_by_listing ON listing_keys (listing_id);
    CREATE TABLE listing_counts (kind TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (kind, value)) STRICT, WITHOUT ROWID;
    CREATE INDEX listings_by_tool_name ON listings (tool_name);
  `);
  const revisions = db
    .prepare(
      `SELECT r.rev, r.listing_id, r.from_seq, r.to_seq, f.service_name, f.tags, f.description, f.params FROM search_revisions r JOIN search_fts f ON f.rowid = r.rev`,
    )
    .all() as Array<{
    rev: number;
    listing_id: number;
    from_seq: number;
    to_seq: number | null;
    service_name: string;
    tags: string;
    description: string;
    params: string;
  }>;
  for (const r of revisions) {
    insertTermRows(
      db,
      revisionOf(r),
      termScores({ serviceName: r.service_name, tags: r.tags, description: r.description, params: r.params }),
    );
  }
  db.exec('DROP TABLE search_fts');
  const listings = db.prepare('SELECT id, type, owner, last_updated FROM listings').all() as Array<{
    id: number;
    type: string;
    owner: string;
    last_updated: string;
  }>;
  const accepts = db.prepare('SELECT scheme, network FROM listing_accepts WHERE listing_id = ?');
  const extensions = db.prepare('SELECT key FROM listing_extensions WHERE listing_id = ?');
  for (const l of listings) {
    const keys = listingKeysOf(
      l.type,
      l.owner,
      accepts.all(l.id) as Array<{ scheme: string; network: string }>,
      (extensions.all(l.id) as Array<{ key: string }>).map((e) => e.key),
    );
    addCountedKeys(db, Number(l.id), l.last_updated, keys);
  }
}

/** Migration 5: accepted entries' asset and amount (from their canonical JSON), and the asset keys of the list index. */
function migrateToAcceptedAssets(db: DatabaseSync): void {
  db.exec(`
    ALTER TABLE listing_accepts ADD COLUMN asset TEXT;
    ALTER TABLE listing_accepts ADD COLUMN amount TEXT;
    UPDATE listing_accepts SET asset = json_extract(terms_key, '$.asset') WHERE json_type(terms_key, '$.asset') = 'text';
    CREATE INDEX listing_accepts_by_asset ON listing_accepts (asset, listing_id);
  `);
  const rows = db
    .prepare("SELECT listing_id, terms_key, json_extract(terms_key, '$.amount') AS amount FROM listing_accepts")
    .all() as Array<{
    listing_id: number;
    terms_key: string;
    amount: unknown;
  }>;
  const setAmount = db.prepare('UPDATE listing_accepts SET amount = ? WHERE listing_id = ? AND terms_key = ?');
  for (const row of rows) setAmount.run(amountKey(row.amount) ?? null, row.listing_id, row.terms_key);
  const assets = db
    .prepare(
      `SELECT DISTINCT a.listing_id, a.asset, l.last_updated FROM listing_accepts a JOIN listings l ON l.id = a.listing_id
       WHERE a.asset IS NOT NULL ORDER BY a.listing_id`,
    )
    .all() as Array<{ listing_id: number; asset: string; last_updated: string }>;
  for (const a of assets) {
    const id = Number(a.listing_id);
    countKeyChanges(db, id, a.last_updated, addCountedKeys(db, id, a.last_updated, [{ kind: 'asset', value: a.asset }]));
  }
}

type Migration = (db: DatabaseSync) => void;

/**
 * A migration whose structure the search no longer reads: a new catalog does not build it, and
 * dropRetiredSearchStructures removes it from a catalog that did.
 */
const retired: Migration = () => {};

/** Migration 25: drops what the retired migrations built (on a new catalog, nothing is there). */
function dropRetiredSearchStructures(db: DatabaseSync): void {
  const columns = (table: string) => (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  db.exec(`
    DROP TABLE IF EXISTS search_pair_tops;
    DROP TABLE IF EXISTS search_pair_bounds;
    DROP TABLE IF EXISTS search_common_terms;
  `);
  if (columns('search_terms').includes('sig')) {
    db.exec(`
      DROP INDEX search_terms_top;
      ALTER TABLE search_terms DROP COLUMN sig;
      ALTER TABLE search_terms DROP COLUMN sketch_a;
      ALTER TABLE search_terms DROP COLUMN sketch_b;
      CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC, from_seq, to_seq);
    `);
  }
  const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'search_revisions'").all() as Array<{
    name: string;
  }>;
  for (const { name } of indexes)
    if (!['search_revisions_current', 'search_revisions_superseded', 'search_revisions_by_listing'].includes(name))
      db.exec(`DROP INDEX ${name}`);
  const kept = ['rev', 'listing_id', 'from_seq', 'to_seq', 'superseded_at', 'text_hash'];
  for (const column of columns('search_revisions'))
    if (!kept.includes(column)) db.exec(`ALTER TABLE search_revisions DROP COLUMN ${column}`);
}

/**
 * The stem rows (terms.ts withStemRows) of every revision written before stems were indexed, derived from its term
 * rows alone: a stem holds the highest score among its terms, as a new revision's does.
 */
function addStemRows(db: DatabaseSync): void {
  const revisions = db.prepare('SELECT DISTINCT rev, listing_id, from_seq, to_seq FROM search_terms').all() as Array<{
    rev: number;
    listing_id: number;
    from_seq: number;
    to_seq: number | null;
  }>;
  // A file set back to an earlier version migrates again: its stem rows are derived anew.
  db.exec("DELETE FROM search_terms WHERE term LIKE '~%'");
  const rows = db.prepare("SELECT term, score FROM search_terms WHERE rev = ? AND term NOT LIKE '~%'");
  for (const r of revisions) {
    const scores = new Map((rows.all(r.rev) as Array<{ term: string; score: number }>).map((t) => [t.term, t.score]));
    const stems = new Map([...withStemRows(scores)].filter(([term]) => !scores.has(term)));
    insertTermRows(db, revisionOf(r), stems);
  }
}

/** Migration 27: the write sequence becomes row `seq` of `catalog_meta` (revisions.ts nextSeq); its table goes. */
function moveSeqToMeta(db: DatabaseSync): void {
  // A file set back to an earlier version migrates again: its sequence has moved already.
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'catalog_seq'").get()) return;
  db.exec(`
    INSERT INTO catalog_meta (key, value) SELECT 'seq', seq FROM catalog_seq WHERE id = 1
      ON CONFLICT (key) DO UPDATE SET value = excluded.value;
    DROP TABLE catalog_seq;
  `);
}

/**
 * Migration 28: each revision held gets its listing's URL keys (../url-search.ts withUrlKeys), with its own validity, as a
 * revision written now holds them: the current ones, those a cursor may still read, and a hidden listing's (reopened
 * when it is back). Derived from the resource URL, so a file set back to an earlier version migrates again; the table
 * that held them goes.
 */
function moveUrlTermsToPostings(db: DatabaseSync): void {
  db.exec(`DELETE FROM search_terms WHERE ${urlKeysSql('term')}`);
  const revisions = db
    .prepare('SELECT r.rev, r.listing_id, r.from_seq, r.to_seq, l.resource FROM search_revisions r JOIN listings l ON l.id = r.listing_id')
    .all() as Array<{ rev: number; listing_id: number; from_seq: number; to_seq: number | null; resource: string }>;
  for (const r of revisions) insertTermRows(db, revisionOf(r), withUrlKeys(new Map(), r.resource));
  db.exec('DROP TABLE IF EXISTS listing_url_terms');
}

/**
 * Migration 30: `listing_extensions` duplicated the list index's 'extensions' keys (both written by every write since
 * migration 2); each key takes its row's sequence, so a search cursor reads them as of its snapshot as it read that
 * table, and the table goes. `listing_counts` duplicated the blocks' counts (migration 3 cut them from it, every write
 * and withdrawal since kept both): it becomes their sum. A file set back to an earlier version migrates again.
 */
function foldIntoListKeys(db: DatabaseSync): void {
  const columns = (db.prepare('PRAGMA table_info(listing_keys)').all() as Array<{ name: string }>).map((c) => c.name);
  if (!columns.includes('added_seq')) db.exec('ALTER TABLE listing_keys ADD COLUMN added_seq INTEGER NOT NULL DEFAULT 0');
  const isTable = (name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  if (isTable('listing_extensions'))
    db.exec(`
      UPDATE listing_keys SET added_seq = e.added_seq FROM listing_extensions e
        WHERE listing_keys.kind = 'extensions' AND e.listing_id = listing_keys.listing_id AND e.key = listing_keys.value;
      DROP TABLE listing_extensions;
    `);
  if (isTable('listing_counts')) db.exec('DROP TABLE listing_counts');
  db.exec(`
    DROP VIEW IF EXISTS listing_counts;
    CREATE VIEW listing_counts (kind, value, n) AS SELECT kind, value, sum(n) FROM listing_key_blocks GROUP BY kind, value;
  `);
}

/**
 * Migration 33: `listing_accepts` duplicated the list keys (each entry's scheme, network, their pair, its asset and
 * their combinations: listing.ts listingKeysOf) and the price index (its amounts), so the accepted-entry filters read
 * those (queries.ts acceptedEntrySql). A key written before migration 30 kept no sequence: it takes that of the first
 * entry that gave it, so a search cursor reads it as of its snapshot as it read the entries, and the table goes. A
 * file set back to an earlier version by the migration tests migrates again.
 */
function retireListingAccepts(db: DatabaseSync): void {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'listing_accepts'").get() === undefined) return;
  const nl = 'char(10)';
  const entryKeys: Array<[string, string, string]> = [
    ['scheme', 'a.scheme', 'TRUE'],
    ['network', 'a.network', 'TRUE'],
    ['scheme+network', `a.scheme || ${nl} || a.network`, 'TRUE'],
    ['asset', 'a.asset', 'a.asset IS NOT NULL'],
    ['network+asset', `a.network || ${nl} || a.asset`, 'a.asset IS NOT NULL'],
    ['scheme+asset', `a.scheme || ${nl} || a.asset`, 'a.asset IS NOT NULL'],
    ['scheme+network+asset', `a.scheme || ${nl} || a.network || ${nl} || a.asset`, 'a.asset IS NOT NULL'],
  ];
  db.exec(`
    WITH firsts (listing_id, kind, value, seq) AS (
      ${entryKeys
        .map(
          ([kind, value, where]) =>
            `SELECT a.listing_id, '${kind}', ${value}, min(a.added_seq) FROM listing_accepts a WHERE ${where} GROUP BY 1, 3`,
        )
        .join('\n      UNION ALL ')}
    )
    UPDATE listing_keys SET added_seq = f.seq FROM firsts f
      WHERE listing_keys.added_seq = 0 AND listing_keys.kind = f.kind AND listing_keys.value = f.value AND listing_keys.listing_id = f.listing_id;
    DROP TABLE listing_accepts;
  `);
}

/** Append-only. Migration N brings the database from user_version N-1 to N. */
export const MIGRATIONS: Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
      CREATE TABLE catalog_seq (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL) STRICT;
      INSERT INTO catalog_seq (id, seq) VALUES (1, 0);
      CREATE TABLE listings (
        id INTEGER PRIMARY KEY,
        resource TEXT NOT NULL,
        type TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        owner TEXT NOT NULL,
        x402_version INTEGER NOT NULL,
        created_seq INTEGER NOT NULL,
        last_updated TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (resource, type, tool_name)
      ) STRICT;
      CREATE INDEX listings_by_recency ON listings (last_updated DESC, id DESC);
      CREATE INDEX listings_by_owner ON listings (owner, last_updated DESC, id DESC);
      CREATE INDEX listings_by_type ON listings (type, last_updated DESC, id DESC);
      CREATE TABLE listing_accepts (
        listing_id INTEGER NOT NULL,
        terms_key TEXT NOT NULL,
        scheme TEXT NOT NULL,
        network TEXT NOT NULL,
        added_seq INTEGER NOT NULL,
        PRIMARY KEY (listing_id, terms_key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX listing_accepts_by_scheme ON listing_accepts (scheme, listing_id);
      CREATE INDEX listing_accepts_by_network ON listing_accepts (network, listing_id);
      CREATE TABLE listing_extensions (
        listing_id INTEGER NOT NULL,
        key TEXT NOT NULL,
        added_seq INTEGER NOT NULL,
        PRIMARY KEY (listing_id, key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX listing_extensions_by_key ON listing_extensions (key, listing_id);
      CREATE TABLE search_revisions (
        rev INTEGER PRIMARY KEY,
        listing_id INTEGER NOT NULL,
        from_seq INTEGER NOT NULL,
        to_seq INTEGER,
        superseded_at TEXT,
        text_hash TEXT NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX search_revisions_current ON search_revisions (listing_id) WHERE to_seq IS NULL;
      CREATE INDEX search_revisions_superseded ON search_revisions (superseded_at) WHERE to_seq IS NOT NULL;
      CREATE VIRTUAL TABLE search_fts USING fts5(
        service_name, tags, description, params,
        tokenize = 'unicode61 remove_diacritics 2'
      );
    `);
    db.prepare('INSERT INTO catalog_meta (key, value) VALUES (?, ?)').run('cursor_secret', randomBytes(32).toString('hex'));
  },
  migrateToTermIndex,
  (db) => {
    db.exec(`
      CREATE TABLE listing_key_blocks (
        kind TEXT NOT NULL,
        value TEXT NOT NULL,
        start_updated TEXT NOT NULL,
        start_id INTEGER NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (kind, value, start_updated, start_id)
      ) STRICT, WITHOUT ROWID;
    `);
    buildBlocks(db);
  },
  migrateToQualitySignals,
  migrateToAcceptedAssets,
  migrateToLiveness,
  migrateToWithdrawals,
  migrateToPriceIndex,
  migrateToTypedPriceIndex,
  retired,
  migrateToPriceClassIndexes,
  retired,
  migrateToNetworkPriceKeys,
  migrateToSchemePriceKeys,
  retired,
  retired,
  retired,
  // The catalog's identifier, named in every withdrawal's signed text (docs/CATALOG.md
  // "Withdrawing a listing"): a message signed for this catalog withdraws nothing from another.
  (db) => {
    db.prepare("INSERT INTO catalog_meta (key, value) VALUES ('catalog_id', ?) ON CONFLICT (key) DO NOTHING").run(randomUUID());
  },
  // Each listing's resource URL in a trigram index (rowid = the listing's id; rebuilt whole, so a
  // file set back to an earlier version by the migration tests migrates again), so the `url` filter
  // (a case-insensitive substring, openapi.yaml UrlFilter) is an index lookup, not a scan (queries.ts urlMatchSql).
  (db) => {
    db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS listing_urls USING fts5(resource, tokenize = 'trigram');
      DELETE FROM listing_urls;
      INSERT INTO listing_urls (rowid, resource) SELECT id, resource FROM listings;
    `);
  },
  // Ownership claims: settlements waiting for the resource's own server to name their payTo, and
  // the failed checks remembered (sqlite/claims.ts; docs/CATALOG.md "Ownership and refresh").
  // Existing listings keep their owners.
  migrateToClaims,
  // Retired: each listing's URL terms in a table of their own (migration 28 moves them into the postings).
  retired,
  // A hidden listing's search revision kept on its row while it is out of the search index
  // (null while in it), and the partial indexes a lifecycle pass walks: the indexed listings by age
  // and by failures (the newly hidden are at their start), the stashed ones by age (those visible
  // again). No row is rewritten: the first pass takes the hidden listings out (lifecycle.ts).
  (db) => {
    const columns = db.prepare('PRAGMA table_info(listings)').all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'search_stash')) db.exec('ALTER TABLE listings ADD COLUMN search_stash TEXT');
    db.exec(`
      CREATE INDEX IF NOT EXISTS listings_indexed_by_age ON listings (last_updated, id) WHERE search_stash IS NULL;
      CREATE INDEX IF NOT EXISTS listings_indexed_failing ON listings (liveness_failing_since, id)
        WHERE search_stash IS NULL AND liveness_failing_since IS NOT NULL;
      CREATE INDEX IF NOT EXISTS listings_stashed_by_age ON listings (last_updated, id) WHERE search_stash IS NOT NULL;
    `);
  },
  // A list key per accepted entry for its asset with its network and/or scheme, and with the listing's type
  // (list-index.ts), so `asset` combined with them is one key: its total a count, its page one index range.
  migrateToAssetCombinationKeys,
  // The time each host may next be asked by svc's checks (../probe-hosts.ts; docs/SECURITY.md).
  (db) => db.exec(probeHostsTableSql('sqlite')),
  dropRetiredSearchStructures,
  addStemRows,
  moveSeqToMeta,
  moveUrlTermsToPostings,
  migrateToPriceLevels,
  foldIntoListKeys,
  migrateToPaymentPayers,
  migrateToQualityDays,
  retireListingAccepts,
  // A hidden listing's list entries wait below every listing's time (../lifecycle.ts HIDDEN_LIST_TIME): those of the
  // listings already hidden move there (list-index.ts).
  migrateHiddenListEntries,
  // The first schema's listings by time, by owner and by type: the list index, the lifecycle's partial indexes and the
  // identity's unique index serve those reads now, and the one by type drew a `resource` + `type` page (with its age
  // cut) to read every listing of the type rather than the one the identity names.
  (db) =>
    db.exec(`
      DROP INDEX IF EXISTS listings_by_recency;
      DROP INDEX IF EXISTS listings_by_owner;
      DROP INDEX IF EXISTS listings_by_type;
    `),
];

/** Brings a catalog file to the latest schema, under the write lock (another process may be migrating it too). */
export function migrateCatalog(db: DatabaseSync): void {
  const latest = MIGRATIONS.length;
  const current = () => Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
  if (current() === latest) return;
  inWriteTransaction(db, () => {
    const version = current(); // re-read under the write lock: another process may have migrated
    if (version > latest) throw new Error(`catalog database is at schema ${version}, newer than this code (${latest})`);
    for (let v = version; v < latest; v++) {
      MIGRATIONS[v]!(db);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    }
  });
}
