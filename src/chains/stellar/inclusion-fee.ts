/**
 * The inclusion fee svc bids per operation, from how full recent ledgers were (docs/SCHEME.md
 * "Inclusion fee"), never from what other senders bid.
 *
 * A ledger is full when more Soroban work was submitted than it holds. The network then includes
 * the highest bids and charges each Soroban transaction it included the lowest bid it included
 * (the surge price) instead of the base fee, and its transaction set records that price. svc reads
 * it for the last RECENT_LEDGERS ledgers (each ledger once, at most every 5 s): while none of them
 * was full it bids the base fee, since every transaction that fits is included and charged the base
 * fee whatever it bid; when some were, it bids one stroop above the highest surge price among them,
 * outbidding the cheapest transaction those ledgers let in. The bid is the most svc pays per
 * operation, and it counts against MAX_TRANSACTION_FEE_STROOPS with the resource fee.
 */
import type { ChainRpc, LaneFee } from './rpc.ts';

/** The network minimum inclusion fee per operation (the base fee). */
export const MIN_INCLUSION_FEE_STROOPS = 100n;
/** The ledgers judged (about 50 s): a settlement competes for one of the next few. */
export const RECENT_LEDGERS = 10;
const FAILURE_TTL_MS = 2_000;

/** The bid per operation and why. */
export interface InclusionBid {
  bid: bigint;
  /** The recent ledgers read, and how many of them were full. */
  ledgers: number;
  fullLedgers: number;
  /** The highest surge price (per operation) among the full ones, or null. */
  surgePrice: bigint | null;
}

/** The bid for recent ledgers' Soroban lane fees: above the base fee only after full ledgers. */
export function inclusionBid(fees: readonly LaneFee[]): InclusionBid {
  const full = fees.filter((f) => f.sorobanFee !== null && f.sorobanFee > f.baseFee);
  const surgePrice = full.length > 0 ? full.reduce((top, f) => (f.sorobanFee! > top ? f.sorobanFee! : top), 0n) : null;
  const base = fees.reduce((top, f) => (f.baseFee > top ? f.baseFee : top), MIN_INCLUSION_FEE_STROOPS);
  return { bid: surgePrice === null ? base : surgePrice + 1n, ledgers: fees.length, fullLedgers: full.length, surgePrice };
}

/** Why the bid is what it is, for a refusal's message. */
export function describeBid(b: InclusionBid): string {
  if (b.ledgers === 0) return `inclusion fee ${b.bid} per operation, the base fee: no recent ledger could be read`;
  const full = (k: number) =>
    b.ledgers === 1
      ? `the last ledger was ${k === 0 ? 'not ' : ''}full`
      : `${k === 0 ? 'none' : k} of the last ${b.ledgers} ledgers ${k > 1 ? 'were' : 'was'} full`;
  if (b.surgePrice === null) return `inclusion fee ${b.bid} per operation, the base fee: ${full(0)}`;
  return `inclusion fee ${b.bid} per operation: ${full(b.fullLedgers)}, surge-priced at up to ${b.surgePrice} per operation`;
}

export interface InclusionFeeOptions {
  /** How long one reading is used (default 5 s, about a ledger). */
  ttlMs?: number;
  now?: () => number;
}

export class InclusionFeeEstimator {
  private cached: { bid: InclusionBid; at: number; ttl: number } | undefined;
  private inflight: Promise<InclusionBid> | undefined;
  /** The recent ledgers' lane fees read so far, oldest first. */
  private window: LaneFee[] = [];
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly rpc: Pick<ChainRpc, 'getSorobanLaneFees'>,
    { ttlMs = 5_000, now = Date.now }: InclusionFeeOptions = {},
  ) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The bid per operation; on an RPC failure the last known one (the base fee before any), asked again soon. */
  async bid(): Promise<bigint> {
    return (await this.current()).bid;
  }

  async current(): Promise<InclusionBid> {
    if (this.cached && this.now() - this.cached.at < this.cached.ttl) return this.cached.bid;
    this.inflight ??= this.refresh().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** The last reading without waiting for a new one (the base fee before any); starts a reading when it is stale. */
  latest(): InclusionBid {
    if (!this.cached || this.now() - this.cached.at >= this.cached.ttl) void this.current();
    return this.cached?.bid ?? inclusionBid([]);
  }

  private async refresh(): Promise<InclusionBid> {
    try {
      const read = await this.rpc.getSorobanLaneFees(RECENT_LEDGERS, this.window.at(-1)?.sequence);
      const newest = read.at(-1)?.sequence ?? this.window.at(-1)?.sequence ?? 0;
      this.window = [...this.window, ...read].filter((f) => f.sequence > newest - RECENT_LEDGERS);
      this.cached = { bid: inclusionBid(this.window), at: this.now(), ttl: this.ttlMs };
    } catch {
      // A failing RPC must not block payments: keep bidding what was last known.
      this.cached = { bid: this.cached?.bid ?? inclusionBid([]), at: this.now(), ttl: Math.min(this.ttlMs, FAILURE_TTL_MS) };
    }
    return this.cached.bid;
  }
}
