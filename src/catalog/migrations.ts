/**
 * The catalog's SQLite schema, as append-only migrations.
 *
 * 1: listings, accepted terms, extension keys, search text revisions (FTS5).
 * 2: the write-time search index and the list keys. `search_terms` holds one row per (term,
 *    revision) with the term's field-weighted score, so a search reads only its terms' rows
 *    (FTS5 is dropped). `listing_keys` holds one row per (filter, value, listing) with the
 *    listing's lastUpdated, so a filtered page is a walk of one covering index; `listing_counts`
 *    holds the totals (overall and per filter value), maintained in the write transaction.
 */
import { randomBytes } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { termScores } from './terms.ts';

const statementCache = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/** A prepared statement cached per connection (the write path runs these per settlement). */
export function cachedStatement(db: DatabaseSync, sql: string): StatementSync {
  let byDb = statementCache.get(db);
  if (!byDb) statementCache.set(db, (byDb = new Map<string, StatementSync>()));
  let st = byDb.get(sql);
  if (!st) byDb.set(sql, (st = db.prepare(sql)));
  return st;
}

/** A list filter a listing answers to: kind is the filter name ('all' for no filter). */
export interface ListingKey {
  kind: 'all' | 'type' | 'payTo' | 'scheme' | 'network' | 'scheme+network' | 'extensions';
  value: string;
}

/** The key of a scheme+network pair (one accepted entry must match both). */
export const pairValue = (scheme: string, network: string) => `${scheme}\n${network}`;

/**
 * Adds the keys a listing answers to (INSERT OR IGNORE) and counts each new one; moves all its
 * keys to `lastUpdated`. Runs inside the write transaction.
 */
export function insertListingKeys(db: DatabaseSync, listingId: number, lastUpdated: string, keys: ListingKey[]): void {
  const insert = cachedStatement(db, 'INSERT OR IGNORE INTO listing_keys (kind, value, listing_id, last_updated) VALUES (?, ?, ?, ?)');
  const count = cachedStatement(
    db,
    'INSERT INTO listing_counts (kind, value, n) VALUES (?, ?, 1) ON CONFLICT (kind, value) DO UPDATE SET n = n + 1',
  );
  for (const key of keys) {
    if (Number(insert.run(key.kind, key.value, listingId, lastUpdated).changes) === 1) count.run(key.kind, key.value);
  }
  cachedStatement(db, 'UPDATE listing_keys SET last_updated = ? WHERE listing_id = ? AND last_updated <> ?').run(
    lastUpdated,
    listingId,
    lastUpdated,
  );
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

/** Every key a listing answers to. */
export function listingKeysOf(
  type: string,
  owner: string,
  accepts: Array<{ scheme: string; network: string }>,
  extensionKeys: string[],
): ListingKey[] {
  const keys: ListingKey[] = [
    { kind: 'all', value: '' },
    { kind: 'type', value: type },
    { kind: 'payTo', value: owner },
  ];
  for (const a of accepts) {
    keys.push(
      { kind: 'scheme', value: a.scheme },
      { kind: 'network', value: a.network },
      { kind: 'scheme+network', value: pairValue(a.scheme, a.network) },
    );
  }
  for (const key of extensionKeys) keys.push({ kind: 'extensions', value: key });
  return keys;
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
];
