/**
 * GET and POST /discovery/delist (openapi.yaml; docs/CATALOG.md "Withdrawing a listing"): GET hands
 * out the exact text to sign, naming this catalog and its network; with POST the owner of a listing
 * withdraws it with that text signed. The body's shape (base64 signature, RFC 3339 time, account
 * address) is checked against openapi.yaml before this runs; here: the catalog the message was
 * signed for, the signature (through the injected MessageVerifier: the chain's, so this layer knows
 * no Stellar), the time against svc's clock, then the catalog's owner and replay checks and the
 * removal, in one transaction there. A message for another catalog is refused as such whatever its
 * age (openapi.yaml's example, signed for an example catalog at a fixed time, is answered 403
 * svc_delist_other_catalog by every svc, as its description says).
 */
import { canonicalResourceUrl } from '../catalog/ingest/sanitize.ts';
import type { OwnershipMode } from '../catalog/ownership.ts';
import { CatalogQueryError, type CatalogPort, type WithdrawalOutcome } from '../catalog/types.ts';
import { URL_FILTER_MAX, URL_FILTER_MIN } from '../filters.ts';
import { DELIST_CLOCK_SKEW_MS, DELIST_WINDOW_MS, delistMessage, type DelistBinding } from '../delist-message.ts';
import type { components } from '../generated/openapi.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import { declaredQuery } from './discovery.ts';

type DelistRequest = components['schemas']['DelistRequest'];
type DelistResponse = components['schemas']['DelistResponse'];
type DelistText = components['schemas']['DelistText'];

/** Whether `address` signed `message` (src/chains/stellar/signed-message.ts for Stellar accounts). */
export type MessageVerifier = (address: string, message: string, signature: Uint8Array) => boolean;

export interface DelistDeps {
  catalog: CatalogPort;
  verify: MessageVerifier;
  /** svc's clock (tests inject one). */
  clock: () => Date;
  /** The network svc settles, named in the signed text. */
  network: string;
  /** Who owns a listing (LISTING_OWNERSHIP), as the not-owner refusal describes it. */
  ownership: OwnershipMode;
}

/** This catalog and network, as the signed text names them. */
async function bindingOf(deps: DelistDeps): Promise<DelistBinding> {
  if (!deps.catalog.catalogId) throw new Error('this catalog has no identifier');
  try {
    return { catalog: await deps.catalog.catalogId(), network: deps.network };
  } catch (err) {
    if (err instanceof CatalogQueryError && err.status === 503) throw new HttpError(503, err.code, err.message);
    throw err;
  }
}

/**
 * GET /discovery/delist: the text the owner signs to withdraw the listing the query names, issued
 * now; GET /discovery/recheck (`recheck`): the text a claimant signs to have its claim checked again.
 */
export function delistTextHandler(deps: DelistDeps, action: 'delist' | 'recheck' = 'delist'): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const params = declaredQuery(ctx.querystring, ['resource', 'type', 'toolName', 'payTo']);
    const query = Object.fromEntries(params) as Record<string, string | undefined>;
    const binding = await bindingOf(deps);
    const issuedAt = deps.clock().toISOString();
    const fields = {
      ...binding,
      type: query.type ?? '',
      resource: query.resource ?? '',
      toolName: query.toolName ?? '',
      payTo: query.payTo ?? '',
      issuedAt,
    };
    const body: DelistText = { message: delistMessage(fields, action), issuedAt, ...binding };
    ctx.body = body;
    ctx.status = 200;
  };
}

/** A span as the refusal names it: seconds under two minutes, else minutes. */
const minutes = (ms: number) =>
  Math.abs(ms) < 120_000 ? `${Math.round(Math.abs(ms) / 1000)} s` : `${Math.round(Math.abs(ms) / 60_000)} min`;

/** The listing's URL as the catalog keeps it (as validate and a settlement make it canonical), or the text as sent when it is no URL. */
function catalogUrl(resource: string): string {
  try {
    return canonicalResourceUrl(new URL(resource), undefined);
  } catch {
    return resource;
  }
}

/** The listings discovery shows at `resource` (any type or tool), for a refusal that names them; none when they cannot be read now. */
async function listingsAt(catalog: CatalogPort, resource: string): Promise<Array<{ type: string; toolName: string }>> {
  if (resource.length < URL_FILTER_MIN || resource.length > URL_FILTER_MAX) return [];
  try {
    const page = await catalog.list({ url: resource }, { limit: 100, offset: 0 });
    return page.items
      .filter((item) => item.resource === resource)
      .map((item) => {
        const info = (item.extensions?.bazaar as { info?: { input?: { toolName?: unknown } } } | undefined)?.info;
        return { type: item.type, toolName: typeof info?.input?.toolName === 'string' ? info.input.toolName : '' };
      });
  } catch {
    return [];
  }
}

/** The 404 naming what is listed at the URL instead, so the caller sees which type and toolName to send. */
function unknownListing(request: DelistRequest, resource: string, there: Array<{ type: string; toolName: string }>): HttpError {
  const asked = `No ${request.type} listing${request.toolName ? ` of tool ${JSON.stringify(request.toolName)}` : ''} has resource ${resource}`;
  const listed = there.map((l) =>
    l.type === 'mcp'
      ? `an mcp listing (type "mcp", toolName ${JSON.stringify(l.toolName)})`
      : `an ${l.type} listing (type "${l.type}", toolName "")`,
  );
  return new HttpError(
    404,
    'svc_delist_unknown_listing',
    listed.length > 0
      ? `${asked}; at that URL there is ${listed.join(' and ')}: withdraw it with that type and toolName.`
      : `${asked}, and no listing of any type is at that URL; copy resource, type and toolName from the listing as GET /discovery/resources shows it (toolName "" for http).`,
  );
}

/** Who owns a listing, as the not-owner refusal says it (docs/CATALOG.md "Ownership and refresh"). */
const OWNER_IS: Record<OwnershipMode, string> = {
  origin:
    "its owner is the payTo the resource's own server names in the 402 it answers an unpaid request with, which svc checked when a settlement claimed the listing",
  'first-settlement': 'its owner is the payTo of the settlement that first listed it (LISTING_OWNERSHIP=first-settlement)',
};

/** The refusal of a catalog outcome other than `delisted` or `unknown`. */
function refusal(
  outcome: Exclude<WithdrawalOutcome, { status: 'delisted' | 'unknown' }>,
  request: DelistRequest,
  ownership: OwnershipMode,
): HttpError {
  switch (outcome.status) {
    case 'not_owner':
      return new HttpError(
        403,
        'svc_delist_not_owner',
        `The listing is owned by ${outcome.owner}, not ${request.payTo}; nothing was changed. Only its owner's key can withdraw it: ${OWNER_IS[ownership]}.`,
      );
    case 'replayed':
      return new HttpError(
        409,
        'svc_delist_replayed',
        `A withdrawal of this listing signed at ${new Date(outcome.lastIssuedAtMs).toISOString()} (not before this one's issuedAt ${request.issuedAt}) was already accepted; a signed message withdraws once, and nothing was changed. Sign a new one with the current time.`,
      );
  }
}

/**
 * The checks of a signed request (a withdrawal, or a re-check: `action`) before the catalog is
 * asked: the catalog it was signed for, the signature by `payTo` of the text GET
 * /discovery/{action} hands out, its time against svc's clock. Resolves to `issuedAt` in ms.
 */
export async function checkSigned(request: DelistRequest, deps: DelistDeps, action: 'delist' | 'recheck'): Promise<number> {
  const now = deps.clock();
  const binding = await bindingOf(deps);
  if (request.catalog !== undefined && request.catalog !== binding.catalog)
    throw new HttpError(
      403,
      'svc_delist_other_catalog',
      `The message was signed for catalog ${request.catalog}; this is catalog ${binding.catalog} (${binding.network}), and nothing was changed. Ask this catalog's GET /discovery/${action} for the text to sign.`,
    );
  const message = delistMessage({ ...request, ...binding }, action);
  if (!deps.verify(request.payTo, message, Buffer.from(request.signature, 'base64')))
    throw new HttpError(
      403,
      'svc_delist_signature_invalid',
      `signature is not the SEP-53 signature by ${request.payTo} of the message ${JSON.stringify(message)} (the text GET /discovery/${action} hands out for this listing, catalog and issuedAt); nothing was changed.`,
    );
  const issuedAtMs = Date.parse(request.issuedAt);
  const skew = issuedAtMs - now.getTime();
  if (skew < -DELIST_WINDOW_MS || skew > DELIST_CLOCK_SKEW_MS)
    throw new HttpError(
      400,
      'svc_delist_stale',
      `issuedAt ${request.issuedAt} is ${minutes(skew)} ${skew < 0 ? 'before' : 'after'} svc's clock (${now.toISOString()}); it may be at most ${minutes(DELIST_WINDOW_MS)} before it or ${minutes(DELIST_CLOCK_SKEW_MS)} after it. Ask GET /discovery/${action} for the text to sign, issued now.`,
    );
  return issuedAtMs;
}

export function delistHandler(deps: DelistDeps): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const request = ctx.request.body as DelistRequest;
    const issuedAtMs = await checkSigned(request, deps, 'delist');
    if (!deps.catalog.withdraw) throw new Error('this catalog cannot withdraw a listing');
    // The signature covers the URL as sent; the listing is looked up as the catalog keeps it.
    const resource = catalogUrl(request.resource);
    let outcome: WithdrawalOutcome;
    try {
      outcome = await deps.catalog.withdraw({
        resource,
        type: request.type,
        toolName: request.toolName,
        owner: request.payTo,
        issuedAtMs,
      });
    } catch (err) {
      // Overloaded or unusable catalog: the documented 503, as on the other discovery routes.
      if (err instanceof CatalogQueryError && err.status === 503) throw new HttpError(503, err.code, err.message);
      throw err;
    }
    if (outcome.status === 'unknown') throw unknownListing(request, resource, await listingsAt(deps.catalog, resource));
    if (outcome.status !== 'delisted') throw refusal(outcome, request, deps.ownership);
    ctx.state.log.info({ resource, type: request.type, toolName: request.toolName, owner: request.payTo }, 'listing withdrawn');
    const body: DelistResponse = { delisted: true };
    ctx.body = body;
    ctx.status = 200;
  };
}
