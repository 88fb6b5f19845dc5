/**
 * A SAC `transfer` built, authorized and submitted the way a buyer and a facilitator do it, with
 * @stellar/stellar-sdk over the devnet's JSON-RPC (record simulation, the payer signs the auth
 * entries, enforce simulation, assembly). The devnet's tests and bench/devnet/devnet.ts drive the devnet
 * with it; svc's own buyer is src/chains/stellar/exact/buyer.ts.
 */
import {
  Address,
  Contract,
  Keypair,
  TransactionBuilder,
  authorizeEntry,
  nativeToScVal,
  rpc,
  xdr,
  type Transaction,
} from '@stellar/stellar-sdk';

/** Raw JSON-RPC call (to see exactly what the wire carries); `T` is the result's expected shape. */
export async function rawRpc<T = unknown>(
  url: string,
  method: string,
  params?: unknown,
): Promise<{ result?: T; error?: { code: number; message: string } }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params ?? null }),
  });
  return (await res.json()) as never;
}

export interface TransferArgs {
  contractId: string;
  from: string;
  to: string;
  amount: bigint;
  /** Source of the transaction (the submitter). */
  source: Keypair;
  fee?: string;
}

export async function buildTransfer(s: rpc.Server, networkPassphrase: string, a: TransferArgs): Promise<Transaction> {
  const account = await s.getAccount(a.source.publicKey());
  return new TransactionBuilder(account, { fee: a.fee ?? '100', networkPassphrase })
    .addOperation(
      new Contract(a.contractId).call(
        'transfer',
        new Address(a.from).toScVal(),
        new Address(a.to).toScVal(),
        nativeToScVal(a.amount, { type: 'i128' }),
      ),
    )
    .setTimeout(300)
    .build();
}

/** Record → sign the auth entries with `payer` → enforce re-simulation → assemble → sign by the source. */
export async function preparePayment(
  s: rpc.Server,
  networkPassphrase: string,
  a: TransferArgs & { payer: Keypair; expirationLedger?: number; legacyAuth?: boolean },
): Promise<{
  tx: Transaction;
  record: rpc.Api.SimulateTransactionSuccessResponse;
  enforce: rpc.Api.SimulateTransactionSuccessResponse;
  auth: xdr.SorobanAuthorizationEntry[];
}> {
  const tx = await buildTransfer(s, networkPassphrase, a);
  const record = await s.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(record)) throw new Error(`record simulation failed: ${(record as { error?: string }).error}`);
  let recorded = record.result!.auth;
  if (a.legacyAuth) {
    // SDK 17 always asks for CAP-71 V2 credentials; ask the wire directly for legacy ADDRESS ones.
    const raw = await rawRpc<{ results: Array<{ auth: string[] }> }>(s.serverURL.toString(), 'simulateTransaction', {
      transaction: tx.toXDR(),
    });
    const entries = raw.result?.results[0]?.auth;
    if (!entries) throw new Error(`record simulation over the wire failed: ${raw.error?.message ?? 'no auth entries'}`);
    recorded = entries.map((b) => xdr.SorobanAuthorizationEntry.fromXdr(b, 'base64'));
  }
  const latest = await s.getLatestLedger();
  const exp = a.expirationLedger ?? latest.sequence + 20;
  const auth = await Promise.all(recorded.map((e) => authorizeEntry(e, a.payer, exp, networkPassphrase)));
  const withAuth = rebuildWithAuth(tx, auth, networkPassphrase);
  const enforce = await s.simulateTransaction(withAuth);
  if (!rpc.Api.isSimulationSuccess(enforce)) throw new Error(`enforce simulation failed: ${(enforce as { error?: string }).error}`);
  const assembled = rpc.assembleTransaction(withAuth, enforce).build();
  assembled.sign(a.source);
  return { tx: assembled, record, enforce, auth };
}

/** Same transaction with `auth` placed on its single invokeHostFunction operation (unsigned). */
export function rebuildWithAuth(tx: Transaction, auth: xdr.SorobanAuthorizationEntry[], networkPassphrase: string): Transaction {
  return mutateTx(tx, networkPassphrase, (t) => {
    const op = t.operations[0]!;
    if (op.body.type !== 'invokeHostFunction') throw new Error('expected invokeHostFunction');
    const body = xdr.OperationBody.invokeHostFunction(
      new xdr.InvokeHostFunctionOp({ hostFunction: op.body.invokeHostFunctionOp.hostFunction, auth }),
    );
    return { operations: [new xdr.Operation({ sourceAccount: op.sourceAccount, body })] };
  });
}

/** A new Transaction with some fields of the inner xdr.Transaction replaced, unsigned. */
export function mutateTx(
  tx: Transaction,
  networkPassphrase: string,
  patch: (
    t: xdr.Transaction,
  ) => Partial<{ fee: number; seqNum: bigint; cond: xdr.Preconditions; operations: xdr.Operation[]; ext: xdr.TransactionExt }>,
): Transaction {
  const env = tx.toEnvelope();
  if (env.type !== 'envelopeTypeTx') throw new Error('expected a v1 envelope');
  const t = env.v1.tx;
  const p = patch(t);
  const newTx = new xdr.Transaction({
    sourceAccount: t.sourceAccount,
    fee: p.fee ?? t.fee,
    seqNum: p.seqNum ?? t.seqNum,
    cond: p.cond ?? t.cond,
    memo: t.memo,
    operations: p.operations ?? t.operations,
    ext: p.ext ?? t.ext,
  });
  const newEnv = xdr.TransactionEnvelope.envelopeTypeTx(new xdr.TransactionV1Envelope({ tx: newTx, signatures: [] }));
  return TransactionBuilder.fromXDR(newEnv.toXdr('base64'), networkPassphrase) as Transaction;
}
