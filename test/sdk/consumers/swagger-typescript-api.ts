/** The same client against swagger-typescript-api's Api class (generated into ./swagger-typescript-api/). */
import { Api, type ExactStellarPaymentPayload, type PaymentRequirements } from './swagger-typescript-api/api';
import { PAYMENT, REQUIREMENTS, type Outcome } from './payment';

export async function exercise(baseUrl: string): Promise<Outcome> {
  const api = new Api({ baseUrl });
  const payment: ExactStellarPaymentPayload = PAYMENT;
  const requirements: PaymentRequirements = REQUIREMENTS;
  const supported = await api.supported.getSupported();
  const search = await api.discovery.searchDiscoveryResources({ query: 'weather', limit: 5 });
  const verify = await api.verify.verifyPayment({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements });
  return {
    kinds: supported.data.kinds.map((k) => `${k.scheme}@${k.network}`),
    searchResults: search.data.resources.length,
    verifyStatus: verify.status,
    isValid: verify.data.isValid,
    invalidReason: verify.data.invalidReason,
  };
}
