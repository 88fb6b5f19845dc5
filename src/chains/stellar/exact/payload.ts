/**
 * The network-free part of verification: protocol shape, decoding, transaction structure and
 * facilitator safety (docs/SCHEME.md, verification steps 1–4). Everything here is pure, so `wrong_amount`,
 * `wrong_recipient` and `wrong_asset` are decided before any RPC call.
 */
import { Address, MuxedAccount, StrKey, TransactionBuilder, inspectAuthEntry, xdr } from '@stellar/stellar-sdk';
import type { PolicyCode, VerifyCode } from '../../../codes.ts';
import { X402_VERSION, type PaymentPayload, type PaymentRequirements } from '../../../scheme/types.ts';
import { networkPassphrase } from '../networks.ts';

export const SCHEME = 'exact';

/** A rejection carrying its code and a human sentence specific to this payload. */
export class Rejection extends Error {
  constructor(
    readonly code: VerifyCode | PolicyCode,
    message: string,
    readonly payer?: string,
  ) {
    // A rejection is an answer, not a fault: nobody reads its stack, and capturing one was 5 % of
    // a rejected /verify's CPU (docs/BENCHMARKS.md "Verify and cheap requests against their floors").
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'Rejection';
  }
}

const reject = (code: VerifyCode, message: string, payer?: string): never => {
  throw new Rejection(code, message, payer);
};

/** The decoded transfer the payload claims to make. */
export interface DecodedTransfer {
  /**
   * The envelope as base64 for the RPC: the buyer's text itself when it is canonical base64 (what
   * was decoded is what is simulated, and encoding it again cost a valid verify more CPU than
   * decoding it), else the decoded transaction encoded again.
   */
  envelope: string;
  /** The G… account behind the transaction's source (a muxed source's base account). */
  txSourceAccount: string;
  /** The G… account behind the operation's own source, when it has one. */
  opSourceAccount: string | undefined;
  func: xdr.HostFunction;
  auth: xdr.SorobanAuthorizationEntry[];
  asset: string;
  from: string;
  to: string;
  amount: bigint;
}

/** G… of an account or muxed account (M… → its base G…); other addresses unchanged. */
export function baseAccount(address: string): string {
  if (StrKey.isValidMed25519PublicKey(address)) return MuxedAccount.fromAddress(address, '0').baseAccount().accountId();
  return address;
}

/**
 * The XDR discriminants the checks read in the decoded form, as literals TypeScript narrows the
 * SDK's wire types on; each is the SDK's own enum value (checked once at load).
 */
const WIRE = {
  envelopeTxV0: 0,
  envelopeTxFeeBump: 5,
  invokeHostFunction: 24,
  invokeContract: 0,
  scvI128: 10,
  scvAddress: 18,
  accountAddress: 0,
  contractAddress: 1,
  muxedEd25519: 256,
} as const;
for (const [ours, sdk] of [
  [WIRE.envelopeTxV0, xdr.EnvelopeType.envelopeTypeTxV0],
  [WIRE.envelopeTxFeeBump, xdr.EnvelopeType.envelopeTypeTxFeeBump],
  [WIRE.invokeHostFunction, xdr.OperationType.invokeHostFunction],
  [WIRE.invokeContract, xdr.HostFunctionType.hostFunctionTypeInvokeContract],
  [WIRE.scvI128, xdr.ScValType.scvI128],
  [WIRE.scvAddress, xdr.ScValType.scvAddress],
  [WIRE.accountAddress, xdr.ScAddressType.scAddressTypeAccount],
  [WIRE.contractAddress, xdr.ScAddressType.scAddressTypeContract],
  [WIRE.muxedEd25519, xdr.CryptoKeyType.keyTypeMuxedEd25519],
] as const) {
  if (ours !== sdk.value) throw new Error(`XDR discriminant ${sdk.name} is ${sdk.value}, not ${ours}`);
}

/**
 * The strkey of an address (G…, M…, C…, …). Accounts and contracts, the addresses a payment carries,
 * are encoded straight from their key: the SDK's Address encodes the key, decodes that text to
 * check it and encodes it again, the same text three strkey passes later.
 */
export function scAddressText(address: xdr.ScAddress): string {
  if (address.type === 'scAddressTypeAccount') return StrKey.encodeEd25519PublicKey(address.accountId.ed25519.toBytes());
  if (address.type === 'scAddressTypeContract') return StrKey.encodeContract(address.contractId.value);
  return Address.fromScAddress(address).toString();
}

/** The strkey of an address ScVal (G…, M…, C…), undefined for anything else. */
export function addressOf(value: xdr.ScVal | undefined): string | undefined {
  if (!value || value.type !== 'scvAddress') return undefined;
  try {
    return scAddressText(value.address);
  } catch {
    return undefined;
  }
}

/**
 * The strkey of an address in its decoded XDR form (G…, M…, C…, …). Accounts and contracts, the
 * addresses a payment carries, are encoded straight from their key; the SDK's Address would encode
 * the key, decode that text and encode it again.
 */
function wireAddress(address: xdr.ScAddressWire): string {
  if (address.type === WIRE.accountAddress) return StrKey.encodeEd25519PublicKey(Buffer.from(address.accountId.ed25519));
  if (address.type === WIRE.contractAddress) return StrKey.encodeContract(Buffer.from(address.contractId));
  return Address.fromScAddress(xdr.ScAddress.fromXdrObject(address)).toString();
}

/** An account's or a contract's key, as a requirement's address names it. */
interface RequiredKey {
  type: typeof WIRE.accountAddress | typeof WIRE.contractAddress;
  key: Uint8Array;
}

/** Requirement texts decoded so far (a seller's asset and payTo repeat); cleared when it is full. */
const requiredKeys = new Map<string, RequiredKey | null>();
const REQUIRED_KEYS_LIMIT = 1024;

/**
 * The account or contract a requirement's address (asset, payTo) names, else null: a payload's
 * address is compared as a key (isRequired), not encoded (a checksum and base32 pass) to compare texts.
 */
function requiredKey(text: unknown): RequiredKey | null {
  if (typeof text !== 'string' || text.length !== 56) return null;
  let found = requiredKeys.get(text);
  if (found !== undefined) return found;
  found = null;
  // 56 characters have no spare bits and the decoder takes upper case only: one text per key.
  if (StrKey.isValidEd25519PublicKey(text)) found = { type: WIRE.accountAddress, key: StrKey.decodeEd25519PublicKey(text) };
  else if (StrKey.isValidContract(text)) found = { type: WIRE.contractAddress, key: StrKey.decodeContract(text) };
  if (requiredKeys.size >= REQUIRED_KEYS_LIMIT) requiredKeys.clear();
  requiredKeys.set(text, found);
  return found;
}

/** Whether an address in its decoded XDR form is the required key: wireAddress(address) is then the requirement's text. */
function isRequired(address: xdr.ScAddressWire, required: RequiredKey | null): boolean {
  if (!required || address.type !== required.type) return false;
  if (address.type === WIRE.accountAddress) return Buffer.compare(address.accountId.ed25519, required.key) === 0;
  return address.type === WIRE.contractAddress && Buffer.compare(address.contractId, required.key) === 0;
}

/** The strkey of an address ScVal in its decoded XDR form, undefined for anything else. */
function wireAddressOf(value: xdr.ScValWire | undefined): string | undefined {
  if (!value || value.type !== WIRE.scvAddress) return undefined;
  try {
    return wireAddress(value.address);
  } catch {
    return undefined;
  }
}

/** The G… account behind an account or muxed account in its decoded XDR form. */
function wireBaseAccount(account: xdr.MuxedAccountWire): string {
  return StrKey.encodeEd25519PublicKey(Buffer.from(account.type === WIRE.muxedEd25519 ? account.med25519.ed25519 : account.ed25519));
}

/**
 * Requirements amount as a 128-bit-safe integer. Only the canonical decimal form is accepted
 * (openapi.yaml PaymentRequirements.amount): digits, no sign, no leading zero except "0" itself.
 * "01000" is refused rather than read as 1000, so a seller, verify and settle can never disagree
 * about which string named the price.
 */
export function parseAmount(amount: unknown): bigint | undefined {
  if (typeof amount !== 'string' || !/^(0|[1-9][0-9]{0,38})$/.test(amount)) return undefined;
  const value = BigInt(amount);
  return value < 2n ** 127n ? value : undefined;
}

function i128Of(value: xdr.ScValWire): bigint | undefined {
  if (value.type !== WIRE.scvI128) return undefined;
  const { hi, lo } = value.i128;
  return (BigInt.asIntN(64, BigInt(hi)) << 64n) | BigInt.asUintN(64, BigInt(lo));
}

/** Step 1: protocol shape. Returns the network passphrase. */
export function checkProtocol(payload: PaymentPayload, requirements: PaymentRequirements): string {
  if (payload.x402Version !== X402_VERSION) {
    reject('invalid_x402_version', `x402Version ${String(payload.x402Version)} is not served; use ${X402_VERSION}.`);
  }
  const acceptedScheme = payload.accepted?.scheme;
  if (requirements.scheme !== SCHEME || (acceptedScheme !== undefined && acceptedScheme !== SCHEME)) {
    reject('unsupported_scheme', `Scheme ${JSON.stringify(acceptedScheme ?? requirements.scheme)} is not "exact".`);
  }
  const acceptedNetwork = payload.accepted?.network;
  if (acceptedNetwork !== undefined && acceptedNetwork !== requirements.network) {
    reject(
      'network_mismatch',
      `paymentPayload.accepted.network ${JSON.stringify(acceptedNetwork)} differs from ${JSON.stringify(requirements.network)}.`,
    );
  }
  const passphrase = networkPassphrase(requirements.network);
  if (!passphrase) reject('invalid_network', `${JSON.stringify(requirements.network)} is not a known Stellar network.`);
  return passphrase!;
}

/**
 * Padded standard base64 without whitespace: the form every RPC decodes. The SDK's decoder also
 * takes whitespace and missing padding, which an RPC may refuse.
 */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Steps 2–3: decode and check the transaction structure against the requirements. */
export function decodeTransfer(payload: PaymentPayload, requirements: PaymentRequirements, passphrase: string): DecodedTransfer {
  const encoded = payload.payload?.transaction;
  if (typeof encoded !== 'string' || encoded.length === 0) {
    reject('invalid_exact_stellar_payload_malformed', 'payload.transaction is missing or not a string.');
  }
  // Two stages: the checks read the envelope's decoded XDR (plain objects); the SDK's classes are
  // built only for what a payload that passes them carries on (the host function and its
  // authorizations), or, for an envelope that is not one invokeHostFunction operation, the SDK's
  // Transaction, so that such a payload is refused exactly as before. Building the classes for every
  // payload was half of its decoding (docs/BENCHMARKS.md "Verify and cheap requests against their floors").
  let wire: xdr.TransactionEnvelopeWire;
  try {
    // Canonical base64 decodes to the same bytes either way; node's decoder is native.
    const bytes = CANONICAL_BASE64.test(encoded as string)
      ? Buffer.from(encoded as string, 'base64')
      : xdr.decodeBytes(encoded as string, 'base64');
    wire = xdr.TransactionEnvelope.schema.decode(bytes);
  } catch {
    return reject('invalid_exact_stellar_payload_malformed', 'payload.transaction is not a base64 transaction envelope XDR.');
  }
  if (wire.type === WIRE.envelopeTxFeeBump) {
    return reject('invalid_exact_stellar_payload_malformed', 'payload.transaction is not a base64 transaction envelope XDR.');
  }
  const tx = wire.type === WIRE.envelopeTxV0 ? wire.v0.tx : wire.v1.tx;
  const ops = tx.operations;
  const body = ops.length === 1 ? ops[0]!.body : undefined;
  if (!body || body.type !== WIRE.invokeHostFunction) {
    try {
      TransactionBuilder.fromXdr(xdr.TransactionEnvelope.fromXdrObject(wire), passphrase);
    } catch {
      reject('invalid_exact_stellar_payload_malformed', 'payload.transaction is not a base64 transaction envelope XDR.');
    }
    return reject(
      'invalid_exact_stellar_payload_wrong_operation',
      `Expected exactly one invokeHostFunction operation; found ${ops.length} operation(s).`,
    );
  }
  const { hostFunction, auth } = body.invokeHostFunctionOp;
  if (hostFunction.type !== WIRE.invokeContract) {
    return reject('invalid_exact_stellar_payload_wrong_operation', 'The host function does not invoke a contract.');
  }
  const invoke = hostFunction.invokeContract;
  const contract = isRequired(invoke.contractAddress, requiredKey(requirements.asset))
    ? requirements.asset
    : wireAddress(invoke.contractAddress);
  if (contract !== requirements.asset) {
    reject(
      'invalid_exact_stellar_payload_wrong_asset',
      `The transaction invokes ${contract}, not the required asset ${String(requirements.asset)}.`,
    );
  }
  const fn = String(invoke.functionName);
  const args = invoke.args;
  if (fn !== 'transfer' || args.length !== 3) {
    reject(
      'invalid_exact_stellar_payload_wrong_function_name',
      `Expected transfer(from, to, amount); found ${fn} with ${args.length} argument(s).`,
    );
  }
  const from = wireAddressOf(args[0]);
  const toArg = args[1];
  const to =
    toArg?.type === WIRE.scvAddress && isRequired(toArg.address, requiredKey(requirements.payTo))
      ? requirements.payTo
      : wireAddressOf(toArg);
  const amount = i128Of(args[2]!);
  if (from === undefined) reject('invalid_exact_stellar_payload_malformed', 'The transfer `from` argument is not an address.');
  if (to !== requirements.payTo) {
    reject(
      'invalid_exact_stellar_payload_wrong_recipient',
      `The transfer pays ${to ?? 'a non-address'}, not payTo ${String(requirements.payTo)}.`,
      from,
    );
  }
  const required = parseAmount(requirements.amount);
  if (required === undefined) {
    reject(
      'invalid_exact_stellar_payload_wrong_amount',
      `paymentRequirements.amount ${JSON.stringify(requirements.amount)} is not an integer in base units.`,
      from,
    );
  }
  if (amount !== required) {
    reject(
      'invalid_exact_stellar_payload_wrong_amount',
      `The transfer amount ${amount ?? 'is not an i128 and'} differs from the required ${String(required)}.`,
      from,
    );
  }
  const opSource = ops[0]!.sourceAccount;
  let func: xdr.HostFunction;
  let authEntries: xdr.SorobanAuthorizationEntry[];
  try {
    func = xdr.HostFunction.fromXdrObject(hostFunction);
    authEntries = auth.map((entry: xdr.SorobanAuthorizationEntryWire) => xdr.SorobanAuthorizationEntry.fromXdrObject(entry));
  } catch {
    return reject('invalid_exact_stellar_payload_malformed', 'payload.transaction is not a base64 transaction envelope XDR.');
  }
  return {
    envelope: CANONICAL_BASE64.test(encoded as string) ? (encoded as string) : xdr.TransactionEnvelope.fromXdrObject(wire).toXdr('base64'),
    txSourceAccount:
      'sourceAccountEd25519' in tx
        ? StrKey.encodeEd25519PublicKey(Buffer.from(tx.sourceAccountEd25519))
        : wireBaseAccount(tx.sourceAccount),
    opSourceAccount: opSource ? wireBaseAccount(opSource) : undefined,
    func,
    auth: authEntries,
    asset: contract,
    from: from!,
    to: to!,
    amount: amount!,
  };
}

/**
 * The payer a response may name: the transfer's `from`, unless it is (a muxed form of) a
 * facilitator address — a response never calls svc's own signer the payer (openapi.yaml, `payer`).
 */
export function clientPayer(address: string | undefined, facilitator: ReadonlySet<string>): string | undefined {
  if (address === undefined || address === '') return undefined;
  try {
    return facilitator.has(baseAccount(address)) ? undefined : address;
  } catch {
    return facilitator.has(address) ? undefined : address;
  }
}

/** Step 4: no facilitator address as tx/op source, payer, or anywhere in an authorization entry. */
export function checkFacilitatorSafety(transfer: DecodedTransfer, facilitator: ReadonlySet<string>): void {
  for (const source of [transfer.txSourceAccount, transfer.opSourceAccount]) {
    if (source && facilitator.has(source)) {
      reject(
        'invalid_exact_stellar_payload_unsafe_tx_or_op_source',
        'The transaction or operation source is a facilitator address.',
        transfer.from,
      );
    }
  }
  if (facilitator.has(baseAccount(transfer.from))) {
    reject('invalid_exact_stellar_payload_facilitator_is_payer', 'The transfer `from` is a facilitator address.', transfer.from);
  }
  for (const entry of transfer.auth) {
    if (authEntryMentions(entry, facilitator)) {
      reject(
        'invalid_exact_stellar_payload_facilitator_in_auth',
        'A facilitator address appears in an authorization entry.',
        transfer.from,
      );
    }
  }
}

/** Whether any address in the entry (credentials, signers, invocation contracts and arguments) is a facilitator's. */
function authEntryMentions(entry: xdr.SorobanAuthorizationEntry, facilitator: ReadonlySet<string>): boolean {
  const found: string[] = [];
  try {
    const info = inspectAuthEntry(entry);
    if (info.address) found.push(info.address);
    for (const s of info.signers) {
      found.push(s.address);
      for (const sig of s.signatures ?? []) found.push(sig.publicKey);
    }
  } catch {
    /* an undecodable entry is judged at the credential check */
  }
  collectAddresses(entry.rootInvocation, found);
  return found.some((a) => facilitator.has(baseAccount(a)));
}

function collectAddresses(invocation: xdr.SorobanAuthorizedInvocation, out: string[]): void {
  const fn = invocation.function as unknown as { type: string; contractFn?: xdr.InvokeContractArgs };
  if (fn.contractFn) {
    try {
      out.push(scAddressText(fn.contractFn.contractAddress));
    } catch {
      /* ignore */
    }
    for (const arg of fn.contractFn.args) {
      const a = addressOf(arg);
      if (a) out.push(a);
    }
  }
  for (const sub of invocation.subInvocations) collectAddresses(sub, out);
}
