/**
 * Runs seller-schema validation in a terminable worker thread with a hard time budget
 * (docs/CATALOG.md "Seller schemas", docs/SECURITY.md). A job that outlives its budget is a
 * `bazaar_schema_too_complex` soft drop and its worker is terminated (the only way to stop a
 * synchronous Ajv run) and replaced; a worker that dies for any reason (out of its heap limit,
 * a crash) fails the job it held the same way and is replaced. Jobs run one at a time; the queue
 * is bounded, and a job waiting in it past its deadline is dropped without running.
 */
import { Worker } from 'node:worker_threads';
import { workerModuleUrl } from '../files.ts';
import type { ValidationAnswer, ValidationJob } from './schema-worker.ts';

export type SchemaVerdict =
  { ok: true } | { ok: false; code: 'bazaar_schema_validation_failed' | 'bazaar_schema_too_complex'; reason: string };

export interface SchemaValidatorOptions {
  /** Compile + validate time allowed to one schema once it runs. Default 150 ms. */
  budgetMs?: number;
  /**
   * Longest a job may wait for a ready worker (behind other jobs, or while a terminated worker is
   * replaced) before it is dropped unrun. Default 100 ms: with the 150 ms budget a hostile schema
   * is answered within 250 ms however many arrive; an honest one that arrives while workers are
   * being replaced is soft-dropped (the seller's next settlement lists it), never its payment.
   */
  maxWaitMs?: number;
  /** Jobs waiting beyond this are refused at once. Default 64. */
  maxQueued?: number;
  /** Heap limit of the worker; going past it kills the worker, not svc. Default 48 MiB. */
  maxHeapMb?: number;
}

/** The documented budget: a hostile schema costs at most this, then it is soft-dropped. */
export const SCHEMA_BUDGET_MS = 150;

interface Pending {
  job: ValidationJob;
  /** performance.now() after which the job is dropped unrun. */
  deadline: number;
  /**
   * When the job's time budget started: when the caller's step began (or it was queued), so time
   * spent before validation and waiting for a thread counts against it (the budget bounds the whole
   * step); at process start, when it is sent.
   */
  budgetFrom: number | undefined;
  resolve: (verdict: SchemaVerdict) => void;
}

const tooComplex = (reason: string): SchemaVerdict => ({ ok: false, code: 'bazaar_schema_too_complex', reason });

interface Slot {
  worker: Worker;
  ready: boolean;
  /** Jobs sent to this worker so far. */
  jobs: number;
}

/**
 * A worker is retired after this many jobs, so whatever a long-lived thread accumulates outside
 * its V8 heap limit (allocator fragmentation) is returned with the thread.
 */
const RETIRE_AFTER_JOBS = 1_000;

export class SchemaValidator {
  private readonly budgetMs: number;
  private readonly maxWaitMs: number;
  private readonly maxQueued: number;
  private readonly maxHeapMb: number;
  private current: Slot | null = null;
  /** A warm spare, started with the first worker: after a termination the next job starts at once. */
  private standby: Slot | null = null;
  private running: { pending: Pending; timer: NodeJS.Timeout } | null = null;
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readyTimer: NodeJS.Timeout | null = null;
  /** Until the first worker is ready (process start), jobs may wait this long instead of maxWaitMs. */
  private started = false;
  private static readonly STARTUP_WAIT_MS = 5_000;
  /** Workers started so far; for tests and the bench. */
  workersStarted = 0;

  constructor(options: SchemaValidatorOptions = {}) {
    this.budgetMs = options.budgetMs ?? SCHEMA_BUDGET_MS;
    this.maxWaitMs = options.maxWaitMs ?? 100;
    this.maxQueued = options.maxQueued ?? 64;
    this.maxHeapMb = options.maxHeapMb ?? 48;
    // Warm from the start: the first seller must not wait for a thread to boot.
    this.current = this.spawn();
  }

  /**
   * `startedAt` (performance.now() on this thread) is when the caller's step began, so the budget
   * also covers what the caller did before asking (reading a large `info`); default: now.
   */
  validate(schema: Record<string, unknown> | boolean, info: unknown, startedAt?: number): Promise<SchemaVerdict> {
    if (this.closed) return Promise.resolve(tooComplex('Schema validation is shut down.'));
    if (this.queue.length >= this.maxQueued) return Promise.resolve(tooComplex('Too many schemas are waiting for validation.'));
    return new Promise((resolve) => {
      const wait = this.started ? this.maxWaitMs : SchemaValidator.STARTUP_WAIT_MS;
      const now = performance.now();
      this.queue.push({
        job: { id: this.nextId++, schema, info },
        deadline: now + wait,
        budgetFrom: this.started ? Math.min(startedAt ?? now, now) : undefined,
        resolve,
      });
      this.pump();
    });
  }

  /** Terminates the workers; queued jobs are answered as not validated. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.resolve(tooComplex('Schema validation is shut down.'));
    this.finishRunning(tooComplex('Schema validation is shut down.'));
    const slots = [this.current, this.standby];
    this.current = this.standby = null;
    if (this.readyTimer) clearTimeout(this.readyTimer);
    await Promise.all(slots.map((slot) => (slot ? slot.worker.terminate() : Promise.resolve(0))));
  }

  private spawn(): Slot {
    const worker = new Worker(workerModuleUrl('catalog/schema-worker'), {
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb, maxYoungGenerationSizeMb: 4, stackSizeMb: 4 },
    });
    const slot: Slot = { worker, ready: false, jobs: 0 };
    this.workersStarted++;
    worker.on('message', (message: 'ready' | ValidationAnswer) => {
      if (message === 'ready') slot.ready = this.started = true;
      else if (slot === this.current && this.running?.pending.job.id === message.id) {
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
    else if (!slot.ready) this.queue.shift()?.resolve(tooComplex('The schema validator could not start.'));
    this.pump();
  }

  private finishRunning(verdict: SchemaVerdict): void {
    const running = this.running;
    if (!running) return;
    this.running = null;
    clearTimeout(running.timer);
    running.pending.resolve(verdict);
  }

  private pump(): void {
    if (this.closed || this.running) return;
    // Jobs that waited past their deadline are answered without running.
    while (this.queue.length > 0 && performance.now() > this.queue[0]!.deadline) {
      this.queue.shift()!.resolve(tooComplex('The schema waited too long for validation.'));
    }
    if (this.queue.length === 0) {
      // An idle validator never keeps the process alive.
      this.current?.worker.unref();
      this.standby?.worker.unref();
      return;
    }
    if (!this.current) {
      this.current = this.standby ?? this.spawn();
      this.standby = null;
    }
    // The standby boots once the current thread is ready, so two boots never compete for the CPU.
    if (this.current.ready) this.standby ??= this.spawn();
    else if (this.standby?.ready) [this.current, this.standby] = [this.standby, this.current];
    if (this.current.jobs >= RETIRE_AFTER_JOBS && this.standby?.ready) {
      void this.current.worker.terminate();
      this.current = this.standby;
      this.standby = this.spawn();
    }
    const slot = this.current;
    slot.worker.ref(); // a caller is waiting for an answer
    if (!slot.ready) {
      this.wakeAtDeadline(); // pump runs again on 'ready'
      return;
    }
    const pending = this.queue.shift()!;
    const budgetLeft = this.budgetMs - (pending.budgetFrom === undefined ? 0 : performance.now() - pending.budgetFrom);
    const timer = setTimeout(
      () => {
        if (this.running?.pending !== pending) return;
        // Ajv runs synchronously: terminating the thread is the only way to stop it.
        this.current = null;
        void slot.worker.terminate();
        this.finishRunning(tooComplex(`Validating info against the schema took longer than ${this.budgetMs} ms.`));
        this.pump();
      },
      Math.max(1, budgetLeft),
    );
    this.running = { pending, timer };
    slot.jobs++;
    slot.worker.postMessage(pending.job);
  }

  /** Runs pump at the first queued job's deadline (the head of the queue may have changed since the last call). */
  private wakeAtDeadline(): void {
    if (this.readyTimer) clearTimeout(this.readyTimer);
    this.readyTimer = setTimeout(
      () => {
        this.readyTimer = null;
        this.pump();
      },
      Math.max(0, this.queue[0]!.deadline - performance.now()) + 1,
    );
    this.readyTimer.unref();
  }
}
