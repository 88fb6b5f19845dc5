/**
 * The catalog as the `bazaar` x402 extension of the scheme registry (src/scheme/types.ts,
 * FacilitatorExtension): after each successful settlement it records the listing and its outcome
 * becomes the `bazaar` entry of EXTENSION-RESPONSES (openapi.yaml, ExtensionResponses).
 */
import type { FacilitatorExtension } from '../scheme/types.ts';
import { CatalogQueryError, type Catalog, type CatalogLogger, type CatalogPort } from './types.ts';

/** The extension identifier advertised in /supported and used as the EXTENSION-RESPONSES key. */
const BAZAAR = 'bazaar';

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

/** The catalog database could not be opened: discovery answers 503 `svc_catalog_unavailable`, settlements are not cataloged. */
const unavailable = () =>
  Promise.reject(
    new CatalogQueryError(
      'svc_catalog_unavailable',
      'The catalog database could not be opened; discovery is unavailable until it can be (GET /ready names the cause). Payments are unaffected.',
    ),
  );

/** How often at most a catalog that could not open is tried again. */
const CATALOG_REOPEN_INTERVAL_MS = 1_000;

/**
 * What the service runs with when the catalog cannot open at start (a read-only or full
 * filesystem, a missing directory): payments must not stop, so until it opens settle runs with no
 * `bazaar` entry (rejected when strict, so the journal lists the payment later) and the discovery
 * routes answer 503 `svc_catalog_unavailable`. Each request tries to open it again, at most once a second: nothing was open,
 * so opening later is safe, and once the fault is repaired the catalog serves without a restart.
 */
export function catalogOpenedLater(
  open: () => Catalog,
  logger: Pick<CatalogLogger, 'warn'> & { info(obj: object, msg: string): void },
): { catalog: CatalogPort; close: () => Promise<void> } {
  let opened: Catalog | undefined;
  let lastTry = Date.now();
  let closed = false;
  const current = (): Catalog | undefined => {
    if (opened || closed || Date.now() - lastTry < CATALOG_REOPEN_INTERVAL_MS) return opened;
    lastTry = Date.now();
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
        return options?.strict ? unavailable() : Promise.resolve(null);
      },
      prepareSettlement: () => current()?.prepareSettlement?.(),
      withdraw: (withdrawal) => current()?.withdraw?.(withdrawal) ?? unavailable(),
      catalogId: () => current()?.catalogId?.() ?? unavailable(),
      previewSettlement: (settled) => current()?.previewSettlement?.(settled) ?? unavailable(),
      list: (filters, page, requester) => current()?.list(filters, page, requester) ?? unavailable(),
      search: (query, filters, page, requester) => current()?.search(query, filters, page, requester) ?? unavailable(),
      ownership: {
        claimDue: (now, limit, pick) => current()?.ownership?.claimDue(now, limit, pick) ?? Promise.resolve([]),
        nextDue: () => current()?.ownership?.nextDue?.() ?? Promise.resolve(null),
        resolve: (key, claimedAt, verdict) => current()?.ownership?.resolve(key, claimedAt, verdict) ?? Promise.resolve('gone'),
      },
      ownershipChecks: (identity) => current()?.ownershipChecks?.(identity) ?? Promise.resolve([]),
      recheckClaim: (identity, payTo) => current()?.recheckClaim?.(identity, payTo) ?? unavailable(),
      reserveProbeHost: (host, intervalMs, sent) => current()?.reserveProbeHost?.(host, intervalMs, sent) ?? unavailable(),
      maintainLifecycle: () => current()?.maintainLifecycle?.() ?? Promise.resolve({ hidden: 0, restored: 0, purged: 0 }),
      listJson: (filters, page, requester) => current()?.listJson(filters, page, requester) ?? unavailable(),
      searchJson: (query, filters, page, requester) => current()?.searchJson(query, filters, page, requester) ?? unavailable(),
    },
    close: async () => {
      closed = true;
      await opened?.close();
    },
  };
}
