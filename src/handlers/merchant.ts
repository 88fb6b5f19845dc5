/**
 * GET /discovery/merchant (openapi.yaml): one seller's listings in the CDP Bazaar's shape,
 * `{x402Version, payTo, resources, pagination}`. The page is the list route's page of the `payTo`
 * filter (the same index, the same hidden listings), reshaped.
 */
import { CatalogQueryError, type CatalogPort } from '../catalog/types.ts';
import type { components } from '../generated/openapi.ts';
import { HttpError } from '../http/errors.ts';
import type { SvcContext, SvcMiddleware } from '../http/middleware.ts';
import { declaredQuery, parseLimit, parseOffset, requesterOf } from './discovery.ts';

type MerchantResponse = components['schemas']['DiscoveryMerchantResponse'];

const DECLARED = ['payTo', 'limit', 'offset'];
const invalid = (reason: string) => new HttpError(400, 'svc_invalid_query_parameter', reason);

/** The seller and the page asked for, or a 400 naming what is wrong. */
export function parseMerchantQuery(querystring: string): { payTo: string; limit: number; offset: number } {
  const params = declaredQuery(querystring, DECLARED);
  const payTo = params.get('payTo');
  if (payTo === null || payTo.trim() === '') throw invalid("payTo is required: the seller's payee address, e.g. payTo=G….");
  return { payTo, limit: parseLimit(params.get('limit')), offset: parseOffset(params.get('offset')) };
}

export function merchantHandler(catalog: CatalogPort): SvcMiddleware {
  return async (ctx: SvcContext) => {
    const { payTo, limit, offset } = parseMerchantQuery(ctx.querystring);
    try {
      const page = await catalog.list({ payTo }, { limit, offset }, requesterOf(ctx));
      ctx.body = { x402Version: page.x402Version, payTo, resources: page.items, pagination: page.pagination } satisfies MerchantResponse;
    } catch (err) {
      if (err instanceof CatalogQueryError) throw new HttpError(err.status, err.code, err.message || undefined);
      throw err;
    }
  };
}
