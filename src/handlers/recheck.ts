/**
 * POST /discovery/recheck (openapi.yaml; docs/SELLER.md "Checked again without paying"): the payTo
 * of a pending or rejected ownership claim, signing as a withdrawal is signed (delist.ts
 * checkSigned, with the `svc recheck` text), has svc ask the resource's own server again without
 * another payment. The claim is made due now and the ownership checker woken; the check itself is
 * the checker's (src/net/ownership.ts: the same request and the same one-request-per-host bound as
 * every check), and the answer is what it found within PROBE_TIMEOUT_MS and a second, else that it
 * is still processing and when svc asks.
 */
import { CatalogQueryError, type CatalogPort } from '../catalog/types.ts';
import type { components } from '../generated/openapi.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import { checkSigned, type DelistDeps } from './delist.ts';

type DelistRequest = components['schemas']['DelistRequest'];
type RecheckResponse = components['schemas']['RecheckResponse'];
type OwnershipCheck = components['schemas']['OwnershipCheck'];

export interface RecheckDeps extends DelistDeps {
  /** Wakes the ownership checker (src/net/ownership.ts) so it takes the claim now. */
  wakeChecks: () => void;
  /** How long the answer waits for the check: the probe's deadline and a second. */
  waitMs: number;
}

const POLL_MS = 100;

const busyAs503 = (err: unknown): never => {
  if (err instanceof CatalogQueryError && err.code === 'svc_catalog_busy') throw new HttpError(503, err.code, err.message);
  throw err;
};

export function recheckHandler(deps: RecheckDeps): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const request = ctx.request.body as DelistRequest;
    await checkSigned(request, deps, 'recheck');
    const catalog: CatalogPort = deps.catalog;
    if (!catalog.recheckClaim || !catalog.ownershipChecks) throw new Error('this catalog holds no ownership claims');
    // A type other than http or mcp names no claim: the catalog finds none.
    const identity = { resource: request.resource, type: request.type as 'http' | 'mcp', toolName: request.toolName };
    const startedAt = deps.clock().toISOString();
    const queued = await catalog.recheckClaim(identity, request.payTo).catch(busyAs503);
    if (!queued)
      throw new HttpError(
        404,
        'svc_recheck_no_claim',
        `${request.payTo} holds no pending or rejected claim on ${request.type} ${request.resource}${request.toolName ? ` (tool ${request.toolName})` : ''} that svc can check again; nothing was requested. A settlement to ${request.payTo} with the bazaar extension makes one (a claim rejected before svc kept its listing cannot be checked again).`,
      );
    deps.wakeChecks();
    const claimOf = async (): Promise<OwnershipCheck | undefined> =>
      (await catalog.ownershipChecks!(identity).catch(busyAs503)).find((c) => c.payTo === request.payTo);
    const deadline = Date.now() + deps.waitMs;
    let check = await claimOf();
    // Checked since this request: the claim is gone (listed) or carries a later check time.
    while (check && !(check.checkedAt !== null && check.checkedAt >= startedAt) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      check = await claimOf();
    }
    let body: RecheckResponse;
    if (!check)
      body = {
        status: 'listed',
        reason: `svc asked the resource's own server and it named ${request.payTo}: the listing is in list and search for it.`,
      };
    else if (check.status === 'rejected') body = { status: 'rejected', reason: check.reason ?? 'The check failed.', check };
    else if (check.checkedAt !== null && check.checkedAt >= startedAt)
      body = {
        status: 'processing',
        reason: `svc asked the resource's own server at ${check.checkedAt} and got no answer it could use (a timeout, an error, or a route that answers only its declared method); it asks again shortly, within the bound of one request per host per PROBE_HOST_INTERVAL_SECONDS.`,
        check,
      };
    else
      body = {
        status: 'processing',
        reason: `Not checked within ${Math.round(deps.waitMs / 1000)} s: svc asks one host at most once per PROBE_HOST_INTERVAL_SECONDS for every check together, and the claim waits for its host's next slot (or for a checker). Its check runs then; validate's ownership shows the outcome.`,
        check,
      };
    ctx.state.log.info({ resource: request.resource, type: request.type, payTo: request.payTo, status: body.status }, 'claim re-checked');
    ctx.body = body;
    ctx.status = 200;
  };
}
