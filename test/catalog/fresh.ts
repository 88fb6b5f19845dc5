/** Per-test temp catalogs (kept apart from fixtures.ts so non-test scripts need no vitest). */
import { afterEach, beforeEach } from 'vitest';
import { freshCatalogDatabase, type Backend } from '../helpers/postgres.ts';
import { tempCatalog } from './fixtures.ts';

export { BACKENDS, freshCatalogDatabase, type Backend } from '../helpers/postgres.ts';

type TempCatalog = ReturnType<typeof tempCatalog>;

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
