/**
 * POST /discovery/validate (openapi.yaml, docs/CATALOG.md "Checking a listing"): a seller's
 * preflight. It fetches the target's live 402 without paying (src/net/live-402.ts, through the
 * address guard), picks the first accept svc can settle (the registry's acceptDefect), and asks
 * the catalog what a settlement with those terms would do (CatalogPort.previewSettlement: the
 * checks of the catalog write, in the same code, without the write). Every problem is coded and
 * its reason names the cause and the fix.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { canonicalResourceUrl } from '../catalog/ingest/sanitize.ts';
import { CatalogQueryError, type CatalogPort, type SettledPayment } from '../catalog/types.ts';
import type { ValidateCode, BazaarCode } from '../codes.ts';
import type { components } from '../generated/openapi.ts';
import { checkedUrl } from '../net/check-request.ts';
import { probeLive402, type LivePaymentRequired, type LiveProbe, type LiveTarget } from '../net/live-402.ts';
import type { HostSlots } from '../net/host-slots.ts';
import { PROBE_MAX_BYTES, PROBE_MAX_REDIRECTS } from '../net/probe-config.ts';
import type { SchemeRegistry } from '../scheme/registry.ts';
import type { PaymentRequirements } from '../scheme/types.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';

type ValidateRequest = components['schemas']['ValidateRequest'];
export type ValidateResponse = components['schemas']['ValidateResponse'];
type Check = ValidateResponse['checks'][number];
type Problem = { code: ValidateCode | BazaarCode; reason: string };

export interface ValidateDeps {
  registry: SchemeRegistry;
  catalog: CatalogPort;
  /** The address-guarded fetch (src/net/guarded-fetch.ts). */
  fetchImpl: typeof fetch;
  timeoutMs: number;
  /** Takes the target host's slot before the request (src/net/host-slots.ts); absent: no bound (a test's). */
  hostSlots?: HostSlots;
  /**
   * Previews run one after another through this (validateHandler: PREVIEWS_AT_ONCE): the catalog's
   * writer thread also lists every settlement, so a burst of validates (a rate window opening)
   * must not queue ahead of settlements there.
   */
  previews?: LimitFunction;
}

/** Validate previews in the catalog's writer queue at once (per instance). */
export const PREVIEWS_AT_ONCE = 1;

/** The probe's outcome as the `reachable` and `payment_required` checks and their problem. */
function judgeProbe(target: LiveTarget, live: LiveProbe): { checks: Check[]; problem?: Problem } {
  const what = target.type === 'mcp' ? `tools/call ${target.toolName} at ${target.url}` : `${target.method} ${target.url}`;
  switch (live.kind) {
    case 'refused':
      return { checks: [{ name: 'reachable', ok: false, detail: live.reason }], problem: { code: live.code, reason: live.reason } };
    case 'deferred':
      return {
        checks: [{ name: 'reachable', ok: true, detail: live.reason }],
        problem: {
          code: 'svc_validate_origin_paced',
          reason: `${live.reason} Validate again after the host's next slot (PROBE_HOST_INTERVAL_SECONDS after this request; docs/SECURITY.md "Requests svc makes of sellers' hosts").`,
        },
      };
    case 'forbidden':
      return {
        checks: [{ name: 'reachable', ok: false, detail: live.reason }],
        problem: {
          code: 'svc_validate_target_forbidden',
          reason: `svc did not request ${target.url}: ${live.reason.replace(/^refused to connect: /, '')}. Buyers elsewhere cannot reach a private address either; list a publicly reachable URL (ALLOW_PRIVATE_TARGETS, CIDRs such as 127.0.0.0/8, allows private ones, for local development only).`,
        },
      };
    case 'redirect':
      return {
        checks: [{ name: 'reachable', ok: false, detail: live.reason }],
        problem: {
          code: 'svc_validate_redirect_refused',
          reason: `${live.reason} Buyers pay the URL they are given: list the URL that answers the 402 itself.`,
        },
      };
    case 'unreachable':
      return {
        checks: [{ name: 'reachable', ok: false, detail: live.reason }],
        problem: {
          code: 'svc_validate_unreachable',
          reason: `${live.reason}. Check that the server is up and reachable from the internet.`,
        },
      };
    case 'free':
      return {
        checks: [
          { name: 'reachable', ok: true, detail: `${what} answered` },
          { name: 'payment_required', ok: false, detail: 'answered without asking for payment' },
        ],
        problem: {
          code: 'svc_validate_no_payment_required',
          reason: `${what} answered ${target.type === 'http' ? `HTTP ${(live.answer as { status?: number }).status ?? 200}` : 'with a result'} without asking for payment: a buyer never pays it, so no settlement lists it. Protect it with the x402 payment middleware (a 402 with PAYMENT-REQUIRED).`,
        },
      };
    case 'error':
      return {
        checks: [
          { name: 'reachable', ok: true, detail: `${what} answered${live.status ? ` HTTP ${live.status}` : ''}` },
          { name: 'payment_required', ok: false, detail: live.reason },
        ],
        problem: {
          code: 'svc_validate_payment_required_invalid',
          reason: `${live.reason} A buyer needs a 402 whose PAYMENT-REQUIRED header (base64 JSON) or JSON body is an x402 v2 PaymentRequired {x402Version, resource, accepts}.`,
        },
      };
    case 'payment':
      return {
        checks: [
          { name: 'reachable', ok: true, detail: `${what} answered` },
          { name: 'payment_required', ok: true, detail: `asks for payment with ${live.required.accepts.length} accepted term(s)` },
        ],
      };
  }
}

/** The first accept svc can settle, or why none is. */
function settleableAccept(
  registry: SchemeRegistry,
  required: LivePaymentRequired,
): { accept?: PaymentRequirements; check: Check; problem?: Problem } {
  const defects: string[] = [];
  for (const accept of required.accepts) {
    const terms = { ...accept, ...(accept.extra ? { extra: accept.extra } : {}) } as PaymentRequirements;
    if (accept.extra === null) delete (terms as { extra?: unknown }).extra;
    const defect = registry.acceptDefect(required.x402Version, terms);
    if (defect === null)
      return {
        accept: terms,
        check: {
          name: 'settleable_accept',
          ok: true,
          detail: `${accept.scheme} on ${accept.network}, asset ${accept.asset}, payTo ${accept.payTo}`,
        },
      };
    defects.push(defect);
  }
  const detail = defects.length === 0 ? 'accepts is empty.' : defects.join(' ');
  return {
    check: { name: 'settleable_accept', ok: false, detail },
    problem: { code: 'svc_validate_no_settleable_accept', reason: `No accepted term of the 402 is one svc can settle: ${detail}` },
  };
}

/** The answer without `index` and `ownership`: what the live 402 would do. */
type Verdict = Omit<ValidateResponse, 'index' | 'ownership'>;

/** The checks in order, then whether the resource is listed now (`index`) and the ownership checks held for it. */
export async function validateListing(request: ValidateRequest, deps: ValidateDeps): Promise<ValidateResponse> {
  const verdict = await checkListing(request, deps);
  const identity = identityOf(request, verdict);
  if (!identity) return { ...verdict, index: NOT_LISTED, ownership: [] };
  const [index, ownership] = await Promise.all([listedNow(identity, deps.catalog), ownershipChecks(identity, deps.catalog)]);
  return { ...verdict, index, ownership };
}

const NOT_LISTED = { active: false, hiddenBy: 'not_listed', quality: null, liveness: null } as const;
type Identity = { resource: string; type: 'http' | 'mcp'; toolName?: string };

/**
 * The identity validate reports on: the canonical URL the preview gave, else `url`'s (without a
 * route template; a listing stored under its template is found when the live 402 answers).
 */
function identityOf(request: ValidateRequest, verdict: Verdict): Identity | undefined {
  let resource = verdict.listing?.resource;
  if (resource === undefined) {
    try {
      resource = canonicalResourceUrl(new URL(request.url), undefined);
    } catch {
      return undefined;
    }
  }
  return {
    resource,
    type: request.toolName === undefined ? 'http' : 'mcp',
    ...(request.toolName === undefined ? {} : { toolName: request.toolName }),
  };
}

/** The overloaded or unusable catalog's 503, as on the other discovery routes. */
function busyAs503(err: unknown): never {
  if (err instanceof CatalogQueryError && err.status === 503) throw new HttpError(503, err.code, err.message);
  throw err;
}

/** The ownership checks the catalog holds for the identity (docs/CATALOG.md "Ownership and refresh"). */
async function ownershipChecks(identity: Identity, catalog: CatalogPort): Promise<ValidateResponse['ownership']> {
  if (!catalog.ownershipChecks) return [];
  try {
    return await catalog.ownershipChecks(identity);
  } catch (err) {
    return busyAs503(err);
  }
}

/** Whether the listing of this identity is in list and search now. A catalog that cannot say (a test's) answers not listed. */
async function listedNow(identity: Identity, catalog: CatalogPort): Promise<ValidateResponse['index']> {
  if (!catalog.listingIndex) return NOT_LISTED;
  try {
    return await catalog.listingIndex(identity);
  } catch (err) {
    return busyAs503(err);
  }
}

/** Runs the checks in order; stops at the first failure a later check depends on. */
async function checkListing(request: ValidateRequest, deps: ValidateDeps): Promise<Verdict> {
  const problems: Problem[] = [];
  const checks: Check[] = [];
  const answer = (): Verdict => ({ wouldList: false, problems, checks });
  let parsed: URL | undefined;
  try {
    parsed = new URL(request.url);
  } catch {
    /* below */
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username !== '' || parsed.password !== '') {
    problems.push({
      code: 'svc_validate_url_invalid',
      reason: `url must be an absolute http(s) URL without credentials; got ${JSON.stringify(request.url.slice(0, 200))}.`,
    });
    checks.push({ name: 'reachable', ok: false, detail: 'not requested: the url is not an http(s) URL' });
    return answer();
  }
  // The resource as a listing would name it (checkedUrl: origin and path): the caller's query is never sent.
  const url = checkedUrl(parsed.href);
  const target: LiveTarget =
    request.toolName !== undefined
      ? { type: 'mcp', url, toolName: request.toolName }
      : { type: 'http', url, method: request.method ?? 'GET' };
  let nextSlot: number;
  try {
    nextSlot = (await deps.hostSlots?.(target.url, Date.now())) ?? 0;
  } catch (err) {
    return busyAs503(err);
  }
  if (nextSlot !== 0) {
    const after = new Date(nextSlot).toISOString();
    checks.push({
      name: 'reachable',
      ok: false,
      detail: `not requested: ${parsed.hostname} was asked less than PROBE_HOST_INTERVAL_SECONDS ago`,
    });
    problems.push({
      code: 'svc_validate_origin_paced',
      reason: `svc asks one host at most once per PROBE_HOST_INTERVAL_SECONDS for its ownership checks, validate, re-checks and liveness together, and asked ${parsed.hostname} less than that ago; nothing was requested. Validate again after ${after} (docs/SECURITY.md "Requests svc makes of sellers' hosts").`,
    });
    return answer();
  }
  const live = await probeLive402(target, {
    fetchImpl: deps.fetchImpl,
    timeoutMs: deps.timeoutMs,
    maxBytes: PROBE_MAX_BYTES,
    maxRedirects: PROBE_MAX_REDIRECTS,
    check: true,
    ...(deps.hostSlots ? { onSend: () => deps.hostSlots!(target.url, Date.now(), true) } : {}),
  });
  const probed = judgeProbe(target, live);
  checks.push(...probed.checks);
  if (probed.problem) problems.push(probed.problem);
  if (live.kind !== 'payment') return answer();
  const required = live.required;

  const settleable = settleableAccept(deps.registry, required);
  checks.push(settleable.check);
  if (settleable.problem) problems.push(settleable.problem);

  const bazaar = required.extensions?.bazaar;
  if (bazaar === undefined) {
    checks.push({ name: 'bazaar_declared', ok: false, detail: 'extensions.bazaar is absent' });
    problems.push({
      code: 'svc_validate_no_bazaar_extension',
      reason:
        'The 402 declares no bazaar extension, so a settlement lists nothing. Declare one in the route (declareDiscoveryExtension of @x402/extensions/bazaar, with the bazaar resource-server extension registered) so buyers echo it.',
    });
    return answer();
  }
  checks.push({ name: 'bazaar_declared', ok: true, detail: 'extensions.bazaar is present' });
  if (!settleable.accept) return answer();

  // What a stock buyer sends with its payment: the resource, the accepted terms and the echoed extensions.
  const settled: SettledPayment = {
    paymentPayload: {
      x402Version: required.x402Version,
      resource: required.resource,
      accepted: settleable.accept,
      extensions: required.extensions ?? {},
    },
    paymentRequirements: settleable.accept,
  };
  if (!deps.catalog.previewSettlement) throw new Error('this catalog cannot preview a listing');
  const catalog = deps.catalog;
  let preview: Awaited<ReturnType<NonNullable<CatalogPort['previewSettlement']>>>;
  try {
    const run = () => catalog.previewSettlement!(settled);
    preview = await (deps.previews ? deps.previews(run) : run());
  } catch (err) {
    busyAs503(err);
  }
  switch (preview.outcome) {
    case 'listed': {
      const dropped =
        preview.dropped.length > 0 ? `; fields dropped (the listing is kept without them): ${preview.dropped.join('; ')}` : '';
      const payTo = settleable.accept.payTo;
      // Ownership from the origin: another payTo owns the listing; this 402 decides whether a settlement takes it over.
      if (preview.owner !== undefined) {
        if (required.accepts.some((a) => a.payTo === preview.owner)) {
          checks.push({ name: 'catalog_rules', ok: false, detail: 'bazaar_listing_owned_by_other_payee' });
          problems.push({
            code: 'bazaar_listing_owned_by_other_payee',
            reason: `The listing for ${preview.listing.resource} is owned by payTo ${preview.owner}, which this 402 still names beside ${payTo}: a listing changes owner only when the resource's own server names the new payTo and no longer names the owner (docs/CATALOG.md "Ownership and refresh"). Name only ${payTo} to move it, or pay ${preview.owner}.`,
          });
          return answer();
        }
        checks.push({
          name: 'catalog_rules',
          ok: true,
          detail: `would be listed as ${preview.listing.resource} for payTo ${payTo}, taking it over from ${preview.owner} (this 402 no longer names it) once svc has asked the resource's server${dropped}`,
        });
        return { wouldList: problems.length === 0, ...(problems.length === 0 ? { listing: preview.listing } : {}), problems, checks };
      }
      checks.push({ name: 'catalog_rules', ok: true, detail: `would be listed as ${preview.listing.resource}${dropped}` });
      return { wouldList: problems.length === 0, ...(problems.length === 0 ? { listing: preview.listing } : {}), problems, checks };
    }
    case 'rejected':
      checks.push({ name: 'catalog_rules', ok: false, detail: preview.code });
      problems.push({ code: preview.code, reason: preview.reason });
      return answer();
    case 'not_judged':
      checks.push({ name: 'catalog_rules', ok: false, detail: 'not judged now' });
      problems.push({
        code: 'svc_validate_not_judged',
        reason: `The seller schema could not be validated now (${preview.reason}); retry shortly.`,
      });
      return answer();
    case 'none':
      checks.push({ name: 'catalog_rules', ok: false, detail: 'nothing to list' });
      problems.push({
        code: 'svc_validate_no_bazaar_extension',
        reason: 'The 402 declares no bazaar extension, so a settlement lists nothing.',
      });
      return answer();
  }
}

export function validateHandler(options: ValidateDeps): SvcMiddleware {
  const deps = { ...options, previews: options.previews ?? pLimit(PREVIEWS_AT_ONCE) };
  return async (ctx: SvcContext) => {
    // The body matched ValidateRequest (`method` and `toolName` not both: openapi.yaml).
    const request = ctx.request.body as ValidateRequest;
    ctx.body = await validateListing(request, deps);
    ctx.status = 200;
  };
}
