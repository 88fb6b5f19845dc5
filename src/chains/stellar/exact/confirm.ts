/**
 * Waiting for a submitted transaction's final outcome. Polls getTransaction around the expected
 * ledger close (not on a fixed second) and stops only when the outcome is final: SUCCESS, FAILED,
 * or NOT_FOUND while the RPC's latest ledger closed after the transaction's own maxTime (the
 * network would reject it as txTOO_LATE, so it can never land). A local deadline a little past
 * maxTime bounds the wait when the RPC itself stops answering.
 */
import { RpcError, type ChainRpc, type TransactionStatus } from '../rpc.ts';

export type Outcome =
  | { kind: 'success'; status: TransactionStatus }
  | { kind: 'failed'; status: TransactionStatus }
  /** Not included, and provably never will be. */
  | { kind: 'expired'; detail: string }
  /** The RPC could not tell us before the local deadline. */
  | { kind: 'unknown'; detail: string };

export interface ConfirmOptions {
  rpc: Pick<ChainRpc, 'getTransaction'>;
  hash: string;
  /** The transaction's maxTime (unix seconds). */
  maxTime: number;
  ledgerSeconds: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const MIN_POLL_MS = 25;
const MAX_POLL_MS = 2_000;

export function pollDelays(ledgerSeconds: number): { afterClose: number; waiting: number } {
  const ledgerMs = ledgerSeconds * 1000;
  const clamp = (ms: number) => Math.round(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, ms)));
  // After a close we expect nothing for about one ledger; around the expected close, poll finer.
  return { afterClose: clamp(ledgerMs * 0.9), waiting: clamp(ledgerMs / 5) };
}

export async function confirmTransaction({ rpc, hash, maxTime, ledgerSeconds, now, sleep }: ConfirmOptions): Promise<Outcome> {
  const delays = pollDelays(ledgerSeconds);
  // Grace for ledger close-time granularity (whole seconds) and one more close after maxTime.
  const deadlineMs = (maxTime + 1) * 1000 + Math.max(2_000, 3 * ledgerSeconds * 1000);
  let lastLedger = -1;
  let lastError = '';
  let delay = delays.afterClose;
  for (;;) {
    await sleep(delay);
    try {
      const status = await rpc.getTransaction(hash);
      if (status.status === 'SUCCESS') return { kind: 'success', status };
      if (status.status === 'FAILED') return { kind: 'failed', status };
      if (status.latestLedgerCloseTime > maxTime) {
        return { kind: 'expired', detail: `not included by ledger ${status.latestLedger}, which closed after the transaction's maxTime ${maxTime}` };
      }
      delay = status.latestLedger !== lastLedger ? delays.afterClose : delays.waiting;
      lastLedger = status.latestLedger;
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      lastError = err.message;
      delay = delays.waiting;
    }
    if (now() >= deadlineMs) {
      return { kind: 'unknown', detail: `outcome not confirmed by the RPC before the time bound${lastError ? ` (${lastError})` : ''}` };
    }
  }
}
