/**
 * Test helpers for the devnet suites. Building, authorizing and submitting a SAC transfer the way
 * a buyer + facilitator pair does it lives in src/devnet/transfers.ts (the benchmarks use it too)
 * and is re-exported here.
 */
import { rpc, type Transaction } from '@stellar/stellar-sdk';
import type { Devnet } from '../../src/devnet/index.ts';
import { rawRpc as typedRawRpc } from '../../src/devnet/transfers.ts';

export { buildTransfer, mutateTx, preparePayment, rebuildWithAuth, type TransferArgs } from '../../src/devnet/transfers.ts';

/** src/devnet/transfers.ts rawRpc with an untyped result: the tests read the wire freely. */
export const rawRpc = (url: string, method: string, params?: unknown) => typedRawRpc<any>(url, method, params);

export const server = (devnet: Devnet) => new rpc.Server(devnet.rpcUrl, { allowHttp: true });

/** Decode the TransactionResult code of an ERROR sendTransaction response (innermost for fee bumps). */
export function txErrorCode(r: rpc.Api.SendTransactionResponse): string | undefined {
  const res = r.errorResult?.result;
  if (!res) return undefined;
  if (res.type === 'txFeeBumpInnerFailed') return res.innerResultPair.result.result.type;
  return res.type;
}

/** Simulate over raw JSON-RPC with explicit params (authMode, useUpgradedAuth). */
export async function simulateRaw(devnet: Devnet, tx: Transaction, params: Record<string, unknown> = {}) {
  const r = await rawRpc(devnet.rpcUrl, 'simulateTransaction', { transaction: tx.toXDR(), ...params });
  if (r.error) throw new Error(`rpc error ${r.error.code}: ${r.error.message}`);
  return r.result as {
    error?: string;
    transactionData?: string;
    minResourceFee?: string;
    events: string[];
    results?: Array<{ auth: string[]; xdr: string }>;
    latestLedger: number;
  };
}

/** Submit and close a ledger; return the getTransaction answer. */
export async function submitAndClose(devnet: Devnet, s: rpc.Server, tx: Transaction | import('@stellar/stellar-sdk').FeeBumpTransaction) {
  const sent = await s.sendTransaction(tx);
  if (sent.status !== 'PENDING') return { sent, got: null };
  await devnet.closeLedger();
  return { sent, got: await s.getTransaction(sent.hash) };
}
