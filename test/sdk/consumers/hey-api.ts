/** The same client against @hey-api/openapi-ts's SDK (generated into ./hey-api/). */
import { createClient, createConfig } from './hey-api/client';
import { getSupported, searchDiscoveryResources, verifyPayment } from './hey-api/sdk.gen';
import type { ExactStellarPaymentPayload, PaymentRequirements } from './hey-api/types.gen';
import { PAYMENT, REQUIREMENTS, type Outcome } from './payment';

export async function exercise(baseUrl: string): Promise<Outcome> {
  const client = createClient(createConfig({ baseUrl }));
  const payment: ExactStellarPaymentPayload = PAYMENT;
  const requirements: PaymentRequirements = REQUIREMENTS;
  const supported = await getSupported({ client });
  const search = await searchDiscoveryResources({ client, query: { query: 'weather', limit: 5 } });
  const verify = await verifyPayment({ client, body: { x402Version: 2, paymentPayload: payment, paymentRequirements: requirements } });
  return {
    kinds: (supported.data?.kinds ?? []).map((k) => `${k.scheme}@${k.network}`),
    searchResults: search.data?.resources.length ?? -1,
    verifyStatus: verify.response?.status ?? 0,
    isValid: verify.data?.isValid,
    invalidReason: verify.data?.invalidReason,
  };
}
