/**
 * The message an owner signs to withdraw a listing (openapi.yaml, GET and POST /discovery/delist;
 * docs/CATALOG.md "Withdrawing a listing"): what svc hands out and verifies (src/handlers/delist.ts)
 * and what the seller toolkit checks before signing (src/client/delist.ts), built in one place so
 * they cannot drift apart. It names the catalog (the identifier created with its database) and the
 * network svc settles, so a withdrawal signed for one catalog withdraws nothing from another.
 */

/** How far before svc's clock `issuedAt` may be. */
export const DELIST_WINDOW_MS = 5 * 60_000;
/**
 * How far after svc's clock `issuedAt` may be: the clock skew allowed between the signer (or another
 * instance that handed out the text) and this instance. A later time is refused, so an accepted
 * message cannot hold back its owner's next withdrawal for more than this.
 */
export const DELIST_CLOCK_SKEW_MS = 60_000;

/** The catalog a withdrawal is for: GET /discovery/delist names both. */
export interface DelistBinding {
  /** The catalog's identifier (created with its database, shared by every instance on it). */
  catalog: string;
  /** The network svc settles (CAIP-2, e.g. stellar:testnet). */
  network: string;
}

export interface DelistFields extends DelistBinding {
  type: string;
  resource: string;
  /** "" for an http listing. */
  toolName: string;
  payTo: string;
  /** RFC 3339, exactly as sent in the request. */
  issuedAt: string;
}

/**
 * The eight lines, joined by "\n" (no trailing newline). `action` is the first line's verb: a
 * withdrawal (`delist`) or a claim's check without paying (`recheck`, POST /discovery/recheck), so
 * a text signed for one is refused by the other.
 */
export function delistMessage(f: DelistFields, action: 'delist' | 'recheck' = 'delist'): string {
  return [`svc ${action}`, `catalog ${f.catalog}`, `network ${f.network}`, f.type, f.resource, f.toolName, f.payTo, f.issuedAt].join('\n');
}
