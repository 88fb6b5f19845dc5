/** Per-test temp catalogs (kept apart from fixtures.ts so non-test scripts need no vitest). */
import { afterEach, beforeEach } from 'vitest';
import { freshDatabase, type Backend } from '../helpers/postgres.ts';
import { tempCatalog } from './fixtures.ts';

export { BACKENDS, type Backend } from '../helpers/postgres.ts';

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
      databaseUrl = await freshDatabase();
    });
  afterEach(() => {
    for (const t of open.splice(0)) t.close();
  });
  const track = (t: TempCatalog) => (open.push(t), t);
  return Object.assign(() => track(tempCatalog(undefined, { databaseUrl })), {
    another: async () => track(tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshDatabase() : undefined })),
  });
}
