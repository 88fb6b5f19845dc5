/**
 * Per-client and global request rates of one operation (POST /discovery/validate; docs/SECURITY.md
 * "`POST /discovery/validate` as an amplifier"): an anonymous route that makes svc request other
 * hosts must not become an amplifier. Fixed one-minute windows (rate-limiter-flexible's memory
 * limiter) keyed by the peer address, the same key as the connection caps (behind a reverse proxy
 * every client shares it). Per instance: N instances allow N times the rate.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { HttpError } from './errors.ts';
import type { SvcContext, SvcMiddleware, SvcNext } from './middleware.ts';

export interface RateLimits {
  perAddressPerMinute: number;
  globalPerMinute: number;
  /** Names of the variables that set them, for the 429's reason. */
  perAddressVariable: string;
  globalVariable: string;
}

const GLOBAL_KEY = '*';

export function rateLimited(limits: RateLimits): SvcMiddleware {
  const perAddress = new RateLimiterMemory({ points: limits.perAddressPerMinute, duration: 60 });
  const global = new RateLimiterMemory({ points: limits.globalPerMinute, duration: 60 });
  const refuse = (res: unknown, who: string, limit: number, variable: string): never => {
    if (!(res instanceof RateLimiterRes)) throw res;
    const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw new HttpError(
      429,
      'svc_validate_rate_limited',
      `${who} made more than ${limit} validate requests in a minute (${variable}); nothing was requested of the target. Retry in ${seconds} s.`,
      { 'Retry-After': String(seconds) },
    );
  };
  return async (ctx: SvcContext, next: SvcNext) => {
    const address = ctx.req.socket.remoteAddress ?? 'unknown';
    await perAddress
      .consume(address)
      .catch((res: unknown) => refuse(res, 'This address', limits.perAddressPerMinute, limits.perAddressVariable));
    await global
      .consume(GLOBAL_KEY)
      .catch((res: unknown) => refuse(res, 'All clients together', limits.globalPerMinute, limits.globalVariable));
    await next();
  };
}
