/**
 * The journal in PostgreSQL (DATABASE_URL, docs/SCALING.md): the same records and rules as the
 * SQLite store, shared by every svc instance. One payment is reserved once across instances: the
 * primary key is the guard and a reserve runs under a transaction-scoped advisory lock, which also
 * makes the fee-budget check and the insert one atomic step for every instance.
 */
import type pg from 'pg';
import { inTransaction, migrationOnDemand, openPool, type PostgresMigrations } from '../../db/postgres.ts';
import { payToSpendingOf, usageOf, type Queryable } from './budget.ts';
import { bindingMatches } from '../request-digest.ts';
import {
  JournalStorageError,
  settlementRecord,
  type BudgetParties,
  type BudgetRule,
  type BudgetUsage,
  type BudgetWindow,
  type JournalStore,
  type KeyBinding,
  type RequestKey,
  type NewSettlement,
  type ReserveResult,
  type SettlementRecord,
  type SettlementRow,
  type SettlementState,
  type PayToSpending,
} from '../types.ts';

export const JOURNAL_MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE journal_settlements (
     identity TEXT PRIMARY KEY,
     idempotency_key TEXT,
     network TEXT NOT NULL,
     tx_hash TEXT NOT NULL UNIQUE,
     submitter TEXT NOT NULL,
     fee_stroops BIGINT NOT NULL,
     budget_stroops BIGINT NOT NULL,
     payer TEXT NOT NULL,
     pay_to TEXT NOT NULL,
     asset TEXT NOT NULL,
     amount TEXT NOT NULL,
     valid_until BIGINT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('submitted','settled','failed','unknown')),
     error_code TEXT,
     error_message TEXT,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     payment_payload TEXT NOT NULL,
     payment_requirements TEXT NOT NULL,
     listed BOOLEAN NOT NULL DEFAULT FALSE
   );
   CREATE INDEX journal_unresolved ON journal_settlements (created_at) WHERE state IN ('submitted','unknown');
   CREATE INDEX journal_unlisted ON journal_settlements (updated_at) WHERE state = 'settled' AND NOT listed;
   CREATE INDEX journal_payer_day ON journal_settlements (payer, updated_at);
   CREATE INDEX journal_day ON journal_settlements (updated_at);
   CREATE TABLE journal_history (
     identity TEXT NOT NULL REFERENCES journal_settlements(identity),
     seq INTEGER NOT NULL,
     state TEXT NOT NULL,
     at BIGINT NOT NULL,
     detail TEXT NOT NULL,
     PRIMARY KEY (identity, seq)
   );`,
  // A settled record whose catalog hook faulted is retried with a growing delay (list_after, ms),
  // so that records that keep faulting do not hold back the others (journal.ts list).
  `ALTER TABLE journal_settlements ADD COLUMN list_failures INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE journal_settlements ADD COLUMN list_after BIGINT NOT NULL DEFAULT 0;
   DROP INDEX journal_unlisted;
   CREATE INDEX journal_unlisted ON journal_settlements (list_after, updated_at) WHERE state = 'settled' AND NOT listed;`,
  // Idempotency keys bound to the payment and the request digest they were first reserved with,
  // and the digest of a request owed the outcome after a `settlement_pending` (journal.ts).
  `CREATE TABLE journal_keys (
     kind TEXT NOT NULL,
     key TEXT NOT NULL,
     identity TEXT NOT NULL REFERENCES journal_settlements(identity),
     digest TEXT,
     created_at BIGINT NOT NULL,
     PRIMARY KEY (kind, key)
   );
   INSERT INTO journal_keys (kind, key, identity, digest, created_at)
     SELECT 'header', idempotency_key, identity, NULL, created_at FROM journal_settlements
     WHERE idempotency_key IS NOT NULL ORDER BY created_at
     ON CONFLICT DO NOTHING;
   ALTER TABLE journal_settlements ADD COLUMN owed_digest TEXT;`,
  // Sponsorship by payTo (policy.ts judgeBudget): fees to one payTo, and whether the payTo had no
  // history when it was paid (those share one smaller daily budget).
  `ALTER TABLE journal_settlements ADD COLUMN new_pay_to BOOLEAN NOT NULL DEFAULT FALSE;
   CREATE INDEX journal_pay_to_day ON journal_settlements (pay_to, updated_at);`,
];

type Row = SettlementRow;

export class PostgresJournalStore implements JournalStore {
  private readonly pool: pg.Pool;
  /**
   * Migrates on the first call; every call waits for it. A failure rejects the calls waiting (settle
   * answers 500) and the next call tries again.
   */
  private readonly migrated: () => Promise<void>;

  /** Connects lazily: construction never throws, so svc starts and answers while the database is down. */
  constructor(url: string) {
    this.pool = openPool(url);
    this.migrated = migrationOnDemand(this.pool, 'journal', JOURNAL_MIGRATIONS);
  }

  /** Connects and migrates; rejects when the database cannot be reached or is newer than this code. */
  static async open(url: string): Promise<PostgresJournalStore> {
    const store = new PostgresJournalStore(url);
    try {
      await store.migrated();
      return store;
    } catch (err) {
      await store.pool.end();
      throw err;
    }
  }

  private async record(db: Queryable, row: Row | undefined): Promise<SettlementRecord | null> {
    if (!row) return null;
    const history = await db.query<{ state: SettlementState; at: string; detail: string }>(
      'SELECT state, at, detail FROM journal_history WHERE identity = $1 ORDER BY seq',
      [row.identity],
    );
    return settlementRecord(row, history.rows);
  }

  async get(identity: string): Promise<SettlementRecord | null> {
    await this.migrated();
    const rows = await this.pool.query<Row>('SELECT * FROM journal_settlements WHERE identity = $1', [identity]);
    return this.record(this.pool, rows.rows[0]);
  }

  async budgetUsage(parties: BudgetParties, window: BudgetWindow): Promise<BudgetUsage> {
    await this.migrated();
    return usageOf(this.pool, parties, window);
  }

  async payToSpending(network: string, dayStart: number, bounds: { nearCap: bigint | null; cap: bigint | null }): Promise<PayToSpending> {
    await this.migrated();
    return payToSpendingOf(this.pool, network, dayStart, bounds);
  }

  async getByTransaction(transaction: string): Promise<SettlementRecord | null> {
    await this.migrated();
    const rows = await this.pool.query<Row>('SELECT * FROM journal_settlements WHERE tx_hash = $1', [transaction]);
    return this.record(this.pool, rows.rows[0]);
  }

  async keyBinding(key: RequestKey): Promise<KeyBinding | null> {
    await this.migrated();
    return bindingOf(this.pool, key);
  }

  async markOwed(identity: string, digest: string): Promise<void> {
    await this.migrated();
    await this.pool.query('UPDATE journal_settlements SET owed_digest = $2 WHERE identity = $1', [identity, digest]);
  }

  async claimOwed(identity: string, digest: string): Promise<boolean> {
    await this.migrated();
    const claimed = await this.pool.query('UPDATE journal_settlements SET owed_digest = NULL WHERE identity = $1 AND owed_digest = $2', [
      identity,
      digest,
    ]);
    return claimed.rowCount === 1;
  }

  async reserve(a: NewSettlement, budget: BudgetRule, now: number): Promise<ReserveResult> {
    await this.migrated();
    return inTransaction(this.pool, async (db): Promise<ReserveResult> => {
      // One reserve at a time across instances: the budget sums and the insert see one state.
      await db.query("SELECT pg_advisory_xact_lock(hashtext('svc:journal:reserve'))");
      const previous = (
        await db.query<{ state: SettlementState; tx_hash: string }>('SELECT state, tx_hash FROM journal_settlements WHERE identity = $1', [
          a.identity,
        ])
      ).rows[0];
      // A failed attempt moved no money, so the payment may be attempted again; anything else is a copy.
      if (previous && previous.state !== 'failed') return { ok: false, reason: 'duplicate' };
      for (const key of a.keys) {
        const bound = await bindingOf(db, key);
        if (bound && !bindingMatches(bound, a.identity, a.requestDigest)) return { ok: false, reason: 'key_conflict' };
      }
      const usage = await usageOf(db, a, budget.window);
      const refusal = budget.judge(usage);
      if (refusal) return { ok: false, reason: 'refused', refusal };
      const newPayTo = !usage.payToHasHistory;
      const fee = a.feeStroops.toString();
      if (previous) {
        await db.query(
          `UPDATE journal_settlements SET idempotency_key = COALESCE(idempotency_key, $1), tx_hash = $2, submitter = $3, fee_stroops = $4, budget_stroops = budget_stroops + $4,
             valid_until = $5, state = 'submitted', error_code = NULL, error_message = NULL, updated_at = $6, new_pay_to = $8 WHERE identity = $7`,
          [a.idempotencyKey, a.transaction, a.submitter, fee, a.validUntil, now, a.identity, newPayTo],
        );
        await appendHistory(
          db,
          a.identity,
          'submitted',
          now,
          `attempted again after failed transaction ${previous.tx_hash}; submitted by ${a.submitter}`,
        );
        await bindKeys(db, a, now);
        return { ok: true };
      }
      await db.query(
        `INSERT INTO journal_settlements (identity, idempotency_key, network, tx_hash, submitter, fee_stroops, budget_stroops, payer, pay_to, asset, amount,
           valid_until, state, created_at, updated_at, payment_payload, payment_requirements, new_pay_to)
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10, $11, 'submitted', $12, $12, $13, $14, $15)`,
        [
          a.identity,
          a.idempotencyKey,
          a.network,
          a.transaction,
          a.submitter,
          fee,
          a.payer,
          a.payTo,
          a.asset,
          a.amount,
          a.validUntil,
          now,
          a.paymentPayload,
          a.paymentRequirements,
          newPayTo,
        ],
      );
      await appendHistory(db, a.identity, 'submitted', now, `submitted by ${a.submitter}`);
      await bindKeys(db, a, now);
      return { ok: true };
    });
  }

  async resolve(
    identity: string,
    state: SettlementState,
    detail: { errorCode?: string; errorMessage?: string; note: string },
    now: number,
  ): Promise<boolean> {
    await this.migrated();
    return inTransaction(this.pool, async (db) => {
      const row = (
        await db.query<{ state: SettlementState }>('SELECT state FROM journal_settlements WHERE identity = $1 FOR UPDATE', [identity])
      ).rows[0];
      if (!row || (row.state !== 'submitted' && row.state !== 'unknown')) return false;
      if (row.state === state) return false;
      await db.query(
        'UPDATE journal_settlements SET state = $1, error_code = $2, error_message = $3, updated_at = $4 WHERE identity = $5',
        [state, detail.errorCode ?? null, detail.errorMessage ?? null, now, identity],
      );
      await appendHistory(db, identity, state, now, detail.note);
      return true;
    });
  }

  async markListed(identity: string): Promise<void> {
    await this.migrated();
    await this.pool.query('UPDATE journal_settlements SET listed = TRUE WHERE identity = $1', [identity]);
  }

  async unlisted(limit: number, before: number, now: number): Promise<SettlementRecord[]> {
    await this.migrated();
    const rows = await this.pool.query<Row>(
      `SELECT * FROM journal_settlements WHERE state = 'settled' AND NOT listed AND updated_at < $1 AND list_after <= $2
       ORDER BY list_after, updated_at LIMIT $3`,
      [before, now, limit],
    );
    return Promise.all(rows.rows.map(async (r) => (await this.record(this.pool, r))!));
  }

  async claimListing(identity: string, now: number, until: number): Promise<boolean> {
    await this.migrated();
    const claimed = await this.pool.query(
      "UPDATE journal_settlements SET list_after = $2 WHERE identity = $1 AND state = 'settled' AND NOT listed AND list_after <= $3",
      [identity, until, now],
    );
    return claimed.rowCount === 1;
  }

  async deferListing(identity: string, until: number): Promise<void> {
    await this.migrated();
    await this.pool.query('UPDATE journal_settlements SET list_failures = list_failures + 1, list_after = $2 WHERE identity = $1', [
      identity,
      until,
    ]);
  }

  async unresolved(limit: number): Promise<SettlementRecord[]> {
    await this.migrated();
    const rows = await this.pool.query<Row>(
      "SELECT * FROM journal_settlements WHERE state IN ('submitted','unknown') ORDER BY created_at LIMIT $1",
      [limit],
    );
    return Promise.all(rows.rows.map(async (r) => (await this.record(this.pool, r))!));
  }

  /**
   * Through the journal's own pool: the server answers, the migrations ran and it is not a read-only
   * standby. (A server that refuses a write for another reason, a full disk, fails the reserve
   * instead, which refuses that settle before submission.) The reason never carries the URL.
   */
  async probe(): Promise<void> {
    let standby: boolean | undefined;
    try {
      await this.migrated();
      standby = (await this.pool.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows[0]?.standby;
    } catch (err) {
      throw new JournalStorageError(`not reachable (${(err as { code?: string }).code ?? 'error'})`, { cause: err });
    }
    if (standby) throw new JournalStorageError('read-only standby');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The payment and request digest a key is bound to, or null. */
async function bindingOf(db: Queryable, { kind, key }: RequestKey): Promise<KeyBinding | null> {
  return (
    (await db.query<KeyBinding>('SELECT identity, digest FROM journal_keys WHERE kind = $1 AND key = $2', [kind, key])).rows[0] ?? null
  );
}

/** Binds the request's keys that are not bound yet to its payment and digest (a bound key keeps its first binding). */
async function bindKeys(db: pg.PoolClient, a: NewSettlement, now: number): Promise<void> {
  for (const { kind, key } of a.keys)
    await db.query(
      'INSERT INTO journal_keys (kind, key, identity, digest, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
      [kind, key, a.identity, a.requestDigest, now],
    );
}

/** Appends a state change; runs inside the transaction that holds the record's lock. */
async function appendHistory(db: pg.PoolClient, identity: string, state: SettlementState, at: number, detail: string): Promise<void> {
  await db.query(
    'INSERT INTO journal_history (identity, seq, state, at, detail) SELECT $1, count(*), $2, $3, $4 FROM journal_history WHERE identity = $1',
    [identity, state, at, detail],
  );
}
