/**
 * Buyer-side payment builder for the exact Stellar scheme: build the SEP-41 transfer, simulate it
 * in record mode to learn the authorization entry, sign that entry with an expiry derived from
 * maxTimeoutSeconds and the current ledger, re-simulate in enforce mode, and wrap the unsigned
 * envelope in an x402 v2 PaymentPayload. The buyer signs only its authorization entry, never
 * the envelope; fees are sponsored by the facilitator.
 *
 *   const payload = await createStellarPayment({ requirements, signer: Keypair.fromSecret(s), rpc });
 */
import {
  Account,
  Address,
  Operation,
  StrKey,
  TransactionBuilder,
  authorizeEntry,
  inspectAuthEntry,
  nativeToScVal,
  type Keypair,
  type Transaction,
  xdr,
} from '@stellar/stellar-sdk';
import { LedgerTimeEstimator, expiryLedgerBound } from '../ledger-time.ts';
import { X402_VERSION } from '../../../scheme/types.ts';
import { networkPassphrase } from '../networks.ts';
import { parseAmount } from './payload.ts';
import { describeError, firstLine, type ChainRpc } from '../rpc.ts';
import type { PaymentPayload, PaymentRequirements } from '../../../scheme/types.ts';

/** The all-zero account as envelope source: the buyer never sources (or signs) the envelope. */
export const NULL_ACCOUNT = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';

export type StellarPaymentErrorReason =
  'invalid_requirements' | 'simulation_failed' | 'unexpected_signers' | 'rpc_error' | 'over_spend_cap';

export class StellarPaymentError extends Error {
  constructor(
    readonly reason: StellarPaymentErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'StellarPaymentError';
  }
}

export interface CreateStellarPaymentOptions {
  requirements: PaymentRequirements;
  signer: Keypair;
  rpc: ChainRpc;
  resource?: PaymentPayload['resource'];
  extensions?: Record<string, unknown>;
  /** Shared estimator (cached close-time average); one is created per call otherwise. */
  ledgerTime?: LedgerTimeEstimator;
  /** Override the signed expiry ledger (tests craft out-of-bound payloads with it). */
  expirationLedger?: number;
  /**
   * Credential arm to sign: `asRecorded` (default; an RPC with CAP-71 records AddressV2) or
   * `address`, the classic arm, for facilitators that predate CAP-71 (e.g. @x402/stellar 2.9.0).
   */
  credentials?: 'asRecorded' | 'address';
  /** Spend policy: refuse (before anything is signed or simulated) an amount above this many base units. */
  maxAmount?: bigint;
}

/** The same address credentials under the classic (pre-CAP-71) arm. */
function asClassicAddressCredentials(entry: xdr.SorobanAuthorizationEntry): xdr.SorobanAuthorizationEntry {
  const credentials = entry.credentials as unknown as { type: string; addressV2?: xdr.SorobanAddressCredentials };
  if (credentials.type !== 'sorobanCredentialsAddressV2' || !credentials.addressV2) return entry;
  return new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(credentials.addressV2),
    rootInvocation: entry.rootInvocation,
  });
}

function invalid(message: string): never {
  throw new StellarPaymentError('invalid_requirements', message);
}

/** Checks the requirements a buyer is asked to pay and returns the network passphrase. */
export function checkRequirements(requirements: PaymentRequirements): string {
  if (!requirements || typeof requirements !== 'object') invalid('paymentRequirements must be an object.');
  if (requirements.scheme !== 'exact') invalid(`Scheme ${JSON.stringify(requirements.scheme)} is not "exact".`);
  const passphrase = networkPassphrase(requirements.network);
  if (!passphrase) invalid(`Network ${JSON.stringify(requirements.network)} is not a known Stellar network.`);
  if (typeof requirements.asset !== 'string' || !StrKey.isValidContract(requirements.asset))
    invalid('asset must be a C… contract address.');
  const payTo = requirements.payTo;
  const validPayTo =
    typeof payTo === 'string' &&
    (StrKey.isValidEd25519PublicKey(payTo) || StrKey.isValidContract(payTo) || StrKey.isValidMed25519PublicKey(payTo));
  if (!validPayTo) invalid('payTo must be a G…, M… or C… address.');
  const amount = parseAmount(requirements.amount);
  if (amount === undefined || amount <= 0n) invalid('amount must be a positive integer in base units.');
  const timeout = Number(requirements.maxTimeoutSeconds);
  if (!Number.isFinite(timeout) || timeout <= 0) invalid('maxTimeoutSeconds must be a positive number.');
  return passphrase;
}

/** The unsigned transfer(from, to, amount) envelope with the given authorization entries. */
export function buildTransfer(
  requirements: PaymentRequirements,
  from: string,
  passphrase: string,
  auth: xdr.SorobanAuthorizationEntry[] = [],
  sorobanData?: xdr.SorobanTransactionData,
): Transaction {
  const operation = Operation.invokeContractFunction({
    contract: requirements.asset,
    function: 'transfer',
    args: [
      new Address(from).toScVal(),
      new Address(requirements.payTo).toScVal(),
      nativeToScVal(BigInt(requirements.amount), { type: 'i128' }),
    ],
    auth,
  });
  const builder = new TransactionBuilder(new Account(NULL_ACCOUNT, '0'), {
    // build() adds the resource fee itself: the declared fee is inclusion + resource fee.
    fee: '100',
    networkPassphrase: passphrase,
    ...(sorobanData ? { sorobanData } : {}),
  });
  return builder
    .addOperation(operation)
    .setTimeout(Math.ceil(Number(requirements.maxTimeoutSeconds)))
    .build();
}

/**
 * The facilitator accepts expiries up to current + ceil(maxTimeoutSeconds / the LOW end of its
 * ledger-time estimate) + 2. The buyer signs with the HIGH end of its own estimate, so whole-second
 * rounding of close times cannot push a fresh entry past that bound, and for 80 % of the window,
 * so a close rate that drifts between the two measurements (a loaded node, a slow patch of the
 * network) does not either. The entry still outlives any settlement the facilitator can make.
 */
export const CLIENT_EXPIRY_FRACTION = 0.8;

export function clientExpiration(latestLedger: number, maxTimeoutSeconds: number, ledgerSeconds: number): number {
  const wanted = expiryLedgerBound(latestLedger, maxTimeoutSeconds * CLIENT_EXPIRY_FRACTION, ledgerSeconds);
  return Math.max(latestLedger + 1, Math.min(wanted, latestLedger + MAX_CLIENT_EXPIRY_LEDGERS));
}

/**
 * The furthest ahead the buyer ever signs (about a day of 5 s ledgers, the minimum temporary-entry
 * TTL). A seller's absurd maxTimeoutSeconds must not produce an expiration that overflows the
 * 32-bit ledger field or that the host refuses as "too late"; a shorter expiry always verifies.
 */
export const MAX_CLIENT_EXPIRY_LEDGERS = 17_280;

async function onChain<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new StellarPaymentError('rpc_error', `${what}: ${describeError(err)}`);
  }
}

/** Builds and signs an x402 v2 PaymentPayload for the exact Stellar scheme. */
export async function createStellarPayment(options: CreateStellarPaymentOptions): Promise<PaymentPayload> {
  const { requirements, signer, rpc } = options;
  const passphrase = checkRequirements(requirements);
  if (options.maxAmount !== undefined && BigInt(requirements.amount) > options.maxAmount) {
    throw new StellarPaymentError(
      'over_spend_cap',
      `The payment of ${requirements.amount} base units exceeds the spend cap of ${options.maxAmount} base units; nothing was signed.`,
    );
  }
  const payer = signer.publicKey();
  const ledgerTime = options.ledgerTime ?? new LedgerTimeEstimator(rpc);

  const recorded = await onChain('record-mode simulation', () => rpc.simulate(buildTransfer(requirements, payer, passphrase), 'record'));
  if (!recorded.ok) throw new StellarPaymentError('simulation_failed', `The transfer cannot be simulated: ${firstLine(recorded.error)}`);

  const others = recorded.auth.map((e) => inspectAuthEntry(e).address).filter((a) => a !== payer);
  if (others.length > 0 || recorded.auth.length === 0) {
    throw new StellarPaymentError(
      'unexpected_signers',
      `The transfer needs authorization from ${others.join(', ') || 'nobody'}, not only from ${payer}.`,
    );
  }
  const ledgerSeconds = (await ledgerTime.estimate()).high;
  const expiration =
    options.expirationLedger ?? clientExpiration(recorded.latestLedger, Number(requirements.maxTimeoutSeconds), ledgerSeconds);
  const entries = options.credentials === 'address' ? recorded.auth.map(asClassicAddressCredentials) : recorded.auth;
  const signed = await Promise.all(entries.map((entry) => authorizeEntry(entry, signer, expiration, passphrase)));

  const enforced = await onChain('enforce-mode simulation', () =>
    rpc.simulate(buildTransfer(requirements, payer, passphrase, signed), 'enforce'),
  );
  if (!enforced.ok)
    throw new StellarPaymentError('simulation_failed', `The signed transfer does not simulate: ${firstLine(enforced.error)}`);
  const transaction = buildTransfer(requirements, payer, passphrase, signed, enforced.transactionData);

  return {
    x402Version: X402_VERSION,
    ...(options.resource ? { resource: options.resource } : {}),
    accepted: { ...requirements },
    payload: { transaction: transaction.toXDR() },
    ...(options.extensions ? { extensions: options.extensions } : {}),
  };
}
