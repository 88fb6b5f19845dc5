/**
 * Readiness (GET /ready): whether this instance should receive payment traffic now. Each check
 * is a named async function answering `{ ok, detail }`; a check that throws or outlives its time
 * budget is not ok. Results are cached briefly so a load balancer probing every second costs at
 * most one round of checks per second, and concurrent probes share one round. Liveness (/health)
 * never runs these. The checks and their thresholds are described in docs/OPERATIONS.md. With
 * several networks a check may belong to one network: each network is ready when its own checks
 * and the shared ones pass, and the instance while any (or every, READY_NETWORKS=all) network is
 * (docs/OPERATIONS.md "Several networks").
 */
import { DatabaseSync } from 'node:sqlite';
import type pg from 'pg';
import { openPool } from '../db/postgres.ts';

export interface CheckResult {
  ok: boolean;
  detail: string;
}

export type ReadinessCheck = () => Promise<CheckResult>;

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
  /** Each served network's state: ready when its own checks and the shared ones pass. */
  networks?: Record<string, { status: 'ready' | 'not_ready' }>;
}

export interface ReadinessOptions {
  checks: Record<string, ReadinessCheck>;
  /**
   * The checks that belong to one network (its RPC, its balances), by network; every other check
   * is shared (database, draining). Without it every check is shared.
   */
  networks?: Record<string, string[]>;
  /**
   * `any` (default): ready while the shared checks pass and at least one network's do, so one
   * network's outage does not take the others out of a load balancer; `all`: every network's too.
   */
  requireNetworks?: 'any' | 'all';
  /** Longest a check may take before it counts as failed. Default 2 s. */
  checkTimeoutMs?: number;
  /** How long one round of results is reused. Default 1 s. */
  cacheMs?: number;
  now?: () => number;
}

export class ReadinessProbe {
  private readonly checks: Record<string, ReadinessCheck>;
  private readonly networks: Record<string, string[]>;
  private readonly requireNetworks: 'any' | 'all';
  private readonly checkTimeoutMs: number;
  private readonly cacheMs: number;
  private readonly now: () => number;
  private cached: { at: number; value: Readiness } | undefined;
  private inflight: Promise<Readiness> | undefined;

  constructor({
    checks,
    networks = {},
    requireNetworks = 'any',
    checkTimeoutMs = 2_000,
    cacheMs = 1_000,
    now = Date.now,
  }: ReadinessOptions) {
    this.checks = checks;
    this.networks = networks;
    this.requireNetworks = requireNetworks;
    this.checkTimeoutMs = checkTimeoutMs;
    this.cacheMs = cacheMs;
    this.now = now;
  }

  async evaluate(): Promise<Readiness> {
    if (this.cached && this.now() - this.cached.at < this.cacheMs) return this.cached.value;
    this.inflight ??= this.round().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** The served networks' names (none when the probe was built without them). */
  get networkNames(): string[] {
    return Object.keys(this.networks);
  }

  /**
   * Readiness for one network's traffic (GET /ready?network=…): the shared checks and that
   * network's; the other networks' are left out. Undefined for a network the probe does not know.
   */
  async evaluateNetwork(network: string): Promise<Readiness | undefined> {
    if (!Object.hasOwn(this.networks, network)) return undefined;
    const own = this.networks[network]!;
    const { checks, networks } = await this.evaluate();
    const others = new Set(Object.values(this.networks).flat());
    for (const name of own) others.delete(name);
    const kept = Object.fromEntries(Object.entries(checks).filter(([name]) => !others.has(name)));
    const status = networks![network]!.status;
    return { ready: status === 'ready', checks: kept, networks: { [network]: { status } } };
  }

  private async round(): Promise<Readiness> {
    const names = Object.keys(this.checks);
    const results = await Promise.all(names.map((name) => this.run(this.checks[name]!)));
    const checks = Object.fromEntries(names.map((name, i) => [name, results[i]!]));
    const owned = new Set(Object.values(this.networks).flat());
    const sharedOk = names.every((name) => owned.has(name) || checks[name]!.ok);
    const networkNames = Object.keys(this.networks);
    const networkReady = networkNames.map((network) => sharedOk && this.networks[network]!.every((name) => checks[name]?.ok === true));
    const networksOk =
      networkNames.length === 0 || (this.requireNetworks === 'all' ? networkReady.every(Boolean) : networkReady.some(Boolean));
    const value: Readiness = { ready: sharedOk && networksOk, checks };
    if (networkNames.length > 0)
      value.networks = Object.fromEntries(
        networkNames.map((network, i) => [network, { status: networkReady[i] ? ('ready' as const) : ('not_ready' as const) }]),
      );
    this.cached = { at: this.now(), value };
    return value;
  }

  private async run(check: ReadinessCheck): Promise<CheckResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<CheckResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, detail: `no answer within ${this.checkTimeoutMs} ms` }), this.checkTimeoutMs);
    });
    try {
      return await Promise.race([check(), timeout]);
    } catch (err) {
      return { ok: false, detail: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * For a service that mounts no journal (tests that inject their own schemes): a write lock is
 * taken and released on a connection of the probe's own (BEGIN IMMEDIATE fails on a read-only
 * file or a lock held past the busy timeout; it writes nothing, so a full disk passes). svc's own
 * journal is probed through its own connection instead (SettlementJournal.writeCheck,
 * docs/OPERATIONS.md "When the journal cannot write"). The message names no path.
 */
export function databaseWritableCheck(dbPath: string): ReadinessCheck {
  let db: DatabaseSync | undefined;
  // Synchronous SQLite behind the async check interface.
  // eslint-disable-next-line @typescript-eslint/require-await
  return async () => {
    if (dbPath === ':memory:') return { ok: true, detail: 'in-memory database' };
    try {
      db ??= new DatabaseSync(dbPath, { timeout: 500 });
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
      return { ok: true, detail: 'writable' };
    } catch (err) {
      try {
        db?.close();
      } catch {
        /* already unusable */
      }
      db = undefined;
      return { ok: false, detail: `not writable (${(err as { code?: string }).code ?? (err as Error).message})` };
    }
  };
}

/**
 * With DATABASE_URL: the server answers and is not a read-only standby. One small pool (one
 * connection) is kept for the probe; the error detail never carries the URL.
 */
export function postgresWritableCheck(url: string): ReadinessCheck {
  let pool: pg.Pool | undefined;
  return async () => {
    try {
      pool ??= openPool(url, { max: 1 });
      const row = await pool.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
      return row.rows[0]?.standby ? { ok: false, detail: 'read-only standby' } : { ok: true, detail: 'writable' };
    } catch (err) {
      return { ok: false, detail: `not reachable (${(err as { code?: string }).code ?? 'error'})` };
    }
  };
}

/** Not ready while the instance drains (it finishes in-flight settlements, takes no new ones). */
export function drainingCheck(isDraining: () => boolean): ReadinessCheck {
  return () => Promise.resolve(isDraining() ? { ok: false, detail: 'draining' } : { ok: true, detail: 'accepting' });
}
