/**
 * Ownership from the origin (docs/CATALOG.md "Ownership and refresh"): a settlement that would
 * create a listing, or give it to another payTo, is a claim (src/catalog/ownership.ts) until the
 * resource's own server, asked with svc's check request — the one POST /discovery/validate and
 * the liveness checks send (check-request.ts checkHttpRequest: the listing's URL with its path
 * parameters, a safe method, no body, no query, no redirect followed; or an unpaid MCP
 * tools/call naming the tool, with svc's neutral arguments; through the address guard, one
 * deadline, at most 256 KiB read) — answers a 402 whose accepts name the settled payTo, and no
 * longer name the listing's current owner. This module asks and judges; the catalog keeps the
 * claims and writes the listing (on its writer thread), off the payment path: the settle answered `processing`.
 *
 * Claims are taken when a settlement made one (`wake`), when a check finishes, and on a timer for
 * claims another instance or a process that stopped left, or that waited for their host's slot
 * (every `passMs` while it finds work, twice as long each time it finds none, up to MAX_IDLE_PASS_MS).
 */
import type { OwnershipClaim, OwnershipVerdict } from '../catalog/ownership.ts';
import type { CatalogOwnership } from '../catalog/types.ts';
import { guardedFetch } from './guarded-fetch.ts';
import type { HostSlots } from './host-slots.ts';
import { checkHttpRequest } from './check-request.ts';
import { probeLive402, type LiveProbe } from './live-402.ts';
import { allowListFromEnv } from './private-addresses.ts';
import { probeTargetOf } from './liveness.ts';
import { PROBE_MAX_BYTES, PROBE_MAX_REDIRECTS } from './probe-config.ts';

/** Claims checked at once (a hanging origin holds one for a probe deadline; CLAIMS_PER_PAYTO_AT_ONCE of them at most per payTo). */
export const CHECKS_AT_ONCE = 8;
/**
 * Passes while there is work; spaced out up to MAX_IDLE_PASS_MS while there is none: a claim
 * postponed to its host's next slot (PROBE_HOST_INTERVAL_SECONDS, 60 by default) is taken at most
 * this long after it.
 */
export const DEFAULT_OWNERSHIP_PASS_MS = 10_000;
export const MAX_IDLE_PASS_MS = 60_000;

const SHOWN_PAYTOS = 3;
const listed = (payTos: string[]) =>
  payTos.length <= SHOWN_PAYTOS
    ? payTos.join(', ')
    : `${payTos.slice(0, SHOWN_PAYTOS).join(', ')} and ${payTos.length - SHOWN_PAYTOS} more`;

/** What svc asks of the claim's origin (before it asks: the method depends on what the route answered before), for the reasons. */
function askedOf(claim: OwnershipClaim): string {
  if (claim.type === 'mcp') return `tools/call ${claim.toolName} with svc's neutral arguments at ${claim.resource}`;
  const target = probeTargetOf(claim);
  if (target.type !== 'http') return `${claim.method} ${claim.resource}`;
  try {
    // The request as sent (docs/SECURITY.md): path parameters filled, no body, no example query.
    const { method, url } = checkHttpRequest(target);
    return `${method} ${url}`;
  } catch {
    return `${claim.method} ${claim.resource}`;
  }
}

/** The verdict on a claim from its origin's answer; the reason says what the origin answered. */
export function ownershipVerdict(claim: OwnershipClaim, probe: LiveProbe, asked = askedOf(claim)): OwnershipVerdict {
  const rule = `a listing belongs to the payTo its resource's own server names (docs/CATALOG.md "Ownership and refresh")`;
  switch (probe.kind) {
    case 'payment': {
      const payTos = [...new Set(probe.required.accepts.map((a) => a.payTo))];
      if (!payTos.includes(claim.payTo))
        return {
          passed: false,
          code: 'bazaar_origin_names_other_payee',
          reason: `svc asked ${asked} (unpaid, without a body): it answered a 402 whose accepts name payTo ${listed(payTos) || '(none)'}, not ${claim.payTo}; ${rule}, so the payment was settled but nothing was listed for ${claim.payTo}.`,
        };
      const owner = claim.currentOwner;
      if (owner !== undefined && owner !== claim.payTo && payTos.includes(owner))
        return {
          passed: false,
          code: 'bazaar_listing_owned_by_other_payee',
          reason: `svc asked ${asked} (unpaid, without a body): its 402 names both the listing's owner ${owner} and ${claim.payTo}; the listing changes owner only when its resource's server no longer names the owner, so it stays with ${owner} (docs/CATALOG.md "Ownership and refresh").`,
        };
      return { passed: true };
    }
    case 'deferred':
      return { passed: false, deferred: true, reason: probe.reason };
    case 'refused':
      return {
        passed: false,
        code: probe.code,
        reason: `svc did not ask ${claim.resource}: ${probe.reason} Nothing was listed (docs/CATALOG.md "Templated listings").`,
      };
    case 'free':
      return {
        passed: false,
        code: 'bazaar_origin_not_payable',
        reason: `svc asked ${asked} (unpaid, without a body): it answered without asking for payment, so it names no payTo; ${rule}. Nothing was listed.`,
      };
    case 'error':
      return {
        passed: false,
        code: 'bazaar_origin_not_payable',
        reason: `svc asked ${asked} (unpaid, without a body): ${probe.reason} It names no payTo svc can read; ${rule}. Nothing was listed.`,
      };
    default:
      return {
        passed: false,
        code: 'bazaar_origin_unreachable',
        reason: `svc asked ${asked} (unpaid, without a body): ${probe.reason}. ${rule.charAt(0).toUpperCase()}${rule.slice(1)}, so it must answer svc too. Nothing was listed; the next settlement after the retry time asks again.`,
      };
  }
}

export interface OwnershipCheckerOptions {
  store: CatalogOwnership;
  /** The address-guarded fetch (src/net/guarded-fetch.ts). */
  fetchImpl: typeof fetch;
  clock: () => Date;
  timeoutMs: number;
  /** One host is asked at most once in this time, by every check together (PROBE_HOST_INTERVAL_SECONDS). */
  hostIntervalMs: number;
  /** The hosts' slots (host-slots.ts): the store's take reserves a claim's, a send moves it to the send's time. */
  hostSlots?: HostSlots;
  /** Time between passes while there is work (default DEFAULT_OWNERSHIP_PASS_MS). */
  passMs?: number;
}

export interface OwnershipLog {
  warn(obj: object, msg: string): void;
}

const logged = (log: OwnershipLog, msg: string) => (err: unknown) =>
  log.warn({ err: { name: (err as Error)?.name, message: String((err as Error)?.message ?? err) } }, msg);

/**
 * Checks claims as slots free up (docs/CATALOG.md "Ownership and refresh"): at most CHECKS_AT_ONCE
 * at once, at most CLAIMS_PER_PAYTO_AT_ONCE of one payTo, each payTo's claims in turn and one
 * request per host per `hostIntervalMs` (the store's take, src/catalog/claims.ts claimChecks). A
 * slot that frees takes the next due claim at once, so a payTo whose origins hang holds its share
 * of slots for one probe deadline each, never the others'.
 */
export class OwnershipChecker {
  private readonly options: OwnershipCheckerOptions;
  private readonly log: OwnershipLog;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private dueTimer: ReturnType<typeof setTimeout> | undefined;
  private filling: Promise<number> | undefined;
  /** A wake arrived while a take ran: take again after it. */
  private again = false;
  private stopped = false;
  private idlePasses = 0;
  private readonly inFlight = new Map<string, number>();
  private readonly checks = new Set<Promise<void>>();

  constructor(options: OwnershipCheckerOptions, log: OwnershipLog) {
    this.options = options;
    this.log = log;
  }

  /** Starts the timer's passes. */
  start(): this {
    this.schedule();
    return this;
  }

  /** A settlement made a claim: free slots take due claims now. */
  wake(): void {
    if (!this.stopped) void this.fill();
  }

  /** Claims being checked now. */
  get active(): number {
    return this.checks.size;
  }

  /** Takes due claims into the free slots (after the take running, if any); resolves to the claims it took. Never throws. */
  fill(): Promise<number> {
    if (this.filling) {
      this.again = true;
      return this.filling;
    }
    this.filling = this.take()
      .catch((err: unknown) => (logged(this.log, 'ownership check pass failed')(err), 0))
      .finally(() => (this.filling = undefined));
    return this.filling;
  }

  private async take(): Promise<number> {
    const { store, clock, hostIntervalMs } = this.options;
    let took = 0;
    do {
      this.again = false;
      while (!this.stopped && this.checks.size < CHECKS_AT_ONCE) {
        const claimedAt = clock().getTime();
        const due = await store.claimDue(claimedAt, CHECKS_AT_ONCE - this.checks.size, {
          hostIntervalMs,
          inFlight: Object.fromEntries(this.inFlight),
        });
        if (due.length === 0) break;
        took += due.length;
        for (const claim of due) this.check(claim, claimedAt);
      }
    } while (this.again && !this.stopped);
    if (this.checks.size < CHECKS_AT_ONCE) await this.wakeAtNextDue();
    return took;
  }

  /** A take when the earliest pending claim falls due (one postponed to its host's slot, a retry), if before the next pass. */
  private async wakeAtNextDue(): Promise<void> {
    const next = await this.options.store.nextDue?.();
    clearTimeout(this.dueTimer);
    if (next === null || next === undefined || this.stopped) return;
    // A claim leased by another checker is due when its lease ends: that is the timer's work, not this wake's.
    const delayMs = Math.max(0, next - this.options.clock().getTime());
    if (delayMs > MAX_IDLE_PASS_MS) return;
    this.dueTimer = setTimeout(() => this.wake(), delayMs + 5);
    this.dueTimer.unref();
  }

  private check(claim: OwnershipClaim, claimedAt: number): void {
    const { store, fetchImpl, timeoutMs, hostSlots, clock } = this.options;
    this.inFlight.set(claim.payTo, (this.inFlight.get(claim.payTo) ?? 0) + 1);
    const asked = askedOf(claim);
    const check: Promise<void> = probeLive402(probeTargetOf(claim), {
      fetchImpl,
      timeoutMs,
      maxBytes: PROBE_MAX_BYTES,
      maxRedirects: PROBE_MAX_REDIRECTS,
      check: true,
      ...(hostSlots ? { onSend: () => hostSlots(claim.resource, clock().getTime(), true) } : {}),
    })
      .then((probe) => store.resolve(claim.key, claimedAt, ownershipVerdict(claim, probe, asked)))
      .then(() => undefined, logged(this.log, 'ownership check failed'))
      .finally(() => {
        const left = (this.inFlight.get(claim.payTo) ?? 1) - 1;
        if (left > 0) this.inFlight.set(claim.payTo, left);
        else this.inFlight.delete(claim.payTo);
        this.checks.delete(check);
        this.wake();
      });
    this.checks.add(check);
  }

  /** A take, then every check in flight finished (and the takes they woke); resolves to the claims taken. */
  async runOnce(): Promise<number> {
    let took = await this.fill();
    while (this.checks.size > 0 || this.filling) {
      await Promise.all([...this.checks]);
      if (this.filling) took += await this.filling;
    }
    return took;
  }

  private schedule(): void {
    if (this.stopped) return;
    const passMs = this.options.passMs ?? DEFAULT_OWNERSHIP_PASS_MS;
    const delayMs = Math.min(MAX_IDLE_PASS_MS, passMs * 2 ** Math.min(this.idlePasses, 30));
    this.timer = setTimeout(
      () =>
        void this.fill().then((took) => {
          this.idlePasses = took > 0 || this.checks.size > 0 ? 0 : this.idlePasses + 1;
          this.schedule();
        }),
      delayMs,
    );
    this.timer.unref();
  }

  /** No further take; waits for the checks in flight (at most a probe's deadline and a second). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.dueTimer);
    if (this.checks.size === 0 && !this.filling) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all([this.filling, ...this.checks]),
      new Promise((resolve) => (timer = setTimeout(resolve, this.options.timeoutMs + 1_000))),
    ]);
    clearTimeout(timer);
  }
}

/**
 * svc's checker (started; it is woken by the settlements that claim, src/service.ts): the resource's
 * own server asked through the address guard (ALLOW_PRIVATE_TARGETS), as POST /discovery/validate
 * asks it, on svc's clock. Null when the catalog holds no claims (first-settlement ownership).
 */
export function startOwnershipChecks(
  store: CatalogOwnership | undefined,
  probe: { timeoutMs: number; hostIntervalMs: number; hostSlots: HostSlots },
  log: OwnershipLog,
  clock: () => Date = () => new Date(),
): OwnershipChecker | null {
  if (!store) return null;
  return new OwnershipChecker({ store, fetchImpl: guardedFetch(allowListFromEnv()), clock, ...probe }, log).start();
}
