/**
 * The settle path of a verified exact Stellar payment (docs/SCHEME.md): rebuild the transaction
 * with the leased submitter as source and the simulation's resource data, sign it, wrap it in a
 * fee bump when a fee account is configured, let the journal record the attempt, submit
 * (TRY_AGAIN_LATER is retried while the transaction can still land) and confirm its outcome. The
 * scheme turns the result into a SettleResult and logs it.
 */
import { Account, Operation, TransactionBuilder, type FeeBumpTransaction, type Keypair, type Transaction } from '@stellar/stellar-sdk';
import type { SchemeCode, SettlementCode } from '../../../codes.ts';
import type { PaymentRequirements, SettleHooks } from '../../../scheme/types.ts';
import type { LedgerTimeEstimator } from '../ledger-time.ts';
import { signTransaction } from '../keys.ts';
import { RpcError, describeError, type ChainRpc } from '../rpc.ts';
import type { SubmitterLease } from '../submitters.ts';
import { confirmTransaction, type LedgerCloseClock } from './confirm.ts';
import type { Verified } from './verify.ts';

/**
 * The longest validity window svc gives a settlement transaction. The window comes from
 * `maxTimeoutSeconds`, but settle waits until the window has passed before it may call a missing
 * transaction failed, so an unbounded value (2^53 s reached the scheme in fuzzing and broke the
 * time-bound arithmetic) must not become an unbounded wait. Five minutes is far beyond a ledger
 * close and beyond common HTTP client timeouts (the stock HTTPFacilitatorClient gives up at 90 s).
 */
export const MAX_SETTLEMENT_WINDOW_SECONDS = 300;

/** What the settle path reads from the scheme. */
export interface SubmitContext {
  rpc: ChainRpc;
  feeBump: Keypair | null;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  ledgerTime: LedgerTimeEstimator;
  closeClock: LedgerCloseClock;
  /** The longest the settle waits for the outcome after submitting (then it is answered unconfirmed). */
  waitMs: number;
}

/** How a submission ended: settled, failed (nothing landed or it failed on-chain), or submitted with its outcome unknown. */
export type Submission =
  | { kind: 'settled'; hash: string }
  | { kind: 'failed'; code: SchemeCode | SettlementCode; message: string }
  | { kind: 'unconfirmed'; hash: string; detail: string };

/**
 * Settles `verified` from the leased submitter. `progress.submittedHash` is set once the
 * transaction may have reached the network: from then on a thrown error is no failure.
 */
export async function submit(
  context: SubmitContext,
  verified: Verified,
  lease: SubmitterLease,
  requirements: PaymentRequirements,
  hooks: SettleHooks | undefined,
  progress: { submittedHash: string },
): Promise<Submission> {
  const { rpc, feeBump, now, sleep, ledgerTime, closeClock, waitMs } = context;
  const { transfer, simulation, passphrase } = verified;
  const fail = (code: SchemeCode | SettlementCode, message: string): Submission => ({ kind: 'failed', code, message });
  const windowSeconds = Math.min(Math.ceil(Number(requirements.maxTimeoutSeconds)), MAX_SETTLEMENT_WINDOW_SECONDS);
  const maxTime = Math.floor(now() / 1000) + windowSeconds;

  let sequence: bigint;
  try {
    sequence = await lease.sequence();
  } catch (err) {
    lease.invalidate();
    return fail('unexpected_settle_error', `Could not read the submitter's sequence number: ${describeError(err)}`);
  }
  const inner = new TransactionBuilder(new Account(lease.address, sequence.toString()), {
    fee: verified.inclusionFee.toString(),
    networkPassphrase: passphrase,
    sorobanData: simulation.transactionData,
  })
    .addOperation(Operation.invokeHostFunction({ func: transfer.func, auth: transfer.auth }))
    .setTimebounds(0, maxTime)
    // Never included after the last ledger its authorizations are valid in: a late transaction is
    // refused by the network (txTOO_LATE) without a fee instead of failing in a ledger at svc's cost.
    .setLedgerbounds(0, verified.expiresAtLedger + 1)
    .build();
  let hashBytes: Buffer;
  try {
    hashBytes = signTransaction(inner, lease.keypair);
  } catch (err) {
    return fail('settle_exact_stellar_transaction_signing_failed', `Signing the settlement transaction failed: ${describeError(err)}`);
  }
  let envelope: Transaction | FeeBumpTransaction = inner;
  if (feeBump) {
    try {
      const bump = TransactionBuilder.buildFeeBumpTransaction(feeBump.publicKey(), verified.inclusionFee.toString(), inner, passphrase);
      hashBytes = signTransaction(bump, feeBump);
      envelope = bump;
    } catch (err) {
      return fail('settle_exact_stellar_fee_bump_signing_failed', `Signing the fee-bump wrapper failed: ${describeError(err)}`);
    }
  }
  const hash = hashBytes.toString('hex');
  // Serialized once, before the journal's write, so nothing but the send itself follows it.
  const envelopeXdr = envelope.toXDR();
  const ledgerSeconds = await ledgerTime.seconds();
  // The journal records the attempt (and the policy may refuse it) before anything is sent.
  const refusal = await hooks?.beforeSubmit({
    transaction: hash,
    submitter: lease.address,
    feeStroops: verified.fee,
    payer: transfer.from,
    payTo: transfer.to,
    asset: transfer.asset,
    amount: transfer.amount.toString(),
    validUntil: maxTime,
  });
  if (refusal) return fail(refusal.code, refusal.message);
  progress.submittedHash = hash;

  // Submit; TRY_AGAIN_LATER is retried while the transaction can still land.
  let sendError: string | undefined;
  for (;;) {
    try {
      const sent = await rpc.send(envelopeXdr);
      if (sent.status === 'PENDING' || sent.status === 'DUPLICATE') {
        lease.consumed();
        break;
      }
      if (sent.status === 'TRY_AGAIN_LATER' && now() + ledgerSeconds * 1000 < maxTime * 1000) {
        await sleep(Math.max(25, ledgerSeconds * 500));
        continue;
      }
      lease.invalidate();
      return fail(
        'settle_exact_stellar_transaction_submission_failed',
        `The network rejected the submission: status ${sent.status}${sent.resultCode ? `, result ${sent.resultCode}` : ''}.`,
      );
    } catch (err) {
      // The transaction may have reached the network anyway (also when the RPC answered
      // something unreadable): find out by polling its hash.
      sendError = err instanceof RpcError ? err.message : `sendTransaction answered unreadably (${describeError(err)})`;
      lease.invalidate();
      break;
    }
  }

  let outcome: Awaited<ReturnType<typeof confirmTransaction>>;
  try {
    outcome = await confirmTransaction({ rpc, hash, maxTime, ledgerSeconds, now, sleep, clock: closeClock, waitUntil: now() + waitMs });
  } catch (err) {
    lease.invalidate();
    return { kind: 'unconfirmed', hash, detail: `getTransaction answered unreadably (${describeError(err)})` };
  }
  if (outcome.kind === 'success') return { kind: 'settled', hash };
  lease.invalidate();
  if (outcome.kind === 'failed') {
    return fail(
      'settle_exact_stellar_transaction_failed',
      `Transaction ${hash} failed on-chain in ledger ${outcome.status.ledger}${outcome.status.resultCode ? ` with ${outcome.status.resultCode}` : ''}.`,
    );
  }
  if (outcome.kind === 'unknown') return { kind: 'unconfirmed', hash, detail: outcome.detail };
  if (sendError) {
    return fail(
      'settle_exact_stellar_transaction_submission_failed',
      `${sendError}; transaction ${hash} was ${outcome.kind === 'expired' ? 'never included' : 'not found'} (${outcome.detail}).`,
    );
  }
  return fail('settle_exact_stellar_transaction_failed', `Transaction ${hash} did not reach SUCCESS: ${outcome.detail}.`);
}
