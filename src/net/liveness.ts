/**
 * Liveness of listed resources (docs/CATALOG.md "Liveness"): svc asks each listing again, with the
 * same unpaid probe as POST /discovery/validate (src/net/live-402.ts, through the address guard),
 * whether it still answers a live 402 that names the listing's payTo, and records
 * `{status, checkedAt}` with the time it started failing. A listing failing for longer than the
 * grace period is hidden from list and search until it passes again (or is paid again, which
 * resets its record).
 *
 * Bounded and conservative: at most `concurrency` probes at once, at most `perMinute` probes a
 * minute in all, and one origin probed at most once per `originIntervalMs` (a seller with many
 * listings is not hammered); the clock is injected. This module decides and paces; where the
 * records live is the `LivenessStore` port.
 */
import pLimit from 'p-limit';
import { probeLive402, type LiveProbe, type LiveTarget } from './live-402.ts';
import { PROBE_MAX_BYTES, PROBE_MAX_REDIRECTS } from './probe-config.ts';

export type LivenessStatus = 'live' | 'unreachable' | 'not_payable' | 'terms_changed';

/** What the checker needs of a listing: how a buyer calls it and who it pays. */
export interface LivenessListing {
  /** The listing's identity, opaque here (the store's key). */
  key: string;
  type: 'http' | 'mcp';
  resource: string;
  /** '' for http. */
  toolName: string;
  /** The declared HTTP method (GET when none). */
  method: string;
  payTo: string;
}

export interface LivenessRecord {
  status: LivenessStatus;
  /** RFC 3339 time of the check. */
  checkedAt: string;
  /** RFC 3339 time of the first failed check of the current run of failures; null while live. */
  failingSince: string | null;
}

/** The status a probe's answer gives a listing. */
export function livenessOf(listing: Pick<LivenessListing, 'payTo'>, probe: LiveProbe): LivenessStatus {
  switch (probe.kind) {
    case 'payment':
      return probe.required.accepts.some((a) => a.payTo === listing.payTo) ? 'live' : 'terms_changed';
    case 'free':
    case 'error':
      return 'not_payable';
    default:
      return 'unreachable';
  }
}

/** The record after a check with `status` at `now`: a run of failures keeps the time it began. */
export function nextRecord(previous: LivenessRecord | undefined, status: LivenessStatus, now: Date): LivenessRecord {
  const failing = status !== 'live';
  return {
    status,
    checkedAt: now.toISOString(),
    failingSince: failing ? (previous?.failingSince ?? now.toISOString()) : null,
  };
}

/** Whether a listing with this record is hidden from list and search at `now`. */
export function hiddenByLiveness(record: LivenessRecord | undefined, now: Date, graceMs: number): boolean {
  if (!record || record.failingSince === null) return false;
  return now.getTime() - Date.parse(record.failingSince) > graceMs;
}

/** Where liveness records live (the catalog's stores). */
export interface LivenessStore {
  /** Listings due for a check at `now` (never checked, or checked before `checkedBefore`), oldest first, at most `limit`. */
  due(checkedBefore: Date, limit: number): Promise<LivenessListing[]>;
  record(key: string): Promise<LivenessRecord | undefined>;
  write(key: string, record: LivenessRecord): Promise<void>;
}

export interface LivenessOptions {
  store: LivenessStore;
  /** The address-guarded fetch (src/net/guarded-fetch.ts). */
  fetchImpl: typeof fetch;
  clock: () => Date;
  /** A listing is checked again this long after its last check. */
  intervalMs: number;
  /** Probes at once. */
  concurrency: number;
  /** Probes a minute in all (0: the checker is off). */
  perMinute: number;
  /** One origin is probed at most once in this time. */
  originIntervalMs: number;
  timeoutMs: number;
}

export class LivenessChecker {
  private readonly options: LivenessOptions;
  private readonly lastProbeOfOrigin = new Map<string, number>();

  constructor(options: LivenessOptions) {
    this.options = options;
  }

  /**
   * One pass: the listings due now, at most a minute's worth of `perMinute`, each probed unless its
   * origin was probed within `originIntervalMs` (it stays due for a later pass). Returns the
   * listings probed.
   */
  async runOnce(): Promise<number> {
    const { store, clock, intervalMs, concurrency, perMinute, originIntervalMs } = this.options;
    if (perMinute <= 0) return 0;
    const now = clock();
    const due = await store.due(new Date(now.getTime() - intervalMs), perMinute);
    const chosen: LivenessListing[] = [];
    for (const listing of due) {
      const origin = originOf(listing.resource);
      const last = this.lastProbeOfOrigin.get(origin);
      if (last !== undefined && now.getTime() - last < originIntervalMs) continue;
      this.lastProbeOfOrigin.set(origin, now.getTime());
      chosen.push(listing);
    }
    for (const [origin, at] of this.lastProbeOfOrigin) if (now.getTime() - at >= originIntervalMs) this.lastProbeOfOrigin.delete(origin);
    const limit = pLimit(Math.max(1, concurrency));
    await Promise.all(chosen.map((listing) => limit(() => this.check(listing))));
    return chosen.length;
  }

  /** Probes one listing and writes its record; never throws for anything the target does. */
  async check(listing: LivenessListing): Promise<LivenessRecord> {
    const { store, fetchImpl, timeoutMs, clock } = this.options;
    const target: LiveTarget =
      listing.type === 'mcp'
        ? { type: 'mcp', url: listing.resource, toolName: listing.toolName }
        : { type: 'http', url: listing.resource, method: listing.method };
    const probe = await probeLive402(target, { fetchImpl, timeoutMs, maxBytes: PROBE_MAX_BYTES, maxRedirects: PROBE_MAX_REDIRECTS });
    const record = nextRecord(await store.record(listing.key), livenessOf(listing, probe), clock());
    await store.write(listing.key, record);
    return record;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
