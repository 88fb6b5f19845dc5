/**
 * Whether the settlement journal can take writes (docs/OPERATIONS.md "When the journal cannot
 * write"). A failed journal call or probe marks it faulted: from then on svc reserves no new
 * settlement until a probe — a small real write through the journal's own connection — succeeds
 * again. While faulted, a settle probes at most once per `retryMs` (concurrent callers share one
 * probe) and is refused at once in between; GET /ready probes on each of its rounds.
 */
import { storageReason, type JournalStore } from './types.ts';

export interface WriteHealthLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error?(obj: Record<string, unknown>, msg?: string): void;
}

export class JournalWriteHealth {
  private fault: { reason: string; at: number } | null = null;
  private probing: Promise<string | null> | undefined;

  constructor(
    private readonly store: JournalStore,
    private readonly logger: WriteHealthLogger | undefined,
    private readonly now: () => number,
    private readonly retryMs = 1_000,
  ) {}

  /** A journal call failed (`during` names it, for the log): new settlements wait for a probe. Returns the reason. */
  failed(err: unknown, during: string): string {
    const reason = storageReason(err);
    if (!this.fault) {
      const log = this.logger?.error?.bind(this.logger) ?? this.logger?.warn.bind(this.logger);
      log?.({ err, during, reason }, 'settlement journal cannot write: new settlements are refused until a write succeeds again');
    }
    this.fault = { reason, at: this.now() };
    return reason;
  }

  /** Why svc must not reserve a settlement now, or null (probing first when a fault is older than `retryMs`). */
  async blocked(): Promise<string | null> {
    if (!this.fault) return null;
    if (this.now() - this.fault.at < this.retryMs) return this.fault.reason;
    return this.probe();
  }

  /** A probe now: null when the journal takes writes, else why not. */
  probe(): Promise<string | null> {
    this.probing ??= this.store
      .probe()
      .then(
        () => {
          if (this.fault) this.logger?.info({ after: this.fault.reason }, 'settlement journal writes again: settles resume');
          this.fault = null;
          return null;
        },
        (err: unknown) => this.failed(err, 'probe'),
      )
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }
}
