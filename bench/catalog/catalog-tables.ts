/**
 * The catalog's tables: how many a fresh SQLite catalog holds, and how many one new listing's write changes.
 *
 * Counted on a fresh catalog file of the tree in the working directory (its own store and corpus, so a baseline
 * tree is counted by its own code, as bench/catalog/lib/catalog-write-latency.ts times it): the tables in
 * `sqlite_master`, an FTS5 table counted once (its shadow tables not), then every table's rows hashed before and
 * after the write of a second corpus listing with a payment (writeListing, the settle hook's write), so a table
 * whose rows only change (a count, the write sequence) counts as touched too. docs/BENCHMARKS.md "Catalog tables".
 *
 *   (cd TREE && npx tsx CHECKOUT/bench/catalog/catalog-tables.ts)      or      npm run bench -- catalog-tables
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The store and the corpus of the tree this runs in (the working directory).
const { CatalogStore } = (await import(resolve('src/catalog/sqlite/store.ts'))) as typeof import('../../src/catalog/sqlite/store.ts');
const { corpusListings } = (await import(
  resolve(existsSync('bench/lib/catalog-corpus.ts') ? 'bench/lib/catalog-corpus.ts' : 'bench/catalog-corpus.ts')
)) as typeof import('../lib/catalog-corpus.ts');

const dir = mkdtempSync(join(tmpdir(), 'svc-catalog-tables-'));
const store = new CatalogStore(join(dir, 'catalog.sqlite'));
try {
  const all = store.db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{
    name: string;
    sql: string;
  }>;
  const fts = all.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name);
  const tables = all.map((t) => t.name).filter((name) => !fts.some((f) => name.startsWith(`${f}_`)));
  const rows = () =>
    new Map(
      tables.map((t) => [
        t,
        createHash('sha256')
          .update(JSON.stringify(store.db.prepare(`SELECT * FROM "${t}"`).all()))
          .digest('hex'),
      ]),
    );
  const [first, second] = [...corpusListings(2)];
  const write = (listing: typeof first, i: number) =>
    // The third argument (the payment's payer and id) is ignored by a store older than the quality signals.
    (store.writeListing as (...args: unknown[]) => unknown)(listing!.draft, listing!.at, { payer: `payer-${i}`, id: `tx-${i}` });
  write(first, 0);
  const before = rows();
  write(second, 1);
  const after = rows();
  const touched = tables.filter((t) => before.get(t) !== after.get(t));
  console.log(`catalog tables in a fresh SQLite catalog (FTS5 shadow tables not counted): ${tables.length}\n  ${tables.join(' ')}`);
  console.log(`tables one new listing's write changes: ${touched.length}\n  ${touched.join(' ')}`);
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
