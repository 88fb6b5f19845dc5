/**
 * Runs seller-schema validation in a terminable worker thread with a hard time budget
 * (docs/CATALOG.md "Seller schemas", docs/SECURITY.md). A job still running when its budget is
 * over is stopped by terminating its worker (the only way to stop a synchronous Ajv run), which is
 * then replaced; a worker that dies on a job (its heap limit, a crash) is replaced the same way.
 * Jobs run one at a time; the queue is bounded, and a job waiting in it past its deadline is not
 * run.
 *
 * The budget is CPU time read from the thread itself, so a machine busy with other work does not
 * make an honest schema look expensive; a wall-clock bound keeps the answer prompt. Only a schema
 * seen to cost is judged `bazaar_schema_too_complex`; one svc could not judge (busy, starved) is
 * `not_judged`, tried again later, so an honest seller is not refused because svc was busy.
 */
import { Worker } from 'node:worker_threads';
import { workerModuleUrl } from '../../files.ts';
import { workerHeapsFromLimits } from '../../worker-heaps.ts';
import { RecentVerdicts, verdictKey } from './recent-verdicts.ts';
import type { ValidationAnswer, ValidationJob } from './schema-worker.ts';

export type SchemaVerdict =
  | { ok: true }
  | { ok: false; code: 'bazaar_schema_validation_failed' | 'bazaar_schema_too_complex'; reason: string }
  /** Not validated for reasons of svc's own (load, shutdown): no verdict on the schema. */
  | { ok: false; code: 'not_judged'; reason: string };

export interface SchemaValidatorOptions {
  /** CPU time of the validation thread allowed to one schema (compile + validate). Default 150 ms. */
  budgetMs?: number;
  /**
   * Wall-clock bound of a job, counted from the start of the caller's step (waiting included).
   * Default the budget + 50 ms (200 ms).
   */
  wallMs?: number;
  /**
   * CPU time a job stopped at the wall-clock bound must have used to be judged too complex: more
   * than an ordinary schema needs in all. Default 5 ms.
   */
  judgedCpuMs?: number;
  /**
   * Longest a job may wait for a ready worker (behind other jobs, or while a terminated worker is
   * replaced) before it is answered `not_judged` unrun. Default 100 ms.
   */
  maxWaitMs?: number;
  /** Jobs waiting beyond this are refused at once. Default 64. */
  maxQueued?: number;
  /** How long a verdict given at the wall-clock bound (the budget was not used up) is remembered. Default 1 min. */
  rememberBoundMs?: number;
  /** The threads' module. Default the schema worker (src/files.ts); tests give one that cannot start. */
  workerUrl?: URL;
  /**
   * Keep a warm standby beside the current thread (default true). Without one, a terminated thread
   * is replaced by a cold start and a thread is never retired (CatalogOptions.schemaStandby).
   */
  standby?: boolean;
}

/** The documented budget (CPU time): a hostile schema costs at most this, then it is soft-dropped. */
const SCHEMA_BUDGET_MS = 150;
/** Heap limit of a validation thread: going past it kills the thread, not svc. */
const SCHEMA_HEAP_MB = 48;

interface Pending {
  job: ValidationJob;
  /** performance.now() after which the job is dropped unrun. */
  deadline: number;
  /**
   * performance.now() when the job's wall-clock bound ends: counted from when the caller's step
   * began, so time spent before validation and waiting for a thread counts against it (the bound
   * covers the whole step). Undefined for a job that waited for the first thread (process
   * start): that job is judged by its CPU budget, bounded by the start-up wait (pump).
   */
  wallEnd: number | undefined;
  /** The job's key among recent verdicts (verdictKey). */
  key: string | undefined;
  resolve: (verdict: SchemaVerdict) => void;
}

/** CPU milliseconds the thread has used so far; undefined once it is gone. */
const threadCpuMs = (worker: Worker): Promise<number | undefined> =>
  worker.cpuUsage().then(
    (u) => (u.user + u.system) / 1000,
    () => undefined,
  );

/** Context of a validation: when the caller's step began, and whose schema it is. */
export interface ValidationContext {
  /** performance.now() on the calling thread when its step began; default now. */
  startedAt?: number;
  /** Who sent the schema (the payee): recent verdicts are remembered per scope. */
  scope?: string;
}

const tooComplex = (reason: string): SchemaVerdict => ({ ok: false, code: 'bazaar_schema_too_complex', reason });
const notJudged = (reason: string): SchemaVerdict => ({ ok: false, code: 'not_judged', reason });

interface Slot {
  worker: Worker;
  ready: boolean;
  jobs: number;
}

/**
 * A worker is retired after this many jobs, so whatever a long-lived thread accumulates outside
 * its V8 heap limit (allocator fragmentation) is returned with the thread.
 */
const RETIRE_AFTER_JOBS = 1_000;

export class SchemaValidator {
  private readonly budgetMs: number;
  private readonly wallMs: number;
  private readonly judgedCpuMs: number;
  private readonly maxWaitMs: number;
  private readonly maxQueued: number;
  private readonly workerUrl: URL;
  private readonly keepStandby: boolean;
  private current: Slot | null = null;
  /** A warm spare, started with the first worker: after a termination the next job starts at once. */
  private standby: Slot | null = null;
  private running: {
    pending: Pending;
    timer: NodeJS.Timeout;
    /** performance.now() when the job was sent, and its thread's CPU time then. */
    sentAt: number;
    cpuAtStart: Promise<number | undefined>;
  } | null = null;
  private readonly queue: Pending[] = [];
  /** Recent too-complex verdicts: key → verdict and when it lapses (insertion order = age). */
  private readonly recent: RecentVerdicts<SchemaVerdict>;
  private nextId = 1;
  private closed = false;
  private readyTimer: NodeJS.Timeout | null = null;
  /** Until the first worker is ready (process start), jobs may wait this long instead of maxWaitMs. */
  private started = false;
  /** performance.now() when the first worker became ready (undefined before). */
  firstReadyAt: number | undefined;
  private static readonly STARTUP_WAIT_MS = 5_000;
  /** Workers started so far; for tests. */
  workersStarted = 0;
  /**
   * Jobs sent to a thread so far; for tests. Unlike workersStarted it moves only when a schema
   * runs (a terminated thread's replacement is started later, when the standby is ready).
   */
  jobsRun = 0;

  constructor(options: SchemaValidatorOptions = {}) {
    this.budgetMs = options.budgetMs ?? SCHEMA_BUDGET_MS;
    this.wallMs = options.wallMs ?? this.budgetMs + 50;
    this.judgedCpuMs = options.judgedCpuMs ?? 5;
    this.maxWaitMs = options.maxWaitMs ?? 100;
    this.maxQueued = options.maxQueued ?? 64;
    this.recent = new RecentVerdicts(options.rememberBoundMs);
    this.workerUrl = options.workerUrl ?? workerModuleUrl('catalog/ingest/schema-worker');
    this.keepStandby = options.standby ?? true;
    // Warm from the start: the first seller must not wait for a thread to boot.
    this.current = this.spawn();
  }

  /**
   * `context.startedAt` (performance.now() on this thread) is when the caller's step began, so the
   * wall-clock bound also covers what the caller did before asking (the owner lookup).
   */
  validate(schema: Record<string, unknown> | boolean, info: unknown, context: ValidationContext = {}): Promise<SchemaVerdict> {
    if (this.closed) return Promise.resolve(notJudged('Schema validation is shut down.'));
    const key = verdictKey(context.scope ?? '', schema, info);
    const known = this.recent.get(key);
    if (known) return Promise.resolve(known);
    if (this.queue.length >= this.maxQueued) return Promise.resolve(notJudged('Too many schemas are waiting for validation.'));
    const now = performance.now();
    const wallEnd = this.started ? Math.min(context.startedAt ?? now, now) + this.wallMs : undefined;
    if (wallEnd !== undefined && wallEnd - now < 1) return Promise.resolve(this.timeSpent());
    return new Promise((resolve) => {
      // A job waits for a thread at most maxWaitMs, and never past its wall-clock bound.
      const wait = this.started ? this.maxWaitMs : SchemaValidator.STARTUP_WAIT_MS;
      const deadline = Math.min(now + wait, wallEnd ?? Infinity);
      this.queue.push({ job: { id: this.nextId++, schema, info }, deadline, wallEnd, key, resolve });
      this.pump();
    });
  }

  /** Terminates the workers; queued jobs are answered as not validated. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.resolve(notJudged('Schema validation is shut down.'));
    this.finishRunning(notJudged('Schema validation is shut down.'));
    const slots = [this.current, this.standby];
    this.current = this.standby = null;
    if (this.readyTimer) clearTimeout(this.readyTimer);
    await Promise.all(slots.map((slot) => (slot ? slot.worker.terminate() : Promise.resolve(0))));
  }

  private spawn(): Slot {
    workerHeapsFromLimits();
    const worker = new Worker(this.workerUrl, {
      resourceLimits: { maxOldGenerationSizeMb: SCHEMA_HEAP_MB, maxYoungGenerationSizeMb: 4, stackSizeMb: 4 },
    });
    const slot: Slot = { worker, ready: false, jobs: 0 };
    this.workersStarted++;
    worker.on('message', (message: 'ready' | ValidationAnswer) => {
      if (message === 'ready') {
        this.firstReadyAt ??= performance.now();
        slot.ready = this.started = true;
        this.keepThreads();
      } else if (slot === this.current && this.running?.pending.job.id === message.id) {
        this.finishRunning(
          message.ok
            ? { ok: true }
            : {
                ok: false,
                code: message.kind === 'invalid' ? 'bazaar_schema_validation_failed' : 'bazaar_schema_too_complex',
                reason: message.reason,
              },
        );
      }
      this.pump();
    });
    worker.on('error', (err: Error) =>
      this.lost(
        slot,
        /memory/i.test(err.message) ? 'Validating the schema ran out of memory.' : 'The schema validator failed on this schema.',
      ),
    );
    worker.on('exit', () => this.lost(slot, 'The schema validator stopped on this schema.'));
    worker.unref(); // after the listeners (adding one refs it again); referenced only while a caller waits (pump)
    return slot;
  }

  /** A worker died (heap limit, crash): the job it held fails with a code; so does the next one if it never started. */
  private lost(slot: Slot, reason: string): void {
    if (slot === this.standby) this.standby = null;
    if (slot !== this.current) return;
    this.current = null;
    if (this.running) this.finishRunning(tooComplex(reason));
    // A worker that cannot even start must not be respawned in a loop for the same job.
    else if (!slot.ready) this.queue.shift()?.resolve(notJudged('The schema validator could not start.'));
    if (slot.ready) this.keepThreads();
    this.pump();
  }

  /**
   * Keeps a current thread and, once it is ready, a warm standby. Run when a thread becomes ready
   * and when one is terminated, not only when a schema arrives: the standby takes over at once and
   * its own replacement starts booting then, so sellers arriving one after another behind a hostile
   * schema find a ready thread. The standby boots once the current thread is ready, so two boots
   * never compete for the CPU.
   */
  private keepThreads(): void {
    if (this.closed) return;
    if (!this.current) {
      this.current = this.standby ?? this.spawn();
      this.standby = null;
    }
    if (this.current.ready && this.keepStandby) this.standby ??= this.spawn();
    else if (this.standby?.ready) [this.current, this.standby] = [this.standby, this.current];
  }

  /** `atBound`: a too-complex verdict given at the wall-clock bound, remembered for less time. */
  private finishRunning(verdict: SchemaVerdict, atBound = false): void {
    const running = this.running;
    if (!running) return;
    this.running = null;
    clearTimeout(running.timer);
    const { key } = running.pending;
    if (!verdict.ok && verdict.code === 'bazaar_schema_too_complex') this.recent.remember(key, verdict, atBound);
    running.pending.resolve(verdict);
  }

  /** The caller's step used the whole wall-clock bound before a thread was free: nothing to judge by. */
  private timeSpent(): SchemaVerdict {
    return notJudged(`The ${this.wallMs} ms bound passed before the schema could be validated.`);
  }

  private pump(): void {
    if (this.closed || this.running) return;
    // Twins of a schema just judged too complex are answered without waiting or running; jobs that
    // waited past their deadline are answered without running.
    const now = performance.now();
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const pending = this.queue[i]!;
      const known = this.recent.get(pending.key);
      if (known) this.queue.splice(i, 1)[0]!.resolve(known);
      else if (now > pending.deadline) this.queue.splice(i, 1)[0]!.resolve(notJudged('The schema waited too long for validation.'));
    }
    if (this.queue.length === 0) {
      // An idle validator never keeps the process alive.
      this.current?.worker.unref();
      this.standby?.worker.unref();
      return;
    }
    // A thread past its job count is retired once its standby is ready, which then takes over.
    if (this.current && this.current.jobs >= RETIRE_AFTER_JOBS && this.standby?.ready) {
      void this.current.worker.terminate();
      this.current = null;
    }
    this.keepThreads();
    const slot = this.current;
    if (!slot) return; // keepThreads leaves none only once closed
    slot.worker.ref(); // a caller is waiting for an answer
    if (!slot.ready) {
      this.wakeAtDeadline(); // pump runs again on 'ready'
      return;
    }
    const pending = this.queue.shift()!;
    const sentAt = performance.now();
    // The jobs that waited for the first thread run on a thread that has validated nothing yet,
    // beside its standby booting at a higher priority: a wall-clock verdict there says more about
    // the start-up than about the schema, so they are judged by their CPU budget (a starved one is
    // still stopped, not judged, at the start-up wait).
    const wallEnd = pending.wallEnd ?? sentAt + SchemaValidator.STARTUP_WAIT_MS;
    if (wallEnd - sentAt < 1) {
      pending.resolve(this.timeSpent());
      this.pump();
      return;
    }
    // The thread cannot use more CPU time than the time that passes: the first look is due when
    // the budget could be used up, or at the bound.
    const timer = setTimeout(() => void this.look(slot, pending, wallEnd), Math.min(this.budgetMs, wallEnd - sentAt));
    this.running = { pending, timer, sentAt, cpuAtStart: threadCpuMs(slot.worker) };
    slot.jobs++;
    this.jobsRun++;
    slot.worker.postMessage(pending.job);
  }

  /**
   * Looks at the running job: stopped (its thread terminated, Ajv runs synchronously) once it used
   * its CPU budget or reached its wall-clock bound, otherwise looked at again when the budget
   * could next be used up. If the thread's CPU time cannot be read (it is gone), wall-clock time
   * stands in.
   */
  private async look(slot: Slot, pending: Pending, wallEnd: number): Promise<void> {
    const running = this.running;
    if (running?.pending !== pending) return;
    const [before, after] = await Promise.all([running.cpuAtStart, threadCpuMs(slot.worker)]);
    if (this.running?.pending !== pending) return; // it answered meanwhile
    const now = performance.now();
    const usedMs = before === undefined || after === undefined ? now - running.sentAt : after - before;
    let verdict: SchemaVerdict | undefined;
    const usedBudget = usedMs >= this.budgetMs;
    const boundMs = pending.wallEnd === undefined ? SchemaValidator.STARTUP_WAIT_MS : this.wallMs;
    if (usedBudget) verdict = tooComplex(`Validating info against the schema took more than ${this.budgetMs} ms of CPU time.`);
    else if (now >= wallEnd)
      verdict =
        usedMs >= this.judgedCpuMs
          ? tooComplex(
              `Validating info against the schema was not done after ${Math.round(usedMs)} ms of CPU time, at the ${boundMs} ms bound.`,
            )
          : notJudged(`The validation thread got ${Math.round(usedMs)} ms of CPU time before the ${boundMs} ms bound (svc is busy).`);
    if (!verdict) {
      running.timer = setTimeout(
        () => void this.look(slot, pending, wallEnd),
        Math.max(2, Math.min(this.budgetMs - usedMs, wallEnd - now)),
      );
      return;
    }
    this.current = null;
    void slot.worker.terminate();
    this.finishRunning(verdict, !usedBudget);
    this.keepThreads();
    this.pump();
  }

  /** Runs pump at the earliest deadline of the queued jobs (the queue may have changed since the last call). */
  private wakeAtDeadline(): void {
    if (this.readyTimer) clearTimeout(this.readyTimer);
    const earliest = Math.min(...this.queue.map((pending) => pending.deadline));
    this.readyTimer = setTimeout(
      () => {
        this.readyTimer = null;
        this.pump();
      },
      Math.max(0, earliest - performance.now()) + 1,
    );
    this.readyTimer.unref();
  }
}
