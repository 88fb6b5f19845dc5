/**
 * The submitter pool. The network keeps one pending transaction per source account and
 * sequence numbers must be consecutive, so a submitter carries at most one in-flight settlement:
 * a settlement leases a free submitter (round-robin among the free ones) and otherwise waits in
 * a bounded FIFO queue. Sequence numbers are tracked locally and re-read after any failure.
 *
 * `naive` mode (round-robin without leasing, sequence re-read every time) exists only so a test
 * can show that leasing is what makes a burst of concurrent settlements pass.
 */
import type { Keypair } from '@stellar/stellar-sdk';

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
}

interface Slot {
  keypair: Keypair;
  address: string;
  busy: boolean;
  sequence: bigint | undefined;
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

  constructor(keypairs: Keypair[], { loadSequence, mode = 'leased', maxQueue = 1000, waitTimeoutMs = 30_000 }: SubmitterPoolOptions) {
    this.slots = keypairs.map((keypair) => ({ keypair, address: keypair.publicKey(), busy: false, sequence: undefined }));
    this.loadSequence = loadSequence;
    this.mode = mode;
    this.maxQueue = maxQueue;
    this.waitTimeoutMs = waitTimeoutMs;
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
    return this.queue.length;
  }

  async lease(): Promise<SubmitterLease> {
    if (this.slots.length === 0) throw new SignerSelectionError('No submitter accounts are configured.');
    if (this.mode === 'naive') return this.naiveLease();
    const free = this.takeFree();
    const slot = free ?? (await this.enqueue());
    return this.leaseOf(slot);
  }

  private takeFree(): Slot | undefined {
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[(this.next + i) % this.slots.length]!;
      if (!slot.busy) {
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
