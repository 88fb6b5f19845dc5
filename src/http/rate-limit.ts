/**
 * Per-client and global request rates of one operation: POST /discovery/validate (docs/SECURITY.md
 * "`POST /discovery/validate` as an amplifier": an anonymous route that makes svc request other
 * hosts must not become an amplifier), POST /mcp (docs/MCP.md "Hosted discovery": one client
 * must not take the discovery capacity of everyone) and POST /discovery/delist (docs/CATALOG.md
 * "Withdrawing a listing": each request verifies a signature and may take the catalog's writer,
 * which lists settlements). Fixed one-minute windows (rate-limiter-flexible's memory limiter) keyed by the client (src/http/client-address.ts: the peer,
 * or the client a trusted proxy names); the global ceiling is shared (SharedCeiling). Per instance:
 * N instances allow N times the rate.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { limitKeyOf } from './client-address.ts';
import { HttpError, type ErrorCode } from './errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from './middleware.ts';

export interface RateLimits {
  perAddressPerMinute: number;
  /** All clients together; absent: no global limit. */
  globalPerMinute?: number;
  /** Names of the variables that set them, for the 429's reason. */
  perAddressVariable: string;
  globalVariable?: string;
  /** The 429's code. */
  code: Extract<ErrorCode, 'svc_validate_rate_limited' | 'svc_rate_limited' | 'svc_delist_rate_limited'>;
  /** What is counted, for the reason: "validate requests". */
  requests: string;
  /** What a refused request did not cause, for the reason: "nothing was requested of the target." */
  consequence: string;
}

/**
 * A ceiling for all clients together that no dozen of them can spend for everyone: within a fixed
 * window the first `limit` requests are answered in arrival order; past it, a client is still
 * answered while it has made fewer than its equal share, floor(limit / clients seen in the window,
 * itself included). A newcomer is therefore answered until more than `limit` clients have each
 * been answered this window; the clients that spent the ceiling are refused first. The window's
 * total stays bounded (each client past the ceiling gets at most its share, which shrinks as
 * clients arrive): under 6 times `limit` in the worst order, at most 351 for 120 after 12
 * clients took 10 each. Clients are kept only while answered, at most `limit` + 1 of them.
 */
export class SharedCeiling {
  private windowStart = -Infinity;
  private total = 0;
  private readonly counts = new Map<string, number>();

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request of `client`: 0 when answered, else the milliseconds until the window ends. */
  take(client: string): number {
    const now = this.now();
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.total = 0;
      this.counts.clear();
    }
    const own = this.counts.get(client) ?? 0;
    const share = Math.floor(this.limit / (this.counts.size + (own === 0 ? 1 : 0)));
    if (this.total >= this.limit && own >= share) return Math.max(1, this.windowStart + this.windowMs - now);
    this.counts.set(client, own + 1);
    this.total++;
    return 0;
  }
}

export function rateLimited(limits: RateLimits): SvcMiddleware {
  const perAddress = new RateLimiterMemory({ points: limits.perAddressPerMinute, duration: 60 });
  const global = limits.globalPerMinute === undefined ? null : new SharedCeiling(limits.globalPerMinute, 60_000);
  const refusal = (msBeforeNext: number, who: string, limit: number, variable: string | undefined): HttpError => {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new HttpError(
      429,
      limits.code,
      `${who} made more than ${limit} ${limits.requests} in a minute (${variable}); ${limits.consequence} Retry in ${seconds} s.`,
      { 'Retry-After': String(seconds) },
    );
  };
  return async (ctx: SvcContext, next: SvcNext) => {
    const address = limitKeyOf(ctx.state.client);
    await perAddress.consume(address).catch((res: unknown) => {
      if (!(res instanceof RateLimiterRes)) throw res;
      throw refusal(res.msBeforeNext, 'This address', limits.perAddressPerMinute, limits.perAddressVariable);
    });
    const wait = global?.take(address) ?? 0;
    if (wait > 0) throw refusal(wait, 'All clients together, this one past its share,', limits.globalPerMinute!, limits.globalVariable);
    await next();
  };
}
