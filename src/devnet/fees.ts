/**
 * The devnet's deterministic Soroban fee model (docs/DEVNET.md § Fee model).
 *
 * Same shape as stellar-core's: a non-refundable part priced from the declared resources
 * (instructions, disk-read entries/bytes, written entries/bytes) and the transaction size,
 * plus a refundable part for what the invocation actually produced (contract events and
 * rent for new entries). The rates are our own constants, calibrated so that a G→G USDC
 * settlement with one address-credential signature costs what docs/DEVNET.md records as measured on
 * testnet: 22873 resource + 100 inclusion = 22973 stroops (23073 through a fee bump,
 * whose inclusion fee covers two operations).
 */

export const BASE_FEE = 100; // stroops per operation (network minimum inclusion fee)

export const FEE_RATES = {
  /** per 10,000 instructions */
  instructionsIncrement: 25,
  /** per disk-read ledger entry (classic entries: accounts, trustlines) */
  diskReadEntry: 1000,
  /** per written ledger entry */
  writeEntry: 1000,
  /** per KiB read from disk */
  diskRead1KB: 1786,
  /** per KiB written */
  write1KB: 3500,
  /** per KiB of transaction size, history archive (stellar-core adds 300 bytes of result overhead) */
  historical1KB: 5000,
  /** per KiB of transaction size, network bandwidth */
  txSize1KB: 1624,
  /** per KiB of contract events + return value (refundable) */
  events1KB: 10000,
  /** rent per KiB of a new temporary entry per 1,000 ledgers (refundable) */
  tempRent1KBPer1000Ledgers: 10,
} as const;

/** Instructions the modelled token contracts "use" per transfer (declared by simulation). */
export const TRANSFER_INSTRUCTIONS = 1_719_600;

export interface DeclaredResources {
  instructions: number;
  diskReadEntries: number;
  writeEntries: number;
  diskReadBytes: number;
  writeBytes: number;
}

export interface Refundables {
  eventsBytes: number;
  /** rent for newly created temporary entries: bytes × ledgers */
  tempRentByteLedgers: number;
}

const perKB = (bytes: number, rate: number): number => Math.ceil((bytes * rate) / 1024);

export function nonRefundableFee(r: DeclaredResources, txSizeBytes: number): number {
  return (
    Math.ceil((r.instructions * FEE_RATES.instructionsIncrement) / 10_000) +
    r.diskReadEntries * FEE_RATES.diskReadEntry +
    r.writeEntries * FEE_RATES.writeEntry +
    perKB(r.diskReadBytes, FEE_RATES.diskRead1KB) +
    perKB(r.writeBytes, FEE_RATES.write1KB) +
    perKB(txSizeBytes + 300, FEE_RATES.historical1KB) +
    perKB(txSizeBytes, FEE_RATES.txSize1KB)
  );
}

export function refundableFee(r: Refundables): number {
  return (
    perKB(r.eventsBytes, FEE_RATES.events1KB) + Math.ceil((r.tempRentByteLedgers * FEE_RATES.tempRent1KBPer1000Ledgers) / (1024 * 1000))
  );
}
