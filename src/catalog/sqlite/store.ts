/**
 * The catalog's SQLite store (node:sqlite): WAL, 100 ms busy timeout, versioned migrations,
 * the atomic ownership check-and-write, and the list and search readers.
 *
 * Search snapshots: every write bumps a global sequence number. The searchable text of a listing
 * is kept as revisions valid over [from_seq, to_seq), and list keys (an accepted entry's among them) remember
 * the sequence that added them, so a search cursor can replay "the catalog as of sequence N" and walk
 * it with a keyset that visits each match exactly once (see ../search.ts).
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import {
  cachedStatement,
  fileIdentity,
  fileProblem,
  inReadTransaction,
  inWriteTransaction,
  openSqlite,
  type FileIdentity,
} from '../../db/sqlite.ts';
import type { ListingDraft } from '../ingest/settlement.ts';
import { listingKeysOf, mergeListing, searchTextHash, searchTextOf, type ListingRow } from '../listing.ts';
import { qualityLevel, revisionKey, utcDay, windowStartDay, withQualityLevel, type PaymentFacts } from '../quality.ts';
import { termScores, type SearchText } from '../terms.ts';
import {
  CatalogUnavailableError,
  type CatalogStorePort,
  type ListArgs,
  type OwnershipStorePort,
  type SearchArgs,
  type SearchPage,
  type StoreListPage,
  type Withdrawal,
  type WithdrawalOutcome,
  type WriteOutcome,
} from '../types.ts';
import { countKeyChanges, insertListingKeys } from './list-index.ts';
import { migrateCatalog } from './migrations.ts';
import { currentSeq, nextSeq, pruneSupersededRevisions } from './revisions.ts';
import { insertScoredRevision, lifecyclePort, restoreAfterCheck, restore, type LifecycleStorePort } from './lifecycle.ts';
import { recordCall, windowSums } from './quality.ts';
import { LISTING_COLUMNS } from './queries.ts';
import { sqliteListIndex } from './selective-list.ts';
import { listPage } from '../list-engine.ts';
import { runSync } from '../steps.ts';
import type { UrlScale } from '../url-filter.ts';
import { KeptCounts, type SearchScale } from '../search-engine.ts';
import { searchCatalog } from './search.ts';
import type { LivenessStorePort } from '../liveness.ts';
import { SETTLED_LIVENESS_SQL, livenessStore } from './liveness.ts';
import { withdrawListing } from './withdraw.ts';
import { claimsPort } from './claims.ts';
import { recordPrice } from './price-index.ts';

export const BUSY_TIMEOUT_MS = 100;

/** A reader thread's page cache, MiB: 8 per GiB of catalog file, from 8 to 32 (docs/CATALOG.md "Threads" says why). */
export function readerPageCacheMiB(fileBytes: number): number {
  return Math.min(32, Math.max(8, Math.round((8 * fileBytes) / 2 ** 30)));
}

/** The SQLite CatalogStorePort (one connection; a worker thread owns it). */
export class CatalogStore implements CatalogStorePort {
  readonly db: DatabaseSync;
  private readonly identity: FileIdentity | null;
  readonly dbPath: string;
  /**
   * The `url` list's thresholds (url-filter.ts), the search budget's rows (term-budget.ts) and its price index read
   * (price.ts PRICED_LISTINGS_CAP), theirs unless set (tests lower them).
   */
  private readonly scale: UrlScale & SearchScale;
  /** The term counts its searches read, for the next ones at the same write sequence (../search-engine.ts KeptCounts). */
  readonly keptCounts = new KeptCounts();

  /** `pageCacheMiB`: the connection's page cache (SQLite's default is 2 MiB); the rest: `scale`. */
  constructor(dbPath: string, { pageCacheMiB = 32, ...scale }: { pageCacheMiB?: number } & CatalogStore['scale'] = {}) {
    this.dbPath = dbPath;
    this.scale = scale;
    this.db = openSqlite(dbPath, {
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      pragmas: ['synchronous = NORMAL', `cache_size = ${-Math.round(pageCacheMiB * 1024)}`],
      setup: migrateCatalog,
    });
    this.identity = fileIdentity(dbPath);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  get searchScale(): SearchScale {
    return this.scale;
  }

  statement(sql: string): StatementSync {
    return cachedStatement(this.db, sql);
  }

  /**
   * SQLite keeps writing to an unlinked file and, for root, ignores file modes. The catalog
   * refuses instead: a deleted or replaced file cannot serve, and a file an operator marked
   * read-only takes no writes, so no settlement is reported as cataloged into a void.
   */
  assertUsable(forWrite: boolean): void {
    const problem = fileProblem(this.dbPath, this.identity, forWrite);
    if (problem) throw new CatalogUnavailableError(`the catalog database file ${problem}`);
  }

  ownerOf(resource: string, type: string, toolName: string): string | undefined {
    this.assertUsable(false);
    const row = this.statement('SELECT owner FROM listings WHERE resource = ? AND type = ? AND tool_name = ?').get(
      resource,
      type,
      toolName,
    ) as { owner: string } | undefined;
    return row?.owner;
  }

  /** The catalog's identifier (made with the schema: sqlite/migrations.ts), kept in the database file. */
  catalogId(): string {
    const row = this.statement('SELECT value FROM catalog_meta WHERE key = ?').get('catalog_id') as { value: string } | undefined;
    if (!row) throw new Error('catalog identifier is missing');
    return row.value;
  }

  withdraw(withdrawal: Withdrawal, now: Date): WithdrawalOutcome {
    this.assertUsable(true);
    return withdrawListing(this.db, withdrawal, now);
  }

  search(...[query, filters, page, now, x402Version, visibleSince, failingBefore]: SearchArgs): SearchPage {
    return searchCatalog(this, { query, filters, page, now, x402Version, visibleSince, failingBefore });
  }

  /** The liveness records (sqlite/liveness.ts). */
  get liveness(): LivenessStorePort {
    return livenessStore(this.db, () => this.assertUsable(true), restoreAfterCheck(this.db));
  }

  /** Hidden listings out of the search index and back, and the purge (sqlite/lifecycle.ts). */
  get lifecycle(): LifecycleStorePort {
    return lifecyclePort(this.db, () => this.assertUsable(true));
  }

  /** The ownership claims (sqlite/claims.ts; docs/CATALOG.md "Ownership and refresh"). */
  get claims(): OwnershipStorePort {
    return claimsPort(
      this.db,
      (forWrite) => this.assertUsable(forWrite),
      (draft, now, payment) => this.writeListing(draft, now, payment),
    );
  }

  cursorSecret(): Buffer {
    const row = this.statement('SELECT value FROM catalog_meta WHERE key = ?').get('cursor_secret') as { value: string } | undefined;
    if (!row) throw new Error('catalog cursor secret is missing');
    return Buffer.from(row.value, 'hex');
  }

  currentSeq(): number {
    return currentSeq(this.db);
  }

  /**
   * The ownership check and the write under one write lock (BEGIN IMMEDIATE): a different
   * `payTo` for an existing key gets `owned_by_other` and nothing is written.
   */
  writeListing(draft: ListingDraft, now: Date, payment: PaymentFacts = {}): WriteOutcome {
    this.assertUsable(true);
    return inWriteTransaction(this.db, () => {
      const existing = this.statement('SELECT id, owner, body FROM listings WHERE resource = ? AND type = ? AND tool_name = ?').get(
        draft.resource,
        draft.type,
        draft.toolName,
      ) as { id: number; owner: string; body: string } | undefined;
      if (existing && existing.owner !== draft.owner) return { status: 'owned_by_other' } as const;

      const seq = nextSeq(this.db);
      const nowIso = now.toISOString();
      const merged = mergeListing(existing?.body, draft);
      if (!merged) return { status: 'accepts_full' } as const;
      const { body } = merged;

      let listingId: number;
      if (existing) {
        listingId = Number(existing.id);
        this.statement(`UPDATE listings SET x402_version = ?, last_updated = ?, body = ?, ${SETTLED_LIVENESS_SQL} WHERE id = ?`).run(
          draft.x402Version,
          nowIso,
          JSON.stringify(body),
          now.getTime(),
          listingId,
        );
      } else {
        const row = this.statement(
          `INSERT INTO listings (resource, type, tool_name, owner, x402_version, created_seq, last_updated, body, liveness_basis_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        ).get(
          draft.resource,
          draft.type,
          draft.toolName,
          draft.owner,
          draft.x402Version,
          seq,
          nowIso,
          JSON.stringify(body),
          now.getTime(),
        ) as {
          id: number;
        };
        listingId = Number(row.id);
        this.statement('INSERT INTO listing_urls (rowid, resource) VALUES (?, ?)').run(listingId, draft.resource);
      }
      const keys = listingKeysOf(draft.type, draft.owner, [draft.terms], Object.keys(body.extensions));
      countKeyChanges(this.db, listingId, nowIso, insertListingKeys(this.db, listingId, nowIso, keys, seq));
      recordPrice(this.db, { id: listingId, type: draft.type }, nowIso, draft.terms);
      recordCall(this.db, listingId, utcDay(now), payment);
      const { calls, payers } = windowSums(this.db, listingId, now);
      this.reviseSearchText(listingId, draft.resource, searchTextOf(body, draft), qualityLevel(calls, payers), seq, nowIso);
      pruneSupersededRevisions(this.db, now);
      return { status: 'written', created: !existing, listingId } as const;
    });
  }

  /**
   * A new search revision only when the searchable text or the quality level changed (the level
   * is part of every term score, docs/CATALOG.md "Ranking"; a cursor keeps the revision it pinned).
   */
  private reviseSearchText(listingId: number, resource: string, text: SearchText, level: number, seq: number, nowIso: string): void {
    const hash = revisionKey(searchTextHash(text), level);
    const currentRevision = () =>
      this.statement('SELECT rev, text_hash FROM search_revisions WHERE listing_id = ? AND to_seq IS NULL').get(listingId) as
        { rev: number; text_hash: string } | undefined;
    let current = currentRevision();
    // Hidden until now (lifecycle.ts): back in the index with the revision it had, which this write then revises.
    if (!current && restore(this.db, listingId, seq)) current = currentRevision();
    if (current?.text_hash === hash) return;
    if (current) {
      this.statement('UPDATE search_revisions SET to_seq = ?, superseded_at = ? WHERE rev = ?').run(seq, nowIso, current.rev);
      this.statement('UPDATE search_terms SET to_seq = ? WHERE rev = ?').run(seq, current.rev);
    }
    insertScoredRevision(this.db, listingId, resource, hash, withQualityLevel(termScores(text), level), seq);
  }

  /** The list endpoint (../list-engine.ts listPage), its statements this store's (selective-list.ts sqliteListIndex). */
  list(...[filters, page, now, visibleSince, failingBefore]: ListArgs): StoreListPage {
    this.assertUsable(false);
    return inReadTransaction(this.db, () =>
      runSync(sqliteListIndex(this, this.scale, now), listPage({ filters, page, now, visibleSince, failingBefore })),
    );
  }

  /** The listings of `ids` with their quality window's sums as of `now`. */
  rowsById(ids: number[], now: Date): Map<number, ListingRow> {
    const out = new Map<number, ListingRow>();
    const since = windowStartDay(now);
    for (const id of ids) {
      const row = this.statement(`SELECT ${LISTING_COLUMNS} FROM listings l WHERE l.id = ?`).get(since, since, id) as
        ListingRow | undefined;
      if (row) out.set(Number(row.id), row);
    }
    return out;
  }
}
