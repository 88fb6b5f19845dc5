/**
 * Liveness of listed resources (docs/CATALOG.md "Liveness"): svc asks each listing again, with the
 * same unpaid probe as POST /discovery/validate (src/net/live-402.ts, through the address guard),
 * whether it still answers a live 402 that names the listing's payTo, and records
 * `{status, checkedAt}` with the time it started failing (the record's rules: src/catalog/liveness.ts).
 * A listing failing for longer than the grace period is hidden from list and search until it
 * passes again (or is paid again, which resets its record).
 *
 * Bounded and conservative: at most `concurrency` probes at once, at most `perMinute` probes a
 * minute in all, and one host asked at most once per PROBE_HOST_INTERVAL_SECONDS by every check
 * together (`hostSlots`, host-slots.ts: a seller with many listings is not hammered); the clock is injected. This module decides and paces; where the
 * records live is the catalog (its `liveness` port, which claims due listings so that several
 * instances sharing a database do not probe one listing each).
 */
import pLimit from 'p-limit';
import { nextRecord, type LivenessListing, type LivenessRecord, type LivenessStatus } from '../catalog/liveness.ts';
import type { CatalogLiveness } from '../catalog/types.ts';
import type { HostSlots } from './host-slots.ts';
import { probeLive402, type LiveProbe, type LiveTarget } from './live-402.ts';
import { PROBE_MAX_BYTES, PROBE_MAX_REDIRECTS } from './probe-config.ts';

export { nextRecord, type LivenessListing, type LivenessRecord, type LivenessStatus } from '../catalog/liveness.ts';

/** The status a probe's answer gives a listing. */
export function livenessOf(listing: Pick<LivenessListing, 'payTo'>, probe: LiveProbe): LivenessStatus {
  switch (probe.kind) {
    case 'payment':
      return probe.required.accepts.some((a) => a.payTo === listing.payTo) ? 'live' : 'terms_changed';
    case 'free':
    case 'error':
    case 'refused':
      return 'not_payable';
    default:
      return 'unreachable';
  }
}

/** The longest a failing listing waits for its next check (docs/CATALOG.md "Liveness", "Pacing"). */
export const LIVENESS_BACKOFF_CEILING_MS = 7 * 24 * 3_600_000;

/**
 * How long after a check with this record the listing is checked again: `intervalMs` while live;
 * while failing, as long as it has been failing (at least `intervalMs`), so the gaps between its
 * checks double, up to LIVENESS_BACKOFF_CEILING_MS. A listing failing for days is not probed
 * every few hours forever; its next settlement makes it due again as usual.
 */
export function nextCheckAfter(record: LivenessRecord, now: number, intervalMs: number): number {
  if (record.failingSince === null) return intervalMs;
  const failingFor = now - Date.parse(record.failingSince);
  return Math.max(intervalMs, Math.min(LIVENESS_BACKOFF_CEILING_MS, Number.isFinite(failingFor) ? failingFor : 0));
}

/** Whether a listing with this record is hidden from list and search at `now`. */
export function hiddenByLiveness(record: LivenessRecord | undefined, now: Date, graceMs: number): boolean {
  if (!record || record.failingSince === null) return false;
  return now.getTime() - Date.parse(record.failingSince) > graceMs;
}

export interface LivenessOptions {
  store: CatalogLiveness;
  /** The address-guarded fetch (src/net/guarded-fetch.ts). */
  fetchImpl: typeof fetch;
  clock: () => Date;
  /** A listing is checked again this long after its last check (or settlement). */
  intervalMs: number;
  /** Probes at once. */
  concurrency: number;
  /** Probes a minute in all (0: the checker is off). */
  perMinute: number;
  /** Takes a host's slot before its probe (host-slots.ts); a listing whose host is not free waits for the slot. */
  hostSlots: HostSlots;
  timeoutMs: number;
  /** How often a pass runs (default 10 s); each pass probes at most its share of `perMinute`. */
  passMs?: number;
}

export const DEFAULT_PASS_MS = 10_000;

export class LivenessChecker {
  private readonly options: LivenessOptions;

  constructor(options: LivenessOptions) {
    this.options = options;
  }

  /** Listings one pass may probe: its share of `perMinute` (at least one). */
  get perPass(): number {
    const { perMinute, passMs = DEFAULT_PASS_MS } = this.options;
    return Math.max(1, Math.ceil((perMinute * passMs) / 60_000));
  }

  /**
   * One pass: claims the listings due now (at most a pass's share of `perMinute`), probes each
   * unless its origin was probed within `originIntervalMs` (that one is given back, due again once
   * the origin may be probed), and writes the records. Returns the listings probed.
   */
  /** Listings the last pass found due (probed or postponed); the scheduler spaces passes out while it is 0. */
  lastClaimed = 0;

  async runOnce(): Promise<number> {
    const { store, clock, intervalMs, concurrency, perMinute, hostSlots } = this.options;
    if (perMinute <= 0) return 0;
    const now = clock().getTime();
    const due = await store.claimDue(now, now - intervalMs, this.perPass);
    this.lastClaimed = due.length;
    const chosen: LivenessListing[] = [];
    const later = new Map<number, string[]>();
    for (const listing of due) {
      const next = await hostSlots(listing.resource, now);
      if (next === 0) chosen.push(listing);
      else later.set(next, [...(later.get(next) ?? []), listing.key]);
    }
    // Due again once their host may be asked (the basis is the time the interval counts from).
    for (const [next, keys] of later) await store.postponeLiveness(keys, next - intervalMs, now);
    const limit = pLimit(Math.max(1, concurrency));
    await Promise.all(
      chosen.map((listing) =>
        limit(async () => {
          const record = await this.check(listing);
          // The route answers only its declared method: due again at once, so the host's next slot sends it (check-request.ts checkHttpRequest).
          if (!record) return store.postponeLiveness([listing.key], now - intervalMs, now);
          // A failing listing waits as long as it has been failing (its checks' gaps double), at most LIVENESS_BACKOFF_CEILING_MS.
          await store.writeLiveness(listing.key, record, now, now + nextCheckAfter(record, now, intervalMs) - intervalMs);
        }),
      ),
    );
    return chosen.length;
  }

  /**
   * Probes one listing: its next record (from `listing.previous`), or null when the check's safe
   * request was deferred (no record: nothing was learned); never throws for anything the target does.
   */
  async check(listing: LivenessListing): Promise<LivenessRecord | null> {
    const { fetchImpl, timeoutMs, clock, hostSlots } = this.options;
    const probe = await probeLive402(probeTargetOf(listing), {
      fetchImpl,
      timeoutMs,
      maxBytes: PROBE_MAX_BYTES,
      maxRedirects: PROBE_MAX_REDIRECTS,
      check: true,
      onSend: () => hostSlots(listing.resource, clock().getTime(), true),
    });
    if (probe.kind === 'deferred') return null;
    return nextRecord(listing.previous, livenessOf(listing, probe), clock());
  }
}

/**
 * What svc's check asks of a listing (check-request.ts, docs/SECURITY.md "Requests svc makes of
 * sellers' hosts"): HTTP, its URL with its path parameters filled and its declared method (sent
 * only as check-request.ts allows); MCP, its tool. Never the example input. The liveness checks
 * and the ownership checks (ownership.ts) ask the same way.
 */
export function probeTargetOf(listing: Omit<LivenessListing, 'previous'>): LiveTarget {
  return listing.type === 'mcp'
    ? { type: 'mcp', url: listing.resource, toolName: listing.toolName }
    : {
        type: 'http',
        url: listing.resource,
        method: listing.method,
        ...(listing.pathParams ? { pathParams: listing.pathParams } : {}),
      };
}
