/**
 * The message an owner signs to withdraw a listing (openapi.yaml, POST /discovery/delist;
 * docs/CATALOG.md "Withdrawing a listing"): what svc verifies (src/handlers/delist.ts) and what the
 * seller toolkit signs (src/client/delist.ts), built in one place so the two cannot drift apart.
 */

/** How far `issuedAt` may be from svc's clock, in either direction. */
export const DELIST_WINDOW_MS = 5 * 60_000;

export interface DelistFields {
  type: string;
  resource: string;
  /** "" for an http listing. */
  toolName: string;
  payTo: string;
  /** RFC 3339, exactly as sent in the request. */
  issuedAt: string;
}

/** The six lines, joined by "\n" (no trailing newline). */
export function delistMessage(f: DelistFields): string {
  return ['svc delist', f.type, f.resource, f.toolName, f.payTo, f.issuedAt].join('\n');
}
