/**
 * The catalog as the `bazaar` x402 extension of the scheme registry (src/scheme/types.ts,
 * FacilitatorExtension): after each successful settlement it records the listing and its outcome
 * becomes the `bazaar` entry of EXTENSION-RESPONSES (openapi.yaml, ExtensionResponses).
 */
import type { FacilitatorExtension } from '../scheme/types.ts';
import type { Catalog, CatalogLogger, CatalogPort } from './types.ts';

/** The extension identifier advertised in /supported and used as the EXTENSION-RESPONSES key. */
export const BAZAAR = 'bazaar';

/**
 * `onClaim`: a settlement answered `processing` (a claim waits for its origin's check: ownership.ts),
 * so the ownership checker runs a pass now rather than at its next timer.
 */
export function bazaarExtension(catalog: CatalogPort, onClaim?: () => void): FacilitatorExtension {
  return {
    name: BAZAAR,
    // Only a payload that echoes the extension can be listed: its settle starts the writer thread early.
    beforeSettle: (payload) => {
      if (payload.extensions?.[BAZAAR] !== undefined) catalog.prepareSettlement?.();
    },
    // `await` so a synchronous port and a Promise-returning one both work.
    // Strict: a fault rejects, so the journal keeps the payment unlisted and tries again.
    // The payer and the transaction reach the catalog as opaque strings (it knows nothing of the chain).
    afterSettle: async ({ paymentPayload, paymentRequirements, response }) => {
      const outcome = await catalog.recordSettlement(
        { paymentPayload, paymentRequirements, payment: { payer: response.payer, id: response.transaction } },
        { strict: true },
      );
      if (outcome?.status === 'processing') onClaim?.();
      return outcome;
    },
  };
}

/** The catalog database could not be opened: discovery answers 500 and settlements are not cataloged. */
export class CatalogUnavailable extends Error {
  constructor(readonly dbPath: string) {
    super('The catalog database could not be opened; discovery is unavailable until it is fixed.');
    this.name = 'CatalogUnavailable';
  }
}

/** How often at most a catalog that could not open is tried again. */
export const CATALOG_REOPEN_INTERVAL_MS = 1_000;

/**
 * What the service runs with when the catalog cannot open at start (a read-only or full
 * filesystem, a missing directory): payments must not stop, so until it opens settle runs with no
 * `bazaar` entry (rejected when strict, so the journal lists the payment later) and both discovery
 * routes answer 500. Each request tries to open it again, at most once a second: nothing was open,
 * so opening later is safe, and once the fault is repaired the catalog serves without a restart.
 */
export function catalogOpenedLater(
  open: () => Catalog,
  dbPath: string,
  logger: Pick<CatalogLogger, 'warn'> & { info(obj: object, msg: string): void },
  now: () => number = Date.now,
): { catalog: CatalogPort; close: () => Promise<void> } {
  let opened: Catalog | undefined;
  let lastTry = now();
  let closed = false;
  const current = (): Catalog | undefined => {
    if (opened || closed || now() - lastTry < CATALOG_REOPEN_INTERVAL_MS) return opened;
    lastTry = now();
    try {
      opened = open();
      logger.info({}, 'catalog opened; discovery and listing resume');
    } catch {
      // Still failing: logged once at start, not on every request.
    }
    return opened;
  };
  return {
    catalog: {
      recordSettlement: (settled, options) => {
        const catalog = current();
        if (catalog) return catalog.recordSettlement(settled, options);
        return options?.strict ? Promise.reject(new CatalogUnavailable(dbPath)) : Promise.resolve(null);
      },
      prepareSettlement: () => current()?.prepareSettlement?.(),
      previewSettlement: (settled) => current()?.previewSettlement?.(settled) ?? Promise.reject(new CatalogUnavailable(dbPath)),
      list: (filters, page, requester) => current()?.list(filters, page, requester) ?? Promise.reject(new CatalogUnavailable(dbPath)),
      search: (query, filters, page, requester) =>
        current()?.search(query, filters, page, requester) ?? Promise.reject(new CatalogUnavailable(dbPath)),
      ownership: {
        claimDue: (now, limit, pick) => current()?.ownership?.claimDue(now, limit, pick) ?? Promise.resolve([]),
        nextDue: () => current()?.ownership?.nextDue?.() ?? Promise.resolve(null),
        resolve: (key, claimedAt, verdict) => current()?.ownership?.resolve(key, claimedAt, verdict) ?? Promise.resolve('gone'),
      },
      ownershipChecks: (identity) => current()?.ownershipChecks?.(identity) ?? Promise.resolve([]),
      recheckClaim: (identity, payTo) => current()?.recheckClaim?.(identity, payTo) ?? Promise.reject(new CatalogUnavailable(dbPath)),
      reserveProbeHost: (host, intervalMs, sent) =>
        current()?.reserveProbeHost?.(host, intervalMs, sent) ?? Promise.reject(new CatalogUnavailable(dbPath)),
      maintainLifecycle: () => current()?.maintainLifecycle?.() ?? Promise.resolve({ hidden: 0, restored: 0, purged: 0 }),
      listJson: (filters, page, requester) =>
        current()?.listJson(filters, page, requester) ?? Promise.reject(new CatalogUnavailable(dbPath)),
      searchJson: (query, filters, page, requester) =>
        current()?.searchJson(query, filters, page, requester) ?? Promise.reject(new CatalogUnavailable(dbPath)),
    },
    close: async () => {
      closed = true;
      await opened?.close();
    },
  };
}
