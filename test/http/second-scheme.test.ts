/**
 * A second scheme on a fake network, registered through the public registry of a service built by
 * createService (src/service.ts): /supported advertises it beside the Stellar kind, and /verify and
 * /settle route to it by (x402Version, scheme, network) with no edit to the handlers or the
 * configuration. Every response is checked against openapi.yaml by the api helper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { api } from '../helpers/contract.ts';
import { FakeScheme } from '../helpers/fake-scheme.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';

const FAKE_NETWORK = 'fake:devnet';
const HASH = 'fe'.repeat(32);
const payer = 'fake-payer-1';

/** A test-only "prepaid" scheme: valid when the payload carries the right voucher. */
const prepaid = new FakeScheme({
  kinds: [{ x402Version: 2, scheme: 'prepaid', network: FAKE_NETWORK, extra: { voucher: true } }],
  signers: { 'fake:*': ['fake-signer'] },
  verify: ({ payload }) =>
    (payload as PaymentPayload).payload?.voucher === 'ok'
      ? { isValid: true, payer }
      : { isValid: false, invalidReason: 'unexpected_verify_error', invalidMessage: 'unknown voucher', payer },
  settle: ({ requirements }) => ({ success: true, transaction: HASH, network: (requirements as PaymentRequirements).network, payer }),
});

const requirements: PaymentRequirements = {
  scheme: 'prepaid',
  network: FAKE_NETWORK,
  asset: 'credits',
  amount: '5',
  payTo: 'fake-seller',
  maxTimeoutSeconds: 30,
};
const envelope = (voucher: string) => ({
  x402Version: 2,
  paymentPayload: { x402Version: 2, accepted: requirements, payload: { voucher } },
  paymentRequirements: requirements,
});

let server: TestServer;
let client: ReturnType<typeof api>;

beforeAll(async () => {
  // The service exactly as configured (Stellar exact on stellar:testnet), then one registration.
  server = await startTestServer({ config: testConfig() });
  server.service.registry.register(prepaid);
  client = api(server.url);
});
afterAll(() => server.close());

describe('a second scheme registered through the public registry', () => {
  it('/supported lists its kind and signers beside the configured Stellar kind', async () => {
    const res = await client.get('/supported');
    expect(res.body.kinds).toEqual([
      {
        x402Version: 2,
        scheme: 'exact',
        network: 'stellar:testnet',
        extra: { areFeesSponsored: true, maxTransactionFeeStroops: 1_100_000, inclusionFeeStroops: 100 },
      },
      { x402Version: 2, scheme: 'prepaid', network: FAKE_NETWORK, extra: { voucher: true } },
    ]);
    expect(res.body.signers['fake:*']).toEqual(['fake-signer']);
    expect(res.body.signers['stellar:*']).toEqual(server.config.submitters);
    expect(res.body.extensions).toEqual(['bazaar', 'payment-identifier']);
  });

  it('/verify routes to it: its verdict, either way', async () => {
    prepaid.calls = [];
    const valid = await client.post('/verify', envelope('ok'));
    expect(valid.body).toEqual({ isValid: true, payer });
    const invalid = await client.post('/verify', envelope('forged'));
    expect(invalid.body).toEqual({ isValid: false, invalidReason: 'unexpected_verify_error', invalidMessage: 'unknown voucher', payer });
    expect(prepaid.calls).toEqual(['verify', 'verify']);
  });

  it('/settle routes to it and returns its settlement', async () => {
    prepaid.calls = [];
    const res = await client.post('/settle', envelope('ok'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, transaction: HASH, network: FAKE_NETWORK, payer });
    expect(prepaid.calls).toEqual(['settle']);
  });

  it('a kind neither scheme serves is still svc_unsupported_kind, and neither scheme is called', async () => {
    prepaid.calls = [];
    const res = await client.post('/verify', { ...envelope('ok'), paymentRequirements: { ...requirements, network: 'fake:other' } });
    expect(res.body.invalidReason).toBe('svc_unsupported_kind');
    expect(prepaid.calls).toEqual([]);
  });

  it('a second registration of the same kind is refused', () => {
    expect(() => server.service.registry.register(new FakeScheme({ kinds: prepaid.supported().kinds }))).toThrow(/two schemes claim/);
  });
});
