/**
 * The devnet's Soroban fees: the real network's published fee schedule (its configuration
 * settings), applied with stellar-core's formulas (docs/DEVNET.md "Fee model").
 *
 * The settings are the network's `ConfigSettingEntry` values as Stellar Lab publishes them for
 * Mainnet and Testnet (identical fee rates on both; the TTL minimums differ, see NETWORK_TTLS).
 * The formulas follow the shape of rs-soroban-env's fee module (`compute_transaction_resource_fee`,
 * `compute_rent_fee`, `compute_rent_write_fee_per_1kb`): a non-refundable part priced from the
 * declared resources and the transaction size, and a refundable part for what the invocation
 * produced (contract events and rent).
 */

export const BASE_FEE = 100; // stroops per operation (network minimum inclusion fee)

/** The network's fee settings (ConfigSettingEntry values, stroops). */
export const FEE_SETTINGS = {
  /** contract_compute_v0.fee_rate_per_instructions_increment: per 10,000 instructions */
  feeRatePerInstructionsIncrement: 7,
  /** contract_ledger_cost_v0.fee_disk_read_ledger_entry: per classic (or archived) entry read from disk */
  feeDiskReadLedgerEntry: 1563,
  /** contract_ledger_cost_v0.fee_write_ledger_entry: per entry written */
  feeWriteLedgerEntry: 2500,
  /** contract_ledger_cost_v0.fee_disk_read1_kb: per KiB read from disk */
  feeDiskRead1KB: 447,
  /** contract_ledger_cost_ext_v0.fee_write1_kb: per KiB written */
  feeWrite1KB: 875,
  /** contract_historical_data_v0.fee_historical1_kb: per KiB of transaction (plus a 300-byte result) kept in history */
  feeHistorical1KB: 4059,
  /** contract_bandwidth_v0.fee_tx_size1_kb: per KiB of transaction size */
  feeTxSize1KB: 406,
  /** contract_events_v0.fee_contract_events1_kb: per KiB of contract events and return value (refundable) */
  feeContractEvents1KB: 5000,
  /** state_archival: 1 KiB of persistent storage costs the rent write fee every this many ledgers */
  persistentRentRateDenominator: 1215,
  /** state_archival: the same for temporary storage */
  tempRentRateDenominator: 2430,
  /** contract_ledger_cost_v0: the rent write fee per KiB grows linearly to this Soroban state size … */
  sorobanStateTargetSizeBytes: 3_000_000_000,
  /** … from this fee at an empty state … */
  rentFee1KBSorobanStateSizeLow: -17_000,
  /** … to this one at the target size … */
  rentFee1KBSorobanStateSizeHigh: 10_000,
  /** … and this many times faster past it. */
  sorobanStateRentFeeGrowthFactor: 5000,
  /** The average of live_soroban_state_size_window on Mainnet when the settings were read (≈ 826 MB). */
  sorobanStateSizeBytes: 826_000_000,
} as const;

/** The host never charges less than this rent write fee per KiB. */
const MINIMUM_RENT_WRITE_FEE_PER_1KB = 1000;
/** The size charged for writing a TTL entry, as the host estimates it. */
const TTL_ENTRY_SIZE = 48;
/** stellar-core adds this estimate of the result's size to the transaction size for history. */
const TX_BASE_RESULT_SIZE = 300;

/** Rent write fee per KiB for the state size (the host's compute_rent_write_fee_per_1kb). */
export function rentWriteFeePer1KB(stateSizeBytes: number = FEE_SETTINGS.sorobanStateSizeBytes): number {
  const s = FEE_SETTINGS;
  const slope = s.rentFee1KBSorobanStateSizeHigh - s.rentFee1KBSorobanStateSizeLow;
  let fee: number;
  if (stateSizeBytes < s.sorobanStateTargetSizeBytes) {
    fee = Math.ceil((slope * stateSizeBytes) / s.sorobanStateTargetSizeBytes) + s.rentFee1KBSorobanStateSizeLow;
  } else {
    const past = stateSizeBytes - s.sorobanStateTargetSizeBytes;
    fee = s.rentFee1KBSorobanStateSizeHigh + Math.ceil((slope * past * s.sorobanStateRentFeeGrowthFactor) / s.sorobanStateTargetSizeBytes);
  }
  return Math.max(fee, MINIMUM_RENT_WRITE_FEE_PER_1KB);
}

/**
 * TTL settings (ledgers) of the networks a devnet plays, and the rent write fee per KiB they
 * charge: Testnet's minimums are shorter than Mainnet's, and its rent is dearer. Mainnet's rent
 * fee is the host's formula applied to its settings above (the floor, 1,000). Testnet's Soroban
 * state is larger and not in the settings read, so its rate is the one testnet charged for
 * extending a Stellar Asset Contract instance: 2.4 stroops per ledger for 480 bytes, i.e. about
 * 6,200 per KiB (docs/DEVNET.md "Fee model").
 */
export interface NetworkTtls {
  maxEntryTtl: number;
  minTemporaryTtl: number;
  minPersistentTtl: number;
  /** Rent write fee per KiB (stroops), what rentFee prices rent with. */
  rentWriteFeePer1KB: number;
}

export const TESTNET_RENT_WRITE_FEE_PER_1KB = 6_200;

export const NETWORK_TTLS: Record<'stellar:testnet' | 'stellar:pubnet', NetworkTtls> = {
  'stellar:testnet': {
    maxEntryTtl: 3_110_400,
    minTemporaryTtl: 720,
    minPersistentTtl: 120_960,
    rentWriteFeePer1KB: TESTNET_RENT_WRITE_FEE_PER_1KB,
  },
  'stellar:pubnet': {
    maxEntryTtl: 3_110_400,
    minTemporaryTtl: 17_280,
    minPersistentTtl: 2_073_600,
    rentWriteFeePer1KB: rentWriteFeePer1KB(),
  },
};

/**
 * Instructions the modelled token contracts declare per transfer: what stellar-rpc declares for a
 * SAC transfer on testnet (729,569 measured, padded by its +50,000 adjustment).
 */
export const TRANSFER_INSTRUCTIONS = 779_569;

export interface DeclaredResources {
  instructions: number;
  diskReadEntries: number;
  writeEntries: number;
  diskReadBytes: number;
  writeBytes: number;
}

/** One contract-data entry an invocation created or changed, for rent (sizes are LedgerEntry XDR bytes). */
export interface RentChange {
  persistent: boolean;
  /** 0 for a new entry. */
  oldSize: number;
  newSize: number;
  /** 0 for a new entry. */
  oldLiveUntil: number;
  newLiveUntil: number;
}

export interface Refundables {
  /** Contract events plus the return value, XDR bytes. */
  eventsBytes: number;
  /** Entries created, grown or extended. */
  rentChanges: RentChange[];
}

const perIncrement = (value: number, rate: number, increment: number): number => Math.ceil((value * rate) / increment);
const perKB = (bytes: number, rate: number): number => perIncrement(bytes, rate, 1024);

export function nonRefundableFee(r: DeclaredResources, txSizeBytes: number): number {
  const s = FEE_SETTINGS;
  return (
    perIncrement(r.instructions, s.feeRatePerInstructionsIncrement, 10_000) +
    r.diskReadEntries * s.feeDiskReadLedgerEntry +
    r.writeEntries * s.feeWriteLedgerEntry +
    perKB(r.diskReadBytes, s.feeDiskRead1KB) +
    perKB(r.writeBytes, s.feeWrite1KB) +
    perKB(txSizeBytes + TX_BASE_RESULT_SIZE, s.feeHistorical1KB) +
    perKB(txSizeBytes, s.feeTxSize1KB)
  );
}

/** The rent of `changes` at ledger `ledgerSeq` at a rent write fee of `perRent1KB` per KiB (the host's compute_rent_fee). */
export function rentFee(changes: RentChange[], ledgerSeq: number, perRent1KB: number): number {
  const s = FEE_SETTINGS;
  const forSize = (persistent: boolean, size: number, ledgers: number) =>
    Math.ceil((size * perRent1KB * ledgers) / (1024 * (persistent ? s.persistentRentRateDenominator : s.tempRentRateDenominator)));
  let fee = 0;
  let extended = 0;
  for (const c of changes) {
    const isNew = c.oldSize === 0 && c.oldLiveUntil === 0;
    // A new entry pays from this ledger on; an extended one from the ledger after its old end.
    const paidThrough = isNew ? ledgerSeq - 1 : c.oldLiveUntil;
    if (c.newLiveUntil > paidThrough) fee += forSize(c.persistent, c.newSize, c.newLiveUntil - paidThrough);
    // Growing an entry pays the growth for the ledgers already paid for.
    if (!isNew && c.newSize > c.oldSize && c.oldLiveUntil >= ledgerSeq)
      fee += forSize(c.persistent, c.newSize - c.oldSize, c.oldLiveUntil - ledgerSeq + 1);
    if (c.oldLiveUntil < c.newLiveUntil) extended += 1;
  }
  // Each extension writes a TTL entry.
  return fee + extended * s.feeWriteLedgerEntry + perKB(extended * TTL_ENTRY_SIZE, s.feeWrite1KB);
}

export function refundableFee(r: Refundables, ledgerSeq: number, perRent1KB: number): number {
  return eventsFee(r) + rentFee(r.rentChanges, ledgerSeq, perRent1KB);
}

export function eventsFee(r: Refundables): number {
  return perKB(r.eventsBytes, FEE_SETTINGS.feeContractEvents1KB);
}

/** What one ledger can hold of Soroban work (the network's ledger-wide limits, Mainnet's values). */
export interface LedgerLimits {
  /** Soroban transactions per ledger (no explicit limit on the network: the resources below bind first). */
  transactions: number;
  instructions: number;
  /** Soroban transactions' envelope bytes. */
  txSizeBytes: number;
  diskReadEntries: number;
  writeEntries: number;
  writeBytes: number;
}

export const LEDGER_LIMITS: LedgerLimits = {
  transactions: Number.POSITIVE_INFINITY,
  instructions: 580_000_000,
  txSizeBytes: 266_240,
  diskReadEntries: 1000,
  writeEntries: 1000,
  writeBytes: 286_720,
};
