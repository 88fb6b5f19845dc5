/**
 * Per-client and global request rates of one operation: POST /discovery/validate (docs/SECURITY.md
 * "`POST /discovery/validate` as an amplifier": an anonymous route that makes svc request other
 * hosts must not become an amplifier), POST /mcp (docs/MCP.md "Hosted discovery": one client
 * must not take the discovery capacity of everyone) and POST /discovery/delist (docs/CATALOG.md
 * "Withdrawing a listing": each request verifies a signature and may take the catalog's writer,
 * which lists settlements). Fixed one-minute windows (rate-limiter-flexible's memory limiter) keyed by the peer address, the same key as the
 * connection caps (behind a reverse proxy every client shares it). Per instance: N instances allow
 * N times the rate.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
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

const GLOBAL_KEY = '*';

export function rateLimited(limits: RateLimits): SvcMiddleware {
  const perAddress = new RateLimiterMemory({ points: limits.perAddressPerMinute, duration: 60 });
  const global = limits.globalPerMinute === undefined ? null : new RateLimiterMemory({ points: limits.globalPerMinute, duration: 60 });
  const refuse = (res: unknown, who: string, limit: number, variable: string | undefined): never => {
    if (!(res instanceof RateLimiterRes)) throw res;
    const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw new HttpError(
      429,
      limits.code,
      `${who} made more than ${limit} ${limits.requests} in a minute (${variable}); ${limits.consequence} Retry in ${seconds} s.`,
      { 'Retry-After': String(seconds) },
    );
  };
  return async (ctx: SvcContext, next: SvcNext) => {
    const address = ctx.req.socket.remoteAddress ?? 'unknown';
    await perAddress
      .consume(address)
      .catch((res: unknown) => refuse(res, 'This address', limits.perAddressPerMinute, limits.perAddressVariable));
    await global
      ?.consume(GLOBAL_KEY)
      .catch((res: unknown) => refuse(res, 'All clients together', limits.globalPerMinute!, limits.globalVariable));
    await next();
  };
}
