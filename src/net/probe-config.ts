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
  /** One host is asked at most once in this time by every check together (docs/SECURITY.md). */
  PROBE_HOST_INTERVAL_SECONDS: 60,
  /** Liveness checks (docs/CATALOG.md "Liveness"): conservative by default, 0 checks a minute is off. */
  LIVENESS_CHECKS_PER_MINUTE: 30,
  LIVENESS_INTERVAL_HOURS: 6,
  LIVENESS_GRACE_HOURS: 24,
  LIVENESS_CONCURRENCY: 2,
} as const;

const HOUR_MS = 3_600_000;

/** svc's liveness checks of listed resources (docs/CATALOG.md "Liveness"). */
export interface LivenessConfig {
  /** Probes a minute in all; 0: no check runs and nothing is scheduled. */
  perMinute: number;
  /** A listing is checked again this long after its last check or settlement. */
  intervalMs: number;
  /** A listing failing its checks for longer than this leaves list and search. */
  graceMs: number;
  /** Probes at once. */
  concurrency: number;
}

/** At most this much of a target's answer is read (a PaymentRequired with a 64 KiB bazaar extension fits). */
export const PROBE_MAX_BYTES = 256 * 1024;
/**
 * At most this much of an answer's headers is read (a 402's PAYMENT-REQUIRED header counts): Node's
 * own default, so what svc reads is what a stock Node buyer's fetch reads.
 */
export const PROBE_MAX_HEADER_BYTES = 16 * 1024;
/**
 * Redirects a check follows: none. Each hop would be one more request to the host, and a buyer
 * (paid_call) pays the URL it is given: a listing's URL answers its 402 itself.
 */
export const PROBE_MAX_REDIRECTS = 0;

export interface ProbeConfig {
  /** POST /discovery/validate requests one client address may make per minute. */
  validatePerAddressPerMinute: number;
  /** … and all clients together. */
  validateGlobalPerMinute: number;
  /** Deadline of one probe of a target (connect, answer). */
  timeoutMs: number;
  /**
   * One host is asked at most once in this time by ownership checks, validate, re-checks and
   * liveness together, on every instance sharing the catalog (src/catalog/probe-hosts.ts).
   */
  hostIntervalMs: number;
  liveness: LivenessConfig;
}

export function loadProbeConfig(env: Env): ProbeConfig {
  return {
    validatePerAddressPerMinute: parseInteger(env, 'VALIDATE_RATE_PER_MINUTE', PROBE_DEFAULTS.VALIDATE_RATE_PER_MINUTE, 1, 100_000),
    validateGlobalPerMinute: parseInteger(env, 'VALIDATE_GLOBAL_PER_MINUTE', PROBE_DEFAULTS.VALIDATE_GLOBAL_PER_MINUTE, 1, 1_000_000),
    timeoutMs: parseInteger(env, 'PROBE_TIMEOUT_MS', PROBE_DEFAULTS.PROBE_TIMEOUT_MS, 500, 60_000),
    hostIntervalMs: parseInteger(env, 'PROBE_HOST_INTERVAL_SECONDS', PROBE_DEFAULTS.PROBE_HOST_INTERVAL_SECONDS, 0, 86_400) * 1000,
    liveness: {
      perMinute: parseInteger(env, 'LIVENESS_CHECKS_PER_MINUTE', PROBE_DEFAULTS.LIVENESS_CHECKS_PER_MINUTE, 0, 6_000),
      intervalMs: parseInteger(env, 'LIVENESS_INTERVAL_HOURS', PROBE_DEFAULTS.LIVENESS_INTERVAL_HOURS, 1, 8_760) * HOUR_MS,
      graceMs: parseInteger(env, 'LIVENESS_GRACE_HOURS', PROBE_DEFAULTS.LIVENESS_GRACE_HOURS, 1, 8_760) * HOUR_MS,
      concurrency: parseInteger(env, 'LIVENESS_CONCURRENCY', PROBE_DEFAULTS.LIVENESS_CONCURRENCY, 1, 64),
    },
  };
}
