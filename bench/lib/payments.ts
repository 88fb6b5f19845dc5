/**
 * Payments for the settle benchmarks: the `exact` terms of a devnet seller and buyers' signed
 * payloads for them, and one settle POSTed over HTTP the way a seller's server sends it.
 */
import { Keypair } from '@stellar/stellar-sdk';
import { createStellarPayment } from '../../src/chains/stellar/exact/buyer.ts';
import { LedgerTimeEstimator } from '../../src/chains/stellar/ledger-time.ts';
import { createSdkRpc } from '../../src/chains/stellar/rpc.ts';
import type { Devnet } from '../../src/devnet/index.ts';

export type Requirements = ReturnType<typeof exactRequirements>;

/** `amount` (default 1000) base units of the devnet's USDC to `payTo`, fees sponsored. */
export function exactRequirements(devnet: Devnet, payTo: string, maxTimeoutSeconds: number, amount = '1000') {
  return {
    scheme: 'exact',
    network: 'stellar:testnet',
    asset: devnet.usdc.contractId,
    amount,
    payTo,
    maxTimeoutSeconds,
    extra: { areFeesSponsored: true },
  };
}

/** The terms of exactRequirements; `sign` makes a buyer's payload for them. */
export function exactTerms(devnet: Devnet, payTo: string, maxTimeoutSeconds: number, amount?: string) {
  const rpc = createSdkRpc({ url: devnet.rpcUrl });
  const ledgerTime = new LedgerTimeEstimator(rpc);
  const requirements = exactRequirements(devnet, payTo, maxTimeoutSeconds, amount);
  return {
    requirements,
    sign: (signer: Keypair) => createStellarPayment({ requirements, signer, rpc, ledgerTime }),
    /** A new buyer holding `usdc` base units. */
    buyer: async (usdc: bigint) => Keypair.fromSecret((await devnet.createAccount({ usdc })).secret),
  };
}

/**
 * POST /settle, with the payment's Idempotency-Key when given (a retry of the same payment then
 * answers its outcome); `at` is when the answer arrived (performance.now()).
 */
export async function postSettle(svcUrl: string, payload: unknown, requirements: Requirements, idempotencyKey?: string) {
  const res = await fetch(`${svcUrl}/settle`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
    body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements }),
  });
  const body = (await res.json()) as { success?: boolean; errorReason?: string; transaction?: string };
  return {
    ok: body.success === true,
    code: body.errorReason ?? (body.success ? 'success' : `HTTP ${res.status}`),
    transaction: body.transaction ?? '',
    at: performance.now(),
  };
}

/** A payload that lists `url` in the catalog when it settles (a minimal bazaar extension). */
export const withListing = (payload: object, url: string) => ({
  ...payload,
  resource: { url, description: 'bench resource' },
  extensions: { bazaar: { info: { input: { type: 'http', method: 'GET' } }, schema: { type: 'object' } } },
});
