/**
 * Waiting for a submitted transaction's final outcome. The wait is timed on the ledger that
 * should include the transaction: a `LedgerCloseClock` shared by all settlements learns the local
 * instant of the latest close (from the RPC's latest ledger and close time in every getTransaction
 * answer, and from the poll that first saw it), so the first poll lands just after the predicted
 * close and, when it comes early, finer polls catch the close itself. A fixed fraction of a ledger
 * would add up to a ledger of delay to every settle.
 *
 * The wait stops only when the outcome is final: SUCCESS, FAILED, or NOT_FOUND while the RPC's
 * latest ledger closed after the transaction's own maxTime (the network would reject it as
 * txTOO_LATE, so it can never land). A local deadline a little past maxTime bounds the wait when
 * the RPC stops answering — including a getTransaction that hangs: no call is awaited past the
 * deadline (docs/SCHEME.md, "Polling rule").
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
  /**
   * Local instant (ms) after which the wait gives up with `unknown` even though the transaction may
   * still land (the reconciler finds out): a caller's HTTP client must get an answer first.
   */
  waitUntil?: number;
  /** Shared across settlements so each learns from the others' polls; a fresh one when absent. */
  clock?: LedgerCloseClock;
}

/**
 * Poll spacing while a close is due: 20 ms, whatever the ledger's length. A settle is answered on
 * average half a spacing after its close, so this is most of what settle adds to the chain's
 * floor (at 5 s ledgers 1/40 of a ledger, 50 ms, cost 25 ms of every settle's mean); the polls
 * cost a getTransaction each, only between the (early) predicted close and the real one: about
 * 8 at 5 s ledgers, 2 at 1 s.
 */
export const FINE_POLL_MS = 20;

/** How far the real cadence may drift from the estimated one, as a fraction of each ledger. */
const CADENCE_DRIFT = 0.02;

/**
 * The local-clock instant of the latest ledger close known. A close is bracketed by the last poll
 * that still saw the previous ledger and the first that saw the new one, and by the ledger's own
 * close time (whole seconds: the close lies in [closeTime, closeTime + 1 s)). When no poll saw the
 * previous ledger (the clock was idle for a ledger or more), the whole-second close time alone is
 * early by the close's sub-second phase, up to a second: a submission landing in that gap would be
 * assigned the ledger after the one that includes it and answered a ledger late. So the estimate
 * also projects the last known close forward by whole ledgers (less a slack for cadence drift) and
 * keeps that inside the bracket. Predictions err early (a fine poll or two) rather than late.
 *
 * Which ledger a submission waits for is chosen from the other side of the bracket: the first
 * ledger that may still close after the send, by the latest instant the known close can have had.
 * Chosen by the early estimate, a send between the estimated and the real close would wait for the
 * ledger after the one that includes it and be answered a whole ledger late; chosen by the latest
 * instant, an estimate that is too late costs one poll, which finds that ledger closed.
 */
export class LedgerCloseClock {
  private sequence = -1;
  private closedAt = 0;
  /** The latest local instant the close of `sequence` can have had (at or after `closedAt`). */
  private closedBy = 0;
  /** Latest local instant at which a poll still reported `sequence`. */
  private lastSeenAt = 0;

  /**
   * Records what one RPC answer (sent at `sentAt`, received at `at`) said about the latest ledger;
   * `ledgerMs`, when known, lets an earlier close's phase carry over to this one.
   */
  observe(latestLedger: number, closeTimeSeconds: number, sentAt: number, at: number, ledgerMs?: number): void {
    if (latestLedger > this.sequence) {
      const previousSeen = latestLedger === this.sequence + 1 ? this.lastSeenAt : 0;
      const low = Math.max(closeTimeSeconds * 1000, previousSeen);
      const high = Math.min(closeTimeSeconds * 1000 + 999, at);
      let estimate = low;
      if (ledgerMs !== undefined && this.sequence >= 0) {
        const ledgers = latestLedger - this.sequence;
        const projected = this.closedAt + ledgers * ledgerMs - projectionSlackMs(ledgers, ledgerMs);
        estimate = Math.max(low, Math.min(projected, high));
      }
      this.closedAt = Math.min(estimate, at);
      this.closedBy = Math.max(this.closedAt, high);
      this.sequence = latestLedger;
      this.lastSeenAt = sentAt;
    } else if (latestLedger === this.sequence) {
      this.lastSeenAt = Math.max(this.lastSeenAt, sentAt);
    }
  }

  /**
   * The first ledger that may still close after `after` (its latest possible close, with the
   * cadence drift slack, is later) and its expected close, or undefined before any observation.
   * The expected close may lie before `after`: that ledger is then overdue, and polled at once.
   */
  nextClose(after: number, ledgerMs: number): { sequence: number; at: number } | undefined {
    if (this.sequence < 0) return undefined;
    const ahead = Math.floor(Math.max(0, after - this.closedBy) / (ledgerMs * (1 + CADENCE_DRIFT))) + 1;
    return { sequence: this.sequence + ahead, at: this.closedAt + ahead * ledgerMs };
  }

  /** When ledger `sequence` is expected to close (in the past when it is overdue). */
  expectedClose(sequence: number, ledgerMs: number): number {
    return this.closedAt + (sequence - this.sequence) * ledgerMs;
  }
}

/**
 * How much earlier than a straight projection over `ledgers` closes the estimate is put: a fine
 * poll's worth plus 2 % of the span, since real cadence drifts from the estimated one.
 */
function projectionSlackMs(ledgers: number, ledgerMs: number): number {
  return FINE_POLL_MS + CADENCE_DRIFT * ledgers * ledgerMs;
}

/** Slack after a predicted close before the first poll (the RPC ingests the ledger after it closes). */
const AFTER_CLOSE_MS = 10;
const TIMED_OUT = Symbol('timed out');

/** The call's answer, or TIMED_OUT once `ms` pass (a real timer: the injected sleep may be a fake clock). */
async function withinDeadline<T>(call: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      call,
      new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms), TIMED_OUT))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function confirmTransaction(options: ConfirmOptions): Promise<Outcome> {
  const { rpc, hash, maxTime, ledgerSeconds, now, sleep } = options;
  const clock = options.clock ?? new LedgerCloseClock();
  const ledgerMs = Math.max(50, ledgerSeconds * 1000);
  const fine = FINE_POLL_MS;
  // Grace for ledger close-time granularity (whole seconds) and one more close after maxTime.
  const boundMs = (maxTime + 1) * 1000 + Math.max(2_000, 3 * ledgerSeconds * 1000);
  const cut = options.waitUntil !== undefined && options.waitUntil < boundMs;
  const deadlineMs = cut ? options.waitUntil! : boundMs;
  // The ledger that should include the transaction is the first one to close after submission;
  // before the clock knows anything, one poll right away tells it.
  let target = clock.nextClose(now(), ledgerMs);
  let firstLook = true;
  let immediate = !target;
  let lastError = '';
  let failed = false;
  for (;;) {
    const pollAt = immediate
      ? now()
      : target && firstLook
        ? target.at + AFTER_CLOSE_MS
        : now() + (failed ? Math.max(fine, ledgerMs / 5) : fine);
    const sleepUntil = Math.min(deadlineMs, pollAt);
    if (sleepUntil > now()) await sleep(sleepUntil - now());
    if (now() >= deadlineMs) break;
    firstLook = false;
    immediate = false;
    failed = false;
    const sentAt = now();
    try {
      // A hanging call must not carry the wait past the deadline.
      const answer = await withinDeadline(rpc.getTransaction(hash), deadlineMs - sentAt);
      if (answer === TIMED_OUT) {
        lastError = 'getTransaction did not answer before the time bound';
        // A timer may fire a millisecond before `now()` reaches the deadline: the rest is waited out, no call more.
        while (now() < deadlineMs) await sleep(deadlineMs - now());
        break;
      }
      const status = answer;
      clock.observe(status.latestLedger, status.latestLedgerCloseTime, sentAt, now(), ledgerMs);
      if (status.status === 'SUCCESS') return { kind: 'success', status };
      if (status.status === 'FAILED') return { kind: 'failed', status };
      if (status.latestLedgerCloseTime > maxTime) {
        return {
          kind: 'expired',
          detail: `not included by ledger ${status.latestLedger}, which closed after the transaction's maxTime ${maxTime}`,
        };
      }
      if (!target || status.latestLedger >= target.sequence) {
        // First answer, or a ledger closed without it (submitted just too late for that one):
        // wait for the next close. Otherwise the close is due and finer polls catch it.
        const sequence = status.latestLedger + 1;
        target = { sequence, at: clock.expectedClose(sequence, ledgerMs) };
        firstLook = true;
      }
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      lastError = err.message;
      failed = true;
    }
  }
  const before = cut ? 'within the settle wait (SETTLE_WAIT_SECONDS)' : 'before the time bound';
  return { kind: 'unknown', detail: `outcome not confirmed by the RPC ${before}${lastError ? ` (${lastError})` : ''}` };
}
