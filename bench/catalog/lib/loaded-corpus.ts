/**
 * The kept directory and the loaded corpus that the benchmarks serving a Postgres catalog share (filter-combos,
 * postgres-idle): DIR of `--keep-dir`, and in it the corpus bench/catalog/catalog-postgres.ts seeds and loads.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `dir` (`--keep-dir`), made and opened to every user (initdb runs as the postgres user when this runs as root); exits 2 without one. */
export function keptDir(dir: string | undefined): string {
  if (!dir) {
    console.error('--keep-dir DIR is required: the seeded corpus and the Postgres data directory are kept there.');
    process.exit(2);
  }
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  return dir;
}

/**
 * DIR/catalog-SIZE.sqlite and database catalog_SIZE in DIR/postgres, seeded and loaded by bench/catalog/catalog-postgres.ts
 * of the tree at `cwd` (so at its schema; one request a row: only the load is wanted). Skipped when a previous run left
 * both (the file, and the marker written once the load is done). Returns the SQLite file.
 */
export function loadedCorpus(dir: string, size: number, cwd = '.'): string {
  const sqlite = join(dir, `catalog-${size}.sqlite`);
  const marker = join(dir, `loaded-${size}`);
  if (!existsSync(sqlite) || !existsSync(marker)) {
    execFileSync(
      process.execPath,
      ['--import', 'tsx', 'bench/catalog/catalog-postgres.ts', '--keep-dir', dir, '--sizes', String(size), '--requests', '1'],
      { cwd, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    writeFileSync(marker, `${new Date().toISOString()}\n`);
  }
  return sqlite;
}
