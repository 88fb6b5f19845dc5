/** Per-test temp catalogs (kept apart from fixtures.ts so non-test scripts need no vitest). */
import { afterEach } from 'vitest';
import { tempCatalog } from './fixtures.ts';

/** For a test file: `fresh()` gives a new temp catalog, closed and deleted after each test. */
export function freshCatalogPerTest(): () => ReturnType<typeof tempCatalog> {
  let current: ReturnType<typeof tempCatalog> | undefined;
  afterEach(() => {
    current?.close();
    current = undefined;
  });
  return () => (current = tempCatalog());
}
