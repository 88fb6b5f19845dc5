/**
 * The catalog in PostgreSQL (DATABASE_URL, docs/CATALOG.md "Postgres"): the same CatalogStorePort,
 * rules and answers as the SQLite store (sqlite/store.ts), shared by every svc instance.
 *
 * - Ownership: a write takes a transaction-scoped advisory lock keyed on the listing's canonical
 *   identity (resource, type, toolName), then reads the owner, so two instances settling the same
 *   new resource for two payTo at the same moment are serialized: the second reads the first's
 *   committed row and gets `owned_by_other`. The unique constraint on the identity backs it.
 * - Snapshots: every write then bumps the write sequence (row `seq` of `catalog_meta`), which it
 *   holds until commit, so writes commit in sequence order and a reader that sees sequence N sees
 *   every write up to N: what a search cursor pins (search.ts).
 * - List: the same index as SQLite (listing_keys, listing_counts, listing_key_blocks), maintained
 *   in the write transaction by one server-side call (migrations.ts).
 */
import { recordPrice } from './price-index.ts';
import { PricedPageGuesses } from './price-guess.ts';
import type pg from 'pg';
import { inReadSnapshot, inTransaction, migrate, openPool, untilSucceeded } from '../../db/postgres.ts';
import { LAST_FULL_HISTORY } from '../../db/schema-versions.ts';
import type { ListingDraft } from '../ingest/settlement.ts';
import { listingKeysOf, mergeListing, searchTextOf } from '../listing.ts';
import type {
  CatalogStorePort,
  OwnershipStorePort,
  ListArgs,
  SearchArgs,
  SearchPage,
  StoreListPage,
  Withdrawal,
  WithdrawalOutcome,
  WriteOutcome,
} from '../types.ts';
import { withdrawListing } from './withdraw.ts';
import { claimsPort } from './claims.ts';
import { pruneRevisions, reviseSearchText } from './revisions.ts';
import { CATALOG_SCHEMA } from './migrations.ts';
import { lifecyclePort, restoreAfterCheck, type LifecycleStorePort } from './lifecycle.ts';
import { CURRENT_SEQ_SQL, NEXT_SEQ_SQL, preparedDb, type Db } from './queries.ts';
import { lockIdentity, Outcome, refusal } from './identity-lock.ts';
import { holdsNul } from '../../filters.ts';
import { searchPostgres } from './search.ts';
import { postgresListIndex } from './list-index.ts';
import { listPage } from '../list-engine.ts';
import { runAsync } from '../steps.ts';
import type { UrlScale } from '../url-filter.ts';
import { KeptCounts, type SearchScale } from '../search-engine.ts';
import type { LivenessStorePort } from '../liveness.ts';
import { livenessStore, settledLivenessSql } from './liveness.ts';
import { recordCall, windowSums } from './quality.ts';
import { qualityLevel, utcDay, type PaymentFacts } from '../quality.ts';

/**
 * A catalog migrated from before stems were indexed whose stem rows are still due is refused like an older schema: only
 * the code that held that pass derives them. Checked before migrating, which could take the catalog past the versions
 * that code opens.
 */
async function refuseDueStemRows(pool: pg.Pool): Promise<void> {
  const meta = await pool.query<{ present: boolean }>("SELECT to_regclass('catalog_meta') IS NOT NULL AS present");
  if (!meta.rows[0]!.present) return;
  const due = await pool.query("SELECT 1 FROM catalog_meta WHERE key = 'stem_rows_due'");
  if (due.rows.length > 0)
    throw new Error(`the catalog's stem rows are still being derived: start svc at commit ${LAST_FULL_HISTORY} once to finish them`);
}

/** Connections per store (a catalog worker runs one request at a time), pipelined (a list page's BEGIN goes with its first statement) and kept open while idle. */
const POOL_SIZE = 2;

/** The pool's size, and thresholds that tests lower to reach the search's and the list's paths on a small catalog. */
type StoreOptions = { poolSize?: number } & UrlScale & SearchScale;

export class PostgresCatalogStore implements CatalogStorePort {
  private readonly pool: pg.Pool;
  /** The last shape of each price filter's pages, so the next page goes with its counts (price-guess.ts). */
  private readonly pricedGuesses = new PricedPageGuesses();
  /** The term counts its searches read, for the next ones at the same write sequence (../search-engine.ts KeptCounts). */
  private readonly keptCounts = new KeptCounts();
  /** ../url-filter.ts's bounds and the search's (../search-engine.ts SearchScale), theirs unless set (tests lower them). */
  private readonly scale: UrlScale & SearchScale;
  /**
   * The schema, then the cursor secret; every call waits for it. A failure (database down, or a
   * schema this code does not open) rejects the calls waiting for it, and the next call tries again.
   */
  private readonly prepared = untilSucceeded(async () => {
    await refuseDueStemRows(this.pool);
    await migrate(this.pool, 'catalog', CATALOG_SCHEMA);
    const row = await this.pool.query<{ value: string }>("SELECT value FROM catalog_meta WHERE key = 'cursor_secret'");
    if (!row.rows[0]) throw new Error('catalog cursor secret is missing');
    return Buffer.from(row.rows[0].value, 'hex');
  });

  /** Connects lazily: construction never throws (a catalog worker starts while the database is down). */
  constructor(url: string, options: StoreOptions = {}) {
    const connections = options.poolSize ?? POOL_SIZE;
    this.pool = openPool(url, { max: connections, pipeline: true, keepIdle: connections });
    this.scale = options;
    this.ready.catch(() => undefined); // reported by the first call that needs it
  }

  private get ready(): Promise<Buffer> {
    return this.prepared();
  }

  /** Connects and migrates; rejects when the database cannot be reached or its schema is one this code does not open. */
  static async open(url: string, options: StoreOptions = {}): Promise<PostgresCatalogStore> {
    const store = new PostgresCatalogStore(url, options);
    try {
      await store.ready;
      return store;
    } catch (err) {
      await store.pool.end();
      throw err;
    }
  }

  close(): void {
    void this.end();
  }

  /** Closes the pool and waits for it (close() does not wait). */
  async end(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  /** Refreshes the planner's statistics of the catalog tables (autovacuum does this in a running database). */
  async analyze(): Promise<void> {
    await this.ready;
    await this.pool.query('ANALYZE listings, listing_keys, listing_key_blocks, search_terms, search_revisions, listing_prices');
  }

  async ownerOf(resource: string, type: string, toolName: string): Promise<string | undefined> {
    await this.ready;
    const row = await this.pool.query<{ owner: string }>(
      'SELECT owner FROM listings WHERE resource = $1 AND type = $2 AND tool_name = $3',
      [resource, type, toolName],
    );
    return row.rows[0]?.owner;
  }

  /**
   * The ownership check and the write in one transaction, serialized per identity across every
   * instance by an advisory lock: a different `payTo` for an existing key gets `owned_by_other`
   * and nothing is written.
   */
  async writeListing(draft: ListingDraft, now: Date, payment: PaymentFacts = {}): Promise<WriteOutcome> {
    await this.ready;
    return this.underIdentityLock(draft, (db) => this.writeLocked(db, draft, now, payment));
  }

  /**
   * `writes` in order, each as writeListing writes it (the same outcomes, sequences and rows, each statement prepared:
   * queries.ts preparedDb), in one transaction: for corpora written before they are read (the tests'). writeLocked
   * refuses before it writes, so a refusal is an outcome and the rest go on; a failure rolls back all of them.
   */
  async writeListings(writes: readonly { draft: ListingDraft; now: Date }[]): Promise<WriteOutcome[]> {
    await this.ready;
    return inTransaction(this.pool, async (client) => {
      const [db, outcomes] = [preparedDb(client), [] as WriteOutcome[]];
      for (const { draft, now } of writes)
        outcomes.push(await lockIdentity(db, draft).then(() => this.writeLocked(db, draft, now, {}).catch(refusal)));
      return outcomes;
    });
  }

  /**
   * `work` in one transaction holding the identity's advisory lock (every write of a listing
   * takes it: settlements, claims, withdrawals); an Outcome it throws rolls back and is the answer.
   * Its statements are prepared on their connection (queries.ts preparedDb).
   */
  private async underIdentityLock<T>(key: { resource: string; type: string; toolName: string }, work: (db: Db) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      const db = preparedDb(client);
      return (await lockIdentity(db, key), work(db));
    }).catch(refusal<T>);
  }

  private async writeLocked(db: Db, draft: ListingDraft, now: Date, payment: PaymentFacts): Promise<WriteOutcome> {
    const existing = (
      await db.query<{ id: string; owner: string; body: string }>(
        'SELECT id, owner, body FROM listings WHERE resource = $1 AND type = $2 AND tool_name = $3',
        [draft.resource, draft.type, draft.toolName],
      )
    ).rows[0];
    if (existing && existing.owner !== draft.owner) throw new Outcome({ status: 'owned_by_other' });
    const merged = mergeListing(existing?.body, draft);
    if (!merged) throw new Outcome({ status: 'accepts_full' });
    const { body } = merged;

    // Held until commit: writes commit in sequence order (search snapshots, search.ts). The listing's row goes with it (the
    // pool is pipelined: one round trip), a new one taking the sequence from the row this transaction just updated.
    const nowIso = now.toISOString();
    const bumped = db.query<{ seq: string }>(NEXT_SEQ_SQL);
    const [row, sequenced] = await Promise.all([
      existing
        ? db.query<{ id: string }>(
            `UPDATE listings SET x402_version = $1, last_updated = $2, body = $3, ${settledLivenessSql('$5')} WHERE id = $4`,
            [draft.x402Version, nowIso, JSON.stringify(body), existing.id, now.getTime()],
          )
        : db.query<{ id: string }>(
            `INSERT INTO listings (resource, type, tool_name, owner, x402_version, created_seq, last_updated, body, liveness_basis_ms)
             VALUES ($1, $2, $3, $4, $5, (${CURRENT_SEQ_SQL}), $6, $7, $8) RETURNING id`,
            [draft.resource, draft.type, draft.toolName, draft.owner, draft.x402Version, nowIso, JSON.stringify(body), now.getTime()],
          ),
      bumped,
    ]);
    const [seq, listingId] = [Number(sequenced.rows[0]!.seq), Number(existing ? existing.id : row.rows[0]!.id)];
    // Statements no later one reads go out with the next one awaited; their answers are awaited before the write returns.
    const keys = listingKeysOf(draft.type, draft.owner, [draft.terms], Object.keys(body.extensions));
    const [kinds, values] = [keys.map((k) => k.kind), keys.map((k) => k.value)];
    const sent: Promise<unknown>[] = [
      db.query('SELECT catalog_index_listing($1, $2, $3::text[], $4::text[], $5)', [listingId, nowIso, kinds, values, seq]),
      recordPrice(db, { id: listingId, type: draft.type }, nowIso, draft.terms),
      pruneRevisions(db, now),
    ];
    for (const statement of sent) statement.catch(() => undefined); // awaited below
    try {
      await recordCall(db, listingId, utcDay(now), payment);
      const level = windowSums(db, listingId, now).then(({ calls, payers }) => qualityLevel(calls, payers));
      await reviseSearchText(db, { id: listingId, resource: draft.resource }, searchTextOf(body, draft), level, seq, nowIso, !existing);
    } finally {
      // A failure of one of them comes first: every statement after it failed only because the transaction was aborted.
      await Promise.all(sent);
    }
    return { status: 'written', created: !existing, listingId } as const;
  }

  /** The ownership claims (postgres/claims.ts; docs/CATALOG.md "Ownership and refresh"). */
  get claims(): OwnershipStorePort {
    return claimsPort(this.pool, () => this.ready, {
      underIdentityLock: (identity, work) => this.underIdentityLock(identity, work),
      writeLocked: (db, draft, now, payment) => this.writeLocked(db, draft, now, payment),
    });
  }
  /** The list endpoint (../list-engine.ts listPage), its statements this store's (list-index.ts postgresListIndex). */
  async list(...[filters, page, now, visibleSince, failingBefore]: ListArgs): Promise<StoreListPage> {
    await this.ready;
    if (holdsNul(filters)) return { items: [], total: 0, ...(filters.url === undefined ? {} : { partialResults: false }) };
    return inReadSnapshot(this.pool, (db) =>
      runAsync(postgresListIndex(db, now, this.scale, this.pricedGuesses), listPage({ filters, page, now, visibleSince, failingBefore })),
    );
  }

  async catalogId(): Promise<string> {
    await this.ready;
    const row = await this.pool.query<{ value: string }>("SELECT value FROM catalog_meta WHERE key = 'catalog_id'");
    if (!row.rows[0]) throw new Error('catalog identifier is missing');
    return row.rows[0].value;
  }

  async withdraw(withdrawal: Withdrawal, now: Date): Promise<WithdrawalOutcome> {
    await this.ready;
    return withdrawListing(this.pool, withdrawal, now);
  }

  async search(...[query, filters, page, now, x402Version, visibleSince, failingBefore]: SearchArgs): Promise<SearchPage> {
    const secret = await this.ready;
    return searchPostgres(this.pool, secret, {
      query,
      filters,
      page,
      now,
      x402Version,
      visibleSince,
      failingBefore,
      scale: this.scale,
      keptCounts: this.keptCounts,
    });
  }

  /** The liveness records (postgres/liveness.ts), once the catalog is migrated. */
  get liveness(): LivenessStorePort {
    return livenessStore(this.pool, () => this.ready, restoreAfterCheck(this.pool));
  }

  /** Hidden listings out of the search index and back, and the purge (postgres/lifecycle.ts). */
  get lifecycle(): LifecycleStorePort {
    return lifecyclePort(this.pool, () => this.ready);
  }
}
