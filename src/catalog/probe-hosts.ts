/**
 * The outbound bound (docs/SECURITY.md "Requests svc makes of sellers' hosts"): svc asks one host at
 * most once per PROBE_HOST_INTERVAL_SECONDS for ownership checks, POST /discovery/validate, re-checks
 * and liveness together. The time each host may next be asked is a row of `probe_hosts` in the
 * catalog's database, so every instance sharing a catalog (Postgres) shares the bound: a request is
 * made only after an atomic upsert took the host's slot. Same statements on both stores.
 */
import type { DatabaseSync } from 'node:sqlite';
import { cachedStatement } from '../db/sqlite.ts';

/** Rows whose slot passed this long ago are pruned (a few per reservation). */
export const PROBE_HOSTS_MEMORY_MS = 24 * 3_600_000;
const PRUNE_BATCH = 16;

export function probeHostsTableSql(dialect: 'sqlite' | 'postgres'): string {
  const text = dialect === 'postgres' ? 'TEXT COLLATE "C"' : 'TEXT';
  const int = dialect === 'postgres' ? 'BIGINT' : 'INTEGER';
  return `
    CREATE TABLE IF NOT EXISTS probe_hosts (
      host ${text} PRIMARY KEY,
      next_at_ms ${int} NOT NULL
    )${dialect === 'sqlite' ? ' STRICT' : ''};
    CREATE INDEX IF NOT EXISTS probe_hosts_by_time ON probe_hosts (next_at_ms);`;
}

/** Takes the host's slot when it is free at `now` (the row then says `now + interval`); returns nothing otherwise. */
export const RESERVE_HOST_SQL = (p: (n: number) => string) => `
  INSERT INTO probe_hosts (host, next_at_ms) VALUES (${p(1)}, ${p(2)})
  ON CONFLICT (host) DO UPDATE SET next_at_ms = excluded.next_at_ms WHERE probe_hosts.next_at_ms <= ${p(3)}
  RETURNING next_at_ms`;
export const HOST_SLOT_SQL = (p: (n: number) => string) => `SELECT next_at_ms FROM probe_hosts WHERE host = ${p(1)}`;
/** A request was sent now: the host's slot runs one interval from the send, not from when it was taken. */
export const SENT_SQL = (p: (n: number) => string) =>
  `UPDATE probe_hosts SET next_at_ms = ${p(1)} WHERE host = ${p(2)} AND next_at_ms < ${p(1)}`;
export const PRUNE_HOSTS_SQL = (p: (n: number) => string) =>
  `DELETE FROM probe_hosts WHERE host IN (SELECT host FROM probe_hosts WHERE next_at_ms < ${p(1)} LIMIT ${PRUNE_BATCH})`;

/**
 * What a store answers: 0 when the slot was taken for this request, else when the host may next be
 * asked (epoch ms). `sent`: the request taken before is being sent now, so the slot ends one
 * interval after the send (the time between taking a slot and sending is never counted).
 */
export interface ProbeHostsPort {
  reserve(host: string, nowMs: number, intervalMs: number, sent?: boolean): number | Promise<number>;
}

/**
 * The host a URL's request goes to, as the bound counts it: its hostname, lowercased, without the
 * port or scheme (one server answering on several ports or schemes is one host).
 */
export function probeHostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return url;
  }
}

/** The port over SQLite (node:sqlite, synchronous; the upsert is atomic under its write lock). */
export function sqliteProbeHosts(db: DatabaseSync, writable: () => void): ProbeHostsPort {
  const q = (n: number) => (void n, '?');
  return {
    reserve(host, nowMs, intervalMs, sent) {
      writable();
      if (sent) return (cachedStatement(db, SENT_SQL(q)).run(nowMs + intervalMs, host), 0);
      cachedStatement(db, PRUNE_HOSTS_SQL(q)).run(nowMs - PROBE_HOSTS_MEMORY_MS);
      const taken = cachedStatement(db, RESERVE_HOST_SQL(q)).get(host, nowMs + intervalMs, nowMs);
      if (taken !== undefined) return 0;
      return Number((cachedStatement(db, HOST_SLOT_SQL(q)).get(host) as { next_at_ms: number }).next_at_ms);
    },
  };
}

/** The port over Postgres (every instance sharing the catalog takes its slots from the one table). */
export function postgresProbeHosts(
  db: { query(sql: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> },
  ready: () => Promise<unknown>,
): ProbeHostsPort {
  const q = (n: number) => `$${n}`;
  return {
    async reserve(host, nowMs, intervalMs, sent) {
      await ready();
      if (sent) return (await db.query(SENT_SQL(q), [nowMs + intervalMs, host]), 0);
      await db.query(PRUNE_HOSTS_SQL(q), [nowMs - PROBE_HOSTS_MEMORY_MS]);
      const taken = await db.query(RESERVE_HOST_SQL(q), [host, nowMs + intervalMs, nowMs]);
      if (taken.rows.length > 0) return 0;
      return Number((await db.query(HOST_SLOT_SQL(q), [host])).rows[0]?.next_at_ms ?? 0) || nowMs + intervalMs;
    },
  };
}
