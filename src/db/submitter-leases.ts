/**
 * Submitter leases in PostgreSQL (DATABASE_URL, docs/SCALING.md). Several svc instances may share
 * one list of submitter accounts; a chain accepts one pending transaction per source account, so
 * an instance takes a row lease on an account before building a transaction from it and gives it
 * back after the final outcome.
 *
 * - A lease is one row per account: `holder` (this instance's random id), `expires_at` (database
 *   clock, so instances' clocks do not matter) and `uses`, which counts acquisitions.
 * - Taking a lease is one upsert that succeeds only when the row is free, expired, or already
 *   this holder's. Postgres serializes the upserts on the row, so two instances never both win.
 * - A held lease is renewed in the background every third of its time to live, so a settlement
 *   that waits for its outcome keeps its account; an instance that dies stops renewing and its
 *   leases free themselves after at most one time to live.
 * - `continuous` tells the pool whether any other instance held the account since this instance
 *   last did (`uses` moved by exactly one): only then is its locally tracked sequence still right;
 *   otherwise the pool re-reads the sequence from the chain.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { SharedLease, SharedLeases } from '../scheme/types.ts';
import { migrationOnDemand, openPool, type PostgresMigrations } from './postgres.ts';

export const SUBMITTER_LEASE_MIGRATIONS: PostgresMigrations = [
  `CREATE TABLE submitter_leases (
     address TEXT PRIMARY KEY,
     holder TEXT NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL,
     uses BIGINT NOT NULL
   );`,
];

export interface PostgresSubmitterLeasesOptions {
  /**
   * Time to live of a lease; renewed every third of it while held. svc passes
   * SUBMITTER_LEASE_TTL_MS (default `DEFAULTS.SUBMITTER_LEASE_TTL_MS` in src/config.ts, kept there
   * so that reading the configuration does not load pg with this module).
   */
  ttlMs: number;
  /** This instance's id in the table (default: a random UUID per process). */
  holder?: string;
}

export class PostgresSubmitterLeases implements SharedLeases {
  readonly holder: string;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly ttlMs: number;
  /** Migrates on the first call; a failed attempt is tried again by the next call. */
  private readonly migrated: () => Promise<void>;
  /** Accounts this instance holds now, with the `uses` value of its acquisition. */
  private readonly held = new Map<string, bigint>();
  /** The `uses` value of this instance's last acquisition of each account. */
  private readonly lastUses = new Map<string, bigint>();
  private readonly renewal: NodeJS.Timeout;

  constructor(url: string | pg.Pool, options: PostgresSubmitterLeasesOptions) {
    this.ownsPool = typeof url === 'string';
    // One connection kept open while idle: a settlement after a pause would otherwise wait for a new one (docs/SCALING.md).
    this.pool = typeof url === 'string' ? openPool(url, { max: 4, keepIdle: 1 }) : url;
    this.ttlMs = options.ttlMs;
    this.holder = options.holder ?? randomUUID();
    this.migrated = migrationOnDemand(this.pool, 'submitter_leases', SUBMITTER_LEASE_MIGRATIONS);
    this.renewal = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.ttlMs / 3)));
    this.renewal.unref();
  }

  async acquire(account: string): Promise<SharedLease | null> {
    await this.migrated();
    const { rows } = await this.pool.query<{ uses: string }>(
      `INSERT INTO submitter_leases AS l (address, holder, expires_at, uses)
       VALUES ($1, $2, now() + make_interval(secs => $3), 1)
       ON CONFLICT (address) DO UPDATE
         SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, uses = l.uses + 1
         WHERE l.expires_at < now() OR l.holder = EXCLUDED.holder
       RETURNING uses`,
      [account, this.holder, this.ttlMs / 1000],
    );
    if (rows.length === 0) return null;
    const uses = BigInt(rows[0]!.uses);
    const continuous = this.lastUses.get(account) === uses - 1n;
    this.lastUses.set(account, uses);
    this.held.set(account, uses);
    let released = false;
    return {
      continuous,
      release: async () => {
        if (released) return;
        released = true;
        if (this.held.get(account) === uses) this.held.delete(account);
        // Only this acquisition's row: a late release never frees a newer lease.
        await this.pool.query(
          "UPDATE submitter_leases SET expires_at = now() - interval '1 second' WHERE address = $1 AND holder = $2 AND uses = $3",
          [account, this.holder, uses.toString()],
        );
      },
    };
  }

  /** Extends every lease this instance holds (one statement); a failure is retried at the next tick. */
  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    await this.pool
      .query(
        // Only leases still live: a release that ran first has already expired its row.
        `UPDATE submitter_leases SET expires_at = now() + make_interval(secs => $3)
         WHERE holder = $1 AND address = ANY($2::text[]) AND expires_at > now()`,
        [this.holder, [...this.held.keys()], this.ttlMs / 1000],
      )
      .catch(() => undefined);
  }

  private closed = false;

  async close(): Promise<void> {
    clearInterval(this.renewal);
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }
}
