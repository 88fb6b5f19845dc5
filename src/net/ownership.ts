/**
 * Ownership from the origin (docs/CATALOG.md "Ownership and refresh"): a settlement that would
 * create a listing, or give it to another payTo, is a claim (src/catalog/ownership.ts) until the
 * resource's own server, asked as a buyer would ask it — the unpaid probe of POST
 * /discovery/validate and the liveness checks (live-402.ts: the listing's method, example input
 * and path parameters, or an unpaid MCP tools/call; through the address guard, one deadline, at
 * most 256 KiB read) — answers a 402 whose accepts name the settled payTo, and no longer name the
 * listing's current owner. This module asks and judges; the catalog keeps the claims and writes
 * the listing (on its writer thread), off the payment path: the settle answered `processing`.
 *
 * A pass runs when a settlement made a claim (`wake`), and on a timer for claims another instance
 * or a process that stopped left (every `passMs` while it finds work, twice as long each time it
 * finds none, up to MAX_IDLE_PASS_MS).
 */
import pLimit from 'p-limit';
import type { OwnershipClaim, OwnershipVerdict } from '../catalog/ownership.ts';
import type { CatalogOwnership } from '../catalog/types.ts';
import { guardedFetch } from './guarded-fetch.ts';
import { probeLive402, unpaidHttpRequest, type LiveProbe } from './live-402.ts';
import { allowListFromEnv } from './private-addresses.ts';
import { probeTargetOf } from './liveness.ts';
import { PROBE_MAX_BYTES, PROBE_MAX_REDIRECTS } from './probe-config.ts';

/** Claims one pass takes at most, and probes at once. */
export const CLAIMS_PER_PASS = 16;
export const CHECKS_AT_ONCE = 4;
/** Passes while there is work; spaced out up to MAX_IDLE_PASS_MS while there is none. */
export const DEFAULT_OWNERSHIP_PASS_MS = 10_000;
export const MAX_IDLE_PASS_MS = 10 * 60_000;

const SHOWN_PAYTOS = 3;
const listed = (payTos: string[]) =>
  payTos.length <= SHOWN_PAYTOS
    ? payTos.join(', ')
    : `${payTos.slice(0, SHOWN_PAYTOS).join(', ')} and ${payTos.length - SHOWN_PAYTOS} more`;

/** What svc asked of the claim's origin, for the reasons. */
function askedOf(claim: OwnershipClaim): string {
  if (claim.type === 'mcp') return `tools/call ${claim.toolName} at ${claim.resource}`;
  const target = probeTargetOf(claim);
  if (target.type !== 'http') return `${claim.method} ${claim.resource}`;
  try {
    // The URL as sent: path parameters filled, the example input as the query (or a JSON body).
    return `${claim.method} ${unpaidHttpRequest(target).url}`;
  } catch {
    return `${claim.method} ${claim.resource}`;
  }
}

/** The verdict on a claim from its origin's answer; the reason says what the origin answered. */
export function ownershipVerdict(claim: OwnershipClaim, probe: LiveProbe): OwnershipVerdict {
  const asked = askedOf(claim);
  const rule = `a listing belongs to the payTo its resource's own server names (docs/CATALOG.md "Ownership and refresh")`;
  switch (probe.kind) {
    case 'payment': {
      const payTos = [...new Set(probe.required.accepts.map((a) => a.payTo))];
      if (!payTos.includes(claim.payTo))
        return {
          passed: false,
          code: 'bazaar_origin_names_other_payee',
          reason: `svc asked ${asked} as a buyer would (unpaid): it answered a 402 whose accepts name payTo ${listed(payTos) || '(none)'}, not ${claim.payTo}; ${rule}, so the payment was settled but nothing was listed for ${claim.payTo}.`,
        };
      const owner = claim.currentOwner;
      if (owner !== undefined && owner !== claim.payTo && payTos.includes(owner))
        return {
          passed: false,
          code: 'bazaar_listing_owned_by_other_payee',
          reason: `svc asked ${asked} as a buyer would (unpaid): its 402 names both the listing's owner ${owner} and ${claim.payTo}; the listing changes owner only when its resource's server no longer names the owner, so it stays with ${owner} (docs/CATALOG.md "Ownership and refresh").`,
        };
      return { passed: true };
    }
    case 'free':
      return {
        passed: false,
        code: 'bazaar_origin_not_payable',
        reason: `svc asked ${asked} as a buyer would (unpaid): it answered without asking for payment, so it names no payTo; ${rule}. Nothing was listed.`,
      };
    case 'error':
      return {
        passed: false,
        code: 'bazaar_origin_not_payable',
        reason: `svc asked ${asked} as a buyer would (unpaid): ${probe.reason} It names no payTo svc can read; ${rule}. Nothing was listed.`,
      };
    default:
      return {
        passed: false,
        code: 'bazaar_origin_unreachable',
        reason: `svc asked ${asked} as a buyer would (unpaid): ${probe.reason}. ${rule.charAt(0).toUpperCase()}${rule.slice(1)}, so it must answer svc too. Nothing was listed; the next settlement after the retry time asks again.`,
      };
  }
}

export interface OwnershipCheckerOptions {
  store: CatalogOwnership;
  /** The address-guarded fetch (src/net/guarded-fetch.ts). */
  fetchImpl: typeof fetch;
  clock: () => Date;
  timeoutMs: number;
  /** Time between passes while there is work (default DEFAULT_OWNERSHIP_PASS_MS). */
  passMs?: number;
}

export interface OwnershipLog {
  warn(obj: object, msg: string): void;
}

/** Takes due claims, asks their origins and resolves them; passes run one at a time. */
export class OwnershipChecker {
  private readonly options: OwnershipCheckerOptions;
  private readonly log: OwnershipLog;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<number> | undefined;
  /** A wake arrived while a pass ran: run another after it. */
  private again = false;
  private stopped = false;
  private idlePasses = 0;

  constructor(options: OwnershipCheckerOptions, log: OwnershipLog) {
    this.options = options;
    this.log = log;
  }

  /** Starts the timer's passes. */
  start(): this {
    this.schedule();
    return this;
  }

  /** A settlement made a claim: a pass now (or right after the one running). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.runOnce();
  }

  /** One pass (after the one running, if any); resolves to the claims it judged. A failure is logged, never thrown. */
  async runOnce(): Promise<number> {
    while (this.running) await this.running.catch(() => 0);
    if (this.stopped) return 0;
    this.running = this.pass().catch((err: unknown) => {
      this.log.warn(
        { err: { name: (err as Error)?.name, message: String((err as Error)?.message ?? err) } },
        'ownership check pass failed',
      );
      return 0;
    });
    try {
      const judged = await this.running;
      this.idlePasses = judged > 0 ? 0 : this.idlePasses + 1;
      return judged;
    } finally {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.runOnce();
      }
    }
  }

  private async pass(): Promise<number> {
    const { store, fetchImpl, timeoutMs, clock } = this.options;
    let judged = 0;
    for (;;) {
      const claimedAt = clock().getTime();
      const due = await store.claimDue(claimedAt, CLAIMS_PER_PASS);
      const limit = pLimit(CHECKS_AT_ONCE);
      await Promise.all(
        due.map((claim) =>
          limit(async () => {
            const probe = await probeLive402(probeTargetOf(claim), {
              fetchImpl,
              timeoutMs,
              maxBytes: PROBE_MAX_BYTES,
              maxRedirects: PROBE_MAX_REDIRECTS,
            });
            await store.resolve(claim.key, claimedAt, ownershipVerdict(claim, probe));
          }),
        ),
      );
      judged += due.length;
      if (due.length < CLAIMS_PER_PASS || this.stopped) return judged;
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    const passMs = this.options.passMs ?? DEFAULT_OWNERSHIP_PASS_MS;
    const delayMs = Math.min(MAX_IDLE_PASS_MS, passMs * 2 ** Math.min(this.idlePasses, 30));
    this.timer = setTimeout(() => void this.runOnce().finally(() => this.schedule()), delayMs);
    this.timer.unref();
  }

  /** No further pass; waits for the one in flight (at most a probe's deadline and a second). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.running) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.running, new Promise((resolve) => (timer = setTimeout(resolve, this.options.timeoutMs + 1_000)))]);
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
  timeoutMs: number,
  log: OwnershipLog,
  clock: () => Date = () => new Date(),
): OwnershipChecker | null {
  if (!store) return null;
  return new OwnershipChecker({ store, fetchImpl: guardedFetch(allowListFromEnv()), clock, timeoutMs }, log).start();
}
