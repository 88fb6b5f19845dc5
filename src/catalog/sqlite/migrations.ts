/**
 * The catalog's SQLite schema: created whole on a new file at its baseline (createCatalog), then taken on by the
 * migrations since (CATALOG_SCHEMA `since`, each one version on in `user_version`), applied at open. A file older than
 * the baseline is refused (src/db/schema-versions.ts; docs/OPERATIONS.md "Upgrading from an older schema").
 *
 * The tables, by role: `listings` (one row per listing, its liveness record, its search stash while hidden and its
 * quality days); `search_revisions` and `search_terms`, the postings (sqlite/revisions.ts); `listing_keys` and
 * `listing_key_blocks`, the list index, and the view `listing_counts` (list-index.ts); `listing_prices` and
 * `price_counts`, the price index (price-index.ts); `listing_urls`, the resource URLs' trigrams for the `url` filter
 * (url-probe.ts); `listing_payments` (quality.ts), `listing_withdrawals` (withdraw.ts), `listing_claims` (claims.ts),
 * `probe_hosts` (../probe-hosts.ts) and `catalog_meta` (the cursor secret, the catalog's identifier, the write sequence).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { probeHostsTableSql } from '../probe-hosts.ts';
import { claimsTableSql } from '../ownership.ts';
import { inWriteTransaction } from '../../db/sqlite.ts';
import { latestVersion, stepsFrom, type Baseline } from '../../db/schema-versions.ts';

type Migration = (db: DatabaseSync) => void;

/**
 * createCatalog makes the schema whole at version 35 (the migrations before it were folded into it); a later change
 * appends its migration to `since`.
 */
const CATALOG_SCHEMA: Baseline<Migration> = { baseline: 35, create: createCatalog, since: [] };

export const BASELINE_VERSION = CATALOG_SCHEMA.baseline;
export const SCHEMA_VERSION = latestVersion(CATALOG_SCHEMA);

/** A new catalog at its baseline version. */
function createCatalog(db: DatabaseSync): void {
  db.exec(`
    CREATE TABLE catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
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
      liveness_status TEXT,
      liveness_checked_at TEXT,
      liveness_failing_since TEXT,
      liveness_basis_ms INTEGER NOT NULL DEFAULT 0,
      search_stash TEXT,
      quality_days TEXT,
      UNIQUE (resource, type, tool_name)
    ) STRICT;
    CREATE INDEX listings_by_tool_name ON listings (tool_name);
    -- The lifecycle pass's walks (../lifecycle.ts): the indexed listings by age and by failures, the stashed by age.
    CREATE INDEX listings_indexed_by_age ON listings (last_updated, id) WHERE search_stash IS NULL;
    CREATE INDEX listings_indexed_failing ON listings (liveness_failing_since, id)
      WHERE search_stash IS NULL AND liveness_failing_since IS NOT NULL;
    CREATE INDEX listings_stashed_by_age ON listings (last_updated, id) WHERE search_stash IS NOT NULL;
    CREATE INDEX listings_liveness_due ON listings (liveness_basis_ms, id);
    CREATE INDEX listings_liveness_failing ON listings (liveness_failing_since) WHERE liveness_failing_since IS NOT NULL;

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
    CREATE INDEX search_revisions_by_listing ON search_revisions (listing_id);
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
      added_seq INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (kind, value, listing_id)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_keys_page ON listing_keys (kind, value, last_updated DESC, listing_id DESC);
    CREATE INDEX listing_keys_by_listing ON listing_keys (listing_id);
    CREATE TABLE listing_key_blocks (
      kind TEXT NOT NULL,
      value TEXT NOT NULL,
      start_updated TEXT NOT NULL,
      start_id INTEGER NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (kind, value, start_updated, start_id)
    ) STRICT, WITHOUT ROWID;
    CREATE VIEW listing_counts (kind, value, n) AS SELECT kind, value, sum(n) FROM listing_key_blocks GROUP BY kind, value;

    CREATE TABLE listing_prices (
      listing_id INTEGER NOT NULL,
      asset TEXT NOT NULL,
      type TEXT NOT NULL,
      price TEXT NOT NULL,
      last_updated TEXT NOT NULL,
      PRIMARY KEY (listing_id, asset)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_prices_by_price ON listing_prices (asset, price, last_updated, listing_id);
    CREATE INDEX listing_prices_by_time ON listing_prices (asset, last_updated, listing_id, price);
    CREATE INDEX listing_prices_typed_by_price ON listing_prices (asset, type, price, last_updated, listing_id);
    CREATE INDEX listing_prices_typed_by_time ON listing_prices (asset, type, last_updated, listing_id, price);
    -- A deep page by price class or digit count (../price.ts PRICE_CLASS, PRICE_DIGITS) reads in time order within it.
    CREATE INDEX listing_prices_typed_class_by_time ON listing_prices (asset, type, substr(price, 1, 10), last_updated, listing_id, price);
    CREATE INDEX listing_prices_typed_digits_by_time ON listing_prices (asset, type, substr(price, 1, 9), last_updated, listing_id, price);
    CREATE TABLE price_counts (
      asset TEXT NOT NULL,
      level INTEGER NOT NULL,
      price TEXT NOT NULL,
      type TEXT NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (asset, level, price, type)
    ) STRICT, WITHOUT ROWID;

    -- Each listing's resource URL (rowid = the listing's id), so the \`url\` filter is an index lookup (url-probe.ts).
    CREATE VIRTUAL TABLE listing_urls USING fts5(resource, tokenize = 'trigram');

    -- A payment's id stays once its listing is withdrawn, so a settlement hook run again does not count it twice.
    CREATE TABLE listing_payments (payment_id TEXT UNIQUE, day INTEGER NOT NULL, listing_id INTEGER, payer TEXT) STRICT;
    CREATE INDEX listing_payments_by_day ON listing_payments (day);
    CREATE INDEX listing_payments_by_payer ON listing_payments (listing_id, payer, day) WHERE listing_id IS NOT NULL;
    CREATE TABLE listing_withdrawals (
      resource TEXT NOT NULL,
      type TEXT NOT NULL,
      tool_name TEXT NOT NULL,
      issued_at_ms INTEGER NOT NULL,
      PRIMARY KEY (resource, type, tool_name)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX listing_withdrawals_by_time ON listing_withdrawals (issued_at_ms);
    ${claimsTableSql('sqlite')}
    ${probeHostsTableSql('sqlite')}
  `);
  const meta = db.prepare('INSERT INTO catalog_meta (key, value) VALUES (?, ?)');
  // The search cursors' HMAC key; the catalog's identifier, named in every withdrawal's signed text (docs/CATALOG.md
  // "Withdrawing a listing"); the write sequence (revisions.ts nextSeq).
  meta.run('cursor_secret', randomBytes(32).toString('hex'));
  meta.run('catalog_id', randomUUID());
  meta.run('seq', '0');
}

/** Brings a catalog file to the latest schema, under the write lock (another process may be migrating it too). */
export function migrateCatalog(db: DatabaseSync): void {
  const current = () => Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
  if (current() === SCHEMA_VERSION) return;
  inWriteTransaction(db, () => {
    // The version re-read under the write lock: another process may have migrated.
    for (const step of stepsFrom('catalog', current(), CATALOG_SCHEMA)) step(db);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
}
