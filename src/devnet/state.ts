/**
 * Ledger entry storage. `LedgerState` is the committed state; `StateView` is a copy-on-write
 * overlay used by simulation (discarded: side-effect free) and by transaction apply
 * (committed only if the operation succeeds). The view also records which keys were read
 * and written, which is what footprints are made of.
 */
import { xdr } from '@stellar/stellar-sdk';
import { keyId } from './xdr.ts';

export interface StoredEntry {
  key: xdr.LedgerKey;
  data: xdr.LedgerEntryData;
  lastModified: number;
  /** Contract data only. */
  liveUntil?: number;
  /** An authorization nonce only: the last ledger its signature is valid in (past it, no replay can reach the nonce). */
  signatureExpiration?: number;
}

export class LedgerState {
  readonly entries = new Map<string, StoredEntry>();
  /** Nonces in the order they were written, for the count bound (pruneSpentNonces). */
  private nonces: Array<{ id: string; signatureExpiration: number }> = [];
  private noncesHead = 0;

  /** Nonces written and not yet let go by pruneSpentNonces (some may have expired already). */
  get trackedNonces(): number {
    return this.nonces.length - this.noncesHead;
  }

  /**
   * Deletes the oldest nonces while more than `keep` are tracked and the oldest one's signature
   * has expired before `ledgerSeq`: such a nonce can never be checked again (an expired
   * authorization is refused before its nonce is looked at), so only its memory is at stake.
   * Stops at the first nonce still in use (order of writing, not of expiry). Returns how many.
   */
  pruneSpentNonces(ledgerSeq: number, keep: number): number {
    let deleted = 0;
    while (this.trackedNonces > keep) {
      const head = this.nonces[this.noncesHead]!;
      if (head.signatureExpiration >= ledgerSeq) break;
      const entry = this.entries.get(head.id);
      if (entry?.signatureExpiration === head.signatureExpiration) {
        this.entries.delete(head.id);
        deleted += 1;
      }
      this.noncesHead += 1;
    }
    if (this.noncesHead > 1024 && this.noncesHead * 2 > this.nonces.length) {
      this.nonces = this.nonces.slice(this.noncesHead);
      this.noncesHead = 0;
    }
    return deleted;
  }

  get(key: xdr.LedgerKey): StoredEntry | undefined {
    return this.entries.get(keyId(key));
  }

  put(key: xdr.LedgerKey, data: xdr.LedgerEntryData, ledger: number, liveUntil?: number): void {
    this.entries.set(keyId(key), { key, data, lastModified: ledger, liveUntil });
  }

  /** Records a committed nonce for the count bound. */
  trackNonce(id: string, signatureExpiration: number): void {
    this.nonces.push({ id, signatureExpiration });
  }

  /**
   * Deletes temporary contract data (authorization nonces) whose live-until ledger is before
   * `ledgerSeq`: the network deletes such entries, and the RPC already reports them as absent.
   * Returns how many were deleted.
   */
  pruneExpiredTemporary(ledgerSeq: number): number {
    let deleted = 0;
    for (const [id, entry] of this.entries) {
      if (entry.liveUntil === undefined || entry.liveUntil >= ledgerSeq) continue;
      if (entry.key.type !== 'contractData' || entry.key.contractData.durability !== xdr.ContractDataDurability.temporary) continue;
      this.entries.delete(id);
      deleted += 1;
    }
    return deleted;
  }
}

/** A recorded access: the key and whether it was written. */
export interface Access {
  key: xdr.LedgerKey;
  write: boolean;
}

/**
 * A persistent contract-data entry past its live-until ledger is archived: the network keeps it,
 * but no invocation may use it until a RestoreFootprint brings it back (docs/DEVNET.md "Entry
 * TTLs and archival"). Temporary entries are deleted instead.
 */
export function isArchived(entry: StoredEntry, ledgerSeq: number): boolean {
  return (
    entry.liveUntil !== undefined &&
    entry.liveUntil < ledgerSeq &&
    entry.key.type === 'contractData' &&
    entry.key.contractData.durability === xdr.ContractDataDurability.persistent
  );
}

export class StateView {
  private readonly writes = new Map<string, StoredEntry | null>();
  /** Access order is kept so footprints are deterministic. */
  readonly accesses = new Map<string, Access>();
  /** Archived entries this view read (as if restored): simulation answers a restore preamble for them, apply fails. */
  readonly archived = new Map<string, StoredEntry>();
  /** Entries whose TTL only was extended (not written), with their new live-until ledger. */
  readonly extensions = new Map<string, StoredEntry>();

  constructor(
    private readonly base: LedgerState,
    readonly ledgerSeq: number,
  ) {}

  private touch(key: xdr.LedgerKey, write: boolean): string {
    const id = keyId(key);
    const prev = this.accesses.get(id);
    this.accesses.set(id, { key, write: write || (prev?.write ?? false) });
    return id;
  }

  get(key: xdr.LedgerKey): StoredEntry | undefined {
    const id = this.touch(key, false);
    if (this.writes.has(id)) return this.writes.get(id) ?? undefined;
    if (this.extensions.has(id)) return this.extensions.get(id);
    const entry = this.base.entries.get(id);
    if (entry && isArchived(entry, this.ledgerSeq)) this.archived.set(id, entry);
    return entry;
  }

  /**
   * Extends a live entry's TTL to `liveUntil` without writing it (the host's extend_ttl): the
   * entry keeps its footprint access (an instance stays read-only), and the extension pays rent.
   */
  extendTtl(key: xdr.LedgerKey, liveUntil: number): void {
    const id = this.touch(key, false);
    const current = this.writes.has(id) ? this.writes.get(id) : this.base.entries.get(id);
    if (!current || current.liveUntil === undefined || current.liveUntil < this.ledgerSeq || liveUntil <= current.liveUntil) return;
    if (this.writes.has(id)) this.writes.set(id, { ...current, liveUntil });
    else this.extensions.set(id, { ...current, liveUntil });
  }

  put(key: xdr.LedgerKey, data: xdr.LedgerEntryData, liveUntil?: number, signatureExpiration?: number): void {
    const id = this.touch(key, true);
    this.extensions.delete(id);
    this.writes.set(id, { key, data, lastModified: this.ledgerSeq, liveUntil, signatureExpiration });
  }

  /** Entries as they were before this view changed them (for meta `state` changes). */
  original(id: string): StoredEntry | undefined {
    return this.base.entries.get(id);
  }

  changed(): Array<[string, StoredEntry | null]> {
    return [...this.writes.entries()];
  }

  commit(): void {
    for (const [id, e] of this.extensions) this.base.entries.set(id, e);
    for (const [id, e] of this.writes) {
      if (e) this.base.entries.set(id, e);
      else this.base.entries.delete(id);
      if (e?.signatureExpiration !== undefined) this.base.trackNonce(id, e.signatureExpiration);
    }
  }
}
