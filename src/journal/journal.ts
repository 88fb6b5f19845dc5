/**
 * The settlement journal around a scheme's settle (docs/OPERATIONS.md):
 * - one record per payment identity, written before submission (the scheme calls beforeSubmit);
 * - copies of one payment wait for the first (an in-process lock per identity; the primary key
 *   is the guard across processes), then get the recorded outcome when they carry a key bound to
 *   that payment and request (request-digest.ts), or are the retry owed the outcome of a
 *   `settlement_pending` (owed.ts), else the replay code — never a second submission; a key
 *   bound to another payment or request is refused (`svc_idempotency_key_conflict`);
 * - the policy and fee budget refuse before submission;
 * - a background loop resolves `submitted`/`unknown` records through the chain and lists landed
 *   payments in the catalog;
 * - a storage fault is an outcome, never an error (docs/OPERATIONS.md "When the journal cannot
 *   write"): a reserve that fails refuses the settle with `svc_journal_unavailable` before
 *   anything is submitted, a write that fails after submission leaves the record `submitted` for
 *   the reconciler and answers what svc knows, and no new settlement is reserved until a probe
 *   write succeeds again (write-health.ts).
 */
import type {
  PaymentPayload,
  PaymentRequirements,
  SettledPayment,
  SettleResult,
  SettlementGate,
  SettlementTracking,
} from '../scheme/types.ts';
import { judgeAttempt, judgeForVerify, reserveRule, type BudgetedPayment, type PaymentPolicy, type Refusal } from './policy.ts';
import { finalWithin, OwedOutcomes } from './owed.ts';
import { bindingMatches, identityOf, requestDigest, requestKeys } from './request-digest.ts';
import { failedResult, finalOf, keyConflict, pendingResult, reserveRefusal, resultOf, unavailable, unavailableMessage } from './results.ts';
import type { JournaledOutcome, JournalStore, SettleRequest, SettlementRecord, SettlementState } from './types.ts';
import { JournalWriteHealth, type WriteHealthLogger } from './write-health.ts';

export type JournalLogger = WriteHealthLogger;

export interface JournalOptions {
  store: JournalStore;
  policy: PaymentPolicy;
  /** A network's own policy (its FEE_BUDGET_…_<NETWORK> caps, docs/OPERATIONS.md "Several networks"); `policy` for the rest. */
  networkPolicies?: ReadonlyMap<string, PaymentPolicy>;
  now?: () => number;
  logger?: JournalLogger;
  /**
   * Called for a payment the reconciler found landed whose after-settle hooks never ran (the
   * catalog listing); a throw leaves the record unlisted, to be retried after a delay
   * (`listingRetryDelay`).
   */
  onLanded?: (settled: SettledPayment) => unknown;
  /** The first retry delay of a faulting catalog hook: the reconcile interval (default 5 s). */
  listingRetryBaseMs?: number;
  /** How long the retry owed a `settlement_pending` outcome (sent at once by the SDKs) waits for it; default 0: one look. */
  pendingRetryWaitMs?: number;
}

/** How often pending payments are reconciled (`RECONCILE_INTERVAL_MS`), and a faulting listing's first retry delay. */
export const DEFAULT_RECONCILE_INTERVAL_MS = 5_000;

export class SettlementJournal implements SettlementGate {
  readonly store: JournalStore;
  /** The policy a payment on `network` is judged by: its own (JournalOptions.networkPolicies), else `policy`. */
  readonly policyOf: (network: string) => PaymentPolicy;
  private readonly now: () => number;
  private readonly logger: JournalLogger | undefined;
  private readonly onLanded: JournalOptions['onLanded'];
  private readonly listingRetryBaseMs: number;
  private readonly pendingRetryWaitMs: number;
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly owed: OwedOutcomes;
  private readonly health: JournalWriteHealth;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(options: JournalOptions) {
    this.store = options.store;
    this.policyOf = (network) => options.networkPolicies?.get(network) ?? options.policy;
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.onLanded = options.onLanded;
    this.listingRetryBaseMs = options.listingRetryBaseMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
    this.pendingRetryWaitMs = options.pendingRetryWaitMs ?? 0;
    this.health = new JournalWriteHealth(this.store, this.logger, this.now);
    this.owed = new OwedOutcomes(this.store, (err, operation) => this.health.failed(err, operation));
  }

  /**
   * GET /ready's `database` check: a probe write through the journal's own connection now (a
   * failure also stops new settlements until a write succeeds again).
   */
  async writeCheck(): Promise<{ ok: boolean; detail: string }> {
    const reason = await this.health.probe();
    return reason === null ? { ok: true, detail: 'writable' } : { ok: false, detail: reason };
  }

  /** /verify's policy check (policy.ts judgeForVerify), on the budgets as this journal counts them now. */
  verifyRefusal(payment: BudgetedPayment, feeStroops?: bigint): Promise<Refusal | null> {
    return judgeForVerify(this.policyOf(payment.network), payment, feeStroops ?? null, this.now(), (parties, window) =>
      this.store.budgetUsage(parties, window).catch((err: unknown) => void this.health.failed(err, 'read')),
    );
  }

  /** Settles in flight right now (the drain waits for zero). */
  get pending(): number {
    return this.inFlight;
  }

  /** Resolves when no settle is in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async settle(request: SettleRequest): Promise<JournaledOutcome> {
    this.inFlight++;
    try {
      const identity = identityOf(request);
      return await this.locked(identity, () => this.settleOnce(identity, request));
    } finally {
      if (--this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** Runs `work` after every earlier holder of `identity` has finished. */
  private async locked<T>(identity: string, work: () => Promise<T>): Promise<T> {
    const before = this.locks.get(identity) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.catch(() => undefined);
    this.locks.set(identity, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(identity) === tail) this.locks.delete(identity);
    }
  }

  private async settleOnce(identity: string, request: SettleRequest): Promise<JournaledOutcome> {
    const { scheme, payload, requirements, idempotencyKey } = request;
    const network = String(requirements.network);
    const digest = requestDigest(payload, requirements);
    const keys = requestKeys(request);
    let existing: SettlementRecord | null;
    let keyed: boolean;
    try {
      existing = await this.store.get(identity);
      // A key stands for the request it was first reserved with: any other use is refused.
      const bindings = await Promise.all(keys.map((key) => this.store.keyBinding(key)));
      if (bindings.some((b) => b !== null && !bindingMatches(b, identity, digest)))
        return { result: keyConflict(network, keys), fresh: false, identity };
      keyed = bindings.some((b) => b !== null);
    } catch (err) {
      return { result: unavailable(network, this.health.failed(err, 'read')), fresh: false, identity };
    }
    // A failed attempt moved no money: the payment is attempted again (re-verified first, so a
    // consumed or expired authorization is refused without a submission).
    if (existing && existing.state !== 'failed')
      return { result: await this.answerCopy(existing, keyed, digest, scheme.tracking), fresh: false, identity };
    // After a write error nothing new is reserved until a probe write succeeds.
    const blocked = await this.health.blocked();
    if (blocked !== null) return { result: unavailable(network, blocked), fresh: false, identity };
    let reserved: string | null = null;
    const result = await scheme.settle(payload, requirements, {
      beforeSubmit: async (attempt) => {
        const policy = this.policyOf(network);
        const refusal = judgeAttempt(policy, attempt);
        if (refusal) return refusal;
        const now = this.now();
        let outcome;
        try {
          outcome = await this.store.reserve(
            {
              identity,
              idempotencyKey,
              requestDigest: digest,
              keys,
              network,
              ...attempt,
              paymentPayload: JSON.stringify(payload),
              paymentRequirements: JSON.stringify(requirements),
            },
            reserveRule(policy, { ...attempt, network }, attempt.feeStroops, now),
            now,
          );
        } catch (err) {
          const reason = this.health.failed(err, 'reserve');
          return { code: 'svc_journal_unavailable', message: unavailableMessage(reason) };
        }
        if (outcome.ok) {
          reserved = attempt.transaction;
          return null;
        }
        return reserveRefusal(outcome, network, keys);
      },
    });
    if (reserved === null) return { result, fresh: false, identity };
    const state: SettlementState = result.success ? 'settled' : result.unconfirmed ? 'unknown' : 'failed';
    try {
      await this.store.resolve(
        identity,
        state,
        {
          errorCode: result.errorReason,
          errorMessage: result.errorMessage,
          note: result.success ? 'confirmed by settle' : (result.errorMessage ?? ''),
        },
        this.now(),
      );
    } catch (err) {
      // The record stays `submitted`: the reconciler resolves it (and lists a landed payment) once
      // the journal writes again, and a retry tells the outcome. A confirmed success is answered as
      // such; anything else as pending, which is what the record says.
      const reason = this.health.failed(err, 'resolve');
      if (result.success) return { result, fresh: false, identity };
      await this.owed.mark(identity, digest);
      const detail = `the journal could not record its outcome: ${reason}`;
      return { result: pendingResult(network, result.payer, reserved, detail), fresh: false, identity };
    }
    if (state === 'unknown') {
      // The SDKs retry this answer once with the same payload: that retry is owed the outcome.
      await this.owed.mark(identity, digest);
      const detail = `its outcome is not confirmed yet${result.errorMessage ? ` (${result.errorMessage})` : ''}`;
      return { result: pendingResult(network, result.payer, reserved, detail), fresh: true, identity };
    }
    return { result, fresh: true, identity };
  }

  /**
   * A copy of a journaled payment. A request whose key is bound to it gets its outcome; the retry
   * of a request answered `settlement_pending` gets the outcome once it is final, exactly once (a
   * claim); anything else is a replay and gets the replay code.
   */
  private async answerCopy(
    record: SettlementRecord,
    keyed: boolean,
    digest: string,
    tracking: SettlementTracking | undefined,
  ): Promise<SettleResult> {
    const replay = (): SettleResult =>
      failedResult(
        record,
        tracking?.replayCode ?? 'verification_failed',
        `This payment was already submitted (transaction ${record.transaction}); a copy is not settled again.`,
      );
    if (!keyed && !this.owed.owes(record, digest)) return replay();
    // A keyed copy gets one look at the chain; the retry owed the outcome waits for it a while.
    if (tracking) {
      const waitMs = keyed ? 0 : this.pendingRetryWaitMs;
      record = await finalWithin(record, (r) => this.reconcileRecord(r, tracking), this.now() + waitMs, this.now);
    }
    if (keyed || record.state === 'submitted' || record.state === 'unknown') return resultOf(record);
    // Only the first retry of the request answered pending is told the final outcome.
    const claim = await this.owed.claim(record, digest);
    if (claim === 'claimed') return resultOf(record);
    if (claim === 'taken') return replay();
    return pendingResult(record.network, record.payer, record.transaction, 'the journal cannot record that its outcome was told');
  }

  /**
   * The catalog hook for a settled payment, then the record is marked listed. A hook that faults
   * (catalog down, queue full, or a fault that repeats for this one payment) is retried later, each
   * time after a longer delay, so a pass always reaches the records behind it.
   */
  private async list(record: SettlementRecord): Promise<void> {
    try {
      await this.onLanded?.({
        paymentPayload: JSON.parse(record.paymentPayload) as PaymentPayload,
        paymentRequirements: JSON.parse(record.paymentRequirements) as PaymentRequirements,
        response: resultOf(record),
      });
    } catch (err) {
      const delay = listingRetryDelay(record.listFailures, this.listingRetryBaseMs);
      this.logger?.warn(
        { transaction: record.transaction, err: String(err), failures: record.listFailures + 1, retryInMs: delay },
        'catalog hook after settlement failed; retried later',
      );
      await this.store
        .deferListing(record.identity, this.now() + delay)
        .catch((deferErr: unknown) => this.health.failed(deferErr, 'deferListing'));
      return;
    }
    await this.markListed(record.identity);
  }

  /**
   * After the request that settled a payment ran the catalog hook. A write that fails leaves the
   * record unlisted: the reconciler runs the hook again later (one more write of the same listing).
   */
  async markListed(identity: string): Promise<void> {
    try {
      await this.store.markListed(identity);
    } catch (err) {
      this.health.failed(err, 'markListed');
    }
  }

  /** One reconciliation pass over unresolved records not held by a request in this process. */
  async reconcile(tracking: SettlementTracking, limit = 100): Promise<number> {
    // Every step below writes: while the journal cannot, the pass waits for a probe to succeed.
    if ((await this.health.blocked()) !== null) return 0;
    // Settled payments whose catalog hook never ran (the process died in between), 10 s after
    // their last change (a request of another instance may still be running its hook).
    if (!(await this.listUnlisted(limit, this.now() - 10_000))) return 0;
    // Records held by this process's own requests are skipped, so they do not count against the
    // limit: a burst of settles here must not hide the records an instance that died left behind.
    let resolved = 0;
    let taken = 0;
    for (const record of await this.store.unresolved(limit + this.locks.size)) {
      if (this.locks.has(record.identity)) continue;
      if (++taken > limit) break;
      const after = await this.locked(record.identity, () => this.reconcileRecord(record, tracking));
      if (after && after.state !== record.state) resolved++;
    }
    return resolved;
  }

  /**
   * Runs the catalog hook of settled payments not listed yet whose record last changed before
   * `changedBefore` (and whose retry is due). Each is claimed first: instances sharing the journal
   * run this each, and a listing is written once. A claim held by an instance that died lapses
   * after LISTING_CLAIM_MS. False when the journal could not be read or claimed.
   */
  private async listUnlisted(limit: number, changedBefore: number): Promise<boolean> {
    const now = this.now();
    for (const record of await this.store.unlisted(limit, changedBefore, now)) {
      if (this.locks.has(record.identity)) continue;
      let claimed: boolean;
      try {
        claimed = await this.store.claimListing(record.identity, now, now + LISTING_CLAIM_MS);
      } catch (err) {
        this.health.failed(err, 'claimListing');
        return false;
      }
      if (claimed) await this.list(record);
    }
    return true;
  }

  /**
   * Before the catalog closes (after a drain): one more try of the catalog hook for every settled
   * payment not listed yet, however recent, so a settle whose hook faulted while the instance
   * drained (a busy database, a busy schema check) is listed now, not after the next start. Its
   * own requests have all been answered by then; one of another instance still running its hook
   * costs one more write of the same listing.
   */
  async listBeforeClose(limit = 100): Promise<void> {
    if ((await this.health.blocked()) !== null) return;
    await this.listUnlisted(limit, this.now() + 1);
  }

  private async reconcileRecord(record: SettlementRecord, tracking: SettlementTracking): Promise<SettlementRecord | null> {
    let status;
    try {
      status = await tracking.status(record.transaction, record.validUntil, record.network);
    } catch (err) {
      this.logger?.warn(
        { transaction: record.transaction, err: String(err) },
        'reconciliation: chain lookup failed; record stays unresolved',
      );
      return null;
    }
    if (status === 'pending') return null;
    const now = this.now();
    const { state, detail } = finalOf(status, record.transaction);
    let changed: boolean;
    try {
      changed = await this.store.resolve(record.identity, state, detail, now);
    } catch (err) {
      // What the chain said is still the answer; the record is written on a later pass.
      this.health.failed(err, 'resolve');
      return { ...record, state, errorCode: detail.errorCode ?? null, errorMessage: detail.errorMessage ?? null };
    }
    const after = await this.store.get(record.identity);
    if (changed && state === 'settled') await this.list(record);
    this.logger?.info({ transaction: record.transaction, state: after?.state ?? state }, 'settlement reconciled');
    return after;
  }

  /**
   * The background loop: every `intervalMs` one pass. `timers` is injectable (tests drive it).
   * Returns a stop function, which resolves once the pass in flight is done (at most
   * LISTING_CLAIM_MS later).
   */
  startReconciler(tracking: SettlementTracking, intervalMs: number, timers = { setTimeout, clearTimeout }): () => Promise<void> {
    let stopped = false;
    let handle: ReturnType<typeof setTimeout> | undefined;
    let pass: Promise<void> = Promise.resolve();
    const tick = () => {
      pass = this.reconcile(tracking)
        .then(() => undefined)
        .catch((err: unknown) => this.logger?.warn({ err: String(err) }, 'reconciliation pass failed'))
        .finally(() => {
          if (stopped) return;
          handle = timers.setTimeout(tick, intervalMs);
          handle.unref?.();
        });
    };
    handle = timers.setTimeout(tick, 0);
    handle.unref?.();
    // The pass in flight finishes first: a payment it found landed (one whose settle finished
    // during a drain, say) keeps its catalog write instead of meeting a closed database.
    return () => {
      stopped = true;
      if (handle) timers.clearTimeout(handle);
      let bound: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => (bound = setTimeout(resolve, LISTING_CLAIM_MS)));
      return Promise.race([pass, late]).finally(() => clearTimeout(bound));
    };
  }
}

/**
 * How long a reconciliation pass holds a record it is listing: beyond the catalog hook's own
 * deadlines (a 2 s write, a 200 ms bound on the seller's schema), and short, because a claim held by an instance
 * that died keeps the listing waiting this long.
 */
const LISTING_CLAIM_MS = 10_000;

/** A faulting catalog hook is retried after `baseMs` (the reconcile interval), then twice as long each time, at most an hour. */
export const listingRetryDelay = (failures: number, baseMs: number): number => Math.min(3_600_000, baseMs * 2 ** Math.min(failures, 30));
