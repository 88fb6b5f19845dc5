/**
 * Runs the liveness checker (liveness.ts) in svc: one pass every `passMs` (spaced out up to
 * MAX_IDLE_PASS_MS while nothing is due), one pass at a time, on a
 * timer that never keeps the process alive. Off (perMinute 0), nothing is scheduled at all. Its
 * database work runs on the catalog's reader threads, at their lowered priority, as its own client
 * of their fair queue; its probes are a few small outbound requests a pass. `stop()` (service close
 * and drain) clears the timer and waits for the pass in flight, bounded by the probe deadline.
 */
import type { CatalogLiveness } from '../catalog/types.ts';
import { guardedFetch } from './guarded-fetch.ts';
import type { HostSlots } from './host-slots.ts';
import { DEFAULT_PASS_MS, LivenessChecker, type LivenessOptions } from './liveness.ts';
import { allowListFromEnv } from './private-addresses.ts';
import type { ProbeConfig } from './probe-config.ts';

/**
 * While passes find nothing due, each waits twice as long as the last, up to this. A pass reads
 * the catalog on a reader thread, which starts on demand and stops after minutes idle
 * (docs/CATALOG.md "Threads"): a pass every 10 s would keep one running in a service nobody uses.
 * A listing is due LIVENESS_INTERVAL_HOURS (at least 1 h) after its last check or settlement, so
 * an idle service starts a due check at most this late; a pass that finds work returns to passMs.
 */
export const MAX_IDLE_PASS_MS = 30 * 60_000;

export interface LivenessSchedulerLog {
  warn(obj: object, msg: string): void;
}

export class LivenessScheduler {
  readonly checker: LivenessChecker;
  private readonly passMs: number;
  private readonly timeoutMs: number;
  private readonly log: LivenessSchedulerLog;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The last pass asked for; passes run one after another. */
  private tail: Promise<number> = Promise.resolve(0);
  private pending = 0;
  private stopped = false;
  /** Passes in a row that found nothing due. */
  private idlePasses = 0;

  constructor(options: LivenessOptions, log: LivenessSchedulerLog) {
    this.checker = new LivenessChecker(options);
    this.passMs = options.passMs ?? DEFAULT_PASS_MS;
    this.timeoutMs = options.timeoutMs;
    this.log = log;
  }

  /** Starts the passes; the first runs one `passMs` from now. */
  start(): this {
    this.schedule();
    return this;
  }

  private schedule(): void {
    if (this.stopped) return;
    const delayMs = Math.min(MAX_IDLE_PASS_MS, this.passMs * 2 ** Math.min(this.idlePasses, 30));
    this.timer = setTimeout(() => {
      // A pass still running (or queued) counts as this one.
      if (this.pending > 0) return this.schedule();
      void this.runOnce().finally(() => {
        this.idlePasses = this.checker.lastClaimed > 0 ? 0 : this.idlePasses + 1;
        this.schedule();
      });
    }, delayMs);
    this.timer.unref();
  }

  /** A pass after the one running, if any (so it reads the clock when it starts); a failure is logged, never thrown. */
  runOnce(): Promise<number> {
    if (this.stopped) return Promise.resolve(0);
    this.pending++;
    const pass = this.tail.then(() =>
      this.stopped
        ? 0
        : this.checker.runOnce().catch((err: unknown) => {
            this.log.warn({ err: { name: (err as Error)?.name, message: String((err as Error)?.message ?? err) } }, 'liveness pass failed');
            return 0;
          }),
    );
    this.tail = pass.finally(() => this.pending--);
    return pass;
  }

  /** No further pass; waits for the one in flight (at most a probe's deadline and a second). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.pending === 0) return;
    const running = this.tail;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([running, new Promise((resolve) => (timer = setTimeout(resolve, this.timeoutMs + 1_000)))]);
    clearTimeout(timer);
  }
}

/**
 * svc's liveness checks of listed resources (docs/CATALOG.md "Liveness"), through the same address
 * guard as POST /discovery/validate and paid_call (ALLOW_PRIVATE_TARGETS), started; null (nothing
 * scheduled) when off (LIVENESS_CHECKS_PER_MINUTE 0) or when the catalog keeps no liveness records.
 */
export function startLivenessChecks(
  store: CatalogLiveness | undefined,
  probe: Pick<ProbeConfig, 'liveness' | 'timeoutMs'>,
  log: LivenessSchedulerLog,
  { clock = () => new Date(), passMs, hostSlots }: { clock?: (() => Date) | undefined; passMs?: number | undefined; hostSlots: HostSlots },
): LivenessScheduler | null {
  const { perMinute, intervalMs, concurrency } = probe.liveness;
  if (perMinute <= 0 || !store) return null;
  const fetchImpl = guardedFetch(allowListFromEnv());
  const options = { store, fetchImpl, clock, intervalMs, concurrency, perMinute, hostSlots, timeoutMs: probe.timeoutMs };
  return new LivenessScheduler({ ...options, ...(passMs !== undefined ? { passMs } : {}) }, log).start();
}
