/**
 * Applying a RestoreFootprint transaction at ledger close (docs/DEVNET.md "Entry TTLs and
 * archival"): every archived persistent entry of its read-write footprint lives again for the
 * network's minimum persistent TTL, paying that rent; live or missing entries are left alone, as
 * core does. Sequence consumed and fee charged whether or not it succeeds.
 */
import { xdr } from '@stellar/stellar-sdk';
import { readAccount, replaceAccount, type AccountPatch } from './accounts.ts';
import { nonRefundableFee, rentFee, type NetworkTtls, type RentChange } from './fees.ts';
import { storeRecord, transactionResult } from './apply.ts';
import { declaredFromData, ledgerEntry, type ParsedTx } from './envelope.ts';
import type { TxRecord } from './records.ts';
import { isArchived, type LedgerState } from './state.ts';
import { accountKey } from './xdr.ts';

export interface RestoreContext {
  readonly state: LedgerState;
  readonly txs: Map<string, TxRecord>;
  readonly ttls: NetworkTtls;
}

export function isRestoreTransaction(tx: xdr.Transaction): boolean {
  return tx.operations.length === 1 && tx.operations[0]!.body.type === 'restoreFootprint';
}

export function applyRestore(
  ledger: RestoreContext,
  p: ParsedTx,
  seq: number,
  closeTime: number,
  order: number,
  inclusionPerOp: number,
): void {
  const tx = p.tx;
  if (tx.ext.type !== 'sorobanData') throw new Error('a RestoreFootprint transaction without Soroban data passed validation');
  const sd = tx.ext.sorobanData;
  const before: xdr.LedgerEntryChange[] = [];
  const account = (g: string, patch: AccountPatch) => {
    before.push(xdr.LedgerEntryChange.ledgerEntryState(ledgerEntry(ledger.state.get(accountKey(g))!)));
    replaceAccount(ledger.state, g, patch, seq);
    before.push(xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(ledger.state.get(accountKey(g))!)));
  };
  account(p.source, { seqNum: tx.seqNum });

  const liveUntil = seq + ledger.ttls.minPersistentTtl - 1;
  const restored = sd.resources.footprint.readWrite.flatMap((key) => {
    const entry = ledger.state.get(key);
    return entry && isArchived(entry, seq) ? [{ ...entry, lastModified: seq, liveUntil }] : [];
  });
  const rentChanges: RentChange[] = restored.map((e) => ({
    persistent: true,
    oldSize: 0,
    newSize: ledgerEntry(e).toXdr().length,
    oldLiveUntil: 0,
    newLiveUntil: liveUntil,
  }));
  const nonRefundable = nonRefundableFee(declaredFromData(sd), p.innerEnvelopeSize);
  const rent = rentFee(rentChanges, seq, ledger.ttls.rentWriteFeePer1KB);
  const ok = sd.resources.footprint.readOnly.length === 0 && rent <= Number(sd.resourceFee) - nonRefundable;
  const charged = BigInt(inclusionPerOp * p.numOps + nonRefundable + (ok ? rent : 0));
  account(p.feeSource, { balance: readAccount(ledger.state, p.feeSource)!.balance - charged });

  const changes: xdr.LedgerEntryChange[] = [];
  if (ok) {
    for (const e of restored) {
      ledger.state.put(e.key, e.data, seq, liveUntil);
      changes.push(xdr.LedgerEntryChange.ledgerEntryRestored(ledgerEntry(e)));
    }
  }
  const opResult = xdr.OperationResult.opInner(
    xdr.OperationResultTr.restoreFootprint(
      ok
        ? xdr.RestoreFootprintResult.restoreFootprintSuccess()
        : sd.resources.footprint.readOnly.length > 0
          ? xdr.RestoreFootprintResult.restoreFootprintMalformed()
          : xdr.RestoreFootprintResult.restoreFootprintInsufficientRefundableFee(),
    ),
  );
  const meta = xdr.TransactionMeta.v4(
    new xdr.TransactionMetaV4({
      ext: xdr.ExtensionPoint.v0(),
      txChangesBefore: before,
      operations: [new xdr.OperationMetaV2({ ext: xdr.ExtensionPoint.v0(), changes, events: [] })],
      txChangesAfter: [],
      sorobanMeta: new xdr.SorobanTransactionMetaV2({
        ext: xdr.SorobanTransactionMetaExt.v1(
          new xdr.SorobanTransactionMetaExtV1({
            ext: xdr.ExtensionPoint.v0(),
            totalNonRefundableResourceFeeCharged: BigInt(nonRefundable),
            totalRefundableResourceFeeCharged: BigInt(ok ? rent : 0),
            rentFeeCharged: BigInt(ok ? rent : 0),
          }),
        ),
        returnValue: null,
      }),
      events: [],
      diagnosticEvents: [],
    }),
  );
  storeRecord(
    ledger,
    p,
    { ok, seq, closeTime, order, result: transactionResult(p, ok, [opResult], charged), meta },
    { contractEventsXdr: [[]] },
  );
}
