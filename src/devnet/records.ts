/**
 * The history the devnet serves: a LedgerRecord per closed ledger (getLatestLedger, getLedgers),
 * built here from the ledger's header, history entry and close meta, and a TxRecord per applied
 * transaction (getTransaction), built by apply.ts and classic.ts. DevnetLedger keeps both for its
 * retention window; this file is only their shapes and the ledger's XDR.
 */
import { hash, xdr } from '@stellar/stellar-sdk';
import { BASE_FEE } from './fees.ts';
import { b64, hex, ZERO32 } from './xdr.ts';

/** Protocol 27: the first with CAP-71 ADDRESS_V2 credentials, which the devnet accepts. */
export const PROTOCOL_VERSION = 27;

/** A closed ledger as getLatestLedger and getLedgers serve it. */
export interface LedgerRecord {
  sequence: number;
  closeTime: number;
  hash: string;
  /** LedgerHeader (what getLatestLedger returns). */
  headerXdr: string;
  /** LedgerHeaderHistoryEntry (what getLedgers returns). */
  historyEntryXdr: string;
  metadataXdr: string;
}

/** An applied transaction as getTransaction serves it (under its hash, and a fee bump's inner hash too). */
export interface TxRecord {
  status: 'SUCCESS' | 'FAILED';
  ledger: number;
  createdAt: number;
  applicationOrder: number;
  feeBump: boolean;
  envelopeXdr: string;
  resultXdr: string;
  resultMetaXdr: string;
  transactionEventsXdr: string[];
  contractEventsXdr: string[][];
  /** fn_call / contract / fn_return / error diagnostics (the network runs with diagnostics on). */
  diagnosticEventsXdr: string[];
}

/**
 * The record of a closed ledger: its header (chained to the previous ledger's hash), history entry
 * and close meta. The meta's transaction set is generalized, as the network's: a classic phase and
 * a Soroban phase, each carrying the inclusion fee per operation its lane charged
 * (`sorobanBaseFee`: the base fee, or the surge price when the ledger was full).
 */
export function ledgerRecord(
  seq: number,
  closeTime: number,
  txs: xdr.TransactionEnvelope[],
  previousLedgerHash: Uint8Array,
  sorobanBaseFee: number = BASE_FEE,
): LedgerRecord {
  const isSoroban = (t: xdr.TransactionEnvelope) =>
    (t.type === 'envelopeTypeTxFeeBump' ? t.feeBump.tx.innerTx.v1.tx : t.type === 'envelopeTypeTx' ? t.v1.tx : null)?.ext.type ===
    'sorobanData';
  const txSet = xdr.GeneralizedTransactionSet.v1TxSet(
    new xdr.TransactionSetV1({
      previousLedgerHash,
      phases: [
        xdr.TransactionPhase.v0Components([
          xdr.TxSetComponent.txsetCompTxsMaybeDiscountedFee(
            new xdr.TxSetComponentTxsMaybeDiscountedFee({ baseFee: BigInt(BASE_FEE), txs: txs.filter((t) => !isSoroban(t)) }),
          ),
        ]),
        xdr.TransactionPhase.parallelTxsComponent(
          new xdr.ParallelTxsComponent({
            baseFee: BigInt(sorobanBaseFee),
            executionStages: txs.some(isSoroban) ? [[txs.filter(isSoroban)]] : [],
          }),
        ),
      ],
    }),
  );
  const header = new xdr.LedgerHeader({
    ledgerVersion: PROTOCOL_VERSION,
    previousLedgerHash,
    scpValue: new xdr.StellarValue({
      txSetHash: hash(txSet.toXdr()),
      closeTime: BigInt(closeTime),
      upgrades: [],
      ext: xdr.StellarValueExt.stellarValueBasic(),
    }),
    txSetResultHash: ZERO32,
    bucketListHash: ZERO32,
    ledgerSeq: seq,
    totalCoins: 1_000_000_000_000_000_000n,
    feePool: 0n,
    inflationSeq: 0,
    idPool: 0n,
    baseFee: BASE_FEE,
    baseReserve: 5_000_000,
    maxTxSetSize: 1000,
    skipList: [ZERO32, ZERO32, ZERO32, ZERO32],
    ext: xdr.LedgerHeaderExt.v0(),
  });
  const headerHash = hash(header.toXdr());
  const historyEntry = new xdr.LedgerHeaderHistoryEntry({ hash: headerHash, header, ext: xdr.LedgerHeaderHistoryEntryExt.v0() });
  const meta = xdr.LedgerCloseMeta.v2(
    new xdr.LedgerCloseMetaV2({
      ext: xdr.LedgerCloseMetaExt.v0(),
      ledgerHeader: historyEntry,
      txSet,
      txProcessing: [],
      upgradesProcessing: [],
      scpInfo: [],
      totalByteSizeOfLiveSorobanState: 0n,
      evictedKeys: [],
    }),
  );
  return {
    sequence: seq,
    closeTime,
    hash: hex(headerHash),
    headerXdr: b64(header),
    historyEntryXdr: b64(historyEntry),
    metadataXdr: b64(meta),
  };
}
