/**
 * The exact-payment scheme for Stellar (docs/SCHEME.md): the PaymentScheme the registry mounts. It
 * holds the submitter pool and svc's own accounts, verifies (verify.ts) and settles through the
 * pool (settle.ts), and turns each decision into the x402 result shape with one log line. No koa,
 * no HTTP: the handlers call `verify` / `settle`.
 */
import type { Keypair } from '@stellar/stellar-sdk';
import { defaultMessage, type SchemeCode, type SettlementCode } from '../../../codes.ts';
import { LedgerCloseClock } from './confirm.ts';
import { LedgerTimeEstimator } from '../ledger-time.ts';
import { InclusionFeeEstimator } from '../inclusion-fee.ts';
import { DEFAULT_MAX_TRANSACTION_FEE_STROOPS } from '../config.ts';
import { SCHEME, type DecodedTransfer } from './payload.ts';
import { describeError, type ChainRpc } from '../rpc.ts';
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
import { isContractAddress } from '../addresses.ts';
import { STELLAR_NETWORKS, STELLAR_SIGNER_FAMILY, knownStellarAssets, type StellarNetwork } from '../networks.ts';
import { ChannelOpener } from '../channels.ts';
import { submit, type SubmitContext, type Submission } from './settle.ts';
import { stellarTracking } from './tracking.ts';
import { decide, derivedFee, type Decision, type VerifyContext } from './verify.ts';

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
  /** The longest settle waits for the outcome before answering it unconfirmed (default 60 s). */
  settleWaitMs?: number;
  logger?: PaymentLogger;
  /** Wall clock in ms (time bounds and the local wait deadline). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  ledgerTime?: LedgerTimeEstimator;
  /** The inclusion fee bid (default: from the RPC's getFeeStats, read at most every 5 s). */
  inclusionFee?: InclusionFeeEstimator;
  pool?: { mode?: 'leased' | 'naive'; maxQueue?: number; waitTimeoutMs?: number; shared?: SharedLeases };
  /**
   * The CAIP-2 pattern its signers are advertised under in /supported: `stellar:*` (default) when
   * svc serves one network, the network's own id when it serves several.
   */
  signerFamily?: string;
  /** svc's accounts on its other networks: never accepted in a payload here either. */
  otherFacilitatorAddresses?: readonly string[];
}

export class ExactStellarScheme implements PaymentScheme {
  readonly network: StellarNetwork;
  readonly pool: SubmitterPool;
  readonly tracking: SettlementTracking;
  private readonly feeBump: Keypair | null;
  private readonly facilitator: ReadonlySet<string>;
  private readonly signers: readonly string[];
  private readonly signerFamily: string;
  private readonly logger: PaymentLogger | undefined;
  private readonly now: () => number;
  private readonly ledgerTime: LedgerTimeEstimator;
  private readonly verifying: VerifyContext;
  private readonly settling: SubmitContext;

  constructor(options: ExactStellarSchemeOptions) {
    const rpc = options.rpc;
    const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    this.network = options.network;
    this.feeBump = options.feeBump ?? null;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.ledgerTime = options.ledgerTime ?? new LedgerTimeEstimator(rpc, { now: this.now });
    const funder = options.channelFunder ?? null;
    const channels = funder
      ? new ChannelOpener({
          rpc,
          funder,
          passphrase: STELLAR_NETWORKS[this.network].passphrase,
          channels: options.submitters.map((k) => k.publicKey()),
          now: this.now,
          sleep,
          ...(this.logger ? { logger: this.logger } : {}),
        })
      : null;
    const loadSequence = (a: string) => (channels ? channels.sequenceOf(a) : rpc.getAccountSequence(a));
    this.pool = new SubmitterPool(options.submitters, { loadSequence, ...options.pool });
    this.tracking = stellarTracking(rpc);
    this.signers = [
      ...new Set([...this.pool.addresses, ...(this.feeBump ? [this.feeBump.publicKey()] : []), ...(funder ? [funder.publicKey()] : [])]),
    ];
    this.signerFamily = options.signerFamily ?? STELLAR_SIGNER_FAMILY;
    this.facilitator = new Set([...this.signers, ...(options.otherFacilitatorAddresses ?? [])]);
    this.verifying = {
      rpc,
      facilitator: this.facilitator,
      feeBumped: this.feeBump !== null,
      maxFee: BigInt(options.maxTransactionFeeStroops ?? DEFAULT_MAX_TRANSACTION_FEE_STROOPS[options.network]),
      ledgerTime: this.ledgerTime,
      inclusionFee: options.inclusionFee ?? new InclusionFeeEstimator(rpc, { now: this.now }),
    };
    this.settling = {
      rpc,
      feeBump: this.feeBump,
      now: this.now,
      sleep,
      ledgerTime: this.ledgerTime,
      closeClock: new LedgerCloseClock(),
      waitMs: options.settleWaitMs ?? 60_000,
    };
  }

  /**
   * The kind, with the fee ceiling and the inclusion bid of the moment in its extra (the bid as last
   * read, a new reading started when that is older than a few seconds; openapi.yaml SupportedKind).
   */
  supported(): SchemeSupport {
    const extra = {
      areFeesSponsored: true,
      maxTransactionFeeStroops: Number(this.verifying.maxFee),
      inclusionFeeStroops: Number(this.verifying.inclusionFee.latest().bid),
    };
    return {
      kinds: [{ x402Version: X402_VERSION, scheme: SCHEME, network: this.network, extra }],
      signers: { [this.signerFamily]: [...this.signers] },
    };
  }

  knownAssets(): AssetInfo[] {
    return knownStellarAssets(this.network);
  }

  requirementsDefect(requirements: PaymentRequirements): string | null {
    if (typeof requirements.asset !== 'string' || !isContractAddress(requirements.asset))
      return `asset ${JSON.stringify(requirements.asset)} is not a Stellar contract address (C…); the exact scheme pays SEP-41 token contracts.`;
    if (typeof requirements.amount !== 'string' || !/^[0-9]{1,39}$/.test(requirements.amount) || BigInt(requirements.amount) <= 0n)
      return `amount ${JSON.stringify(requirements.amount)} is not a positive integer of base units.`;
    return null;
  }

  /** The settlement fee this facilitator would declare for a simulation's resource fee. */
  derivedFee(minResourceFee: bigint): bigint {
    return derivedFee(minResourceFee, this.feeBump !== null);
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult> {
    const decision = await decide(this.verifying, payload, requirements);
    if (decision.ok) {
      const { from, amount } = decision.verified.transfer;
      this.log('verify', 'valid', from, amount, '');
      return { isValid: true, payer: from, feeStroops: decision.verified.fee };
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
    const decision = await decide(this.verifying, payload, requirements);
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
        const again = await decide(this.verifying, payload, requirements);
        if (!again.ok) return this.verificationFailure(again, network, requirements.amount);
        verified = again.verified;
      }
      const submission = await submit(this.settling, verified, lease, requirements, hooks, progress);
      return this.settled(submission, network, verified.transfer);
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

  /** The SettleResult of a submission (logged). */
  private settled(submission: Submission, network: string, transfer: DecodedTransfer): SettleResult {
    if (submission.kind === 'settled') {
      this.log('settle', 'success', transfer.from, transfer.amount, submission.hash);
      return { success: true, transaction: submission.hash, network, payer: transfer.from };
    }
    if (submission.kind === 'unconfirmed')
      return this.unconfirmed(submission.hash, submission.detail, network, transfer.from, transfer.amount);
    return this.settleFailure(submission.code, submission.message, network, transfer.from, transfer.amount);
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
    const code: SchemeCode | SettlementCode = decision.code === 'unexpected_verify_error' ? 'verification_failed' : decision.code;
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
