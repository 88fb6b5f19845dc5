/** The same client against orval's fetch client (generated into ./orval/, base URL through its mutator). */
import {
  getSupported,
  searchDiscoveryResources,
  verifyPayment,
  type ExactStellarPaymentPayload,
  type PaymentRequirements,
} from './orval/api';
import { setBaseUrl } from './orval-fetch';
import { PAYMENT, REQUIREMENTS, type Outcome } from './payment';

export async function exercise(baseUrl: string): Promise<Outcome> {
  setBaseUrl(baseUrl);
  const payment: ExactStellarPaymentPayload = PAYMENT;
  const requirements: PaymentRequirements = REQUIREMENTS;
  const supported = await getSupported();
  const search = await searchDiscoveryResources({ query: 'weather', limit: 5 });
  const verify = await verifyPayment({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements });
  if (supported.status !== 200 || search.status !== 200 || verify.status !== 200)
    throw new Error(`unexpected statuses ${supported.status} ${search.status} ${verify.status}`);
  return {
    kinds: supported.data.kinds.map((k) => `${k.scheme}@${k.network}`),
    searchResults: search.data.resources.length,
    verifyStatus: verify.status,
    isValid: verify.data.isValid,
    invalidReason: verify.data.invalidReason,
  };
}
