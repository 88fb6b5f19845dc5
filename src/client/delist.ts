/**
 * The seller toolkit's withdrawal (docs/CATALOG.md "Withdrawing a listing"): asks the catalog for
 * the text to sign (GET /discovery/delist: it names this catalog and its network), checks that the
 * text is the withdrawal of the listing asked for, signs it with the owner's key (SEP-53) and posts
 * it to POST /discovery/delist. The key never leaves the seller.
 *
 *   const answer = await delist(createFacilitatorClient(url), sellerKeypair, { resource, type: 'http' });
 *   // { ok: true, data: { delisted: true } } | { ok: false, status, code, reason }
 */
import { signMessage, type Keypair } from '../chains/stellar/index.ts';
import { delistMessage, type DelistBinding } from '../delist-message.ts';
import type { DelistRequest, DelistResponse, FacilitatorClient, FacilitatorResult } from './facilitator.ts';

/** A listing as discovery shows it (`toolName` only for an MCP tool). */
export interface ListingIdentity {
  resource: string;
  type: string;
  toolName?: string;
}

/**
 * The signed body of POST /discovery/delist for the catalog `binding` names (GET /discovery/delist
 * answers it), issued at `issuedAt` (default now) by `owner`.
 */
export function signedDelist(owner: Keypair, listing: ListingIdentity, binding: DelistBinding, issuedAt: Date = new Date()): DelistRequest {
  const fields = {
    type: listing.type,
    resource: listing.resource,
    toolName: listing.toolName ?? '',
    payTo: owner.publicKey(),
    issuedAt: issuedAt.toISOString(),
  };
  const signature = Buffer.from(signMessage(owner, delistMessage({ ...fields, ...binding }))).toString('base64');
  return { ...fields, catalog: binding.catalog, signature };
}

/**
 * Withdraws `listing` from the catalog at `facilitator`: the text to sign comes from its GET
 * /discovery/delist, and is signed only if it is the withdrawal of this listing by this owner.
 * Every HTTP answer is returned, never thrown.
 */
export async function delist(
  facilitator: FacilitatorClient,
  owner: Keypair,
  listing: ListingIdentity,
): Promise<FacilitatorResult<DelistResponse>> {
  const fields = { resource: listing.resource, type: listing.type, toolName: listing.toolName ?? '', payTo: owner.publicKey() };
  const text = await facilitator.delistText(fields);
  if (!text.ok) return text;
  const { message, issuedAt, catalog, network } = text.data;
  if (message !== delistMessage({ ...fields, catalog, network, issuedAt }))
    throw new Error(
      `The facilitator at ${facilitator.url} handed out a text that is not the withdrawal of this listing; nothing was signed.`,
    );
  const signature = Buffer.from(signMessage(owner, message)).toString('base64');
  return facilitator.delist({ ...fields, issuedAt, catalog, signature });
}
