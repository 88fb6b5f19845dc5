/**
 * Seconds per ledger, estimated from the RPC's own ledger close times (never from a third-party
 * URL), cached for a TTL. Close times are whole seconds, so an estimate over a span of S seconds
 * and n ledgers is only known to lie in ((S−1)/n, (S+1)/n). The facilitator takes the low end for
 * the expiry bound (generous) and the buyer the high end for its signed expiry (conservative), so
 * a buyer's expiry is always inside the facilitator's bound whatever the rounding.
 */
import type { ChainRpc } from './rpc.ts';

export const FALLBACK_LEDGER_SECONDS = 5;
/** Ledgers spanned by the two-point sample (about 10 min at 5 s, 30 s at 250 ms). */
const SPAN_LEDGERS = 120;
const MIN_SECONDS = 0.05;
const MAX_SECONDS = 60;
const FALLBACK_TTL_MS = 2_000;

export interface LedgerTime {
  /** Best estimate (polling cadence). */
  seconds: number;
  /** Lowest plausible value (the facilitator's expiry bound). */
  low: number;
  /** Highest plausible value (the buyer's signed expiry). */
  high: number;
  /** True when nothing could be measured and the 5 s fallback is in use. */
  fallback: boolean;
}

const FALLBACK: LedgerTime = {
  seconds: FALLBACK_LEDGER_SECONDS,
  low: FALLBACK_LEDGER_SECONDS,
  high: FALLBACK_LEDGER_SECONDS,
  fallback: true,
};

export interface LedgerTimeOptions {
  ttlMs?: number;
  now?: () => number;
}

export class LedgerTimeEstimator {
  private cached: { value: LedgerTime; at: number; ttl: number } | undefined;
  private inflight: Promise<LedgerTime> | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly rpc: Pick<ChainRpc, 'getLedgerSpan'>,
    { ttlMs = 30_000, now = Date.now }: LedgerTimeOptions = {},
  ) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The best estimate in seconds. */
  async seconds(): Promise<number> {
    return (await this.estimate()).seconds;
  }

  /** The cached estimate, refreshed when older than the TTL; the 5 s fallback on any RPC failure. */
  async estimate(): Promise<LedgerTime> {
    if (this.cached && this.now() - this.cached.at < this.cached.ttl) return this.cached.value;
    this.inflight ??= this.refresh().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async refresh(): Promise<LedgerTime> {
    let value: LedgerTime | undefined;
    let spanSeconds = 0;
    let ledgers = 0;
    try {
      const { older, latest } = await this.rpc.getLedgerSpan(SPAN_LEDGERS);
      spanSeconds = latest.closeTime - older.closeTime;
      ledgers = latest.sequence - older.sequence;
      value = estimateFromSpan(spanSeconds, ledgers);
    } catch {
      // A failing RPC must not block payments.
    }
    // A short span (a young chain, whose first ledgers close irregularly) or a fallback is
    // re-measured soon; a full span is trusted for the whole TTL.
    const full = value !== undefined && ledgers >= MIN_TRUSTED_LEDGERS;
    const ttl = full ? Math.min(this.ttlMs, Math.max(FALLBACK_TTL_MS, (spanSeconds * 1000) / 4)) : Math.min(this.ttlMs, FALLBACK_TTL_MS);
    this.cached = { value: value ?? FALLBACK, at: this.now(), ttl };
    return this.cached.value;
  }
}

const clamp = (s: number) => Math.min(MAX_SECONDS, Math.max(MIN_SECONDS, s));

/**
 * Below this many closes in the sample, one irregular close (a young chain's first ledgers, a
 * stalled node) dominates the estimate, so its low end is not trusted.
 */
export const MIN_TRUSTED_LEDGERS = 30;

/**
 * The estimate over `spanSeconds` (difference of whole-second close times) and `ledgers` closes;
 * undefined when the sample is not a span at all. A young chain (fewer than MIN_TRUSTED_LEDGERS
 * closes) still bounds the truth from above ((S+1)/n) while its low end drops to the floor: the
 * facilitator is generous rather than wrongly strict until real history exists (a cached estimate
 * over a slow first close would otherwise refuse a buyer who measured later). A chain that has
 * closed nothing yet is the youngest of all: the 5 s fallback stands for its cadence and high end,
 * and its low end is the floor too, because a fallback low end of 5 s, cached, refused the first
 * buyer who measured one fast close (1 s ledgers: a bound of 12 ledgers against a signed 24).
 */
export function estimateFromSpan(spanSeconds: number, ledgers: number): LedgerTime | undefined {
  if (!Number.isFinite(spanSeconds) || spanSeconds < 0 || !Number.isInteger(ledgers) || ledgers < 0) return undefined;
  if (ledgers === 0) return { ...FALLBACK, low: MIN_SECONDS };
  const young = ledgers < MIN_TRUSTED_LEDGERS;
  return {
    seconds: clamp(Math.max(spanSeconds, 0.5) / ledgers),
    low: young ? MIN_SECONDS : clamp(Math.max(spanSeconds - 1, 0) / ledgers),
    high: clamp((spanSeconds + 1) / ledgers),
    fallback: false,
  };
}

/** The authorization expiry bound of docs/SCHEME.md, without the tolerance. */
export function expiryLedgerBound(currentLedger: number, maxTimeoutSeconds: number, ledgerSeconds: number): number {
  return currentLedger + Math.ceil(maxTimeoutSeconds / ledgerSeconds);
}

export const EXPIRY_TOLERANCE_LEDGERS = 2;
