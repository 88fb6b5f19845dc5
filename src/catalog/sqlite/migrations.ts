/**
 * The catalog's SQLite schema, as append-only migrations.
 *
 * 1: listings, accepted terms, extension keys, search text revisions (FTS5).
 * 2: the write-time search index and the list keys. `search_terms` holds one row per (term,
 *    revision) with the term's field-weighted score, so a search reads only its terms' rows
 *    (FTS5 is dropped). `listing_keys` holds one row per (filter, value, listing) with the
 *    listing's lastUpdated, so a filtered page is a walk of one covering index; `listing_counts`
 *    holds the totals (overall and per filter value), maintained in the write transaction.
 * 3: `listing_key_blocks`, so a deep `offset` page does not skip every entry before it
 *    (list-index.ts).
 * 4: the quality signals (quality.ts): calls per listing and day, each payer's last day, the
 *    payments counted.
 * 5: the asset and amount of every accepted entry (the `asset` and `maxAmount` filters), and an
 *    `asset` key per listing and asset in the list index.
 * 6: the liveness records on `listings` (liveness.ts).
 * 7: the times of accepted withdrawals (withdraw.ts).
 * 8: the price index, per listing and asset its smallest amount, and its counts (price-migrations.ts).
 * 9: the price index keeps each listing's type, indexed and counted per type (price-migrations.ts).
 * 10: term signatures on `search_terms` (`sig`, `sketch_a`, `sketch_b`, terms.ts termSignature) and the
 *    covering index rebuilt with them, so a several-term search filters and bounds a term's rows
 *    without a key lookup per other term (term-tiers.ts).
 * 11: by-time indexes of the price index per type and digit count, and per type and class (digit
 *    count and leading digit), so a deep `asset` + `maxAmount` page merges ranges already in page
 *    order (price-classes.ts); indexes only, no row rewritten.
 * 12: each search revision's bound on any query's share sum (`top_shares`, the sum of its
 *    TOP_SHARES largest rounded shares) with its signature and sketches, indexed by that bound, so
 *    the all-terms tier of a few common words reads the revisions that can reach the page first and
 *    stops (term-tiers.ts allTermsTopK, docs/CATALOG.md "Search").
 * 13: the price index also keeps each listing's smallest amount per asset on each network, under
 *    the network's key, so `network` + `asset` + `maxAmount` is one index range (price-migrations.ts).
 * 14: the same per asset under each scheme and under each scheme on each network, so `scheme` (with
 *    or without `network`) + `asset` + `maxAmount` is one index range too (price-migrations.ts).
 * 15: each search revision's sums of its 5, 6 and 7 largest rounded shares (`top_shares_5` to
 *    `top_shares_7`, LONG_QUERY_SHARE_SUMS), each indexed as `top_shares` is, so the all-terms tier of
 *    5 to 7 common words reads the revisions by a bound as tight as 3 or 4 words get (revision-scan.ts).
 */
import { migrateToClaims } from './claims.ts';
import { probeHostsTableSql } from '../probe-hosts.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { listingKeysOf } from '../listing.ts';
import { amountKey } from '../../filters.ts';
import { buildBlocks, countKeyChanges, insertListingKeys, migrateToAssetCombinationKeys } from './list-index.ts';
import { cachedStatement, inWriteTransaction } from '../../db/sqlite.ts';
import { termScores, termSignature } from '../terms.ts';
import { urlTerms } from '../url-search.ts';
import { migrateToQualitySignals } from './quality.ts';
import { migrateToLiveness } from './liveness.ts';
import { migrateToWithdrawals } from './withdraw.ts';
import { migrateToNetworkPriceKeys, migrateToPriceIndex, migrateToSchemePriceKeys, migrateToTypedPriceIndex } from './price-migrations.ts';
import { migrateToPriceClassIndexes } from './price-classes.ts';
import { migrateToLongQueryBounds, migrateToRevisionBounds } from './revision-bounds.ts';
import { chooseCommonTerms } from './common-terms.ts';
import { migrateToPairTops } from './pair-tops.ts';

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
    const revision = {
      rev: Number(r.rev),
      listingId: Number(r.listing_id),
      fromSeq: Number(r.from_seq),
      toSeq: r.to_seq === null ? null : Number(r.to_seq),
    };
    insertTermRows(db, revision, termScores({ serviceName: r.service_name, tags: r.tags, description: r.description, params: r.params }));
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
    insertListingKeys(db, Number(l.id), l.last_updated, keys);
  }
}

/**
 * The term rows of one search revision. They repeat the revision's validity [from_seq, to_seq)
 * so a search reads only these rows (no join per posting); superseding a revision updates them.
 */
export function insertTermRows(
  db: DatabaseSync,
  revision: { rev: number; listingId: number; fromSeq: number; toSeq: number | null },
  scores: Map<string, number>,
): void {
  const insert = cachedStatement(
    db,
    'INSERT INTO search_terms (term, rev, listing_id, score, milli, from_seq, to_seq) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  for (const [term, score] of scores)
    insert.run(term, revision.rev, revision.listingId, score, Math.round(score * 1000), revision.fromSeq, revision.toSeq);
}

/**
 * The term rows of one search revision with the revision's signature and sketches (migration 10 on;
 * insertTermRows stays as migration 2 wrote them). `signature`: termSignature(scores), when the
 * caller has it already.
 */
export function insertSignedTermRows(
  db: DatabaseSync,
  revision: { rev: number; listingId: number; fromSeq: number; toSeq: number | null },
  scores: Map<string, number>,
  signature = termSignature(scores),
): void {
  const insert = cachedStatement(
    db,
    'INSERT INTO search_terms (term, rev, listing_id, score, milli, from_seq, to_seq, sig, sketch_a, sketch_b) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const { sig, sketchA, sketchB } = signature;
  for (const [term, score] of scores)
    insert.run(
      term,
      revision.rev,
      revision.listingId,
      score,
      Math.round(score * 1000),
      revision.fromSeq,
      revision.toSeq,
      sig,
      sketchA,
      sketchB,
    );
}

/**
 * Migration 10: the term signatures. The default, -1 (every bit, every code at its top), makes a
 * row a candidate for any query and bounds its other terms only by their largest shares, so a row
 * without its signature is still ranked right; every existing revision gets its own here, read
 * revision by revision from the rows' own terms and scores.
 */
function migrateToTermSignatures(db: DatabaseSync): void {
  db.exec(`
    ALTER TABLE search_terms ADD COLUMN sig INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE search_terms ADD COLUMN sketch_a INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE search_terms ADD COLUMN sketch_b INTEGER NOT NULL DEFAULT -1;
  `);
  const update = db.prepare('UPDATE search_terms SET sig = ?, sketch_a = ?, sketch_b = ? WHERE rev = ?');
  const fill = (rev: number, scores: Map<string, number>) => {
    const { sig, sketchA, sketchB } = termSignature(scores);
    update.run(sig, sketchA, sketchB, rev);
  };
  let rev: number | undefined;
  let scores = new Map<string, number>();
  for (const row of db.prepare('SELECT rev, term, score FROM search_terms ORDER BY rev').iterate() as Iterable<{
    rev: number;
    term: string;
    score: number;
  }>) {
    if (row.rev !== rev) {
      if (rev !== undefined) fill(rev, scores);
      rev = Number(row.rev);
      scores = new Map();
    }
    scores.set(row.term, Number(row.score));
  }
  if (rev !== undefined) fill(rev, scores);
  db.exec(`
    DROP INDEX search_terms_top;
    CREATE INDEX search_terms_top ON search_terms (term, milli DESC, listing_id ASC, from_seq, to_seq, sig, sketch_a, sketch_b);
  `);
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
    countKeyChanges(db, id, a.last_updated, insertListingKeys(db, id, a.last_updated, [{ kind: 'asset', value: a.asset }]));
  }
}

type Migration = (db: DatabaseSync) => void;

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
  migrateToTermSignatures,
  migrateToPriceClassIndexes,
  migrateToRevisionBounds,
  migrateToNetworkPriceKeys,
  migrateToSchemePriceKeys,
  migrateToLongQueryBounds,
  chooseCommonTerms,
  migrateToPairTops,
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
  // Each listing's URL terms (host labels and path segments, ../url-search.ts), searched when the text finds nothing.
  (db) => {
    db.exec(`
      CREATE TABLE IF NOT EXISTS listing_url_terms (
        term TEXT NOT NULL,
        listing_id INTEGER NOT NULL,
        PRIMARY KEY (term, listing_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS listing_url_terms_by_listing ON listing_url_terms (listing_id);
    `);
    const listings = db.prepare('SELECT id, resource FROM listings').all() as Array<{ id: number; resource: string }>;
    for (const { id, resource } of listings) insertUrlTerms(db, Number(id), resource);
  },
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
];

/** A new listing's URL terms (../url-search.ts urlTerms). */
export function insertUrlTerms(db: DatabaseSync, listingId: number, resource: string): void {
  const insert = cachedStatement(db, 'INSERT OR IGNORE INTO listing_url_terms (term, listing_id) VALUES (?, ?)');
  for (const term of urlTerms(resource)) insert.run(term, listingId);
}

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
