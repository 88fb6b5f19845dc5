/**
 * Reading configuration from the environment: the primitives the service configuration
 * (src/config.ts) and each chain's own configuration (src/chains/<chain>/config.ts) share. A
 * ConfigError names the variable and never contains any part of a secret value.
 */

/** The environment a configuration is read from (process.env, or a test's record). */
export type Env = Record<string, string | undefined>;

/** An invalid configuration value; `variable` names the environment variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${withoutSecrets(reason)}`);
    this.name = 'ConfigError';
  }
}

/**
 * A secret seed pasted into the wrong variable (PORT, LOG_LEVEL…) must not be echoed by the
 * error that names it: any run of 20+ characters of the seed alphabet (base32: a Stellar seed is
 * 56, a truncated or mistyped one shorter) is replaced, whichever variable it came from.
 */
const SECRET_LOOKING = /[A-Z2-7]{20,}/gi;
function withoutSecrets(reason: string): string {
  return reason.replace(SECRET_LOOKING, '[value that looks like a secret, not shown]');
}

/** A variable counts as unset when absent or empty. */
export function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A decimal integer string (no sign, no exponent, no fraction) within [min, max]. */
export function parseInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = read(env, name);
  if (value === undefined) return fallback;
  const n = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}`);
  }
  return n;
}

/** One of `values` (compared exactly), `fallback` when unset. */
export function parseOneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = read(env, name) ?? fallback;
  if (!(values as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${values.join(', ')}; got ${JSON.stringify(value)}`);
  }
  return value as T;
}
