/**
 * Verifying an exact Stellar payment in the documented order (docs/SCHEME.md): protocol, decoding,
 * facilitator safety, simulation against the current ledger, the fee ceiling, the authorization
 * expiry and the transfer events. The decision carries the simulation and the fee, which settle
 * reuses; the scheme shapes it into a VerifyResult and logs it.
 */
import { Address, xdr } from '@stellar/stellar-sdk';
import type { PolicyCode, VerifyCode } from '../../../codes.ts';
import type { PaymentPayload, PaymentRequirements } from '../../../scheme/types.ts';
import { expiryLedgerBound, type LedgerTimeEstimator } from '../ledger-time.ts';
import { MIN_INCLUSION_FEE_STROOPS, describeBid, type InclusionFeeEstimator } from '../inclusion-fee.ts';
import { RpcError, describeError, firstLine, type ChainRpc, type Simulation } from '../rpc.ts';
import { checkAuthEntries, checkTransferEvents } from './checks.ts';
import { Rejection, checkFacilitatorSafety, checkProtocol, clientPayer, decodeTransfer, type DecodedTransfer } from './payload.ts';

/** The minimum inclusion fee per operation (network base fee); a fee-bump counts one more operation. */
export const INCLUSION_FEE_STROOPS = MIN_INCLUSION_FEE_STROOPS;

/** The settlement fee declared for a simulation's resource fee and an inclusion bid per operation, with or without a fee-bump wrapper. */
export function derivedFee(minResourceFee: bigint, feeBumped: boolean, inclusionPerOp: bigint = INCLUSION_FEE_STROOPS): bigint {
  return inclusionPerOp * (feeBumped ? 2n : 1n) + minResourceFee;
}

export interface Verified {
  transfer: DecodedTransfer;
  simulation: Extract<Simulation, { ok: true }>;
  passphrase: string;
  fee: bigint;
  /** The inclusion fee bid per operation (docs/SCHEME.md "Inclusion fee"). */
  inclusionFee: bigint;
  /** The earliest ledger an authorization entry is signed until: the transaction's last ledger (settle bounds it). */
  expiresAtLedger: number;
}

export type Decision = { ok: true; verified: Verified } | { ok: false; code: VerifyCode | PolicyCode; message: string; payer?: string };

/**
 * Ledgers an authorization must still have after the latest one: a transaction submitted now lands
 * in the next ledger at the earliest, and settle's re-verification and submission take time of
 * their own. Fewer, and it would fail on chain at svc's cost; settle's ledger bound turns any that
 * still arrive late into a refusal without a fee (docs/SCHEME.md).
 */
export const MIN_AUTHORIZATION_LEDGERS_LEFT = 2;

/** What verification reads from the scheme. */
export interface VerifyContext {
  rpc: ChainRpc;
  /** svc's own accounts (submitters, fee-bump, channel funder). */
  facilitator: ReadonlySet<string>;
  feeBumped: boolean;
  maxFee: bigint;
  ledgerTime: LedgerTimeEstimator;
  inclusionFee: InclusionFeeEstimator;
}

/**
 * Whether `key` is `holder`'s balance in the token contract `asset`: a persistent contract-data
 * entry of the token whose key names the holder (SEP-41 tokens key balances by `Balance(holder)`).
 */
export function isBalanceOf(key: xdr.LedgerKey, asset: string, holder: string): boolean {
  if (key.type !== 'contractData') return false;
  const data = key.contractData;
  if (data.durability !== xdr.ContractDataDurability.persistent) return false;
  if (Address.fromScAddress(data.contract).toString() !== asset) return false;
  const holderXdr = Buffer.from(new Address(holder).toScAddress().toXdr());
  return Buffer.from(data.key.toXdr()).includes(holderXdr);
}

/** The full verification; settle reuses its simulation. */
export async function decide(context: VerifyContext, payload: PaymentPayload, requirements: PaymentRequirements): Promise<Decision> {
  const { rpc, facilitator, feeBumped, maxFee, ledgerTime, inclusionFee } = context;
  let payer: string | undefined;
  try {
    if (!payload || typeof payload !== 'object' || !requirements || typeof requirements !== 'object') {
      throw new Rejection('invalid_exact_stellar_payload_malformed', 'paymentPayload and paymentRequirements must be objects.');
    }
    const passphrase = checkProtocol(payload, requirements);
    const transfer = decodeTransfer(payload, requirements, passphrase);
    payer = transfer.from;
    checkFacilitatorSafety(transfer, facilitator);

    const simulation = await rpc.simulate(transfer.envelope, transfer.auth.length > 0 ? 'enforce' : undefined);
    if (!simulation.ok && simulation.archived?.some((key) => isBalanceOf(key, transfer.asset, payer!))) {
      throw new Rejection(
        'svc_policy_payer_balance_archived',
        `The payer's balance of ${transfer.asset} is archived (its TTL ran out), so the transfer cannot run until it is restored. Nothing was submitted; restore it with a RestoreFootprint transaction (the simulation's restore preamble) and pay again: svc does not sponsor restores.`,
        payer,
      );
    }
    if (!simulation.ok) {
      throw new Rejection(
        'invalid_exact_stellar_payload_simulation_failed',
        `Simulation against the current ledger failed: ${firstLine(simulation.error)}`,
        payer,
      );
    }
    // An envelope without entries was simulated in record mode, whose fee prices recording the
    // entries (a nonce's rent at the longest TTL), not a settlement: it is named before any fee.
    if (transfer.auth.length === 0) checkAuthEntries({ auth: transfer.auth, payer, expiryBound: simulation.latestLedger });
    const bid = await inclusionFee.current();
    const inclusion = bid.bid;
    const fee = derivedFee(simulation.minResourceFee, feeBumped, inclusion);
    if (fee > maxFee) {
      throw new Rejection(
        'invalid_exact_stellar_payload_fee_exceeds_maximum',
        `The derived settlement fee ${fee} stroops (resource fee ${simulation.minResourceFee}, ${describeBid(bid)}${feeBumped ? ', counted twice for the fee bump' : ''}) exceeds the ceiling of ${maxFee} stroops. Nothing was submitted.`,
        payer,
      );
    }
    // The low end of the estimate: a buyer who signed with our high end is always inside.
    const ledgerSeconds = (await ledgerTime.estimate()).low;
    const maxTimeout = Number(requirements.maxTimeoutSeconds);
    if (!Number.isFinite(maxTimeout) || maxTimeout <= 0) {
      throw new Rejection(
        'invalid_exact_stellar_signature_expiration_too_far',
        'paymentRequirements.maxTimeoutSeconds is not a positive number, so no expiry is acceptable.',
        payer,
      );
    }
    const expiryBound = expiryLedgerBound(simulation.latestLedger, maxTimeout, ledgerSeconds);
    const expiresAtLedger = checkAuthEntries({ auth: transfer.auth, payer, expiryBound });
    checkTransferEvents({ events: simulation.events, asset: transfer.asset, payer, payTo: transfer.to, amount: transfer.amount });
    if (expiresAtLedger - simulation.latestLedger < MIN_AUTHORIZATION_LEDGERS_LEFT) {
      throw new Rejection(
        'svc_policy_authorization_expiring',
        `An authorization entry expires at ledger ${expiresAtLedger}, ${expiresAtLedger - simulation.latestLedger} after the latest (${simulation.latestLedger}); at least ${MIN_AUTHORIZATION_LEDGERS_LEFT} are needed for the transaction to be included before it. Nothing was submitted; sign with a later expiry.`,
        payer,
      );
    }
    return { ok: true, verified: { transfer, simulation, passphrase, fee, inclusionFee: inclusion, expiresAtLedger } };
  } catch (err) {
    // Every rejection's payer passes through clientPayer: the one place that keeps svc's own
    // signer out of `payer` (a verified transfer's `from` is never one, by checkFacilitatorSafety).
    if (err instanceof Rejection)
      return { ok: false, code: err.code, message: err.message, payer: clientPayer(err.payer ?? payer, facilitator) };
    const message =
      err instanceof RpcError ? `${err.message}; the payment was not judged.` : `Verification failed unexpectedly: ${describeError(err)}`;
    return { ok: false, code: 'unexpected_verify_error', message, payer: clientPayer(payer, facilitator) };
  }
}
