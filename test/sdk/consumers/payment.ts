/**
 * One payment every generated SDK must be able to type: an `exact` Stellar payment with a bazaar
 * extension, whose transaction is not XDR (so svc rejects it with a scheme code, nothing on chain).
 * Plain literals: each consumer assigns them to its own SDK's types, which is the check.
 */
export const REQUIREMENTS = {
  scheme: 'exact',
  network: 'stellar:testnet',
  asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
  amount: '100000',
  payTo: 'GCZDSPJN6WGHXIXU7X5ZU3BUYO4X2I56PD62LWXQJALS64V64MZEKFN3',
  maxTimeoutSeconds: 60,
  extra: { areFeesSponsored: true },
};

export const PAYMENT = {
  x402Version: 2 as const,
  resource: { url: 'https://api.example.com/weather', description: 'Weather', mimeType: 'application/json' },
  accepted: REQUIREMENTS,
  payload: { transaction: 'bm90IFhEUg==' },
  extensions: {
    bazaar: {
      info: { input: { type: 'http' as const, method: 'GET' as const, queryParams: { city: 'Lisbon' } } },
      schema: { type: 'object' },
    },
  },
};

export interface Outcome {
  kinds: string[];
  searchResults: number;
  verifyStatus: number;
  isValid: boolean | undefined;
  invalidReason: string | undefined;
}
