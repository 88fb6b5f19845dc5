/**
 * The configuration of svc's outbound checks of sellers (README.md "Configuration"): POST
 * /discovery/validate's rate limits and the live-402 probe's time bound (docs/CATALOG.md
 * "Checking a listing"). Parsed with the service's configuration (src/config.ts).
 */
import { parseInteger, type Env } from '../config-env.ts';

export const PROBE_DEFAULTS = {
  VALIDATE_RATE_PER_MINUTE: 10,
  VALIDATE_GLOBAL_PER_MINUTE: 120,
  PROBE_TIMEOUT_MS: 5_000,
} as const;

/** At most this much of a target's answer is read (a PaymentRequired with a 64 KiB bazaar extension fits). */
export const PROBE_MAX_BYTES = 256 * 1024;
/** Same-origin redirects the probe follows. */
export const PROBE_MAX_REDIRECTS = 3;

export interface ProbeConfig {
  /** POST /discovery/validate requests one client address may make per minute. */
  validatePerAddressPerMinute: number;
  /** … and all clients together. */
  validateGlobalPerMinute: number;
  /** Deadline of one probe of a target (connect, redirects, answer). */
  timeoutMs: number;
}

export function loadProbeConfig(env: Env): ProbeConfig {
  return {
    validatePerAddressPerMinute: parseInteger(env, 'VALIDATE_RATE_PER_MINUTE', PROBE_DEFAULTS.VALIDATE_RATE_PER_MINUTE, 1, 100_000),
    validateGlobalPerMinute: parseInteger(env, 'VALIDATE_GLOBAL_PER_MINUTE', PROBE_DEFAULTS.VALIDATE_GLOBAL_PER_MINUTE, 1, 1_000_000),
    timeoutMs: parseInteger(env, 'PROBE_TIMEOUT_MS', PROBE_DEFAULTS.PROBE_TIMEOUT_MS, 500, 60_000),
  };
}
