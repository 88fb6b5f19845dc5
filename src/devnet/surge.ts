/**
 * Ledger capacity and surge pricing on the devnet (docs/DEVNET.md "Ledger capacity and surge
 * pricing"): which pending transactions a ledger includes and what inclusion fee they pay.
 */
import { BASE_FEE, type LedgerLimits } from './fees.ts';
import { declaredFromData, type ParsedTx } from './envelope.ts';

/** A submitted transaction waiting for a ledger. */
export interface PendingTx {
  parsed: ParsedTx;
  submittedAt: number;
}

/** Ledgers getFeeStats summarizes for Soroban transactions (stellar-rpc's default window). */
export const FEE_STATS_LEDGERS = 50;

/** What a transaction bids for inclusion per operation: its fee above the resource fee (a fee bump's outer fee; its wrapper counts as an operation). */
export function inclusionBidPerOp(p: ParsedTx): number {
  const resourceFee = p.tx.ext.type === 'sorobanData' ? p.tx.ext.sorobanData.resourceFee : 0n;
  return Number(p.fee - resourceFee) / p.numOps;
}

/**
 * Which pending transactions the next ledger includes, as stellar-core's surge pricing picks
 * them: classic ones all (their lane is not modelled), Soroban ones by inclusion bid per operation,
 * highest first (submission order among equal bids), while they fit the ledger's limits. When
 * one did not fit, the ledger is full: every included Soroban transaction pays the lowest included
 * bid per operation (the surge price) instead of the minimum, and the rest wait for a later ledger.
 */
export function selectForLedger(
  batch: PendingTx[],
  limits: LedgerLimits,
): { included: PendingTx[]; waiting: PendingTx[]; inclusionPerOp: number } {
  const soroban = batch.filter((q) => q.parsed.tx.ext.type === 'sorobanData');
  const byBid = [...soroban].sort((a, b) => inclusionBidPerOp(b.parsed) - inclusionBidPerOp(a.parsed));
  const used: LedgerLimits = { transactions: 0, instructions: 0, txSizeBytes: 0, diskReadEntries: 0, writeEntries: 0, writeBytes: 0 };
  const chosen = new Set<PendingTx>();
  let full = false;
  for (const q of byBid) {
    const d = q.parsed.tx.ext.type === 'sorobanData' ? declaredFromData(q.parsed.tx.ext.sorobanData) : null;
    const need: LedgerLimits = {
      transactions: 1,
      instructions: d?.instructions ?? 0,
      txSizeBytes: q.parsed.envelope.toXdr().length,
      diskReadEntries: d?.diskReadEntries ?? 0,
      writeEntries: d?.writeEntries ?? 0,
      writeBytes: d?.writeBytes ?? 0,
    };
    const keys = Object.keys(used) as Array<keyof LedgerLimits>;
    if (!keys.every((k) => used[k] + need[k] <= limits[k])) {
      full = true;
      continue;
    }
    for (const k of keys) used[k] += need[k];
    chosen.add(q);
  }
  const bids = [...chosen].map((q) => inclusionBidPerOp(q.parsed));
  // Whole stroops: a fee bump's bid per operation may be a fraction; no one is charged above its bid.
  const inclusionPerOp = full && bids.length > 0 ? Math.max(BASE_FEE, Math.floor(Math.min(...bids))) : BASE_FEE;
  return {
    included: batch.filter((q) => q.parsed.tx.ext.type !== 'sorobanData' || chosen.has(q)),
    waiting: soroban.filter((q) => !chosen.has(q)),
    inclusionPerOp,
  };
}
