/**
 * The journal in SQLite (node:sqlite). It lives in the same database file as the catalog
 * (DB_PATH) in its own `journal_*` tables with its own schema version (journal_meta), so the two
 * migrate independently. WAL and a busy timeout let the catalog and the journal share the file.
 * What a write checks first (the file is still the one open) and what happens when it is not is
 * connection.ts.
 */
import { stepsFrom } from '../../db/schema-versions.ts';
import type { DatabaseSync } from 'node:sqlite';
import { inWriteTransaction, openSqlite } from '../../db/sqlite.ts';
import { bindingMatches } from '../request-digest.ts';
import {
  JournalStorageError,
  settlementRecord,
  storageReason,
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
  type StateChange,
  type PayToSpending,
} from '../types.ts';
import { payToSpendingOf, usageOf } from './budget.ts';
import { JournalConnection, type JournalConnectionOptions } from './connection.ts';

const BUSY_TIMEOUT_MS = 2_000;

type Migration = (db: DatabaseSync) => void;
const MIGRATIONS: Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE journal_settlements (
        identity TEXT PRIMARY KEY,
        idempotency_key TEXT,
        network TEXT NOT NULL,
        tx_hash TEXT NOT NULL UNIQUE,
        submitter TEXT NOT NULL,
        fee_stroops INTEGER NOT NULL,
        -- every fee ceiling this payment's attempts declared (the budget counts these)
        budget_stroops INTEGER NOT NULL,
        payer TEXT NOT NULL,
        pay_to TEXT NOT NULL,
        asset TEXT NOT NULL,
        amount TEXT NOT NULL,
        valid_until INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('submitted','settled','failed','unknown')),
        error_code TEXT,
        error_message TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        payment_payload TEXT NOT NULL,
        payment_requirements TEXT NOT NULL,
        -- 1 once the catalog hook ran for a settled payment (a crash between may leave it 0)
        listed INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX journal_unresolved ON journal_settlements (state, created_at) WHERE state IN ('submitted','unknown');
      CREATE INDEX journal_payer_day ON journal_settlements (payer, updated_at);
      CREATE INDEX journal_day ON journal_settlements (updated_at);
      CREATE TABLE journal_history (
        identity TEXT NOT NULL REFERENCES journal_settlements(identity),
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        at INTEGER NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (identity, seq)
      );
    `);
  },
  // A settled record whose catalog hook faulted is retried with a growing delay (list_after, ms),
  // so that records that keep faulting do not hold back the others (journal.ts list).
  (db) => {
    db.exec(`
      ALTER TABLE journal_settlements ADD COLUMN list_failures INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE journal_settlements ADD COLUMN list_after INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX journal_unlisted ON journal_settlements (list_after, updated_at) WHERE state = 'settled' AND listed = 0;
    `);
  },
  // Idempotency keys bound to the payment and the request digest they were first reserved with,
  // and the digest of a request owed the outcome after a `settlement_pending` (journal.ts).
  (db) => {
    db.exec(`
      CREATE TABLE journal_keys (
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        identity TEXT NOT NULL REFERENCES journal_settlements(identity),
        digest TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (kind, key)
      );
      INSERT OR IGNORE INTO journal_keys (kind, key, identity, digest, created_at)
        SELECT 'header', idempotency_key, identity, NULL, created_at FROM journal_settlements
        WHERE idempotency_key IS NOT NULL ORDER BY created_at;
      ALTER TABLE journal_settlements ADD COLUMN owed_digest TEXT;
    `);
  },
  // Sponsorship by payTo (policy.ts judgeBudget): fees to one payTo, and whether the payTo had no
  // history when it was paid (those share one smaller daily budget).
  (db) => {
    db.exec(`
      ALTER TABLE journal_settlements ADD COLUMN new_pay_to INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX journal_pay_to_day ON journal_settlements (pay_to, updated_at);
    `);
  },
];

function migrate(db: DatabaseSync): void {
  db.exec('CREATE TABLE IF NOT EXISTS journal_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  inWriteTransaction(db, () => {
    const row = db.prepare("SELECT value FROM journal_meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
    const version = row ? Number(row.value) : 0;
    for (const step of stepsFrom('journal', version, MIGRATIONS)) step(db);
    db.prepare(
      "INSERT INTO journal_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ).run(String(MIGRATIONS.length));
  });
}

type Row = SettlementRow;

export class SqliteJournalStore implements JournalStore {
  private readonly connection: JournalConnection;

  /** Opens (and migrates) the journal at `dbPath`; with `openLater` a file that cannot open yet is opened on a later call. */
  constructor(dbPath: string, options: JournalConnectionOptions = {}) {
    // synchronous FULL: a record written before submission must survive a power cut, not only a crash.
    this.connection = new JournalConnection(
      dbPath,
      () => openSqlite(dbPath, { busyTimeoutMs: BUSY_TIMEOUT_MS, pragmas: ['synchronous = FULL'], setup: migrate }),
      options,
    );
  }

  private record(db: DatabaseSync, row: Row | undefined): SettlementRecord | null {
    if (!row) return null;
    const history = db
      .prepare('SELECT state, at, detail FROM journal_history WHERE identity = ? ORDER BY seq')
      .all(row.identity) as unknown as StateChange[];
    return settlementRecord(row, history);
  }

  // Reads serve from the open connection even after its file was lost: it is what svc knows.
  get(identity: string): Promise<SettlementRecord | null> {
    return promised(() => {
      const db = this.connection.reader();
      return this.record(db, db.prepare('SELECT * FROM journal_settlements WHERE identity = ?').get(identity) as Row | undefined);
    });
  }

  budgetUsage(parties: BudgetParties, window: BudgetWindow): Promise<BudgetUsage> {
    return promised(() => usageOf(this.connection.reader(), parties, window));
  }

  payToSpending(network: string, dayStart: number, bounds: { nearCap: bigint | null; cap: bigint | null }): Promise<PayToSpending> {
    return promised(() => payToSpendingOf(this.connection.reader(), network, dayStart, bounds));
  }

  getByTransaction(transaction: string): Promise<SettlementRecord | null> {
    return promised(() => {
      const db = this.connection.reader();
      return this.record(db, db.prepare('SELECT * FROM journal_settlements WHERE tx_hash = ?').get(transaction) as Row | undefined);
    });
  }

  keyBinding(key: RequestKey): Promise<KeyBinding | null> {
    return promised(() => bindingOf(this.connection.reader(), key));
  }

  markOwed(identity: string, digest: string): Promise<void> {
    return promised(() => {
      this.connection.writer().prepare('UPDATE journal_settlements SET owed_digest = ? WHERE identity = ?').run(digest, identity);
    });
  }

  claimOwed(identity: string, digest: string): Promise<boolean> {
    return promised(
      () =>
        this.connection
          .writer()
          .prepare('UPDATE journal_settlements SET owed_digest = NULL WHERE identity = ? AND owed_digest = ?')
          .run(identity, digest).changes === 1,
    );
  }

  reserve(a: NewSettlement, budget: BudgetRule, now: number): Promise<ReserveResult> {
    return promised(() => {
      const db = this.connection.writer();
      return inWriteTransaction(db, (): ReserveResult => {
        const previous = db.prepare('SELECT state, budget_stroops, tx_hash FROM journal_settlements WHERE identity = ?').get(a.identity) as
          { state: SettlementState; budget_stroops: number | bigint; tx_hash: string } | undefined;
        // A failed attempt moved no money, so the payment may be attempted again; anything else is a copy.
        if (previous && previous.state !== 'failed') return { ok: false, reason: 'duplicate' };
        const bindings = a.keys.map((key) => bindingOf(db, key));
        if (bindings.some((b) => b && !bindingMatches(b, a.identity, a.requestDigest))) return { ok: false, reason: 'key_conflict' };
        const usage = usageOf(db, a, budget.window);
        const refusal = budget.judge(usage);
        if (refusal) return { ok: false, reason: 'refused', refusal };
        const newPayTo = usage.payToHasHistory ? 0 : 1;
        if (previous) {
          db.prepare(
            `UPDATE journal_settlements SET idempotency_key = COALESCE(idempotency_key, ?), tx_hash = ?, submitter = ?, fee_stroops = ?, budget_stroops = budget_stroops + ?,
                 valid_until = ?, state = 'submitted', error_code = NULL, error_message = NULL, updated_at = ?, new_pay_to = ? WHERE identity = ?`,
          ).run(a.idempotencyKey, a.transaction, a.submitter, a.feeStroops, a.feeStroops, a.validUntil, now, newPayTo, a.identity);
          appendHistory(
            db,
            a.identity,
            'submitted',
            now,
            `attempted again after failed transaction ${previous.tx_hash}; submitted by ${a.submitter}`,
          );
          bindKeys(db, a, now);
          return { ok: true };
        }
        db.prepare(
          `INSERT INTO journal_settlements (identity, idempotency_key, network, tx_hash, submitter, fee_stroops, budget_stroops, payer, pay_to, asset, amount,
               valid_until, state, error_code, error_message, created_at, updated_at, payment_payload, payment_requirements, new_pay_to)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'submitted', NULL, NULL, ?, ?, ?, ?, ?)`,
        ).run(
          a.identity,
          a.idempotencyKey,
          a.network,
          a.transaction,
          a.submitter,
          a.feeStroops,
          a.feeStroops,
          a.payer,
          a.payTo,
          a.asset,
          a.amount,
          a.validUntil,
          now,
          now,
          a.paymentPayload,
          a.paymentRequirements,
          newPayTo,
        );
        appendHistory(db, a.identity, 'submitted', now, `submitted by ${a.submitter}`);
        bindKeys(db, a, now);
        return { ok: true };
      });
    });
  }

  resolve(
    identity: string,
    state: SettlementState,
    detail: { errorCode?: string; errorMessage?: string; note: string },
    now: number,
  ): Promise<boolean> {
    return promised(() => {
      const db = this.connection.writer();
      return inWriteTransaction(db, () => {
        const row = db.prepare('SELECT state FROM journal_settlements WHERE identity = ?').get(identity) as
          { state: SettlementState } | undefined;
        if (!row || (row.state !== 'submitted' && row.state !== 'unknown')) return false;
        if (row.state === state) return false;
        db.prepare('UPDATE journal_settlements SET state = ?, error_code = ?, error_message = ?, updated_at = ? WHERE identity = ?').run(
          state,
          detail.errorCode ?? null,
          detail.errorMessage ?? null,
          now,
          identity,
        );
        appendHistory(db, identity, state, now, detail.note);
        return true;
      });
    });
  }

  markListed(identity: string): Promise<void> {
    return promised(() => {
      this.connection.writer().prepare('UPDATE journal_settlements SET listed = 1 WHERE identity = ?').run(identity);
    });
  }

  unlisted(limit: number, before: number, now: number): Promise<SettlementRecord[]> {
    return promised(() => {
      const db = this.connection.reader();
      const rows = db
        .prepare(
          `SELECT * FROM journal_settlements WHERE state = 'settled' AND listed = 0 AND updated_at < ? AND list_after <= ?
           ORDER BY list_after, updated_at LIMIT ?`,
        )
        .all(before, now, limit) as unknown as Row[];
      return rows.map((r) => this.record(db, r)!);
    });
  }

  claimListing(identity: string, now: number, until: number): Promise<boolean> {
    return promised(
      () =>
        this.connection
          .writer()
          .prepare(
            "UPDATE journal_settlements SET list_after = ? WHERE identity = ? AND state = 'settled' AND listed = 0 AND list_after <= ?",
          )
          .run(until, identity, now).changes === 1,
    );
  }

  deferListing(identity: string, until: number): Promise<void> {
    return promised(() => {
      this.connection
        .writer()
        .prepare('UPDATE journal_settlements SET list_failures = list_failures + 1, list_after = ? WHERE identity = ?')
        .run(until, identity);
    });
  }

  unresolved(limit: number): Promise<SettlementRecord[]> {
    return promised(() => {
      const db = this.connection.reader();
      const rows = db
        .prepare("SELECT * FROM journal_settlements WHERE state IN ('submitted','unknown') ORDER BY created_at LIMIT ?")
        .all(limit) as unknown as Row[];
      return rows.map((r) => this.record(db, r)!);
    });
  }

  probe(): Promise<void> {
    return promised(() => {
      const db = this.connection.writer();
      try {
        inWriteTransaction(db, () =>
          db
            .prepare(
              "INSERT INTO journal_meta (key, value) VALUES ('write_probe', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            )
            .run(String(Date.now())),
        );
      } catch (err) {
        throw new JournalStorageError(`not writable (${storageReason(err)})`, { cause: err });
      }
    });
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}

/** The payment and request digest a key is bound to, or null. */
function bindingOf(db: DatabaseSync, { kind, key }: RequestKey): KeyBinding | null {
  return (
    (db.prepare('SELECT identity, digest FROM journal_keys WHERE kind = ? AND key = ?').get(kind, key) as KeyBinding | undefined) ?? null
  );
}

/** Binds the request's keys that are not bound yet to its payment and digest (a bound key keeps its first binding). */
function bindKeys(db: DatabaseSync, a: NewSettlement, now: number): void {
  for (const { kind, key } of a.keys)
    db.prepare('INSERT OR IGNORE INTO journal_keys (kind, key, identity, digest, created_at) VALUES (?, ?, ?, ?, ?)').run(
      kind,
      key,
      a.identity,
      a.requestDigest,
      now,
    );
}

function appendHistory(db: DatabaseSync, identity: string, state: SettlementState, at: number, detail: string): void {
  const seq = (db.prepare('SELECT COUNT(*) AS n FROM journal_history WHERE identity = ?').get(identity) as { n: number }).n;
  db.prepare('INSERT INTO journal_history (identity, seq, state, at, detail) VALUES (?, ?, ?, ?, ?)').run(identity, seq, state, at, detail);
}

/** The store interface is async (a networked database implements it too); SQLite answers at once. */
function promised<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
