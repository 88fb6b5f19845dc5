/**
 * The catalog's worker pool: one writer thread (settlement hooks, in arrival order) and a few
 * reader threads (discovery), each with its own SQLite connection (WAL lets readers run beside
 * the writer). Each lane runs one request at a time; waiting requests sit in a bounded queue
 * with a deadline, so a flood of discovery requests degrades discovery only: a request that
 * cannot be queued or is not answered in time fails fast (svc_catalog_busy for discovery,
 * a null hook outcome — header omitted — for a settlement). Waiting requests are served fairly by
 * client, heavy ones on part of the threads only (fair-queue.ts).
 */
import type { LifecycleCuts } from '../lifecycle.ts';
import type { ClaimPick, OwnershipMode, OwnershipVerdict } from '../ownership.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Worker } from 'node:worker_threads';
import { workerModuleUrl } from '../../files.ts';
import { workerHeapsFromLimits } from '../../worker-heaps.ts';
import type { FileIdentity } from '../../db/sqlite.ts';
import type { DiscoveryFilters, Identity, SettledPayment, Withdrawal } from '../types.ts';
import type { LivenessRecord } from '../liveness.ts';
import { FairQueue } from './fair-queue.ts';
import type { TakenPath } from '../query-paths.ts';

export interface WorkerSetup {
  dbPath: string;
  /** With it the thread's store is PostgreSQL (postgres/store.ts) instead of dbPath. Holds credentials: never logged. */
  databaseUrl: string | undefined;
  /** The writer takes settlement hooks (and validates sellers' schemas), readers discovery. */
  role: 'writer' | 'reader';
  softBudgetMs: number | undefined;
  /** The writer's seller-schema validator: its wall-clock bound and standby (CatalogOptions.schemaWallMs, schemaStandby). */
  schema: { wallMs: number | undefined; standby: boolean | undefined };
  /** The SQLite file as svc opened it at start; a thread opens no other (worker.ts). */
  fileIdentity?: FileIdentity | null;
  /** Who may own a listing (CatalogOptions.ownership). */
  ownership?: OwnershipMode;
}

export type WorkerRequest = { id: number; now: number; deadline: number } & (
  | { op: 'record'; settled: SettledPayment; strict: boolean }
  | { op: 'preview'; settled: SettledPayment }
  | { op: 'withdraw'; withdrawal: Withdrawal }
  | { op: 'catalog-id' }
  | {
      op: 'list';
      filters: DiscoveryFilters;
      page: { limit: number; offset: number };
      visibleSince?: string;
      failingBefore?: string;
      /** Answer the page's JSON text instead of the object (worker.ts pageAnswer). */
      json?: boolean;
    }
  | {
      op: 'search';
      query: string;
      filters: DiscoveryFilters;
      page: { limit: number; cursor?: string };
      visibleSince?: string;
      failingBefore?: string;
      json?: boolean;
    }
  | { op: 'liveness-claim'; dueBefore: number; limit: number }
  | { op: 'liveness-write'; key: string; record: LivenessRecord; claimedAt: number; basis?: number | undefined }
  | { op: 'liveness-postpone'; keys: string[]; basis: number; claimedAt: number }
  | { op: 'liveness-due'; dueBefore: number }
  | { op: 'lifecycle'; cuts: LifecycleCuts; limit: number }
  | { op: 'ownership-claim'; limit: number; pick?: ClaimPick | undefined }
  | { op: 'ownership-resolve'; key: string; claimedAt: number; verdict: OwnershipVerdict }
  | { op: 'ownership-checks'; identity: Identity }
  | { op: 'ownership-pending' }
  | { op: 'ownership-next' }
  | { op: 'ownership-recheck'; identity: Identity; payTo: string }
  | { op: 'probe-host'; host: string; intervalMs: number; sent?: boolean | undefined }
);

export type WorkerReply =
  /** Sent once, when the thread's store is open and it takes requests. */
  | { ready: true }
  /** `paths`: the discovery paths that answered it (../query-paths.ts); `cpuMs`: its thread's CPU time for it. */
  | { id: number; ok: true; value: unknown; paths?: TakenPath[]; cpuMs?: number }
  | { id: number; ok: false; error: { name: string; message: string; code?: string | undefined }; cpuMs?: number }
  | { log: 'warn' | 'error'; obj: object; msg: string };

/** What the reader threads spent on the catalog requests made for one caller (tallyReaderCpu). */
export interface CpuTally {
  /** CPU time in ms. */
  ms: number;
}
const tallies = new AsyncLocalStorage<CpuTally>();
/**
 * Runs `work`, adding to `tally` the reader threads' CPU time of each catalog request it makes,
 * that request's own (a running total of all readers would charge one discovery request the
 * searches that ran beside it; src/http/payment-priority.ts charges each its own).
 */
export const tallyReaderCpu = <T>(tally: CpuTally, work: () => T): T => tallies.run(tally, work);

/** A request as a lane's caller gives it (run adds the id and the deadline). */
export type RequestBody = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'id' | 'deadline'> : never) : never;

/** Why the pool did not get an answer: the queue was full, or the deadline passed. */
export class CatalogOverloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogOverloadError';
  }
}

type LaneSetup = WorkerSetup & {
  threads: number;
  maxQueued: number;
  deadlineMs: number;
  /** Waiting requests one client may hold (default maxQueued). */
  maxQueuedPerClient?: number;
  /** Threads that may run heavy requests at once (default all). */
  heavyThreads?: number;
  /**
   * Threads started beyond `threads` when a request that may run waits and every thread is busy
   * (default 0); each stops again after `burstIdleMs` idle (default 30 s), so an idle service does
   * not hold their memory.
   */
  burstThreads?: number;
  burstIdleMs?: number;
};

/** Who a request is for and what it costs, for the lane's fair queue. */
export interface RunOptions {
  /** An opaque client key; requests without one share the key '' (and only the whole queue's bound). */
  client?: string;
  /** A heavy request runs only on the lane's heavy threads. */
  heavy?: boolean;
}

interface Job {
  id: number;
  client: string;
  heavy: boolean;
  request: WorkerRequest;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  settled: boolean;
  /** Where its reader CPU time is counted (tallyReaderCpu), if its caller counts. */
  tally: CpuTally | undefined;
}

const WORKER_URL = workerModuleUrl('catalog/threads/worker');
/**
 * Each catalog thread has its own V8 heap: a small young generation keeps the resident size low (a
 * reader's larger, as searches allocate), and the old-generation cap bounds a runaway worker, which
 * is then replaced (its request fails like any fault). Sizes and their measure: docs/CATALOG.md "Threads".
 */
const WORKER_LIMITS = {
  reader: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 128 },
  writer: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 },
} as const;
/**
 * Added to a request's deadline while no thread of its lane is ready: a lane that starts its
 * threads on demand (the readers) makes its first request wait for one to boot, which on a busy
 * machine takes longer than a query may, and that wait is not the catalog being busy.
 */
export const BOOT_ALLOWANCE_MS = 5_000;
/** Longest wait before replacing lost threads (the wait doubles from 100 ms while none answers). */
const RESPAWN_MAX_DELAY_MS = 5_000;

/** One kind of lane (the writer, or the readers): its threads, its queue, its limits. */
export class WorkerLanes {
  private readonly idle: Worker[] = [];
  private readonly running = new Map<Worker, Job>();
  private readonly queue = new FairQueue<Job>();
  private heavyRunning = 0;
  private readonly jobs = new Map<number, Job>();
  private readonly workers = new Set<Worker>();
  /** Threads told to close by retireIdle that have not exited yet: close() waits for them too, so no database is left open. */
  private readonly retiring = new Set<Worker>();
  private nextId = 1;
  private closing = false;
  /** Threads lost since one last answered; each respawn waits longer (a thread that cannot start would spin). */
  private lossesInARow = 0;
  private respawnTimer: NodeJS.Timeout | undefined;
  /** Threads whose store is open (their `ready` message came). */
  private readonly ready = new Set<Worker>();
  /** When each idle thread last finished a request (burst threads retire after burstIdleMs). */
  private readonly idleSince = new Map<Worker, number>();
  private retireTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly setup: LaneSetup,
    private readonly onLog: (level: 'warn' | 'error', obj: object, msg: string) => void,
    /** Hears the discovery paths each answered request took, and the client it ran for (RunOptions.client). */
    private readonly onPaths: (paths: TakenPath[], client: string) => void = () => {},
  ) {
    for (let i = 0; i < setup.threads; i++) this.spawn();
  }

  private spawn(): void {
    workerHeapsFromLimits();
    const worker = new Worker(WORKER_URL, {
      resourceLimits: WORKER_LIMITS[this.setup.role],
      workerData: {
        dbPath: this.setup.dbPath,
        databaseUrl: this.setup.databaseUrl,
        role: this.setup.role,
        softBudgetMs: this.setup.softBudgetMs,
        schema: this.setup.schema,
        fileIdentity: this.setup.fileIdentity,
        ownership: this.setup.ownership,
      } satisfies WorkerSetup,
    });
    worker.unref();
    this.workers.add(worker);
    worker.on('message', (reply: WorkerReply) => {
      if ('log' in reply) return this.onLog(reply.log, reply.obj, reply.msg);
      if ('ready' in reply) return void this.ready.add(worker);
      this.lossesInARow = 0;
      const job = this.jobs.get(reply.id);
      if (job?.tally && this.setup.role === 'reader') job.tally.ms += reply.cpuMs ?? 0;
      this.jobs.delete(reply.id);
      this.stopped(worker);
      this.idle.push(worker);
      this.idleSince.set(worker, Date.now());
      if (job && reply.ok && reply.paths) this.onPaths(reply.paths, job.client);
      if (job) this.finish(job, reply);
      this.dispatch();
    });
    const lost = (why: string) => {
      this.workers.delete(worker);
      this.ready.delete(worker);
      const job = this.running.get(worker);
      this.stopped(worker);
      const at = this.idle.indexOf(worker);
      if (at !== -1) this.idle.splice(at, 1);
      this.idleSince.delete(worker);
      if (job) this.fail(job, new Error(`catalog worker ${why}`));
      if (!this.closing) {
        const delayMs = this.lossesInARow === 0 ? 0 : Math.min(RESPAWN_MAX_DELAY_MS, 100 * 2 ** (this.lossesInARow - 1));
        this.lossesInARow++;
        this.onLog('error', { why, respawnInMs: delayMs }, 'catalog worker lost; starting another');
        if (delayMs === 0) {
          this.spawn();
          this.dispatch();
        } else this.respawnTimer ??= setTimeout(() => this.refill(), delayMs).unref();
      }
    };
    worker.on('error', (err: Error) => lost(`failed: ${err.message}`));
    worker.on('exit', (code) => {
      if (this.workers.has(worker)) lost(`exited with code ${code}`);
    });
    this.idle.push(worker);
  }

  /** Starts a thread beyond the lane's count, retired again after burstIdleMs idle. */
  private startOnDemand(): void {
    this.spawn();
    this.retireTimer ??= setInterval(() => this.retireIdle(), Math.max(50, (this.setup.burstIdleMs ?? 30_000) / 2)).unref();
  }

  /**
   * A request is expected soon: a thread started on demand if the lane may and has none, and its threads told to
   * prepare (a writer starts its seller-schema thread); not while threads are lost (the respawn backoff decides).
   */
  warm(): void {
    if (this.closing || this.respawnTimer) return;
    if (this.workers.size === 0 && (this.setup.burstThreads ?? 0) > 0) this.startOnDemand();
    for (const worker of this.workers) worker.postMessage('prepare');
  }

  /** Stops idle threads beyond the lane's count once they have been idle burstIdleMs. */
  private retireIdle(): void {
    const idleMs = this.setup.burstIdleMs ?? 30_000;
    for (const worker of [...this.idle]) {
      if (this.workers.size <= this.setup.threads) break;
      if (Date.now() - (this.idleSince.get(worker) ?? 0) < idleMs) continue;
      this.idle.splice(this.idle.indexOf(worker), 1);
      this.workers.delete(worker); // its exit is then no loss
      this.ready.delete(worker);
      this.idleSince.delete(worker);
      this.retiring.add(worker);
      worker.once('exit', () => this.retiring.delete(worker));
      worker.postMessage('close');
    }
    if (this.workers.size <= this.setup.threads) {
      clearInterval(this.retireTimer);
      this.retireTimer = undefined;
    }
  }

  /** Starts threads until the lane has its count again (after a delayed respawn). */
  private refill(): void {
    this.respawnTimer = undefined;
    while (!this.closing && this.workers.size < this.setup.threads) this.spawn();
    this.dispatch();
  }

  /** Requests waiting, running, and running heavy, now. */
  get load(): { threads: number; queued: number; running: number; heavyRunning: number } {
    return { threads: this.workers.size, queued: this.queue.size, running: this.running.size, heavyRunning: this.heavyRunning };
  }

  /** The thread no longer runs its job. */
  private stopped(worker: Worker): void {
    if (this.running.get(worker)?.heavy) this.heavyRunning--;
    this.running.delete(worker);
  }

  /**
   * Runs one request on a free thread of this lane; rejects with CatalogOverloadError when the
   * queue or the client's share of it is full, or when the deadline passes.
   */
  run(body: RequestBody, { client = '', heavy = false }: RunOptions = {}): Promise<unknown> {
    if (this.closing) return Promise.reject(new Error('the catalog is closed'));
    if (this.queue.size >= this.setup.maxQueued) {
      return Promise.reject(new CatalogOverloadError(`${this.queue.size} catalog requests are already waiting`));
    }
    // Requests for no named client (internal callers) are bounded by the whole queue only.
    const share = client === '' ? this.setup.maxQueued : (this.setup.maxQueuedPerClient ?? this.setup.maxQueued);
    if (this.queue.waiting(client) >= share) {
      return Promise.reject(new CatalogOverloadError(`this client already has ${share} catalog requests waiting`));
    }
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const waitMs = this.setup.deadlineMs + (this.ready.size === 0 ? BOOT_ALLOWANCE_MS : 0);
      const deadline = Date.now() + waitMs;
      const job: Job = {
        id,
        client,
        heavy,
        request: { ...body, id, deadline },
        resolve,
        reject,
        settled: false,
        timer: undefined as unknown as NodeJS.Timeout,
        tally: tallies.getStore(),
      };
      job.timer = setTimeout(() => {
        this.queue.remove(job);
        this.fail(job, new CatalogOverloadError(`no catalog answer within ${waitMs} ms`));
      }, waitMs);
      job.timer.unref();
      this.queue.push(job);
      this.dispatch();
    });
  }

  private dispatch(): void {
    const burst = this.setup.burstThreads ?? 0;
    while (this.queue.size > 0) {
      const heavyAllowed = this.heavyRunning < (this.setup.heavyThreads ?? this.setup.threads + burst);
      if (this.idle.length === 0) {
        // Every thread is busy and a request could run: start a burst thread, unless threads are
        // being lost (the respawn backoff decides then).
        if (this.closing || this.respawnTimer || this.workers.size >= this.setup.threads + burst || !this.queue.ready(heavyAllowed)) return;
        this.startOnDemand();
      }
      const job = this.queue.take(heavyAllowed);
      if (!job) return;
      const worker = this.idle.pop()!;
      this.idleSince.delete(worker);
      if (job.heavy) this.heavyRunning++;
      this.running.set(worker, job);
      this.jobs.set(job.id, job);
      try {
        worker.postMessage(job.request);
      } catch (err) {
        // Not cloneable (the envelope is reduced first, so this is a bug): fail this job, keep the thread.
        this.jobs.delete(job.id);
        this.stopped(worker);
        this.idle.push(worker);
        this.fail(job, err);
      }
    }
  }

  private finish(job: Job, reply: Extract<WorkerReply, { id: number }>): void {
    if (reply.ok) {
      if (!job.settled) job.resolve(reply.value);
      job.settled = true;
      clearTimeout(job.timer);
      return;
    }
    const err =
      reply.error.name === 'Expired'
        ? new CatalogOverloadError(reply.error.message)
        : Object.assign(new Error(reply.error.message), reply.error);
    this.fail(job, err);
  }

  private fail(job: Job, err: unknown): void {
    clearTimeout(job.timer);
    if (job.settled) return;
    job.settled = true;
    job.reject(err);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.respawnTimer);
    clearInterval(this.retireTimer);
    for (const job of this.queue.drain()) this.fail(job, new Error('the catalog is closed'));
    const exits = [...this.workers, ...this.retiring].map((w) => new Promise<void>((resolve) => w.once('exit', () => resolve())));
    for (const worker of this.retiring) worker.ref(); // already told to close
    for (const worker of this.workers) {
      worker.ref(); // keep the process up until the threads have closed their databases
      worker.postMessage('close');
    }
    await Promise.all(exits);
  }
}
