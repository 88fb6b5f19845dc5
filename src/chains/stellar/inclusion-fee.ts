/**
 * The inclusion fee svc bids per operation, from the network's own fee statistics
 * (getFeeStats `sorobanInclusionFee`, the bids of the Soroban transactions recent ledgers
 * included), cached for a few seconds (docs/SCHEME.md "Inclusion fee").
 *
 * While ledgers are not full, what they include bids the 100-stroop minimum and svc bids it too.
 * When they are full (surge pricing), svc bids one stroop above the 90th percentile of recent
 * included bids, which outbids nine in ten of the transactions that made it in. The network
 * charges every included transaction the lowest bid it included, so the bid is the most svc pays
 * per operation, and it counts against MAX_TRANSACTION_FEE_STROOPS with the resource fee.
 */
import type { ChainRpc } from './rpc.ts';

/** The network minimum inclusion fee per operation (the base fee). */
export const MIN_INCLUSION_FEE_STROOPS = 100n;
const FAILURE_TTL_MS = 2_000;

/** The bid for recent included bids whose 90th percentile is `p90`. */
export function inclusionBid(p90: bigint): bigint {
  return p90 > MIN_INCLUSION_FEE_STROOPS ? p90 + 1n : MIN_INCLUSION_FEE_STROOPS;
}

export interface InclusionFeeOptions {
  /** How long one reading of the statistics is used (default 5 s, about a ledger). */
  ttlMs?: number;
  now?: () => number;
}

export class InclusionFeeEstimator {
  private cached: { bid: bigint; at: number; ttl: number } | undefined;
  private inflight: Promise<bigint> | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly rpc: Pick<ChainRpc, 'getInclusionFees'>,
    { ttlMs = 5_000, now = Date.now }: InclusionFeeOptions = {},
  ) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The bid per operation; on an RPC failure the last known one (the minimum before any), asked again soon. */
  async bid(): Promise<bigint> {
    if (this.cached && this.now() - this.cached.at < this.cached.ttl) return this.cached.bid;
    this.inflight ??= this.refresh().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async refresh(): Promise<bigint> {
    try {
      const { p90 } = await this.rpc.getInclusionFees();
      this.cached = { bid: inclusionBid(p90), at: this.now(), ttl: this.ttlMs };
    } catch {
      // A failing RPC must not block payments: keep bidding what was last known.
      this.cached = { bid: this.cached?.bid ?? MIN_INCLUSION_FEE_STROOPS, at: this.now(), ttl: Math.min(this.ttlMs, FAILURE_TTL_MS) };
    }
    return this.cached.bid;
  }
}
