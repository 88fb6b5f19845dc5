/**
 * The checks that run only after the simulation succeeded (docs/SCHEME.md): authorization entries
 * and simulated transfer events. Pure functions over decoded XDR.
 */
import { MuxedAccount, Account, StrKey, inspectAuthEntry, scValToNative, xdr } from '@stellar/stellar-sdk';
import { Rejection, addressOf } from './payload.ts';
import { EXPIRY_TOLERANCE_LEDGERS } from '../ledger-time.ts';

/** Credential arms we accept: classic address credentials and CAP-71 AddressV2. */
const ACCEPTED_CREDENTIALS = new Set(['address', 'addressV2']);

export interface AuthCheckInput {
  auth: xdr.SorobanAuthorizationEntry[];
  payer: string;
  /** current ledger + ceil(maxTimeoutSeconds / ledger seconds), before the tolerance. */
  expiryBound: number;
}

/** Returns the earliest ledger an entry is signed until (the payment cannot land after it). */
export function checkAuthEntries({ auth, payer, expiryBound }: AuthCheckInput): number {
  if (auth.length === 0) {
    throw new Rejection('invalid_exact_stellar_payload_no_auth_entries', 'The operation carries no authorization entries.', payer);
  }
  const infos = auth.map((entry) => {
    let info: ReturnType<typeof inspectAuthEntry> | undefined;
    try {
      info = inspectAuthEntry(entry);
    } catch {
      info = undefined;
    }
    if (!info || !ACCEPTED_CREDENTIALS.has(info.credentialType)) {
      throw new Rejection(
        'invalid_exact_stellar_payload_unsupported_credential_type',
        `An authorization entry uses ${info?.credentialType ?? 'unknown'} credentials; only address credentials are accepted.`,
        payer,
      );
    }
    return info;
  });
  for (const info of infos) {
    if (info.invocation.subInvocations.length > 0) {
      throw new Rejection(
        'invalid_exact_stellar_payload_has_subinvocations',
        'An authorization entry authorizes sub-invocations beyond the transfer.',
        payer,
      );
    }
  }
  const payerEntries = infos.filter((i) => i.address === payer);
  if (payerEntries.length === 0 || payerEntries.some((i) => !i.signed)) {
    throw new Rejection(
      'invalid_exact_stellar_payload_missing_payer_signature',
      `The payer ${payer} has not signed its authorization entry.`,
      payer,
    );
  }
  const pending = infos.find((i) => !i.signed);
  if (pending) {
    throw new Rejection(
      'invalid_exact_stellar_payload_unexpected_pending_signatures',
      `The authorization entry of ${pending.address ?? 'an address'} still awaits a signature.`,
      payer,
    );
  }
  const limit = expiryBound + EXPIRY_TOLERANCE_LEDGERS;
  for (const info of infos) {
    if ((info.signatureExpirationLedger ?? 0) > limit) {
      throw new Rejection(
        'invalid_exact_stellar_signature_expiration_too_far',
        `An authorization entry expires at ledger ${info.signatureExpirationLedger}, beyond the allowed ${limit}.`,
        payer,
      );
    }
  }
  return Math.min(...infos.map((info) => info.signatureExpirationLedger ?? 0));
}

export interface EventCheckInput {
  events: xdr.DiagnosticEvent[];
  asset: string;
  payer: string;
  payTo: string;
  amount: bigint;
}

/** A decoded SEP-41 transfer (SAC 4-topic or plain 3-topic; i128 or CAP-67 map data). */
export interface TransferEvent {
  contractId: string;
  from: string;
  /** Muxed (M…) when the data carried to_muxed_id. */
  to: string;
  amount: bigint | undefined;
}

const isSymbol = (v: xdr.ScVal, name: string) => v.type === 'scvSymbol' && String((v as unknown as { sym: unknown }).sym) === name;

function amountAndMux(data: xdr.ScVal): { amount: bigint | undefined; muxId: bigint | undefined } {
  try {
    const native = scValToNative(data) as unknown;
    if (typeof native === 'bigint') return { amount: data.type === 'scvI128' ? native : undefined, muxId: undefined };
    if (data.type === 'scvMap' && native && typeof native === 'object') {
      const { amount, to_muxed_id } = native as { amount?: unknown; to_muxed_id?: unknown };
      return {
        amount: typeof amount === 'bigint' ? amount : undefined,
        muxId: typeof to_muxed_id === 'bigint' ? to_muxed_id : undefined,
      };
    }
  } catch {
    /* not an amount */
  }
  return { amount: undefined, muxId: undefined };
}

/** Contract events among the simulation's diagnostic events (the host's own fn_call/fn_return are diagnostic). */
function contractEvents(events: xdr.DiagnosticEvent[]): xdr.ContractEvent[] {
  return events.map((d) => d.event).filter((e) => e.type.name === 'contract');
}

export function checkTransferEvents({ events, asset, payer, payTo, amount }: EventCheckInput): TransferEvent {
  const transfers: TransferEvent[] = [];
  for (const event of contractEvents(events)) {
    const { topics, data } = event.body.v0 as unknown as { topics: xdr.ScVal[]; data: xdr.ScVal };
    const from = addressOf(topics[1]);
    const to = addressOf(topics[2]);
    const shapeOk =
      (topics.length === 3 || (topics.length === 4 && topics[3]!.type === 'scvString')) && isSymbol(topics[0]!, 'transfer') && from && to;
    if (!shapeOk) {
      throw new Rejection('invalid_exact_stellar_payload_event_not_transfer', 'A simulated event is not a SEP-41 transfer event.', payer);
    }
    if (!event.contractId) {
      throw new Rejection(
        'invalid_exact_stellar_payload_event_missing_contract_id',
        'A simulated transfer event has no contract id.',
        payer,
      );
    }
    // Encoded straight from the key: the SDK's Address checks a contract's text by first trying it
    // as an account, which throws (an Error and its stack) inside a decoder, for every event.
    const contractId = StrKey.encodeContract(event.contractId.toBytes());
    if (contractId !== asset) {
      throw new Rejection(
        'invalid_exact_stellar_payload_event_wrong_asset',
        `A transfer event came from ${contractId}, not the asset ${asset}.`,
        payer,
      );
    }
    const { amount: value, muxId } = amountAndMux(data);
    const recipient = muxId === undefined ? to : new MuxedAccount(new Account(to, '0'), muxId.toString()).accountId();
    transfers.push({ contractId, from: from, to: recipient, amount: value });
  }
  if (transfers.length === 0) {
    throw new Rejection('invalid_exact_stellar_payload_no_transfer_events', 'The simulation emitted no transfer event.', payer);
  }
  if (transfers.length > 1) {
    throw new Rejection(
      'invalid_exact_stellar_payload_multiple_transfers',
      `The simulation emitted ${transfers.length} transfer events.`,
      payer,
    );
  }
  const transfer = transfers[0]!;
  if (transfer.from !== payer) {
    throw new Rejection(
      'invalid_exact_stellar_payload_event_wrong_from',
      `The simulated debit is from ${transfer.from}, not the payer.`,
      payer,
    );
  }
  if (transfer.to !== payTo) {
    throw new Rejection('invalid_exact_stellar_payload_event_wrong_to', `The simulated credit is to ${transfer.to}, not payTo.`, payer);
  }
  if (transfer.amount !== amount) {
    throw new Rejection(
      'invalid_exact_stellar_payload_event_wrong_amount',
      `The simulated amount ${String(transfer.amount)} differs from ${amount}.`,
      payer,
    );
  }
  return transfer;
}
