/** The journal/policy/lease variables of src/config.ts: defaults, parsing, and refusals naming the variable. */
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

/** Two contract addresses (C…), as PAYMENT_MIN_AMOUNTS keys assets. */
const [assetA, assetB] = [StrKey.encodeContract(Buffer.alloc(32, 1)), StrKey.encodeContract(Buffer.alloc(32, 2))];
const load = (env: Record<string, string>) => loadConfig({ SUBMITTER_SECRET: Keypair.random().secret(), ...env }).settlement;

describe('settlement configuration', () => {
  it('defaults refuse self-payments and zero amounts and cap fees', () => {
    const { policy, reconcileIntervalMs, submitterLeaseTtlMs } = load({});
    expect(policy).toMatchObject({
      allowSelfPayment: false,
      minAmount: 1n,
      dailyFeeCapStroops: 100_000_000n,
      payerDailyFeeCapStroops: 10_000_000n,
    });
    expect(reconcileIntervalMs).toBe(5_000);
    expect(submitterLeaseTtlMs).toBe(10_000);
    expect(load({ SUBMITTER_LEASE_TTL_MS: '20000' }).submitterLeaseTtlMs).toBe(20_000);
  });

  it('parses caps, off, per-asset minimums and the self-payment switch', () => {
    const { policy } = load({
      FEE_BUDGET_DAILY_STROOPS: 'off',
      FEE_BUDGET_PAYER_DAILY_STROOPS: '500',
      FEE_BUDGET_PAYTO_DAILY_STROOPS: '600',
      FEE_BUDGET_NEW_ADDRESS_DAILY_STROOPS: 'off',
      FEE_BUDGET_NEW_PAYTOS_DAILY_STROOPS: '700',
      PAYER_FAILURE_LIMIT: '0',
      PAYER_FAILURE_WINDOW_SECONDS: '60',
      PAYMENT_MIN_AMOUNTS: `${assetA}=10, ${assetB}=20`,
      ALLOW_SELF_PAYMENT: 'true',
    });
    expect(policy.dailyFeeCapStroops).toBeNull();
    expect(policy.payerDailyFeeCapStroops).toBe(500n);
    expect(policy).toMatchObject({
      payToDailyFeeCapStroops: 600n,
      newAddressDailyFeeCapStroops: null,
      newPayTosDailyFeeCapStroops: 700n,
      payerFailureLimit: 0,
      payerFailureWindowMs: 60_000,
    });
    expect([...policy.minAmountByAsset]).toEqual([
      [assetA, 10n],
      [assetB, 20n],
    ]);
    expect(policy.allowSelfPayment).toBe(true);
  });

  it.each([
    ['FEE_BUDGET_DAILY_STROOPS', '-1'],
    ['FEE_BUDGET_PAYER_DAILY_STROOPS', '1e9'],
    ['FEE_BUDGET_PAYTO_DAILY_STROOPS', 'lots'],
    ['FEE_BUDGET_NEW_ADDRESS_DAILY_STROOPS', '-5'],
    ['FEE_BUDGET_NEW_PAYTOS_DAILY_STROOPS', '1.5'],
    ['PAYER_FAILURE_LIMIT', '-1'],
    ['PAYER_FAILURE_WINDOW_SECONDS', '0'],
    ['PAYMENT_MIN_AMOUNT', '1.5'],
    ['PAYMENT_MIN_AMOUNTS', 'CABC'],
    ['ALLOW_SELF_PAYMENT', 'yes'],
    ['RECONCILE_INTERVAL_MS', '0'],
    ['SUBMITTER_LEASE_TTL_MS', '1000'],
  ])('%s=%s is a ConfigError naming the variable', (variable, value) => {
    expect(() => load({ [variable]: value })).toThrow(ConfigError);
    expect(() => load({ [variable]: value })).toThrow(new RegExp(`^${variable}:`));
  });
});
