/**
 * The catalog's SQLite store (node:sqlite): WAL, 100 ms busy timeout, versioned migrations,
 * the atomic ownership check-and-write, and the list query.
 *
 * Search snapshots: every write bumps a global sequence number. The searchable text of a listing
 * is kept as revisions valid over [from_seq, to_seq), and accepts/extension rows remember the
 * sequence that added them, so a search cursor can replay "the catalog as of sequence N" and walk
 * it with a keyset that visits each match exactly once (see search.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { DiscoveryFilters } from './types.ts';
import type { AcceptedTerms, ListingDraft, ListingMetadata } from './ingest.ts';

export const BUSY_TIMEOUT_MS = 100;
/** Superseded search revisions are kept this long; cursors older than this are refused. */
export const SNAPSHOT_RETENTION_MS = 60 * 60 * 1000;
/** At most this many expired revisions are pruned per write (bounded work). */
const PRUNE_BATCH = 32;

/** Thrown when the database file is gone, replaced or read-only: the catalog cannot serve. */
export class CatalogUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogUnavailableError';
  }
}

type Migration = (db: DatabaseSync) => void;

/** Append-only. Migration N brings the database from user_version N-1 to N. */
const MIGRATIONS: Migration[] = [
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
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Runs `work` inside BEGIN IMMEDIATE (the write lock is taken up front, waiting ≤ busy timeout). */
export function inWriteTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Runs `work` inside one read transaction, so every statement sees the same snapshot. */
export function inReadTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN');
  try {
    return work();
  } finally {
    if (db.isTransaction) db.exec('COMMIT');
  }
}

function migrate(db: DatabaseSync): void {
  const current = () => Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
  if (current() === SCHEMA_VERSION) return;
  inWriteTransaction(db, () => {
    const version = current(); // re-read under the write lock: another process may have migrated
    if (version > SCHEMA_VERSION) throw new Error(`catalog database is at schema ${version}, newer than this code (${SCHEMA_VERSION})`);
    for (let v = version; v < SCHEMA_VERSION; v++) {
      MIGRATIONS[v]!(db);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    }
  });
}

export interface ListingRow {
  id: number;
  resource: string;
  type: string;
  x402_version: number;
  last_updated: string;
  body: string;
}

/** What a listing's `body` column holds (everything but identity, version and time). */
interface ListingBody extends ListingMetadata {
  accepts: AcceptedTerms[];
  extensions: Record<string, unknown>;
}

/** A DiscoveryResource (SPEC §2.6) from a row. */
export function toDiscoveryResource(row: ListingRow): Record<string, unknown> {
  const body = JSON.parse(row.body) as ListingBody;
  const { accepts, extensions, ...metadata } = body;
  return {
    resource: row.resource,
    type: row.type,
    x402Version: row.x402_version,
    accepts,
    lastUpdated: row.last_updated,
    ...metadata,
    extensions,
  };
}

/** Stable JSON with sorted keys: the de-duplication key of accepted terms. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface SearchText {
  serviceName: string;
  tags: string;
  description: string;
  params: string;
}

export type WriteOutcome = { status: 'written'; created: boolean; listingId: number } | { status: 'owned_by_other' };

/** Filters that compare one listings column for equality. payTo is the verified owner. */
const COLUMN_FILTERS = [
  ['type', 'l.type'],
  ['payTo', 'l.owner'],
  ['resource', 'l.resource'],
  ['toolName', 'l.tool_name'],
] as const;

/**
 * SQL conditions (joined with AND, 'TRUE' when none) and parameters for the filters,
 * against listings aliased `l`, optionally as of a sequence number.
 */
export function filterSql(filters: DiscoveryFilters, asOfSeq?: number): { conditions: string; params: Array<string | number> } {
  const clauses: string[] = [];
  const params: Array<string | number> = [];
  const asOf = asOfSeq === undefined ? '' : ' AND added_seq <= ?';
  for (const [name, column] of COLUMN_FILTERS) {
    const value = filters[name];
    if (value === undefined) continue;
    clauses.push(`${column} = ?`);
    params.push(value);
  }
  if (filters.scheme !== undefined || filters.network !== undefined) {
    // One accepted entry must match both when both are given.
    const parts = ['a.listing_id = l.id'];
    if (filters.scheme !== undefined) {
      parts.push('a.scheme = ?');
      params.push(filters.scheme);
    }
    if (filters.network !== undefined) {
      parts.push('a.network = ?');
      params.push(filters.network);
    }
    if (asOfSeq !== undefined) params.push(asOfSeq);
    clauses.push(`EXISTS (SELECT 1 FROM listing_accepts a WHERE ${parts.join(' AND ')}${asOf})`);
  }
  if (filters.extensions !== undefined) {
    params.push(filters.extensions);
    if (asOfSeq !== undefined) params.push(asOfSeq);
    clauses.push(`EXISTS (SELECT 1 FROM listing_extensions e WHERE e.listing_id = l.id AND e.key = ?${asOf})`);
  }
  if (asOfSeq !== undefined) {
    clauses.push('l.created_seq <= ?');
    params.push(asOfSeq);
  }
  return { conditions: clauses.length > 0 ? clauses.join(' AND ') : 'TRUE', params };
}

export class CatalogStore {
  readonly db: DatabaseSync;
  private readonly identity: { dev: number; ino: number } | null;
  private readonly statements = new Map<string, StatementSync>();

  constructor(readonly dbPath: string) {
    this.db = new DatabaseSync(dbPath, { timeout: BUSY_TIMEOUT_MS });
    try {
      this.db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = NORMAL');
      // 32 MiB of page cache (default 2 MiB): search reads FTS postings and row text of many candidates.
      this.db.exec('PRAGMA cache_size = -32768');
      migrate(this.db);
    } catch (err) {
      this.db.close();
      throw err;
    }
    const st = dbPath === ':memory:' ? null : statSync(dbPath);
    this.identity = st ? { dev: st.dev, ino: st.ino } : null;
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  /** A cached prepared statement. */
  statement(sql: string): StatementSync {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  /**
   * SQLite keeps writing to an unlinked file and, for root, ignores file modes. The catalog
   * refuses instead: a deleted or replaced file cannot serve, and a file an operator marked
   * read-only takes no writes, so no settlement is reported as cataloged into a void.
   */
  assertUsable(forWrite: boolean): void {
    if (!this.identity) return;
    const st = statSync(this.dbPath, { throwIfNoEntry: false });
    if (!st || st.dev !== this.identity.dev || st.ino !== this.identity.ino) {
      throw new CatalogUnavailableError('the catalog database file was deleted or replaced');
    }
    if (forWrite && (st.mode & 0o222) === 0) throw new CatalogUnavailableError('the catalog database file is read-only');
  }

  cursorSecret(): Buffer {
    const row = this.statement('SELECT value FROM catalog_meta WHERE key = ?').get('cursor_secret') as { value: string } | undefined;
    if (!row) throw new Error('catalog cursor secret is missing');
    return Buffer.from(row.value, 'hex');
  }

  currentSeq(): number {
    return Number((this.statement('SELECT seq FROM catalog_seq WHERE id = 1').get() as { seq: number }).seq);
  }

  /**
   * The ownership check and the write under one write lock (BEGIN IMMEDIATE): a different
   * `payTo` for an existing key gets `owned_by_other` and nothing is written.
   */
  writeListing(draft: ListingDraft, now: Date): WriteOutcome {
    this.assertUsable(true);
    return inWriteTransaction(this.db, () => {
      const existing = this.statement('SELECT id, owner, body FROM listings WHERE resource = ? AND type = ? AND tool_name = ?').get(
        draft.resource,
        draft.type,
        draft.toolName,
      ) as { id: number; owner: string; body: string } | undefined;
      if (existing && existing.owner !== draft.owner) return { status: 'owned_by_other' } as const;

      const seq = Number((this.statement('UPDATE catalog_seq SET seq = seq + 1 WHERE id = 1 RETURNING seq').get() as { seq: number }).seq);
      const nowIso = now.toISOString();
      const previous: ListingBody = existing ? (JSON.parse(existing.body) as ListingBody) : { accepts: [], extensions: {} };
      const termsKey = canonicalJson(draft.terms);
      const accepts = previous.accepts.some((t) => canonicalJson(t) === termsKey) ? previous.accepts : [...previous.accepts, draft.terms];
      // Latest settlement wins on metadata; a field absent this time keeps its previous value.
      const { accepts: _a, extensions: previousExtensions, ...previousMetadata } = previous;
      const metadata: ListingMetadata = { ...previousMetadata, ...draft.metadata };
      const body: ListingBody = { ...metadata, accepts, extensions: { ...previousExtensions, bazaar: draft.bazaar } };

      let listingId: number;
      if (existing) {
        listingId = Number(existing.id);
        this.statement('UPDATE listings SET x402_version = ?, last_updated = ?, body = ? WHERE id = ?').run(
          draft.x402Version,
          nowIso,
          JSON.stringify(body),
          listingId,
        );
      } else {
        const row = this.statement(
          `INSERT INTO listings (resource, type, tool_name, owner, x402_version, created_seq, last_updated, body)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        ).get(draft.resource, draft.type, draft.toolName, draft.owner, draft.x402Version, seq, nowIso, JSON.stringify(body)) as { id: number };
        listingId = Number(row.id);
      }
      this.statement(
        'INSERT OR IGNORE INTO listing_accepts (listing_id, terms_key, scheme, network, added_seq) VALUES (?, ?, ?, ?, ?)',
      ).run(listingId, termsKey, draft.terms.scheme, draft.terms.network, seq);
      for (const key of Object.keys(body.extensions)) {
        this.statement('INSERT OR IGNORE INTO listing_extensions (listing_id, key, added_seq) VALUES (?, ?, ?)').run(listingId, key, seq);
      }
      this.reviseSearchText(
        listingId,
        {
          serviceName: metadata.serviceName ?? '',
          tags: (metadata.tags ?? []).join(' '),
          description: metadata.description ?? '',
          params: draft.parameterText,
        },
        seq,
        nowIso,
      );
      this.pruneRevisions(now);
      return { status: 'written', created: !existing, listingId } as const;
    });
  }

  /** A new search revision only when the searchable text changed. */
  private reviseSearchText(listingId: number, text: SearchText, seq: number, nowIso: string): void {
    const hash = createHash('sha256').update(JSON.stringify([text.serviceName, text.tags, text.description, text.params])).digest('hex');
    const current = this.statement('SELECT rev, text_hash FROM search_revisions WHERE listing_id = ? AND to_seq IS NULL').get(listingId) as
      | { rev: number; text_hash: string }
      | undefined;
    if (current?.text_hash === hash) return;
    if (current) this.statement('UPDATE search_revisions SET to_seq = ?, superseded_at = ? WHERE rev = ?').run(seq, nowIso, current.rev);
    const row = this.statement('INSERT INTO search_revisions (listing_id, from_seq, text_hash) VALUES (?, ?, ?) RETURNING rev').get(
      listingId,
      seq,
      hash,
    ) as { rev: number };
    this.statement('INSERT INTO search_fts (rowid, service_name, tags, description, params) VALUES (?, ?, ?, ?, ?)').run(
      row.rev,
      text.serviceName,
      text.tags,
      text.description,
      text.params,
    );
  }

  private pruneRevisions(now: Date): void {
    const horizon = new Date(now.getTime() - SNAPSHOT_RETENTION_MS).toISOString();
    const expired = this.statement(
      'SELECT rev FROM search_revisions WHERE to_seq IS NOT NULL AND superseded_at < ? ORDER BY superseded_at LIMIT ?',
    ).all(horizon, PRUNE_BATCH) as Array<{ rev: number }>;
    for (const { rev } of expired) {
      this.statement('DELETE FROM search_fts WHERE rowid = ?').run(rev);
      this.statement('DELETE FROM search_revisions WHERE rev = ?').run(rev);
    }
  }

  /** The list endpoint: newest first (lastUpdated desc, then id desc), offset paging, total. */
  list(filters: DiscoveryFilters, page: { limit: number; offset: number }): { rows: ListingRow[]; total: number } {
    this.assertUsable(false);
    const { conditions, params } = filterSql(filters);
    const where = `WHERE ${conditions}`;
    return inReadTransaction(this.db, () => {
      const total = Number((this.statement(`SELECT count(*) AS n FROM listings l ${where}`).get(...params) as { n: number }).n);
      const rows = this.statement(
        `SELECT l.id, l.resource, l.type, l.x402_version, l.last_updated, l.body FROM listings l ${where}
         ORDER BY l.last_updated DESC, l.id DESC LIMIT ? OFFSET ?`,
      ).all(...params, page.limit, page.offset) as unknown as ListingRow[];
      return { rows, total };
    });
  }

  rowsById(ids: number[]): Map<number, ListingRow> {
    const out = new Map<number, ListingRow>();
    for (const id of ids) {
      const row = this.statement('SELECT id, resource, type, x402_version, last_updated, body FROM listings WHERE id = ?').get(id) as
        | ListingRow
        | undefined;
      if (row) out.set(Number(row.id), row);
    }
    return out;
  }
}
