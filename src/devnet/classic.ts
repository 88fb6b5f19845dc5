/**
 * The one classic operation the devnet applies: `createAccount` (what a facilitator needs to open
 * its channel accounts from one funded account; docs/DEVNET.md). A transaction of createAccount
 * operations only, all from the transaction's source, is applied all-or-nothing as stellar-core
 * does: the sequence is consumed and the fee charged whatever happens; an existing destination
 * (`createAccountAlreadyExist`), a starting balance that is not positive (`createAccountMalformed`)
 * or one the source cannot pay while keeping its reserve (`createAccountUnderfunded`) fails the
 * whole transaction and creates nothing.
 */
import { StrKey, xdr } from '@stellar/stellar-sdk';
import { putAccount, readAccount, replaceAccount, type AccountPatch } from './accounts.ts';
import { BASE_FEE } from './fees.ts';
import { ledgerEntry, muxedToG, type ParsedTx } from './envelope.ts';
import { storeRecord, transactionResult, type ApplyContext } from './apply.ts';
import { accountKey, bytesOf } from './xdr.ts';

/** The reserve an account keeps (two base reserves of 0.5 XLM), in stroops. */
export const MIN_ACCOUNT_BALANCE = 10_000_000n;

/** True when every operation is a createAccount from the transaction's own source. */
export function isCreateAccountTransaction(tx: xdr.Transaction): boolean {
  return (
    tx.operations.length > 0 &&
    tx.ext.type !== 'sorobanData' &&
    tx.operations.every(
      (op) => op.body.type === 'createAccount' && (!op.sourceAccount || muxedToG(op.sourceAccount) === muxedToG(tx.sourceAccount)),
    )
  );
}

type CreateCode = 'createAccountSuccess' | 'createAccountMalformed' | 'createAccountUnderfunded' | 'createAccountAlreadyExist';

export function applyCreateAccounts(
  ledger: Pick<ApplyContext, 'state' | 'txs'>,
  p: ParsedTx,
  seq: number,
  closeTime: number,
  order: number,
): void {
  const tx = p.tx;
  const before: xdr.LedgerEntryChange[] = [];
  const snapshot = (g: string, patch: AccountPatch) => {
    before.push(xdr.LedgerEntryChange.ledgerEntryState(ledgerEntry(ledger.state.get(accountKey(g))!)));
    replaceAccount(ledger.state, g, patch, seq);
    before.push(xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(ledger.state.get(accountKey(g))!)));
  };
  snapshot(p.source, { seqNum: tx.seqNum });
  const charged = BigInt(BASE_FEE * p.numOps);
  snapshot(p.feeSource, { balance: readAccount(ledger.state, p.feeSource)!.balance - charged });

  // Check every operation first: all or nothing.
  const ops = tx.operations.map((op) => (op.body.type === 'createAccount' ? op.body.createAccountOp : null)!);
  let available = readAccount(ledger.state, p.source)!.balance - MIN_ACCOUNT_BALANCE;
  const seen = new Set<string>();
  const codes: CreateCode[] = ops.map((op) => {
    const destination = StrKey.encodeEd25519PublicKey(Buffer.from(bytesOf(op.destination.ed25519)));
    const amount = BigInt(op.startingBalance);
    if (amount <= 0n) return 'createAccountMalformed';
    if (readAccount(ledger.state, destination) || seen.has(destination)) return 'createAccountAlreadyExist';
    seen.add(destination);
    if (amount > available) return 'createAccountUnderfunded';
    available -= amount;
    return 'createAccountSuccess';
  });
  const ok = codes.every((c) => c === 'createAccountSuccess');
  const operationMetas: xdr.OperationMetaV2[] = [];
  if (ok) {
    for (const op of ops) {
      const destination = StrKey.encodeEd25519PublicKey(Buffer.from(bytesOf(op.destination.ed25519)));
      const amount = BigInt(op.startingBalance);
      const changes: xdr.LedgerEntryChange[] = [
        xdr.LedgerEntryChange.ledgerEntryState(ledgerEntry(ledger.state.get(accountKey(p.source))!)),
      ];
      replaceAccount(ledger.state, p.source, { balance: readAccount(ledger.state, p.source)!.balance - amount }, seq);
      changes.push(xdr.LedgerEntryChange.ledgerEntryUpdated(ledgerEntry(ledger.state.get(accountKey(p.source))!)));
      putAccount(ledger.state, destination, amount, seq);
      changes.push(xdr.LedgerEntryChange.ledgerEntryCreated(ledgerEntry(ledger.state.get(accountKey(destination))!)));
      operationMetas.push(new xdr.OperationMetaV2({ ext: xdr.ExtensionPoint.v0(), changes, events: [] }));
    }
  }
  const opResults = codes.map((code) =>
    xdr.OperationResult.opInner(xdr.OperationResultTr.createAccount(xdr.CreateAccountResult[code]() as xdr.CreateAccountResult)),
  );
  const txResult = transactionResult(p, ok, opResults, charged);
  const meta = xdr.TransactionMeta.v4(
    new xdr.TransactionMetaV4({
      ext: xdr.ExtensionPoint.v0(),
      txChangesBefore: before,
      operations: operationMetas,
      txChangesAfter: [],
      sorobanMeta: null,
      events: [],
      diagnosticEvents: [],
    }),
  );
  storeRecord(ledger, p, { ok, seq, closeTime, order, result: txResult, meta }, { contractEventsXdr: ops.map(() => []) });
}
