/**
 * Structured JSON logs (pino). Secrets are redacted by name as a second line of defence; the first
 * is that no code logs a secret or a Keypair in the first place.
 *
 * Cost matters: svc writes an access line per request and a decision line per payment. So the
 * default destination is asynchronous (a full pipe never blocks a request; pino flushes it on
 * exit), and redaction is split by cost: pino's own redaction takes the fixed paths (compiled,
 * nearly free), while the one-level-deep names (`*.secret` and the like), which pino would check
 * by walking every log object (about half of a line's cost), are checked by a key scan below that
 * copies only an object that actually carries such a name, in log objects and child bindings alike.
 */
import { pino, type Bindings, type ChildLoggerOptions, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Field names censored wherever they sit: at the top of a log object or one level deep. */
export const SECRET_NAMES = ['secret', 'seed', 'SUBMITTER_SECRET', 'FEE_BUMP_SECRET', 'CLIENT_STELLAR_PRIVATE_KEY'] as const;

/** Paths censored by pino itself (top-level names and fixed paths). */
export const REDACTED_PATHS = [...SECRET_NAMES, 'req.headers.authorization', 'req.headers.cookie'];

const CENSOR = '[redacted]';
const SECRET = new Set<string>(SECRET_NAMES);

/** `object` with every secret-named field one level deep censored; the same object when there is none. */
export function redactNested<T extends Record<string, unknown>>(object: T): T {
  let out: Record<string, unknown> = object;
  for (const key in object) {
    const value = object[key];
    if (value === null || typeof value !== 'object') continue;
    let inner: Record<string, unknown> | undefined;
    for (const name in value) {
      if (!SECRET.has(name)) continue;
      inner ??= Array.isArray(value) ? ([...value] as unknown as Record<string, unknown>) : { ...(value as Record<string, unknown>) };
      inner[name] = CENSOR;
    }
    if (inner) {
      if (out === object) out = { ...object };
      out[key] = inner;
    }
  }
  return out as T;
}

export function createLogger(level: string = 'info', destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: CENSOR },
    formatters: { log: redactNested },
  };
  const logger = pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
  // Children inherit this override (pino makes a child from its parent's prototype), so bindings
  // at any depth of the logger tree pass the same scan.
  const child = Reflect.get(logger, 'child') as unknown as (...args: unknown[]) => Logger;
  Reflect.set(logger, 'child', function (this: Logger, bindings: Bindings, childOptions?: ChildLoggerOptions): Logger {
    return Reflect.apply(child, this, [redactNested(bindings), childOptions]);
  });
  return logger;
}

/** A logger that writes nothing (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
