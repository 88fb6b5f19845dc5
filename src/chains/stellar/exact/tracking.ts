/**
 * What the settlement journal needs to know about Stellar: a payment's identity (the signed
 * authorization entries, which carry the nonce the chain consumes, so every copy of one payment
 * has the same identity whatever transaction wraps it) and a transaction's on-chain status.
 */
import { createHash } from 'node:crypto';
import { Networks, TransactionBuilder } from '@stellar/stellar-sdk';
import type { ChainStatus, PaymentPayload, PaymentRequirements, SettlementTracking } from '../../../scheme/types.ts';
import type { ChainRpc } from '../rpc.ts';

export function paymentIdentity(payload: PaymentPayload, requirements: PaymentRequirements): string | null {
  const transaction = payload?.payload?.transaction;
  if (typeof transaction !== 'string') return null;
  try {
    // The passphrase only matters for the transaction hash, which the identity does not use.
    const parsed = TransactionBuilder.fromXDR(transaction, Networks.TESTNET);
    const op = 'operations' in parsed ? parsed.operations[0] : undefined;
    if (!op || op.type !== 'invokeHostFunction' || !op.auth?.length) return null;
    const auth = op.auth;
    const hash = createHash('sha256').update(`x402:exact:${String(requirements?.network)}\n`);
    for (const entry of auth) hash.update(entry.toXDR());
    return hash.digest('hex');
  } catch {
    return null;
  }
}

export function stellarTracking(rpc: Pick<ChainRpc, 'getTransaction'>): SettlementTracking {
  return {
    identity: paymentIdentity,
    // A consumed nonce makes re-simulation fail: the code a replay has always received.
    replayCode: 'invalid_exact_stellar_payload_simulation_failed',
    async status(transaction: string, validUntil: number): Promise<ChainStatus> {
      const status = await rpc.getTransaction(transaction);
      if (status?.status === 'SUCCESS') return 'settled';
      if (status?.status === 'FAILED') return 'failed';
      if (status?.status === 'NOT_FOUND' && Number(status.latestLedgerCloseTime) > validUntil) return 'expired';
      return 'pending';
    },
  };
}
