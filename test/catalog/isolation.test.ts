/**
 * Catalog work runs on worker threads (pool.ts): a flood of discovery requests is refused with
 * svc_catalog_busy once the bounded queue is full, and the calling thread's event loop stays free
 * meanwhile. The ownership check comes before any seller schema is compiled.
 */
import { cpus, loadavg } from 'node:os';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openCatalog } from '../../src/catalog/index.ts';
import { CatalogQueryError } from '../../src/catalog/types.ts';
import { BUSY_MACHINE_BOUNDS, PAY_TO_A, PAY_TO_B, recordingLogger, settlement, tempDir } from './fixtures.ts';

describe('worker isolation', () => {
  it('a search flood: the queue bound refuses the excess with svc_catalog_busy (503), the event loop stays responsive', async () => {
    const { dir, cleanup } = tempDir();
    const catalog = openCatalog({
      dbPath: join(dir, 'c.sqlite'),
      logger: recordingLogger(),
      maxQueuedReads: 4,
      ...BUSY_MACHINE_BOUNDS,
    });
    try {
      for (let i = 0; i < 200; i++)
        await catalog.recordSettlement(settlement({ url: `https://f${i}.example.com/r`, description: `energy solar wind ${i}` }));
      let maxLag = 0;
      let last = performance.now();
      const ticker = setInterval(() => {
        const now = performance.now();
        maxLag = Math.max(maxLag, now - last - 5);
        last = now;
      }, 5);
      const results = await Promise.allSettled(Array.from({ length: 60 }, () => catalog.search('energy solar wind', {}, { limit: 50 })));
      clearInterval(ticker);
      const refused = results.filter((r) => r.status === 'rejected').map((r) => r.reason as CatalogQueryError);
      expect(refused.length).toBeGreaterThan(0);
      for (const err of refused) {
        expect(err).toBeInstanceOf(CatalogQueryError);
        expect(err.code).toBe('svc_catalog_busy');
        expect(err.status).toBe(503);
      }
      expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(5);
      // The loop only posts and receives messages; the bound leaves room for a loaded machine's
      // scheduling, and 4× that when other work overloads it (the loop then waits for a core,
      // whatever svc does; as in test/security/schemas.test.ts).
      expect(maxLag).toBeLessThan(loadavg()[0]! > cpus().length ? 1_000 : 250);
    } finally {
      await catalog.close();
      cleanup();
    }
  });

  it('a squatter is refused for ownership before its schema is compiled (an uncompilable schema still gets owned_by_other)', async () => {
    const { dir, cleanup } = tempDir();
    const catalog = openCatalog({ dbPath: join(dir, 'c.sqlite'), logger: recordingLogger(), ...BUSY_MACHINE_BOUNDS });
    try {
      expect(await catalog.recordSettlement(settlement({ url: 'https://own.example.com/r', payTo: PAY_TO_A }))).toEqual({
        status: 'success',
      });
      const squat = settlement({ url: 'https://own.example.com/r', payTo: PAY_TO_B });
      const bazaar = (squat.paymentPayload.extensions as { bazaar: Record<string, unknown> }).bazaar;
      bazaar.schema = { type: 'not-a-type' };
      expect(await catalog.recordSettlement(squat)).toMatchObject({ status: 'rejected', code: 'bazaar_listing_owned_by_other_payee' });
      const own = settlement({ url: 'https://fresh.example.com/r', payTo: PAY_TO_B });
      (own.paymentPayload.extensions as { bazaar: Record<string, unknown> }).bazaar.schema = { type: 'not-a-type' };
      expect(await catalog.recordSettlement(own)).toMatchObject({ status: 'rejected', code: 'bazaar_schema_validation_failed' });
    } finally {
      await catalog.close();
      cleanup();
    }
  });
});
