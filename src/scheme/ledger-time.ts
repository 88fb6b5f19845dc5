/**
 * Seconds per ledger, estimated from the RPC's own recent ledger close times (never from a
 * third-party URL), cached for a TTL. Buyer and facilitator use the same estimator so the
 * authorization expiry one signs is the one the other accepts.
 */
import type { ChainRpc } from './rpc.ts';

export const FALLBACK_LEDGER_SECONDS = 5;
/** Ledgers sampled; close times are whole seconds, so a longer window gives a finer estimate. */
const SAMPLE = 20;
const MIN_SECONDS = 0.05;
const MAX_SECONDS = 60;
const FALLBACK_TTL_MS = 2_000;

export interface LedgerTimeOptions {
  ttlMs?: number;
  now?: () => number;
}

export class LedgerTimeEstimator {
  private cached: { seconds: number; at: number } | undefined;
  private inflight: Promise<number> | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly rpc: Pick<ChainRpc, 'getRecentLedgers'>,
    { ttlMs = 30_000, now = Date.now }: LedgerTimeOptions = {},
  ) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The cached estimate, refreshed when older than the TTL; falls back to 5 s on any RPC failure. */
  async seconds(): Promise<number> {
    if (this.cached && this.now() - this.cached.at < this.ttlMs) return this.cached.seconds;
    this.inflight ??= this.refresh().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** The last estimate without any RPC call (fallback before the first refresh). */
  peek(): number {
    return this.cached?.seconds ?? FALLBACK_LEDGER_SECONDS;
  }

  private async refresh(): Promise<number> {
    let estimate: number | undefined;
    try {
      estimate = estimateFromCloseTimes(await this.rpc.getRecentLedgers(SAMPLE));
    } catch {
      // A failing RPC must not block payments: the fallback keeps the bound conservative.
    }
    const seconds = estimate ?? FALLBACK_LEDGER_SECONDS;
    // A fallback is cached only briefly, so a young chain or a passing RPC fault is re-measured soon.
    const at = estimate === undefined ? this.now() - this.ttlMs + Math.min(this.ttlMs, FALLBACK_TTL_MS) : this.now();
    this.cached = { seconds, at };
    return seconds;
  }
}

/** Average close interval over the sample; undefined when the sample cannot say. */
export function estimateFromCloseTimes(ledgers: { sequence: number; closeTime: number }[]): number | undefined {
  if (ledgers.length < 2) return undefined;
  const sorted = [...ledgers].sort((a, b) => a.sequence - b.sequence);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  const span = last.closeTime - first.closeTime;
  const count = last.sequence - first.sequence;
  if (count <= 0 || span <= 0 || !Number.isFinite(span)) return undefined;
  return Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, span / count));
}

/** The authorization expiry bound of SPEC §4.1, without the tolerance. */
export function expiryLedgerBound(currentLedger: number, maxTimeoutSeconds: number, ledgerSeconds: number): number {
  return currentLedger + Math.ceil(maxTimeoutSeconds / ledgerSeconds);
}

export const EXPIRY_TOLERANCE_LEDGERS = 2;
