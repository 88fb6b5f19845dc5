/**
 * The outcomes owed to requests answered `settlement_pending` (docs/OPERATIONS.md "Outcomes the
 * RPC cannot tell"). The x402 SDKs retry such an answer once, with the same payload and without
 * any key; that retry must get the outcome, while any other copy of the payment stays a replay. So
 * the digest of the request answered pending is kept with its record (for a retry reaching any
 * instance), or in memory when the store cannot write it (then only this instance can answer the
 * retry), and the final outcome is told once: the first retry claims it.
 */
import type { JournalStore, SettlementRecord } from './types.ts';

/** How many `settlement_pending` answers are remembered in memory (the oldest is forgotten first). */
const IN_MEMORY_MAX = 10_000;

export type Claim = 'claimed' | 'taken' | 'unwritable';

export class OwedOutcomes {
  /** By identity: the digest of the request owed the outcome. */
  private readonly inMemory = new Map<string, string>();

  constructor(
    private readonly store: JournalStore,
    private readonly writeFailed: (err: unknown, operation: string) => unknown,
  ) {}

  /**
   * The request with `digest` was answered `settlement_pending` for this payment. Kept in memory only
   * when the store cannot record it: a mark in the store is claimed there, by whichever instance.
   */
  async mark(identity: string, digest: string): Promise<void> {
    this.inMemory.delete(identity);
    try {
      await this.store.markOwed(identity, digest);
    } catch (err) {
      this.writeFailed(err, 'markOwed');
      this.inMemory.set(identity, digest);
      if (this.inMemory.size > IN_MEMORY_MAX) this.inMemory.delete(this.inMemory.keys().next().value!);
    }
  }

  /** Whether the request with `digest` is owed this payment's outcome. */
  owes(record: SettlementRecord, digest: string): boolean {
    return record.owedDigest === digest || this.inMemory.get(record.identity) === digest;
  }

  /**
   * Takes the owed outcome: `claimed` for exactly one caller, `taken` when another had it, and
   * `unwritable` when the store cannot record the claim now (the outcome stays owed).
   */
  async claim(record: SettlementRecord, digest: string): Promise<Claim> {
    // A mark that never reached the store: only this process owes it.
    if (record.owedDigest !== digest) {
      const here = this.inMemory.get(record.identity) === digest;
      if (here) this.inMemory.delete(record.identity);
      return here ? 'claimed' : 'taken';
    }
    try {
      return (await this.store.claimOwed(record.identity, digest)) ? 'claimed' : 'taken';
    } catch (err) {
      this.writeFailed(err, 'claimOwed');
      return 'unwritable';
    }
  }
}

/** How often a copy waiting for a pending outcome looks at the chain (about a ledger). */
const PENDING_POLL_MS = 1_000;

/**
 * Looks at an unresolved record's transaction (`look`: reconciliation) until the record is final or
 * the next look would start after `until` (ms); at least once. Returns the record as last known.
 */
export async function finalWithin(
  record: SettlementRecord,
  look: (record: SettlementRecord) => Promise<SettlementRecord | null>,
  until: number,
  now: () => number,
): Promise<SettlementRecord> {
  const unresolved = (r: SettlementRecord) => r.state === 'submitted' || r.state === 'unknown';
  while (unresolved(record)) {
    record = (await look(record)) ?? record;
    if (!unresolved(record) || now() + PENDING_POLL_MS > until) break;
    await new Promise((resolve) => setTimeout(resolve, PENDING_POLL_MS));
  }
  return record;
}
