/**
 * A client of svc written against openapi-typescript's types with openapi-fetch, as a client team
 * would: generated into ./openapi-fetch/ by test/sdk/generators.test.ts, type-checked in strict
 * mode, then run against a live svc.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi-fetch/schema';
import { PAYMENT, REQUIREMENTS, type Outcome } from './payment';

export async function exercise(baseUrl: string): Promise<Outcome> {
  const client = createClient<paths>({ baseUrl });
  const payment: components['schemas']['ExactStellarPaymentPayload'] = PAYMENT;
  const requirements: components['schemas']['PaymentRequirements'] = REQUIREMENTS;
  const supported = await client.GET('/supported');
  const search = await client.GET('/discovery/search', { params: { query: { query: 'weather', limit: 5 } } });
  const verify = await client.POST('/verify', { body: { x402Version: 2, paymentPayload: payment, paymentRequirements: requirements } });
  return {
    kinds: (supported.data?.kinds ?? []).map((k) => `${k.scheme}@${k.network}`),
    searchResults: search.data?.resources.length ?? -1,
    verifyStatus: verify.response.status,
    isValid: verify.data?.isValid,
    invalidReason: verify.data?.invalidReason,
  };
}
