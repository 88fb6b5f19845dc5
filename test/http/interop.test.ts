/**
 * The stock x402 clients (@x402/core HTTPFacilitatorClient, @x402/extensions withBazaar) against
 * svc over loopback: what a resource server would actually call. Their own zod parsing must accept
 * our shapes, and every response they receive also goes through the contract helper (by wrapping
 * fetch for the duration of the test). Scheme and catalog are scripted (named boundaries).
 */
import { HTTPFacilitatorClient } from '@x402/core/http';
import { withBazaar } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogPort } from '../../src/catalog/types.ts';
import { FakeScheme } from '../helpers/fake-scheme.ts';
import { checkContract } from '../helpers/contract.ts';
import { EXTENSION_RESPONSES_LOG, expectConsole } from '../helpers/console.ts';
import { startTestServer } from '../helpers/server.ts';

const HASH = 'cd'.repeat(32);
const PAYER = 'GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG';
const requirements = {
  scheme: 'exact',
  network: 'stellar:testnet' as const,
  asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
  amount: '100000',
  payTo: 'GBZXN7PIRZGNMHGA7MUUUF4GWPY5AYPV6LY4UV2GL6VJGIQRXFDNMADI',
  maxTimeoutSeconds: 60,
  extra: { areFeesSponsored: true },
};
const payload = { x402Version: 2, accepted: requirements, payload: { transaction: 'AAAA' } };

let verdict: 'valid' | 'invalid' = 'valid';
const scheme = new FakeScheme({
  verify: () =>
    verdict === 'valid'
      ? { isValid: true, payer: PAYER }
      : { isValid: false, invalidReason: 'invalid_exact_stellar_payload_wrong_recipient', payer: PAYER },
  settle: { success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER },
});
const listing = {
  resource: 'https://api.example.com/weather',
  type: 'http',
  x402Version: 2,
  accepts: [requirements],
  lastUpdated: '2026-11-22T05:00:00.000Z',
  quality: { l30DaysTotalCalls: 1, l30DaysUniquePayers: 1, lastCalledAt: '2026-11-22T05:00:00.000Z' },
  liveness: null,
  description: 'weather',
};
const catalog: CatalogPort = {
  recordSettlement: async () => ({ status: 'success' }),
  list: async (_f, page) => ({ x402Version: 2, items: [listing], pagination: { limit: page.limit, offset: page.offset, total: 1 } }),
  search: async () => ({
    x402Version: 2,
    resources: [listing],
    partialResults: false,
    pagination: { limit: 1, cursor: null },
    searchMethod: 'text' as const,
    searchedTerms: [],
    droppedTerms: [],
    relevance: 'none' as const,
  }),
};

let server: Awaited<ReturnType<typeof startTestServer>>;
const realFetch = globalThis.fetch;
let checked = 0;

beforeAll(async () => {
  server = await startTestServer({ scheme, catalog });
  globalThis.fetch = async (input, init) => {
    const res = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const copy = res.clone();
    checkContract({ method, path: url.pathname }, { status: copy.status, headers: copy.headers, text: await copy.text() });
    checked++;
    return res;
  };
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await server.close();
});

describe('@x402/core HTTPFacilitatorClient', () => {
  const client = () => new HTTPFacilitatorClient({ url: server.url });

  it('getSupported parses our /supported', async () => {
    const supported = await client().getSupported();
    expect(supported.kinds[0]).toMatchObject({
      x402Version: 2,
      scheme: 'exact',
      network: 'stellar:testnet',
      extra: { areFeesSponsored: true },
    });
    expect(supported.extensions).toContain('bazaar');
  });

  it('verify: valid and rejected (200) both parse', async () => {
    verdict = 'valid';
    expect(await client().verify(payload as never, requirements)).toMatchObject({ isValid: true, payer: PAYER });
    verdict = 'invalid';
    expect(await client().verify(payload as never, requirements)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_stellar_payload_wrong_recipient',
      invalidMessage: 'The transfer `to` differs from payTo.',
    });
  });

  it('settle parses and reads EXTENSION-RESPONSES', async () => {
    // The stock client logs what it read from the header (console.log): held here and checked.
    const { result, lines } = await expectConsole('log', EXTENSION_RESPONSES_LOG, () => client().settle(payload, requirements));
    expect(result).toMatchObject({ success: true, transaction: HASH, network: 'stellar:testnet', payer: PAYER });
    expect((result as { extensionResponses?: unknown }).extensionResponses).toEqual({ bazaar: { status: 'success' } });
    expect(lines).toEqual(['[x402] extension responses: {"bazaar":{"status":"success"}}']);
  });
});

describe('@x402/extensions withBazaar', () => {
  it('listResources and search parse our discovery pages', async () => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: server.url }));
    const page = await client.extensions.bazaar.listResources({ type: 'http', limit: 5 });
    expect(page.items[0]!.resource).toBe(listing.resource);
    expect(page.pagination).toEqual({ limit: 5, offset: 0, total: 1 });
    const hits = await client.extensions.bazaar.search({ query: 'weather' });
    expect(hits.resources[0]!.resource).toBe(listing.resource);
    expect(checked).toBeGreaterThanOrEqual(6);
  });
});
