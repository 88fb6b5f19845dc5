/**
 * Canonical amounts (openapi.yaml PaymentRequirements.amount): "01000" is not 1000. Verify and
 * settle refuse a non-canonical requirements amount with the same reason, before any RPC call,
 * while the canonical spelling of the same number goes on to simulation.
 */
import { describe, expect, it } from 'vitest';
import { Keypair } from '@stellar/stellar-sdk';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { parseAmount } from '../../src/chains/stellar/exact/payload.ts';
import { craftTransaction, payloadOf, recordingRpc, requirementsFor } from '../scheme/fixtures.ts';

const payer = Keypair.random().publicKey();
const payTo = Keypair.random().publicKey();

function scheme() {
  const rpc = recordingRpc();
  return { rpc, scheme: new ExactStellarScheme({ network: 'stellar:testnet', rpc, submitters: [Keypair.random()], feeBump: null }) };
}

describe('non-canonical amounts', () => {
  it('parseAmount reads only the canonical decimal form', () => {
    expect(parseAmount('0')).toBe(0n);
    expect(parseAmount('1000')).toBe(1000n);
    for (const bad of ['01000', '00', '0001', '+1000', '1e3', ' 1000', '1000 ', '1_000', '１０００'])
      expect(parseAmount(bad)).toBeUndefined();
  });

  it.each(['0100000', '00100000'])('verify and settle both refuse %s with wrong_amount, without an RPC call', async (amount) => {
    const tx = craftTransaction({ from: payer, to: payTo, amount: 100000n });
    const verifying = scheme();
    const verified = await verifying.scheme.verify(payloadOf(tx), requirementsFor(payTo, { amount }));
    expect(verified).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_stellar_payload_wrong_amount' });
    expect(verifying.rpc.calls).toEqual([]);

    const settling = scheme();
    const settled = await settling.scheme.settle(payloadOf(tx), requirementsFor(payTo, { amount }));
    expect(settled).toMatchObject({ success: false, errorReason: 'invalid_exact_stellar_payload_wrong_amount' });
    expect(settling.rpc.calls).toEqual([]);
  });

  it('the canonical spelling of the same amount passes the structure checks', async () => {
    const s = scheme();
    await s.scheme.verify(
      payloadOf(craftTransaction({ from: payer, to: payTo, amount: 100000n })),
      requirementsFor(payTo, { amount: '100000' }),
    );
    expect(s.rpc.calls).toEqual(['simulate']);
  });
});
