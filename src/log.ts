/**
 * Structured JSON logs (pino). Secrets are redacted by path as a second line of defence; the
 * first is that no code logs a secret or a Keypair in the first place.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Paths censored wherever they appear in a log object. */
export const REDACTED_PATHS = [
  'secret',
  'seed',
  '*.secret',
  '*.seed',
  'SUBMITTER_SECRET',
  'FEE_BUMP_SECRET',
  'CLIENT_STELLAR_PRIVATE_KEY',
  '*.SUBMITTER_SECRET',
  '*.FEE_BUMP_SECRET',
  '*.CLIENT_STELLAR_PRIVATE_KEY',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function createLogger(level: string = 'info', destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that writes nothing (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
