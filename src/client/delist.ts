/**
 * The seller toolkit's withdrawal (docs/CATALOG.md "Withdrawing a listing"): signs the delist
 * message with the owner's key (SEP-53) and posts it to POST /discovery/delist.
 *
 *   const answer = await delist(createFacilitatorClient(url), sellerKeypair, { resource, type: 'http' });
 *   // { ok: true, data: { delisted: true } } | { ok: false, status, code, reason }
 */
import { signMessage, type Keypair } from '../chains/stellar/index.ts';
import { delistMessage } from '../delist-message.ts';
import type { DelistRequest, DelistResponse, FacilitatorClient, FacilitatorResult } from './facilitator.ts';

/** A listing as discovery shows it (`toolName` only for an MCP tool). */
export interface ListingIdentity {
  resource: string;
  type: string;
  toolName?: string;
}

/** The signed body of POST /discovery/delist, issued at `issuedAt` (default now) by `owner`. */
export function signedDelist(owner: Keypair, listing: ListingIdentity, issuedAt: Date = new Date()): DelistRequest {
  const fields = {
    type: listing.type,
    resource: listing.resource,
    toolName: listing.toolName ?? '',
    payTo: owner.publicKey(),
    issuedAt: issuedAt.toISOString(),
  };
  const signature = Buffer.from(signMessage(owner, delistMessage(fields))).toString('base64');
  return { ...fields, signature };
}

/** Withdraws `listing`, signed by its owner's key; every HTTP answer is returned, never thrown. */
export function delist(
  facilitator: FacilitatorClient,
  owner: Keypair,
  listing: ListingIdentity,
  issuedAt?: Date,
): Promise<FacilitatorResult<DelistResponse>> {
  return facilitator.delist(signedDelist(owner, listing, issuedAt));
}
