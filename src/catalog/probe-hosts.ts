/**
 * The outbound bound (docs/SECURITY.md "Requests svc makes of sellers' hosts"): svc asks one host at
 * most once per PROBE_HOST_INTERVAL_SECONDS for ownership checks, POST /discovery/validate, re-checks
 * and liveness together. The time each host may next be asked is a row of `probe_hosts` in the
 * catalog's database, so every instance sharing a catalog (Postgres) shares the bound: a request is
 * made only after an atomic upsert took the host's slot. Same statements on both stores.
 */
import { changes, columnTypes, rows, type Engine, type Sql } from './statements.ts';

/** Rows whose slot passed this long ago are pruned (a few per reservation). */
const PROBE_HOSTS_MEMORY_MS = 24 * 3_600_000;
const PRUNE_BATCH = 16;

export function probeHostsTableSql(dialect: 'sqlite' | 'postgres'): string {
  const { text, int } = columnTypes(dialect);
  return `
    CREATE TABLE probe_hosts (
      host ${text} PRIMARY KEY,
      next_at_ms ${int} NOT NULL
    )${dialect === 'sqlite' ? ' STRICT' : ''};
    CREATE INDEX probe_hosts_by_time ON probe_hosts (next_at_ms);`;
}

/**
 * Takes the host's slot for one request when it is free at `nowMs` (its row then says `nowMs + intervalMs`, an atomic
 * upsert): 0 when taken, else when the host may next be asked (epoch ms). `sent`: the request taken before is being sent
 * now, so the slot ends one interval after the send (the time between taking a slot and sending is never counted).
 */
export function* reserveHost(sql: Sql, host: string, nowMs: number, intervalMs: number, sent?: boolean): Engine<number> {
  const p = sql.p;
  if (sent) {
    yield* changes(sql, `UPDATE probe_hosts SET next_at_ms = ${p(1)} WHERE host = ${p(2)} AND next_at_ms < ${p(1)}`, [
      nowMs + intervalMs,
      host,
    ]);
    return 0;
  }
  const prune = `DELETE FROM probe_hosts WHERE host IN (SELECT host FROM probe_hosts WHERE next_at_ms < ${p(1)} LIMIT ${PRUNE_BATCH})`;
  yield* changes(sql, prune, [nowMs - PROBE_HOSTS_MEMORY_MS]);
  const reserve = `INSERT INTO probe_hosts (host, next_at_ms) VALUES (${p(1)}, ${p(2)})
    ON CONFLICT (host) DO UPDATE SET next_at_ms = excluded.next_at_ms WHERE probe_hosts.next_at_ms <= ${p(3)}
    RETURNING next_at_ms`;
  if ((yield* rows(sql, reserve, [host, nowMs + intervalMs, nowMs])).length > 0) return 0;
  // The row pruned meanwhile by another instance: the slot counts as taken for one interval.
  const [slot] = yield* rows<{ next_at_ms: number | string }>(sql, `SELECT next_at_ms FROM probe_hosts WHERE host = ${p(1)}`, [host]);
  return Number(slot?.next_at_ms ?? 0) || nowMs + intervalMs;
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
