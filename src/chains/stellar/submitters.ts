/**
 * The submitter pool. The network keeps one pending transaction per source account and
 * sequence numbers must be consecutive, so a submitter carries at most one in-flight settlement:
 * a settlement leases a free submitter (round-robin among the free ones) and otherwise waits in
 * a bounded FIFO queue. Sequence numbers are tracked locally and re-read after any failure.
 *
 * With `shared` leases (several instances on one database, docs/SCALING.md) a locally free
 * submitter is used only once the database lease on it is taken too; when every free one is held
 * by another instance the settlement waits (woken by a local release, else polling) up to the same
 * timeout. A submitter another instance used in between gets its sequence re-read.
 *
 * `naive` mode (round-robin without leasing, sequence re-read every time) exists only so a test
 * can show that leasing is what makes a burst of concurrent settlements pass.
 */
import type { Keypair } from '@stellar/stellar-sdk';
import type { SharedLease, SharedLeases } from '../../scheme/types.ts';

export class SignerSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignerSelectionError';
  }
}

export interface SubmitterLease {
  readonly keypair: Keypair;
  readonly address: string;
  /** The account's current sequence (the transaction to build uses this + 1). */
  sequence(): Promise<bigint>;
  /** The network accepted a transaction with sequence()+1: it will be consumed once included. */
  consumed(): void;
  /** Something failed: forget the local sequence so the next lease re-reads it. */
  invalidate(): void;
  release(): void;
}

export interface SubmitterPoolOptions {
  /** Reads an account's current sequence from the chain. */
  loadSequence: (address: string) => Promise<bigint>;
  mode?: 'leased' | 'naive';
  /** Settlements allowed to wait for a free submitter. Default 1000. */
  maxQueue?: number;
  /** Longest wait for a free submitter. Default 30 s. */
  waitTimeoutMs?: number;
  /** Leases shared with other instances (a database); absent: this process alone uses the accounts. */
  shared?: SharedLeases;
}

/** While every free submitter is held elsewhere, how often to try the database again. */
const SHARED_POLL_MS = 20;

interface Slot {
  keypair: Keypair;
  address: string;
  busy: boolean;
  sequence: bigint | undefined;
  shared: SharedLease | undefined;
}

interface Waiter {
  resolve: (slot: Slot) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class SubmitterPool {
  private readonly slots: Slot[];
  private readonly queue: Waiter[] = [];
  private next = 0;
  private readonly mode: 'leased' | 'naive';
  private readonly maxQueue: number;
  private readonly waitTimeoutMs: number;
  private readonly loadSequence: (address: string) => Promise<bigint>;
  private readonly shared: SharedLeases | undefined;
  /** Settlements waiting for a shared lease, and the wake-ups for them on a local release. */
  private sharedWaiting = 0;
  private wakers: Array<() => void> = [];

  constructor(
    keypairs: Keypair[],
    { loadSequence, mode = 'leased', maxQueue = 1000, waitTimeoutMs = 30_000, shared }: SubmitterPoolOptions,
  ) {
    this.slots = keypairs.map((keypair) => ({
      keypair,
      address: keypair.publicKey(),
      busy: false,
      sequence: undefined,
      shared: undefined,
    }));
    this.loadSequence = loadSequence;
    this.mode = mode;
    this.maxQueue = maxQueue;
    this.waitTimeoutMs = waitTimeoutMs;
    this.shared = shared;
  }

  get addresses(): string[] {
    return this.slots.map((s) => s.address);
  }

  /** Submitters currently carrying a settlement. */
  get busy(): number {
    return this.slots.filter((s) => s.busy).length;
  }

  /** Settlements currently waiting for a submitter. */
  get waiting(): number {
    return this.queue.length + this.sharedWaiting;
  }

  async lease(): Promise<SubmitterLease> {
    if (this.slots.length === 0) throw new SignerSelectionError('No submitter accounts are configured.');
    if (this.mode === 'naive') return this.naiveLease();
    if (this.shared) return this.leaseOf(await this.takeShared(this.shared));
    const free = this.takeFree();
    const slot = free ?? (await this.enqueue());
    return this.leaseOf(slot);
  }

  /** A locally free submitter whose database lease this instance took; waits while there is none. */
  private async takeShared(shared: SharedLeases): Promise<Slot> {
    if (this.sharedWaiting >= this.maxQueue) {
      throw new SignerSelectionError(`All ${this.slots.length} submitters are busy and the wait queue is full (${this.maxQueue}).`);
    }
    const deadline = Date.now() + this.waitTimeoutMs;
    this.sharedWaiting++;
    try {
      for (;;) {
        const tried = new Set<Slot>();
        for (let slot = this.takeFree(tried); slot; slot = this.takeFree(tried)) {
          tried.add(slot);
          let lease: SharedLease | null;
          try {
            lease = await shared.acquire(slot.address);
          } catch (err) {
            this.freeLocally(slot);
            // The error of a database client may name its host: only its code is reported.
            const code = (err as { code?: unknown })?.code;
            throw new SignerSelectionError(`Submitter leases are unavailable (database ${typeof code === 'string' ? code : 'error'}).`);
          }
          if (lease) {
            slot.shared = lease;
            if (!lease.continuous) slot.sequence = undefined;
            return slot;
          }
          // Held by another instance: free again here, without waking anyone (nothing was released).
          slot.busy = false;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new SignerSelectionError(`No submitter became free within ${this.waitTimeoutMs} ms.`);
        await this.localReleaseOr(Math.min(SHARED_POLL_MS, left));
      }
    } finally {
      this.sharedWaiting--;
    }
  }

  /** Resolves at the next local release, or after `ms`. */
  private localReleaseOr(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.wakers = this.wakers.filter((w) => w !== wake);
        resolve();
      }, ms);
      this.wakers.push(wake);
    });
  }

  private freeLocally(slot: Slot): void {
    slot.busy = false;
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }

  private takeFree(skip?: Set<Slot>): Slot | undefined {
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[(this.next + i) % this.slots.length]!;
      if (!slot.busy && !skip?.has(slot)) {
        this.next = (this.next + i + 1) % this.slots.length;
        slot.busy = true;
        return slot;
      }
    }
    return undefined;
  }

  private enqueue(): Promise<Slot> {
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(
        new SignerSelectionError(`All ${this.slots.length} submitters are busy and the wait queue is full (${this.maxQueue}).`),
      );
    }
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.queue.indexOf(waiter);
          if (at >= 0) this.queue.splice(at, 1);
          reject(new SignerSelectionError(`No submitter became free within ${this.waitTimeoutMs} ms.`));
        }, this.waitTimeoutMs),
      };
      this.queue.push(waiter);
    });
  }

  private release(slot: Slot): void {
    if (slot.shared) {
      const shared = slot.shared;
      slot.shared = undefined;
      // The next acquisition by this instance succeeds whatever the order; a failed release only
      // leaves the row to expire.
      shared.release().catch(() => undefined);
      this.freeLocally(slot);
      return;
    }
    const waiter = this.queue.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve(slot); // handed over still busy
    } else {
      slot.busy = false;
    }
  }

  private leaseOf(slot: Slot): SubmitterLease {
    let released = false;
    return {
      keypair: slot.keypair,
      address: slot.address,
      sequence: async () => {
        slot.sequence ??= await this.loadSequence(slot.address);
        return slot.sequence;
      },
      consumed: () => {
        if (slot.sequence !== undefined) slot.sequence += 1n;
      },
      invalidate: () => {
        slot.sequence = undefined;
      },
      release: () => {
        if (released) return;
        released = true;
        this.release(slot);
      },
    };
  }

  private naiveLease(): SubmitterLease {
    const slot = this.slots[this.next]!;
    this.next = (this.next + 1) % this.slots.length;
    return {
      keypair: slot.keypair,
      address: slot.address,
      sequence: () => this.loadSequence(slot.address),
      consumed: () => {},
      invalidate: () => {},
      release: () => {},
    };
  }
}
