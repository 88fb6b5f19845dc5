/**
 * The catalog as the `bazaar` x402 extension of the scheme registry (src/scheme/types.ts,
 * FacilitatorExtension): after each successful settlement it records the listing and its outcome
 * becomes the `bazaar` entry of EXTENSION-RESPONSES (openapi.yaml, ExtensionResponses).
 */
import type { FacilitatorExtension } from '../scheme/types.ts';
import type { CatalogPort, ListPage, SearchPage } from './types.ts';

/** The extension identifier advertised in /supported and used as the EXTENSION-RESPONSES key. */
export const BAZAAR = 'bazaar';

export function bazaarExtension(catalog: CatalogPort): FacilitatorExtension {
  return {
    name: BAZAAR,
    // `await` so a synchronous port and a Promise-returning one both work.
    // Strict: a fault rejects, so the journal keeps the payment unlisted and tries again.
    afterSettle: async ({ paymentPayload, paymentRequirements }) =>
      await catalog.recordSettlement({ paymentPayload, paymentRequirements }, { strict: true }),
  };
}

/** The catalog database could not be opened: discovery answers 500 and settlements are not cataloged. */
export class CatalogUnavailable extends Error {
  constructor(readonly dbPath: string) {
    super('The catalog database could not be opened; discovery is unavailable until it is fixed.');
    this.name = 'CatalogUnavailable';
  }
}

/**
 * What the service runs with when the catalog cannot open: payments must not stop, so settle runs
 * with no `bazaar` entry and both discovery routes answer 500 (the fault is logged at start).
 */
export function unavailableCatalog(dbPath: string): CatalogPort {
  return {
    recordSettlement: () => Promise.resolve(null),
    list: (): Promise<ListPage> => Promise.reject(new CatalogUnavailable(dbPath)),
    search: (): Promise<SearchPage> => Promise.reject(new CatalogUnavailable(dbPath)),
  };
}
