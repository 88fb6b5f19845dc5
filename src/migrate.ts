/**
 * `npm run migrate`: applies svc's schema migrations (src/db/migrate.ts) and exits. Reads
 * DATABASE_URL (Postgres) or else DB_PATH (SQLite) by svc's own rules and needs no secret. Prints
 * one line; exits 78 on a bad configuration and 1 when a migration fails (each migration is one
 * transaction: the database stays at its last whole version). The URL is never printed.
 */
import { ConfigError, EXIT_CONFIG, loadStorageConfig } from './config.ts';
import { migrateAll } from './db/migrate.ts';

try {
  process.stdout.write(`svc: migrated ${await migrateAll(loadStorageConfig(process.env))}\n`);
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  const code = (err as { code?: unknown })?.code;
  process.stderr.write(
    `svc: migration failed: ${typeof code === 'string' ? `database ${code}` : String((err as Error)?.message ?? err)}\n`,
  );
  process.exit(1);
}
