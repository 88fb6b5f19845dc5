/**
 * The exact-payment scheme for Stellar (docs/SCHEME.md): verify in the documented order,
 * settle through the submitter pool. No koa, no HTTP: the handlers call `verify` / `settle`.
 */
import { Account, Operation, TransactionBuilder, type FeeBumpTransaction, type Keypair, type Transaction } from '@stellar/stellar-sdk';
import { defaultMessage, type SchemeCode, type SettlementCode, type VerifyCode } from '../../../codes.ts';
import { checkAuthEntries, checkTransferEvents } from './checks.ts';
import { LedgerCloseClock, confirmTransaction } from './confirm.ts';
import { LedgerTimeEstimator, expiryLedgerBound } from '../ledger-time.ts';
import { Rejection, SCHEME, checkFacilitatorSafety, clientPayer, checkProtocol, decodeTransfer, type DecodedTransfer } from './payload.ts';
import { RpcError, describeError, firstLine, type ChainRpc, type Simulation } from '../rpc.ts';
import { SignerSelectionError, SubmitterPool, type SubmitterLease } from '../submitters.ts';
import {
  X402_VERSION,
  type AssetInfo,
  type PaymentPayload,
  type PaymentRequirements,
  type PaymentScheme,
  type SchemeSupport,
  type SettleHooks,
  type SharedLeases,
  type SettleResult,
  type SettlementTracking,
  type VerifyResult,
} from '../../../scheme/types.ts';
import { STELLAR_NETWORKS, STELLAR_SIGNER_FAMILY, knownStellarAssets, type StellarNetwork } from '../networks.ts';
import { ChannelOpener } from '../channels.ts';
import { stellarTracking } from './tracking.ts';

/** Inclusion fee per operation (network base fee); a fee-bump counts one more operation. */
export const INCLUSION_FEE_STROOPS = 100n;
/**
 * The longest validity window svc gives a settlement transaction. The window comes from
 * `maxTimeoutSeconds`, but settle waits until the window has passed before it may call a missing
 * transaction failed, so an unbounded value (2^53 s reached the scheme in fuzzing and broke the
 * time-bound arithmetic) must not become an unbounded wait. Five minutes is far beyond a ledger
 * close and beyond common HTTP client timeouts (the stock HTTPFacilitatorClient gives up at 90 s).
 */
export const MAX_SETTLEMENT_WINDOW_SECONDS = 300;

/** The injected logger: one line per payment decision (pino-compatible). */
export interface PaymentLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
}

export interface ExactStellarSchemeOptions {
  network: StellarNetwork;
  rpc: ChainRpc;
  submitters: Keypair[];
  feeBump?: Keypair | null;
  /** When the submitters are channel accounts: the account that creates the missing ones (src/chains/stellar/channels.ts). */
  channelFunder?: Keypair | null;
  maxTransactionFeeStroops?: number;
  logger?: PaymentLogger;
  /** Wall clock in ms (time bounds and the local wait deadline). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  ledgerTime?: LedgerTimeEstimator;
  pool?: { mode?: 'leased' | 'naive'; maxQueue?: number; waitTimeoutMs?: number; shared?: SharedLeases };
}

interface Verified {
  transfer: DecodedTransfer;
  simulation: Extract<Simulation, { ok: true }>;
  passphrase: string;
  fee: bigint;
}

type Decision = { ok: true; verified: Verified } | { ok: false; code: VerifyCode; message: string; payer?: string };

export class ExactStellarScheme implements PaymentScheme {
  readonly network: StellarNetwork;
  readonly pool: SubmitterPool;
  readonly tracking: SettlementTracking;
  private readonly rpc: ChainRpc;
  private readonly feeBump: Keypair | null;
  private readonly maxFee: bigint;
  private readonly facilitator: ReadonlySet<string>;
  private readonly logger: PaymentLogger | undefined;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly ledgerTime: LedgerTimeEstimator;
  private readonly closeClock = new LedgerCloseClock();

  constructor(options: ExactStellarSchemeOptions) {
    this.network = options.network;
    this.rpc = options.rpc;
    this.feeBump = options.feeBump ?? null;
    this.maxFee = BigInt(options.maxTransactionFeeStroops ?? 50_000);
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.ledgerTime = options.ledgerTime ?? new LedgerTimeEstimator(this.rpc, { now: this.now });
    const funder = options.channelFunder ?? null;
    const channels = funder
      ? new ChannelOpener({
          rpc: this.rpc,
          funder,
          passphrase: STELLAR_NETWORKS[this.network].passphrase,
          channels: options.submitters.map((k) => k.publicKey()),
          now: this.now,
          sleep: this.sleep,
          ...(this.logger ? { logger: this.logger } : {}),
        })
      : null;
    const loadSequence = (a: string) => (channels ? channels.sequenceOf(a) : this.rpc.getAccountSequence(a));
    this.pool = new SubmitterPool(options.submitters, { loadSequence, ...options.pool });
    this.tracking = stellarTracking(this.rpc);
    this.facilitator = new Set([
      ...this.pool.addresses,
      ...(this.feeBump ? [this.feeBump.publicKey()] : []),
      ...(funder ? [funder.publicKey()] : []),
    ]);
  }

  supported(): SchemeSupport {
    return {
      kinds: [{ x402Version: X402_VERSION, scheme: SCHEME, network: this.network, extra: { areFeesSponsored: true } }],
      signers: { [STELLAR_SIGNER_FAMILY]: [...this.facilitator] },
    };
  }

  knownAssets(): AssetInfo[] {
    return knownStellarAssets(this.network);
  }

  /** The settlement fee this facilitator would declare for a simulation's resource fee. */
  derivedFee(minResourceFee: bigint): bigint {
    return INCLUSION_FEE_STROOPS * (this.feeBump ? 2n : 1n) + minResourceFee;
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult> {
    const decision = await this.decide(payload, requirements);
    if (decision.ok) {
      const { from, amount } = decision.verified.transfer;
      this.log('verify', 'valid', from, amount, '');
      return { isValid: true, payer: from };
    }
    this.log('verify', decision.code, decision.payer, requirements?.amount, '');
    return {
      isValid: false,
      invalidReason: decision.code,
      invalidMessage: decision.message,
      ...(decision.payer ? { payer: decision.payer } : {}),
    };
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements, hooks?: SettleHooks): Promise<SettleResult> {
    const network = typeof requirements?.network === 'string' ? requirements.network : this.network;
    const decision = await this.decide(payload, requirements);
    if (!decision.ok) return this.verificationFailure(decision, network, requirements?.amount);
    const { transfer } = decision.verified;
    const verifiedAt = this.now();
    let lease: SubmitterLease;
    try {
      lease = await this.pool.lease();
    } catch (err) {
      const message = err instanceof SignerSelectionError ? err.message : `Submitter selection failed: ${describeError(err)}`;
      return this.settleFailure('settle_exact_stellar_signer_selection_failed', message, network, transfer.from, transfer.amount);
    }
    // Once the transaction may have reached the network, no error may be reported as a failure.
    const progress = { submittedHash: '' };
    try {
      let verified = decision.verified;
      // After a wait in the queue the ledger has moved on: an authorization may have expired or a
      // nonce been consumed, which would fail on-chain at the submitter's expense. Verify again.
      if (this.now() - verifiedAt > 2_000 * (await this.ledgerTime.seconds())) {
        const again = await this.decide(payload, requirements);
        if (!again.ok) return this.verificationFailure(again, network, requirements.amount);
        verified = again.verified;
      }
      return await this.submit(verified, lease, requirements, network, hooks, progress);
    } catch (err) {
      lease.invalidate();
      if (progress.submittedHash)
        return this.unconfirmed(progress.submittedHash, describeError(err), network, transfer.from, transfer.amount);
      return this.settleFailure(
        'unexpected_settle_error',
        `Settlement failed unexpectedly: ${describeError(err)}`,
        network,
        transfer.from,
        transfer.amount,
      );
    } finally {
      lease.release();
    }
  }

  /** The full verification; settle reuses its simulation. */
  private async decide(payload: PaymentPayload, requirements: PaymentRequirements): Promise<Decision> {
    let payer: string | undefined;
    try {
      if (!payload || typeof payload !== 'object' || !requirements || typeof requirements !== 'object') {
        throw new Rejection('invalid_exact_stellar_payload_malformed', 'paymentPayload and paymentRequirements must be objects.');
      }
      const passphrase = checkProtocol(payload, requirements);
      const transfer = decodeTransfer(payload, requirements, passphrase);
      payer = transfer.from;
      checkFacilitatorSafety(transfer, this.facilitator);

      const simulation = await this.rpc.simulate(transfer.tx, transfer.auth.length > 0 ? 'enforce' : undefined);
      if (!simulation.ok) {
        throw new Rejection(
          'invalid_exact_stellar_payload_simulation_failed',
          `Simulation against the current ledger failed: ${firstLine(simulation.error)}`,
          payer,
        );
      }
      const fee = this.derivedFee(simulation.minResourceFee);
      if (fee > this.maxFee) {
        throw new Rejection(
          'invalid_exact_stellar_payload_fee_exceeds_maximum',
          `The derived settlement fee ${fee} stroops exceeds the ceiling of ${this.maxFee} stroops.`,
          payer,
        );
      }
      // The low end of the estimate: a buyer who signed with our high end is always inside.
      const ledgerSeconds = (await this.ledgerTime.estimate()).low;
      const maxTimeout = Number(requirements.maxTimeoutSeconds);
      if (!Number.isFinite(maxTimeout) || maxTimeout <= 0) {
        throw new Rejection(
          'invalid_exact_stellar_signature_expiration_too_far',
          'paymentRequirements.maxTimeoutSeconds is not a positive number, so no expiry is acceptable.',
          payer,
        );
      }
      checkAuthEntries({ auth: transfer.auth, payer, expiryBound: expiryLedgerBound(simulation.latestLedger, maxTimeout, ledgerSeconds) });
      checkTransferEvents({ events: simulation.events, asset: transfer.asset, payer, payTo: transfer.to, amount: transfer.amount });
      return { ok: true, verified: { transfer, simulation, passphrase, fee } };
    } catch (err) {
      // Every rejection's payer passes through clientPayer: the one place that keeps svc's own
      // signer out of `payer` (a verified transfer's `from` is never one, by checkFacilitatorSafety).
      if (err instanceof Rejection)
        return { ok: false, code: err.code, message: err.message, payer: clientPayer(err.payer ?? payer, this.facilitator) };
      const message =
        err instanceof RpcError ? `${err.message}; the payment was not judged.` : `Verification failed unexpectedly: ${describeError(err)}`;
      return { ok: false, code: 'unexpected_verify_error', message, payer: clientPayer(payer, this.facilitator) };
    }
  }

  private async submit(
    verified: Verified,
    lease: SubmitterLease,
    requirements: PaymentRequirements,
    network: string,
    hooks: SettleHooks | undefined,
    progress: { submittedHash: string },
  ): Promise<SettleResult> {
    const { transfer, simulation, passphrase } = verified;
    const fail = (code: SchemeCode | SettlementCode, message: string) =>
      this.settleFailure(code, message, network, transfer.from, transfer.amount);
    const windowSeconds = Math.min(Math.ceil(Number(requirements.maxTimeoutSeconds)), MAX_SETTLEMENT_WINDOW_SECONDS);
    const maxTime = Math.floor(this.now() / 1000) + windowSeconds;

    let sequence: bigint;
    try {
      sequence = await lease.sequence();
    } catch (err) {
      lease.invalidate();
      return fail('unexpected_settle_error', `Could not read the submitter's sequence number: ${describeError(err)}`);
    }
    const inner = new TransactionBuilder(new Account(lease.address, sequence.toString()), {
      fee: INCLUSION_FEE_STROOPS.toString(),
      networkPassphrase: passphrase,
      sorobanData: simulation.transactionData,
    })
      .addOperation(Operation.invokeHostFunction({ func: transfer.func, auth: transfer.auth }))
      .setTimebounds(0, maxTime)
      .build();
    try {
      inner.sign(lease.keypair);
    } catch (err) {
      return fail('settle_exact_stellar_transaction_signing_failed', `Signing the settlement transaction failed: ${describeError(err)}`);
    }
    let envelope: Transaction | FeeBumpTransaction = inner;
    if (this.feeBump) {
      try {
        const bump = TransactionBuilder.buildFeeBumpTransaction(
          this.feeBump.publicKey(),
          INCLUSION_FEE_STROOPS.toString(),
          inner,
          passphrase,
        );
        bump.sign(this.feeBump);
        envelope = bump;
      } catch (err) {
        return fail('settle_exact_stellar_fee_bump_signing_failed', `Signing the fee-bump wrapper failed: ${describeError(err)}`);
      }
    }
    const hash = Buffer.from(envelope.hash()).toString('hex');
    const ledgerSeconds = await this.ledgerTime.seconds();
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
        const sent = await this.rpc.send(envelope);
        if (sent.status === 'PENDING' || sent.status === 'DUPLICATE') {
          lease.consumed();
          break;
        }
        if (sent.status === 'TRY_AGAIN_LATER' && this.now() + ledgerSeconds * 1000 < maxTime * 1000) {
          await this.sleep(Math.max(25, ledgerSeconds * 500));
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
      outcome = await confirmTransaction({
        rpc: this.rpc,
        hash,
        maxTime,
        ledgerSeconds,
        now: this.now,
        sleep: this.sleep,
        clock: this.closeClock,
      });
    } catch (err) {
      lease.invalidate();
      return this.unconfirmed(hash, `getTransaction answered unreadably (${describeError(err)})`, network, transfer.from, transfer.amount);
    }
    if (outcome.kind === 'success') {
      this.log('settle', 'success', transfer.from, transfer.amount, hash);
      return { success: true, transaction: hash, network, payer: transfer.from };
    }
    lease.invalidate();
    if (outcome.kind === 'failed') {
      return fail(
        'settle_exact_stellar_transaction_failed',
        `Transaction ${hash} failed on-chain in ledger ${outcome.status.ledger}${outcome.status.resultCode ? ` with ${outcome.status.resultCode}` : ''}.`,
      );
    }
    if (outcome.kind === 'unknown') return this.unconfirmed(hash, outcome.detail, network, transfer.from, transfer.amount);
    if (sendError) {
      return fail(
        'settle_exact_stellar_transaction_submission_failed',
        `${sendError}; transaction ${hash} was ${outcome.kind === 'expired' ? 'never included' : 'not found'} (${outcome.detail}).`,
      );
    }
    return fail('settle_exact_stellar_transaction_failed', `Transaction ${hash} did not reach SUCCESS: ${outcome.detail}.`);
  }

  /** Submitted, outcome not known: never a failure (it may have landed); the journal reconciles it. */
  private unconfirmed(hash: string, detail: string, network: string, payer: string, amount: unknown): SettleResult {
    const result = this.settleFailure(
      'svc_settlement_outcome_unknown',
      `Transaction ${hash} was submitted; its outcome is not confirmed yet: ${detail}.`,
      network,
      payer,
      amount,
    );
    return { ...result, unconfirmed: true };
  }

  /** A verify code passes through; an internal verify fault is reported as verification_failed. */
  private verificationFailure(decision: Extract<Decision, { ok: false }>, network: string, amount: unknown): SettleResult {
    const code: SchemeCode = decision.code === 'unexpected_verify_error' ? 'verification_failed' : decision.code;
    return this.settleFailure(code, decision.message, network, decision.payer, amount);
  }

  private settleFailure(
    code: SchemeCode | SettlementCode,
    message: string,
    network: string,
    payer: string | undefined,
    amount: unknown,
  ): SettleResult {
    this.log('settle', code, payer, amount, '');
    return {
      success: false,
      transaction: '',
      network,
      errorReason: code,
      errorMessage: message || defaultMessage(code),
      ...(payer ? { payer } : {}),
    };
  }

  private log(phase: 'verify' | 'settle', code: string, payer: string | undefined, amount: unknown, hash: string): void {
    this.logger?.info(
      {
        phase,
        code,
        payer: payer ?? null,
        amount: typeof amount === 'string' || typeof amount === 'number' || typeof amount === 'bigint' ? String(amount) : null,
        hash: hash || null,
      },
      `payment ${phase}: ${code}`,
    );
  }
}
