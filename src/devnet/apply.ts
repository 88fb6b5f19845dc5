/**
 * Applying a valid transaction at ledger close: sequence consumed, fee charged, the contract
 * invoked with its footprint and declared resources enforced, then the result, the meta (with
 * CAP-67 fee events) and the transaction record getTransaction serves (docs/DEVNET.md).
 */
import { Asset, hash, xdr } from '@stellar/stellar-sdk';
import { readAccount, replaceAccount } from './accounts.ts';
import { BASE_FEE, eventsFee, nonRefundableFee, rentFee, type NetworkTtls } from './fees.ts';
import { HostError, type Host, type InvokeResult } from './host.ts';
import { declaredFromData, declaredResources, footprintOf, ledgerEntry, muxedToG, refundablesOf, type ParsedTx } from './envelope.ts';
import type { TxRecord } from './records.ts';
import { StateView, type LedgerState } from './state.ts';
import { accountKey, addressString, b64, contractIdBytes, i128, keyId, scAddress } from './xdr.ts';

/** What applying a transaction uses of the ledger (a DevnetLedger): its state, the host and the transaction records. */
export interface ApplyContext {
  readonly networkPassphrase: string;
  readonly state: LedgerState;
  readonly host: Host;
  readonly txs: Map<string, TxRecord>;
  readonly randomNonce: () => bigint;
  readonly ttls: NetworkTtls;
}

export function recordInternalError(ledger: Pick<ApplyContext, 'txs'>, p: ParsedTx, seq: number, closeTime: number, order: number): void {
  const result = new xdr.TransactionResult({
    feeCharged: 0n,
    result: xdr.TransactionResultResult.txInternalError(),
    ext: xdr.TransactionResultExt.v0(),
  });
  const meta = xdr.TransactionMeta.v4(
    new xdr.TransactionMetaV4({
      ext: xdr.ExtensionPoint.v0(),
      txChangesBefore: [],
      operations: [],
      txChangesAfter: [],
      sorobanMeta: null,
      events: [],
      diagnosticEvents: [],
    }),
  );
  storeRecord(ledger, p, { ok: false, seq, closeTime, order, result, meta }, { contractEventsXdr: [[]] });
}

/** `inclusionPerOp`: the ledger's inclusion fee per operation (the network minimum, or the surge price when the ledger was full). */
export function applyTransaction(
  ledger: ApplyContext,
  p: ParsedTx,
  seq: number,
  closeTime: number,
  order: number,
  inclusionPerOp: number = BASE_FEE,
): void {
  const tx = p.tx;
  const sd = tx.ext.type === 'sorobanData' ? tx.ext.sorobanData : null;
  const before: xdr.LedgerEntryChange[] = [];
  const snapshot = (g: string) => {
    const e = ledger.state.get(accountKey(g))!;
    before.push(xdr.LedgerEntryChange.ledgerEntryState(ledgerEntry(e)));
  };
  // Sequence consumed regardless of the outcome.
  snapshot(p.source);
  replaceAccount(ledger.state, p.source, { seqNum: tx.seqNum }, seq);
  before.push(xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(ledger.state.get(accountKey(p.source))!)));

  const op = tx.operations[0]!;
  let res: InvokeResult | null = null;
  let failure: 'trapped' | 'entryArchived' | 'resourceLimitExceeded' | 'insufficientRefundableFee' | null = null;
  let view: StateView | null = null;
  const declared = sd ? declaredFromData(sd) : null;
  let refundable = 0;
  let rent = 0;
  const ihf = op.body.type === 'invokeHostFunction' ? op.body.invokeHostFunctionOp : null;
  const hf = ihf?.hostFunction;
  if (ihf && hf && hf.type === 'hostFunctionTypeInvokeContract' && sd && declared) {
    const call = hf.invokeContract;
    view = new StateView(ledger.state, seq);
    res = ledger.host.invoke(
      {
        view,
        ledgerSeq: seq,
        source: muxedToG(op.sourceAccount ?? tx.sourceAccount),
        authMode: 'enforce',
        authEntries: ihf.auth,
        useUpgradedAuth: false,
        randomNonce: ledger.randomNonce,
      },
      addressString(call.contractAddress),
      String(call.functionName),
      call.args,
    );
    if (!res.ok) failure = 'trapped';
    else {
      const fp = sd.resources.footprint;
      const ro = new Set(fp.readOnly.map(keyId));
      const rw = new Set(fp.readWrite.map(keyId));
      for (const [id, acc] of view.accesses) {
        if (acc.write ? !rw.has(id) : !ro.has(id) && !rw.has(id)) {
          failure = 'trapped';
          res.error = new HostError('Storage', 'ExceededLimit', 'trying to access contract storage key outside of the footprint');
          break;
        }
      }
      // An archived entry in the footprint that the transaction does not restore: core fails it.
      if (!failure && view.archived.size > 0) failure = 'entryArchived';
      if (!failure) {
        const used = declaredResources(view, footprintOf(view));
        if (
          used.diskReadBytes > declared.diskReadBytes ||
          used.writeBytes > declared.writeBytes ||
          used.instructions > declared.instructions
        )
          failure = 'resourceLimitExceeded';
      }
      if (!failure) {
        const refundables = refundablesOf(res, view);
        rent = rentFee(refundables.rentChanges, seq, ledger.ttls.rentWriteFeePer1KB);
        refundable = eventsFee(refundables) + rent;
        const budget = Number(sd.resourceFee) - nonRefundableFee(declared, p.innerEnvelopeSize);
        if (refundable > budget) failure = 'insufficientRefundableFee';
      }
    }
  } else {
    failure = 'trapped';
  }
  if (failure) {
    refundable = 0;
    rent = 0;
  }
  const nonRefundable = declared ? nonRefundableFee(declared, p.innerEnvelopeSize) : 0;
  const inclusion = inclusionPerOp * p.numOps;
  const charged = BigInt(inclusion + nonRefundable + refundable);

  // Fee charged to the fee source, success or not.
  snapshot(p.feeSource);
  const payer = readAccount(ledger.state, p.feeSource)!;
  replaceAccount(ledger.state, p.feeSource, { balance: payer.balance - charged }, seq);
  before.push(xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(ledger.state.get(accountKey(p.feeSource))!)));

  const opChanges: xdr.LedgerEntryChange[] = [];
  if (!failure && view) {
    for (const [id, after] of view.changed()) {
      const prev = view.original(id);
      if (prev) opChanges.push(xdr.LedgerEntryChange.ledgerEntryState(ledgerEntry(prev)));
      if (after)
        opChanges.push(
          prev
            ? xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(after))
            : xdr.LedgerEntryChange.ledgerEntryCreated(ledgerEntry(after)),
        );
      else opChanges.push(xdr.LedgerEntryChange.ledgerEntryRemoved(prev!.key));
    }
    view.commit();
  }
  const ok = !failure && res !== null;
  const contractEvents = ok ? res!.contractEvents : [];
  const retval = ok ? res!.retval : xdr.ScVal.scvVoid();
  const ihfResult = ok
    ? xdr.InvokeHostFunctionResult.invokeHostFunctionSuccess(
        hash(new xdr.InvokeHostFunctionSuccessPreImage({ returnValue: retval, events: contractEvents }).toXdr()),
      )
    : failure === 'entryArchived'
      ? xdr.InvokeHostFunctionResult.invokeHostFunctionEntryArchived()
      : failure === 'resourceLimitExceeded'
        ? xdr.InvokeHostFunctionResult.invokeHostFunctionResourceLimitExceeded()
        : failure === 'insufficientRefundableFee'
          ? xdr.InvokeHostFunctionResult.invokeHostFunctionInsufficientRefundableFee()
          : xdr.InvokeHostFunctionResult.invokeHostFunctionTrapped();
  const opResults = [xdr.OperationResult.opInner(xdr.OperationResultTr.invokeHostFunction(ihfResult))];
  const txResult = transactionResult(p, ok, opResults, charged);

  // CAP-67 fee events: the full fee charged up front, then the refund (negative).
  const nativeSac = Asset.native().contractId(ledger.networkPassphrase);
  const feeEvent = (amount: bigint, stage: xdr.TransactionEventStage) =>
    new xdr.TransactionEvent({
      stage,
      event: new xdr.ContractEvent({
        ext: xdr.ExtensionPoint.v0(),
        contractId: new xdr.ContractId(contractIdBytes(nativeSac)),
        type: xdr.ContractEventType.contract,
        body: xdr.ContractEventBody.v0(
          new xdr.ContractEventV0({
            topics: [xdr.ScVal.scvSymbol('fee'), xdr.ScVal.scvAddress(scAddress(p.feeSource))],
            data: i128(amount),
          }),
        ),
      }),
    });
  const declaredFee = p.feeBump ? p.fee : BigInt(tx.fee);
  const txEvents = [
    feeEvent(declaredFee, xdr.TransactionEventStage.transactionEventStageBeforeAllTxs),
    feeEvent(charged - declaredFee, xdr.TransactionEventStage.transactionEventStageAfterAllTxs),
  ];

  const diagnosticEvents = res
    ? ok
      ? res.diagnostics
      : res.diagnostics.map((d) => new xdr.DiagnosticEvent({ inSuccessfulContractCall: false, event: d.event }))
    : [];
  const meta = xdr.TransactionMeta.v4(
    new xdr.TransactionMetaV4({
      ext: xdr.ExtensionPoint.v0(),
      txChangesBefore: before,
      operations: [new xdr.OperationMetaV2({ ext: xdr.ExtensionPoint.v0(), changes: opChanges, events: contractEvents })],
      txChangesAfter: [],
      sorobanMeta: new xdr.SorobanTransactionMetaV2({
        ext: xdr.SorobanTransactionMetaExt.v1(
          new xdr.SorobanTransactionMetaExtV1({
            ext: xdr.ExtensionPoint.v0(),
            totalNonRefundableResourceFeeCharged: BigInt(nonRefundable),
            totalRefundableResourceFeeCharged: BigInt(refundable),
            rentFeeCharged: BigInt(rent),
          }),
        ),
        returnValue: ok ? retval : null,
      }),
      events: txEvents,
      diagnosticEvents,
    }),
  );
  storeRecord(
    ledger,
    p,
    { ok, seq, closeTime, order, result: txResult, meta },
    {
      transactionEventsXdr: txEvents.map(b64),
      diagnosticEventsXdr: diagnosticEvents.map(b64),
      contractEventsXdr: [contractEvents.map(b64)],
    },
  );
}

/** The TransactionResult of an applied transaction: txSuccess/txFailed, inside a fee-bump pair when wrapped. */
export function transactionResult(p: ParsedTx, ok: boolean, opResults: xdr.OperationResult[], charged: bigint): xdr.TransactionResult {
  let result: xdr.TransactionResultResult;
  if (p.feeBump) {
    const inner = new xdr.InnerTransactionResult({
      feeCharged: 0n,
      result: ok ? xdr.InnerTransactionResultResult.txSuccess(opResults) : xdr.InnerTransactionResultResult.txFailed(opResults),
      ext: xdr.InnerTransactionResultExt.v0(),
    });
    const pair = new xdr.InnerTransactionResultPair({ transactionHash: Buffer.from(p.innerHash!, 'hex'), result: inner });
    result = ok ? xdr.TransactionResultResult.txFeeBumpInnerSuccess(pair) : xdr.TransactionResultResult.txFeeBumpInnerFailed(pair);
  } else {
    result = ok ? xdr.TransactionResultResult.txSuccess(opResults) : xdr.TransactionResultResult.txFailed(opResults);
  }
  return new xdr.TransactionResult({ feeCharged: charged, result, ext: xdr.TransactionResultExt.v0() });
}

/** A transaction as a ledger applied it: its outcome, place and XDR. */
export interface AppliedTransaction {
  ok: boolean;
  seq: number;
  closeTime: number;
  order: number;
  result: xdr.TransactionResult;
  meta: xdr.TransactionMeta;
}

/**
 * What getTransaction serves for an applied transaction, under its hash (and the inner hash of a
 * fee bump); events default to none.
 */
export function storeRecord(
  ledger: Pick<ApplyContext, 'txs'>,
  p: ParsedTx,
  applied: AppliedTransaction,
  events: Partial<Pick<TxRecord, 'transactionEventsXdr' | 'contractEventsXdr' | 'diagnosticEventsXdr'>> = {},
): void {
  const record: TxRecord = {
    status: applied.ok ? 'SUCCESS' : 'FAILED',
    ledger: applied.seq,
    createdAt: applied.closeTime,
    applicationOrder: applied.order,
    feeBump: p.feeBump !== null,
    envelopeXdr: b64(p.envelope),
    resultXdr: b64(applied.result),
    resultMetaXdr: b64(applied.meta),
    transactionEventsXdr: events.transactionEventsXdr ?? [],
    contractEventsXdr: events.contractEventsXdr ?? [],
    diagnosticEventsXdr: events.diagnosticEventsXdr ?? [],
  };
  ledger.txs.set(p.hash, record);
  if (p.innerHash) ledger.txs.set(p.innerHash, record);
}
