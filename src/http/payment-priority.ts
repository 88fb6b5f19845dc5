/**
 * Payments before discovery (docs/OPERATIONS.md "Payments before discovery"), two priority
 * classes. Catalog work runs on its own threads, but every discovery request still costs the main
 * thread about a millisecond (HTTP, routing, validation, a page of up to 100 listings to send)
 * and its catalog thread a core of a small machine, where /verify and /settle run. So while
 * payments keep svc busy, discovery is given a bounded share of the time instead of what it asks
 * for: one discovery request at a time, each spending what it cost (the catalog reader threads'
 * CPU time for its own catalog requests, and a millisecond for the main thread) from a credit that
 * grows by `share` of the time that passes (`share` 0.05: a flood runs a twentieth of the time; a client
 * that rarely asks finds credit and goes on at once). Each request pays for itself in full, but
 * what several leave beyond half a wait's share (a burst let in together while payments paused)
 * is forgiven: a request arriving after them is not refused for their past. The requests that
 * wait are taken in turn by client address (src/http/client-address.ts), so an honest client
 * beside a flood waits for one request of each flooding address, not for the flood; a flood of
 * payments (rejected ones too) leaves discovery this share, never nothing.
 *
 * "Busy" is a payment request seen within `recentPaymentMs` and, over the last sample (every `sampleMs`), either the main
 * thread's event-loop utilization or the machine's CPU use above `busyAbove`, or payment requests arriving at
 * `busyPaymentRate` per second or more: svc is then a payment service at work however idle a sample of the CPU looked (a
 * fast /verify leaves the cores below 80 % while a discovery flood still takes a third of its rate; docs/BENCHMARKS.md
 * "Payments first"). A trickle of payments (settles waiting for their ledger included) holds nothing by itself. Without payments discovery is
 * never held here (its own overload is the catalog pool's queue and deadline, src/catalog/threads/pool.ts).
 * A request that waited `maxWaitMs` is refused with 503 `svc_catalog_busy`, as is one beyond
 * `maxWaiting` waiting at once.
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { limitKeyOf } from './client-address.ts';
import { HttpError } from './errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from './middleware.ts';

export interface PaymentPriorityOptions {
  /** Utilization (0–1) of the main thread or of the machine's CPUs above which svc is busy. Default 0.8 (docs/BENCHMARKS.md "Payments first"). */
  busyAbove?: number;
  /** The share (0–1) of time discovery runs while payments keep the thread busy. Default 0.05 (docs/BENCHMARKS.md "Payments first"). */
  share?: number;
  /** Discovery time (ms) a client that rarely asks may spend at once while busy. Default 100 ms. */
  burstMs?: number;
  /** A payment request seen within this makes a busy thread a payment thread. Default 250 ms. */
  recentPaymentMs?: number;
  /** Payment requests per second (over a sample) that make svc busy whatever its utilization. Default 40. */
  busyPaymentRate?: number;
  /** Sampling period. Default 50 ms. */
  sampleMs?: number;
  /** A discovery request waits at most this long. Default 1000 ms. */
  maxWaitMs?: number;
  /** Discovery requests waiting at once beyond this are refused at once. Default 256. */
  maxWaiting?: number;
  /**
   * Runs a discovery request's work, adding what it costs (ms) to `tally`; the request is charged
   * that besides `perRequestMs`. svc's counts the catalog reader threads' CPU time of the request's
   * own catalog requests (src/catalog/threads/pool.ts tallyReaderCpu), where a search's cost grows
   * with its query; its wall time would count the time it waited for a main thread busy with
   * payments, and a total of all readers the searches beside it, neither its cost. Default: none,
   * each request is charged its wall time.
   */
  tally?: <T>(tally: { ms: number }, work: () => T) => T;
  /** Charged to each discovery request on top: its work on the main thread. Default 1 ms (docs/OPERATIONS.md "Payments before discovery"). */
  perRequestMs?: number;
  /** The busier of the main thread's and the machine's utilization since the previous call (tests inject one). */
  utilization?: () => number;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
}

/** The CPUs' busy share (0–1, all cores together) since the previous call, from os.cpus(). */
function machineSampler(): () => number {
  const times = () =>
    cpus().reduce((sum, { times: t }) => ({ idle: sum.idle + t.idle, total: sum.total + t.idle + t.user + t.nice + t.sys + t.irq }), {
      idle: 0,
      total: 0,
    });
  let last = times();
  return () => {
    const current = times();
    const total = current.total - last.total;
    const busy = total > 0 ? 1 - (current.idle - last.idle) / total : 0;
    last = current;
    return busy;
  };
}

/**
 * The busier of the main thread's event loop and the machine's CPUs since the previous call: on a
 * small machine the catalog's threads, the clients and other processes take the cores /verify
 * needs while the main thread itself still has room.
 */
function busySampler(): () => number {
  let last = performance.eventLoopUtilization();
  const machine = machineSampler();
  return () => {
    const current = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(current, last);
    last = current;
    return Math.max(utilization, machine());
  };
}

/**
 * Ends an admitted discovery request; `costMs` (besides `perRequestMs`) counts towards the pause
 * after it, the wall time since it was admitted when not given.
 */
export type Release = (costMs?: number) => void;

interface Waiter {
  admit: (release: Release | null) => void;
}

export class PaymentPriority {
  private readonly busyAbove: number;
  private readonly share: number;
  private readonly recentPaymentMs: number;
  private readonly maxWaitMs: number;
  private readonly maxWaiting: number;
  private readonly utilization: () => number;
  private readonly now: () => number;
  /** None when the threshold is 1 or more: utilization never exceeds 1, so nothing would wait. */
  private readonly timer: NodeJS.Timeout | undefined;
  private lastPaymentAt = Number.NEGATIVE_INFINITY;
  private lastUtilization = 0;
  /** Payment requests a sample must see to make svc busy (busyPaymentRate over the sample period). */
  private readonly busyPayments: number;
  /** Payment requests seen since the last sample, and over the last sample. */
  private paymentsSeen = 0;
  private lastPaymentsSeen = 0;
  /** Waiting requests by client, in arrival order; the clients in turn order. */
  private readonly waiting = new Map<string, Waiter[]>();
  private waitingCount = 0;
  /** Discovery requests admitted and not yet released. */
  private running = 0;
  /**
   * Discovery's time credit in ms: it grows by `share` of the time that passes, up to `burstMs`,
   * and each request run while busy spends its cost. While busy a request starts only while the
   * credit is not negative, so a sparse client (an honest one) goes on at once and a flood runs
   * `share` of the time.
   */
  private credit: number;
  private creditAt: number;
  private readonly burstMs: number;
  /** The deepest several requests' charges take the credit: `share` of half a request's wait. */
  private readonly debtMs: number;
  private readonly tally: PaymentPriorityOptions['tally'];
  private readonly perRequestMs: number;
  private wake: NodeJS.Timeout | undefined;

  constructor(options: PaymentPriorityOptions = {}) {
    this.busyAbove = options.busyAbove ?? 0.8;
    this.share = Math.min(1, Math.max(0.01, options.share ?? 0.05));
    this.recentPaymentMs = options.recentPaymentMs ?? 250;
    this.busyPayments = Math.max(1, ((options.busyPaymentRate ?? 40) * (options.sampleMs ?? 50)) / 1000);
    this.maxWaitMs = options.maxWaitMs ?? 1000;
    this.maxWaiting = options.maxWaiting ?? 256;
    this.utilization = options.utilization ?? busySampler();
    this.now = options.now ?? (() => performance.now());
    this.burstMs = options.burstMs ?? 100;
    this.perRequestMs = options.perRequestMs ?? 1;
    this.debtMs = (this.share * this.maxWaitMs) / 2;
    this.tally = options.tally;
    this.credit = this.burstMs;
    this.creditAt = this.now();
    this.timer = this.busyAbove < 1 ? setInterval(() => this.sample(), options.sampleMs ?? 50).unref() : undefined;
  }

  /** Whether discovery is held to its share now (as of the last sample). */
  get busy(): boolean {
    return (
      this.timer !== undefined &&
      this.now() - this.lastPaymentAt < this.recentPaymentMs &&
      (this.lastUtilization > this.busyAbove || this.lastPaymentsSeen >= this.busyPayments)
    );
  }

  private sample(): void {
    this.lastUtilization = this.utilization();
    this.lastPaymentsSeen = this.paymentsSeen;
    this.paymentsSeen = 0;
    this.pump();
  }

  /** Adds the credit earned since the last call; the credit now. */
  private refill(): number {
    const now = this.now();
    this.credit = Math.min(this.burstMs, this.credit + (now - this.creditAt) * this.share);
    this.creditAt = now;
    return this.credit;
  }

  /** Admits waiting requests while there is room: all when not busy, else one at a time while the credit allows. */
  private pump(): void {
    while (this.waitingCount > 0) {
      if (this.busy) {
        if (this.running > 0) return;
        const wait = -this.refill() / this.share;
        if (wait > 0) {
          if (!this.wake) this.wake = setTimeout(() => ((this.wake = undefined), this.pump()), Math.ceil(wait) + 1);
          return;
        }
      }
      this.takeNext().admit(this.started());
    }
  }

  /** The first waiter of the client whose turn it is; that client goes to the back of the turn order. */
  private takeNext(): Waiter {
    const [client, queue] = this.waiting.entries().next().value as [string, Waiter[]];
    const waiter = queue.shift()!;
    this.waiting.delete(client);
    if (queue.length > 0) this.waiting.set(client, queue);
    this.waitingCount--;
    return waiter;
  }

  private started(): Release {
    this.running++;
    const at = this.now();
    let released = false;
    return (costMs = this.now() - at) => {
      if (released) return;
      released = true;
      this.running--;
      if (this.busy) {
        const charge = Math.max(0, costMs) + this.perRequestMs;
        // Paid in full down to the deeper of its own charge and `debtMs`: a costly request still
        // pays for itself, a burst let in together while payments paused leaves no more than that.
        const floor = Math.min(this.refill(), -Math.max(this.debtMs, charge));
        this.credit = Math.max(floor, this.credit - charge);
      }
      this.pump();
    };
  }

  /** Discovery requests admitted and not yet released, and waiting for their turn, now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waitingCount };
  }

  /**
   * Resolves to the request's release when it may go on, null when it waited `maxWaitMs` in vain
   * (or too many wait). `client` is the key its turn is kept under.
   */
  admit(client = ''): Promise<Release | null> {
    const busy = this.busy;
    if (this.waitingCount === 0 && (!busy || (this.running === 0 && this.refill() >= 0))) return Promise.resolve(this.started());
    if (this.waitingCount >= this.maxWaiting) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        admit: (release) => {
          clearTimeout(deadline);
          resolve(release);
        },
      };
      const deadline = setTimeout(() => {
        const queue = this.waiting.get(client);
        const at = queue?.indexOf(waiter) ?? -1;
        if (at < 0) return;
        queue!.splice(at, 1);
        if (queue!.length === 0) this.waiting.delete(client);
        this.waitingCount--;
        resolve(null);
      }, this.maxWaitMs);
      const queue = this.waiting.get(client);
      if (queue) queue.push(waiter);
      else this.waiting.set(client, [waiter]);
      this.waitingCount++;
      this.pump();
    });
  }

  /** Marks the payment routes (/verify, /settle). */
  payments(): SvcMiddleware {
    return async (ctx: SvcContext, next: SvcNext) => {
      this.lastPaymentAt = this.now();
      this.paymentsSeen++;
      await next();
    };
  }

  /** Holds the discovery routes to their share while payments keep the main thread busy. */
  discovery(): SvcMiddleware {
    return async (ctx: SvcContext, next: SvcNext) => {
      const release = await this.admit(limitKeyOf(ctx.state.client));
      if (!release)
        throw new HttpError(
          503,
          'svc_catalog_busy',
          `Payments are using this service's capacity; discovery waits at most ${this.maxWaitMs} ms for its turn (${this.maxWaiting} requests at most). Retry shortly.`,
        );
      // Its client went away while it waited: no answer to make, and no 'close' to release it.
      if (ctx.res.closed) return release(0);
      // It runs until its answer is sent: the catalog's work for it is done by then.
      const cost = { ms: 0 };
      ctx.res.once('close', () => release(this.tally ? cost.ms : undefined));
      await (this.tally ? this.tally(cost, next) : next());
    };
  }

  close(): void {
    clearInterval(this.timer);
    clearTimeout(this.wake);
    this.wake = undefined;
    while (this.waitingCount > 0) this.takeNext().admit(() => undefined);
  }
}
