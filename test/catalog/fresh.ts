/** Per-test temp catalogs (kept apart from fixtures.ts so non-test scripts need no vitest). */
import { afterEach, beforeEach } from 'vitest';
import { PostgresCatalogStore } from '../../src/catalog/postgres/store.ts';
import { freshDatabase, type Backend } from '../helpers/postgres.ts';
import { tempCatalog } from './fixtures.ts';

export { BACKENDS, type Backend } from '../helpers/postgres.ts';

type TempCatalog = ReturnType<typeof tempCatalog>;

/**
 * A new database with the catalog's migrations applied, for a test that writes at once. On an
 * empty database a catalog migrates on its first request, inside the settle hook: on a loaded
 * machine that used up the hook's 200 ms bound on the seller's schema, and the test's first write
 * came back not judged (null, nothing listed). Migrating on first use is tested by the late-database
 * tests (test/catalog/postgres.test.ts).
 */
export async function freshCatalogDatabase(): Promise<string> {
  const url = await freshDatabase();
  await (await PostgresCatalogStore.open(url)).end();
  return url;
}

/**
 * For a test file (or a describe block): `fresh()` gives a new temp catalog on `backend`, closed
 * and deleted after each test; `fresh.another()` a second, independent one (its own file or
 * database) in the same test.
 */
export function freshCatalogPerTest(backend: Backend = 'SQLite'): (() => TempCatalog) & { another: () => Promise<TempCatalog> } {
  const open: TempCatalog[] = [];
  let databaseUrl: string | undefined;
  if (backend === 'Postgres')
    beforeEach(async () => {
      databaseUrl = await freshCatalogDatabase();
    });
  afterEach((context) => {
    const closing = open.splice(0);
    // A failed test shows what its catalogs logged (a write that came back null says why there).
    if (context.task.result?.state === 'fail')
      for (const t of closing)
        if (t.logger.lines.length > 0) console.error(`catalog log of the failed test:\n${JSON.stringify(t.logger.lines, null, 1)}`);
    for (const t of closing) t.close();
  });
  const track = (t: TempCatalog) => (open.push(t), t);
  return Object.assign(() => track(tempCatalog(undefined, { databaseUrl })), {
    another: async () => track(tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined })),
  });
}
