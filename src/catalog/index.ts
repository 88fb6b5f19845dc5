/**
 * openCatalog: the CatalogPort over one SQLite file. The settle hook (`recordSettlement`) is
 * synchronous, never throws and never returns `processing`: a client defect is a `rejected`
 * outcome with its code, an internal fault (busy, read-only, deleted file, a bug) is logged and
 * returns null so the header is omitted. list/search throw on a fault; the HTTP layer makes
 * that a 500.
 */
import { BAZAAR_CODES } from '../codes.ts';
import { ingestSettlement } from './ingest.ts';
import { installRankFunction, searchCatalog } from './search.ts';
import { CatalogStore, toDiscoveryResource } from './store.ts';
import type { BazaarOutcome, Catalog, CatalogOptions, DiscoveryFilters, SettledPayment } from './types.ts';

export { CatalogQueryError } from './types.ts';
export type { Catalog, CatalogOptions, CatalogPort, BazaarOutcome } from './types.ts';

/** SPEC §4.6 item 9: over this the hook logs a warning (nothing fails). */
export const SOFT_BUDGET_MS = 250;
/** The x402Version the discovery responses declare. */
export const DISCOVERY_X402_VERSION = 2;

export function openCatalog(options: CatalogOptions): Catalog {
  const { logger } = options;
  const clock = options.clock ?? (() => new Date());
  const softBudgetMs = options.softBudgetMs ?? SOFT_BUDGET_MS;
  const store = new CatalogStore(options.dbPath);
  const ranker = installRankFunction(store.db);

  async function recordSettlement(settled: SettledPayment): Promise<BazaarOutcome | null> {
    const started = performance.now();
    let outcome: BazaarOutcome | null = null;
    let result = 'none';
    try {
      const ingested = await ingestSettlement(settled.paymentPayload, settled.paymentRequirements);
      if (ingested.kind === 'rejected') {
        result = ingested.code;
        outcome = { status: 'rejected', rejectedReason: ingested.reason || BAZAAR_CODES[ingested.code], code: ingested.code };
      } else if (ingested.kind === 'unusable') {
        result = 'fault';
        logger.error({ reason: ingested.reason }, 'catalog hook could not use the settlement; EXTENSION-RESPONSES omitted');
      } else if (ingested.kind === 'listing') {
        const { draft } = ingested;
        const written = store.writeListing(draft, clock());
        if (written.status === 'owned_by_other') {
          result = 'bazaar_listing_owned_by_other_payee';
          outcome = {
            status: 'rejected',
            rejectedReason: 'The listing for this resource is owned by a different payTo; nothing was written.',
            code: 'bazaar_listing_owned_by_other_payee',
          };
        } else {
          result = written.created ? 'created' : 'refreshed';
          outcome = { status: 'success' };
          if (draft.dropped.length > 0) logger.warn({ resource: draft.resource, dropped: draft.dropped }, 'catalog dropped invalid fields');
        }
      }
    } catch (err) {
      result = 'fault';
      outcome = null;
      logger.error({ err: { name: (err as Error)?.name, message: String((err as Error)?.message ?? err) } }, 'catalog hook fault; EXTENSION-RESPONSES omitted');
    }
    const elapsedMs = performance.now() - started;
    if (elapsedMs > softBudgetMs) logger.warn({ elapsedMs: Math.round(elapsedMs), result }, 'catalog hook exceeded its soft budget');
    return outcome;
  }

  return {
    recordSettlement,
    list(filters: DiscoveryFilters, page: { limit: number; offset: number }) {
      const { rows, total } = store.list(filters, page);
      return { x402Version: DISCOVERY_X402_VERSION, items: rows.map(toDiscoveryResource), pagination: { limit: page.limit, offset: page.offset, total } };
    },
    search(query: string, filters: DiscoveryFilters, page: { limit: number; cursor?: string }) {
      return searchCatalog(store, ranker, query, filters, page, clock(), DISCOVERY_X402_VERSION);
    },
    close() {
      store.close();
    },
  };
}
