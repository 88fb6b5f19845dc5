/**
 * paid_call (docs/MCP.md): resolve the target (an id is re-resolved against the live
 * catalog with the list endpoint's exact identity filters, never by walking pages), probe its live
 * 402, apply the spend policy, then pay with the shared buyer builder and return the target's
 * result plus the receipt {transaction, network, payer}. Nothing is signed before the policy passed.
 */
import {
  StellarPaymentError,
  createStellarPayment,
  type ChainRpc,
  type Keypair,
  type LedgerTimeEstimator,
} from '../chains/stellar/index.ts';
import type { DiscoveryResource, FacilitatorClient } from '../client/facilitator.ts';
import type { PaymentRequired } from '../client/seller.ts';
import type { PaymentRequirements } from '../scheme/types.ts';
import { checkListingRef, parseResourceId, type ListingRef } from './resource-id.ts';
import { ToolFailure, argumentsObject, optionalObject, optionalString } from './results.ts';
import { discovery, listingInput, listingToolName } from './search.ts';
import { openTarget, type TargetSpec } from './targets.ts';
import { guardedFetch } from '../net/guarded-fetch.ts';
import { allowListFromEnv, forbiddenLiteralHost, type AllowList } from '../net/private-addresses.ts';

export const HTTP_METHODS = ['GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH'] as const;

export interface PaidCallDeps {
  facilitator: FacilitatorClient;
  network: string;
  maxAmount: bigint;
  timeoutMs: number;
  /** Private, loopback… addresses paid_call may reach anyway (dev only); default: ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets?: AllowList;
  /** Absent: search-only; a paid target fails with svc_mcp_wallet_not_configured. */
  wallet?: { signer: Keypair; rpc: ChainRpc; ledgerTime: LedgerTimeEstimator };
}

/** One guarded fetch (one connection pool) per allow-list. */
const fetchers = new WeakMap<AllowList, typeof fetch>();
function fetcherFor(allow: AllowList): typeof fetch {
  let f = fetchers.get(allow);
  if (!f) fetchers.set(allow, (f = guardedFetch(allow)));
  return f;
}

const invalid = (reason: string) => new ToolFailure('svc_mcp_invalid_arguments', reason);

/** The listing an id names, straight from the catalog (one exact-match list query). */
async function resolveListing(ref: ListingRef, facilitator: FacilitatorClient): Promise<DiscoveryResource> {
  const page = await discovery(() =>
    facilitator.list({ resource: ref.resource, type: ref.type, ...(ref.type === 'mcp' ? { toolName: ref.toolName } : {}), limit: 2 }),
  );
  const listing = page.items.find((l) => l.resource === ref.resource && l.type === ref.type && listingToolName(l) === ref.toolName);
  if (!listing)
    throw new ToolFailure(
      'svc_mcp_unknown_resource_id',
      `No listing for ${ref.type} ${ref.resource}${ref.toolName ? ` tool ${ref.toolName}` : ''} is in the catalog (any more); nothing was paid.`,
    );
  return listing;
}

/**
 * A listing svc's last liveness check found not live (docs/CATALOG.md "Liveness") is refused before
 * any request, unless the caller insists with ignoreLiveness; never checked (null) is not refused.
 */
function refuseNotLive(listing: DiscoveryResource, ignoreLiveness: boolean): void {
  const liveness = (listing as { liveness?: { status: string; checkedAt: string } | null }).liveness;
  if (ignoreLiveness || !liveness || liveness.status === 'live') return;
  throw new ToolFailure(
    'svc_mcp_listing_not_live',
    `svc's check of this listing at ${liveness.checkedAt} found it ${liveness.status}; nothing was requested or paid. Pass ignoreLiveness: true to call it anyway (its live 402 is still checked first).`,
  );
}

async function resolveTarget(args: Record<string, unknown>, facilitator: FacilitatorClient): Promise<TargetSpec> {
  const resourceId = optionalString(args, 'resourceId');
  const url = optionalString(args, 'url');
  const toolName = optionalString(args, 'toolName');
  const method = optionalString(args, 'method');
  const input = optionalObject(args, 'input');
  if ((resourceId === undefined) === (url === undefined)) throw invalid('Give exactly one of resourceId (from search_resources) or url.');

  if (resourceId !== undefined) {
    if (method !== undefined) throw invalid('method is only for url targets; a listing declares its own method.');
    const parsed = parseResourceId(resourceId);
    if (!parsed.ok) throw new ToolFailure('svc_mcp_unknown_resource_id', `${parsed.reason} Nothing was paid.`);
    const ref = parsed.ref;
    if (toolName !== undefined && toolName !== ref.toolName) {
      throw invalid(
        ref.type === 'http'
          ? 'This id names an http resource: omit toolName.'
          : `This id names the tool ${JSON.stringify(ref.toolName)}, not ${JSON.stringify(toolName)}.`,
      );
    }
    const listing = await resolveListing(ref, facilitator);
    refuseNotLive(listing, args.ignoreLiveness === true);
    if (ref.type === 'mcp') return { type: 'mcp', url: ref.resource, toolName: ref.toolName, ...(input ? { input } : {}) };
    const declared = listingInput(listing);
    // A templated listing (`/users/:id`) is called with its declared example path parameters.
    const pathParams = declared.pathParams;
    return {
      type: 'http',
      url: ref.resource,
      method: typeof declared.method === 'string' ? declared.method.toUpperCase() : 'GET',
      ...(input ? { input } : {}),
      ...(pathParams !== null && typeof pathParams === 'object' && !Array.isArray(pathParams)
        ? { pathParams: pathParams as Record<string, unknown> }
        : {}),
    };
  }

  const type = toolName !== undefined ? 'mcp' : 'http';
  const checked = checkListingRef(type, url, toolName ?? '');
  if (!checked.ok) throw invalid(`url: ${checked.reason}.`);
  if (type === 'mcp') {
    if (method !== undefined) throw invalid('method is only for http targets; an MCP tool is called with tools/call.');
    return { type: 'mcp', url: url!, toolName: toolName!, ...(input ? { input } : {}) };
  }
  const upper = (method ?? 'GET').toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(upper)) throw invalid(`method must be one of ${HTTP_METHODS.join(', ')}.`);
  return { type: 'http', url: url!, method: upper, ...(input ? { input } : {}) };
}

const isAmount = (v: unknown): v is string => typeof v === 'string' && /^[0-9]{1,39}$/.test(v) && BigInt(v) > 0n;

/** The spend policy: only `exact` on our network, only amounts within the cap; the cheapest such terms. */
export function choosePayment(required: PaymentRequired, network: string, maxAmount: bigint): PaymentRequirements {
  const offered = required.accepts.filter((a) => a && typeof a === 'object');
  const eligible = offered.filter((a) => a.scheme === 'exact' && a.network === network && isAmount(a.amount));
  if (eligible.length === 0) {
    const kinds = offered.map((a) => `${String(a.scheme)} on ${String(a.network)} for ${JSON.stringify(a.amount)}`).join(', ') || 'nothing';
    throw new ToolFailure(
      'svc_mcp_payment_declined_by_policy',
      `This tool pays only the exact scheme on ${network} with a positive integer amount; the target offers ${kinds}. Nothing was paid.`,
    );
  }
  const cheapest = eligible.reduce((a, b) => (BigInt(b.amount) < BigInt(a.amount) ? b : a));
  if (BigInt(cheapest.amount) > maxAmount) {
    throw new ToolFailure(
      'svc_mcp_payment_declined_by_policy',
      `The target demands ${cheapest.amount} base units of ${cheapest.asset}, above the spend cap SVC_MCP_MAX_AMOUNT of ${maxAmount} base units. Nothing was signed or paid.`,
    );
  }
  return cheapest;
}

export async function paidCall(rawArgs: unknown, deps: PaidCallDeps): Promise<Record<string, unknown>> {
  const args = argumentsObject(rawArgs, ['resourceId', 'url', 'toolName', 'input', 'method', 'ignoreLiveness']);
  if (args.ignoreLiveness !== undefined && typeof args.ignoreLiveness !== 'boolean') throw invalid('ignoreLiveness must be a boolean.');
  const spec = await resolveTarget(args, deps.facilitator);
  const allow = deps.allowPrivateTargets ?? allowListFromEnv();
  const refused = forbiddenLiteralHost(new URL(spec.url).hostname, allow);
  if (refused)
    throw new ToolFailure(
      'svc_mcp_target_forbidden',
      `refused to connect: ${refused} (set ALLOW_PRIVATE_TARGETS only for local development); nothing was paid.`,
    );
  const target = openTarget(spec, deps.timeoutMs, fetcherFor(allow));
  try {
    const probe = await target.probe();
    if (probe.kind === 'free') return { target: describeTarget(spec), paid: false, result: probe.result, receipt: null };

    const requirements = choosePayment(probe.required, deps.network, deps.maxAmount);
    if (!deps.wallet)
      throw new ToolFailure(
        'svc_mcp_wallet_not_configured',
        `The target demands ${requirements.amount} base units; set CLIENT_STELLAR_PRIVATE_KEY to pay. Nothing was paid.`,
      );
    let payload;
    try {
      payload = await createStellarPayment({
        requirements,
        signer: deps.wallet.signer,
        rpc: deps.wallet.rpc,
        ledgerTime: deps.wallet.ledgerTime,
        resource: probe.required.resource,
        // Echoing the seller's extensions (bazaar) lets the settlement catalog the resource.
        ...(probe.required.extensions ? { extensions: probe.required.extensions } : {}),
        maxAmount: deps.maxAmount,
      });
    } catch (err) {
      if (err instanceof StellarPaymentError && err.reason === 'over_spend_cap')
        throw new ToolFailure('svc_mcp_payment_declined_by_policy', `${err.message} Nothing was signed or paid.`);
      if (err instanceof StellarPaymentError)
        throw new ToolFailure(
          'svc_mcp_payment_not_settled',
          `The payment could not be built (${err.reason}): ${err.message} Nothing was sent.`,
        );
      throw err;
    }
    const { result, receipt } = await target.pay(payload);
    const confirmedOnChain = await confirmReceipt(deps.wallet, receipt.transaction);
    return {
      // An MCP target also says which x402 binding asked for the payment (docs/MCP.md).
      target: { ...describeTarget(spec), ...(probe.binding ? { binding: probe.binding } : {}) },
      paid: true,
      result,
      receipt: { transaction: receipt.transaction, network: receipt.network, payer: receipt.payer ?? deps.wallet.signer.publicKey() },
      confirmedOnChain,
      amount: requirements.amount,
      asset: requirements.asset,
      payTo: requirements.payTo,
    };
  } finally {
    await target.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A seller's receipt is only its word: the transaction is looked up on the buyer's RPC, waiting up
 * to 3 ledgers (at least 2 s) for it to appear. FAILED or still unknown → svc_mcp_payment_not_settled.
 * An RPC that cannot be asked leaves the receipt unconfirmed (false) rather than refusing it.
 */
export async function confirmReceipt(wallet: NonNullable<PaidCallDeps['wallet']>, hash: string): Promise<boolean> {
  const ledgerMs = (await wallet.ledgerTime.seconds()) * 1000;
  const waitMs = Math.max(2_000, 3 * ledgerMs);
  const deadline = Date.now() + waitMs;
  for (;;) {
    let status: string;
    try {
      status = (await wallet.rpc.getTransaction(hash)).status;
    } catch {
      return false;
    }
    if (status === 'SUCCESS') return true;
    if (status === 'FAILED')
      throw new ToolFailure(
        'svc_mcp_payment_not_settled',
        `The receipt's transaction ${hash} failed on chain, so the transfer did not execute: nothing was paid.`,
      );
    if (Date.now() >= deadline) {
      throw new ToolFailure(
        'svc_mcp_payment_not_settled',
        `The receipt names transaction ${hash}, which the RPC does not know after ${Math.round(waitMs / 1000)} s; the target may not have settled. Whether anything was paid is unknown: look up ${hash} before paying again.`,
      );
    }
    await sleep(Math.min(1_000, Math.max(100, ledgerMs / 2)));
  }
}

function describeTarget(spec: TargetSpec): Record<string, unknown> {
  return spec.type === 'http'
    ? { type: 'http', url: spec.url, method: spec.method }
    : { type: 'mcp', url: spec.url, toolName: spec.toolName };
}
