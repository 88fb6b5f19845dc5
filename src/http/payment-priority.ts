/**
 * Payments before discovery on the thread that answers them (docs/OPERATIONS.md "Payments before
 * discovery"). Catalog work runs on its own threads, but every discovery request still costs the
 * main thread about a millisecond (HTTP, routing, validation, a page of up to 100 listings to
 * send), several times a /verify. So while payments keep the main thread busy, a discovery
 * request waits for it to have room, and is refused with 503 `svc_catalog_busy` when it has none
 * within `maxWaitMs`: a flood of searches slows discovery, not payments.
 *
 * "Busy" is the main thread's event-loop utilization over the last sample (every `sampleMs`) above
 * `busyAbove`, with a payment request seen within `recentPaymentMs`. Without payments discovery is
 * never held here (its own overload is the catalog pool's queue and deadline, src/catalog/threads/pool.ts).
 * A waiting request is let through at the first sample that is not busy; at most `maxWaiting` wait.
 */
import { performance } from 'node:perf_hooks';
import { HttpError } from './errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from './middleware.ts';

export interface PaymentPriorityOptions {
  /** Utilization (0–1) above which the main thread is busy. Default 0.8 (docs/BENCHMARKS.md: 0.9 left /verify at 0.71× under a search flood, 0.8 at 0.83×). */
  busyAbove?: number;
  /** A payment request seen within this makes a busy thread a payment thread. Default 250 ms. */
  recentPaymentMs?: number;
  /** Sampling period. Default 50 ms. */
  sampleMs?: number;
  /** A discovery request waits at most this long. Default 1000 ms. */
  maxWaitMs?: number;
  /** Discovery requests waiting at once beyond this are refused at once. Default 256. */
  maxWaiting?: number;
  /** The main thread's utilization since the previous call (tests inject one). */
  utilization?: () => number;
  now?: () => number;
}

/** performance.eventLoopUtilization since the previous call. */
function eventLoopSampler(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const current = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(current, last);
    last = current;
    return utilization;
  };
}

export class PaymentPriority {
  private readonly busyAbove: number;
  private readonly recentPaymentMs: number;
  private readonly maxWaitMs: number;
  private readonly maxWaiting: number;
  private readonly utilization: () => number;
  private readonly now: () => number;
  /** None when the threshold is 1 or more: utilization never exceeds 1, so nothing would wait. */
  private readonly timer: NodeJS.Timeout | undefined;
  private lastPaymentAt = Number.NEGATIVE_INFINITY;
  private lastUtilization = 0;
  private readonly waiting: Array<(admitted: boolean) => void> = [];

  constructor(options: PaymentPriorityOptions = {}) {
    this.busyAbove = options.busyAbove ?? 0.8;
    this.recentPaymentMs = options.recentPaymentMs ?? 250;
    this.maxWaitMs = options.maxWaitMs ?? 1000;
    this.maxWaiting = options.maxWaiting ?? 256;
    this.utilization = options.utilization ?? eventLoopSampler();
    this.now = options.now ?? Date.now;
    this.timer = this.busyAbove < 1 ? setInterval(() => this.sample(), options.sampleMs ?? 50).unref() : undefined;
  }

  /** Whether discovery should wait now (as of the last sample). */
  get busy(): boolean {
    return this.lastUtilization > this.busyAbove && this.now() - this.lastPaymentAt < this.recentPaymentMs;
  }

  private sample(): void {
    this.lastUtilization = this.utilization();
    if (this.busy) return;
    for (const admit of this.waiting.splice(0)) admit(true);
  }

  /** Resolves true when the request may go on, false when it waited `maxWaitMs` in vain (or too many wait). */
  admit(): Promise<boolean> {
    if (!this.busy) return Promise.resolve(true);
    if (this.waiting.length >= this.maxWaiting) return Promise.resolve(false);
    return new Promise((resolve) => {
      const give = (admitted: boolean) => {
        clearTimeout(deadline);
        resolve(admitted);
      };
      const deadline = setTimeout(() => {
        const at = this.waiting.indexOf(give);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      }, this.maxWaitMs);
      this.waiting.push(give);
    });
  }

  /** Marks the payment routes (/verify, /settle). */
  payments(): SvcMiddleware {
    return async (ctx: SvcContext, next: SvcNext) => {
      this.lastPaymentAt = this.now();
      await next();
    };
  }

  /** Holds the discovery routes while payments keep the main thread busy. */
  discovery(): SvcMiddleware {
    return async (ctx: SvcContext, next: SvcNext) => {
      if (!(await this.admit()))
        throw new HttpError(
          503,
          'svc_catalog_busy',
          `Payments are using this service's capacity; discovery waits at most ${this.maxWaitMs} ms for room (${this.maxWaiting} requests at most). Retry shortly.`,
        );
      await next();
    };
  }

  close(): void {
    clearInterval(this.timer);
    for (const admit of this.waiting.splice(0)) admit(true);
  }
}
