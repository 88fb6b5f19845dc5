/** Per-test temp catalogs (kept apart from fixtures.ts so non-test scripts need no vitest). */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
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
  // The test's database; a test that called no fresh() leaves it untouched for the next.
  let databaseUrl: string | undefined;
  let used = false;
  if (backend === 'Postgres')
    beforeEach(async () => {
      if (databaseUrl !== undefined && !used) return;
      databaseUrl = await freshCatalogDatabase();
      used = false;
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
  return Object.assign(() => ((used = true), track(tempCatalog(undefined, { databaseUrl }))), {
    another: async () => track(tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined })),
  });
}

/**
 * For a describe block whose tests each write listings that no other test's queries match (their
 * own URLs and words) and assert nothing of the whole catalog: one temp catalog on `backend` for
 * all of them, opened before the first and closed after the last. A catalog's threads (writer,
 * seller-schema, reader) cost about 0.6 CPU-s to start, a Postgres copy of the template 0.1-0.4 of
 * the server's.
 */
export function catalogPerDescribe(backend: Backend = 'SQLite'): () => TempCatalog {
  let shared: TempCatalog | undefined;
  beforeAll(async () => {
    shared = tempCatalog(undefined, { databaseUrl: backend === 'Postgres' ? await freshCatalogDatabase() : undefined });
  });
  afterEach((context) => {
    if (context.task.result?.state === 'fail' && shared && shared.logger.lines.length > 0)
      console.error(`catalog log of the failed test's block:\n${JSON.stringify(shared.logger.lines, null, 1)}`);
  });
  afterAll(() => shared?.close());
  return () => shared!;
}
