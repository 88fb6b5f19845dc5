/**
 * Shared fixtures for the scheme tests: crafted transfers and authorization entries, a
 * recording RPC port (the named boundary) that fails the test if the scheme calls it.
 */
import {
  Address,
  Keypair,
  Networks,
  Operation,
  TransactionBuilder,
  Account,
  authorizeInvocation,
  nativeToScVal,
  xdr,
  Asset,
} from '@stellar/stellar-sdk';
import type { ChainRpc } from '../../src/chains/stellar/rpc.ts';
import type { PaymentPayload, PaymentRequirements } from '../../src/scheme/types.ts';
import { NULL_ACCOUNT } from '../../src/chains/stellar/exact/buyer.ts';

export const PASSPHRASE = Networks.TESTNET;
export const ASSET = new Asset('USDC', Keypair.random().publicKey()).contractId(PASSPHRASE);

/** A ChainRpc whose every call is recorded and rejected: proves a path makes no network call. */
export function recordingRpc(): ChainRpc & { calls: string[] } {
  const calls: string[] = [];
  const refuse = (name: string) => async () => {
    calls.push(name);
    throw new Error(`unexpected RPC call: ${name}`);
  };
  return {
    calls,
    getLatestLedger: refuse('getLatestLedger'),
    getLedgerSpan: refuse('getLedgerSpan'),
    getAccountSequence: refuse('getAccountSequence'),
    simulate: refuse('simulate'),
    send: refuse('send'),
    getTransaction: refuse('getTransaction'),
    getSorobanLaneFees: refuse('getSorobanLaneFees'),
  };
}

export function requirementsFor(payTo: string, overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'stellar:testnet',
    asset: ASSET,
    amount: '100000',
    payTo,
    maxTimeoutSeconds: 30,
    extra: { areFeesSponsored: true },
    ...overrides,
  };
}

export function transferInvocation(
  contract: string,
  args: xdr.ScVal[],
  sub: xdr.SorobanAuthorizedInvocation[] = [],
): xdr.SorobanAuthorizedInvocation {
  return new xdr.SorobanAuthorizedInvocation({
    function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(
      new xdr.InvokeContractArgs({ contractAddress: Address.fromString(contract).toScAddress(), functionName: 'transfer', args }),
    ),
    subInvocations: sub,
  });
}

export interface CraftOptions {
  contract?: string;
  fn?: string;
  args?: xdr.ScVal[];
  from?: string;
  to: string;
  amount?: bigint;
  auth?: xdr.SorobanAuthorizationEntry[];
  source?: string;
  opSource?: string;
  extraOps?: number;
}

export const transferArgs = (from: string, to: string, amount: bigint) => [
  new Address(from).toScVal(),
  new Address(to).toScVal(),
  nativeToScVal(amount, { type: 'i128' }),
];

/** A transfer envelope crafted field by field (unsigned envelope, as a buyer sends it). */
export function craftTransaction(o: CraftOptions): string {
  const from = o.from ?? Keypair.random().publicKey();
  const op = Operation.invokeContractFunction({
    contract: o.contract ?? ASSET,
    function: o.fn ?? 'transfer',
    args: o.args ?? transferArgs(from, o.to, o.amount ?? 100000n),
    auth: o.auth ?? [],
    ...(o.opSource ? { source: o.opSource } : {}),
  });
  const builder = new TransactionBuilder(new Account(o.source ?? NULL_ACCOUNT, '0'), {
    fee: '100',
    networkPassphrase: PASSPHRASE,
  }).addOperation(op);
  for (let i = 0; i < (o.extraOps ?? 0); i++) builder.addOperation(op);
  return builder.setTimeout(30).build().toXDR();
}

export function payloadOf(transaction: unknown, accepted: Partial<PaymentRequirements> = {}): PaymentPayload {
  return { x402Version: 2, accepted: { scheme: 'exact', network: 'stellar:testnet', ...accepted }, payload: { transaction } };
}

export async function signedEntry(
  signer: Keypair,
  invocation: xdr.SorobanAuthorizedInvocation,
  expiration: number,
): Promise<xdr.SorobanAuthorizationEntry> {
  return authorizeInvocation({ signer, validUntilLedgerSeq: expiration, invocation, networkPassphrase: PASSPHRASE });
}

/** An address-credential entry with no signature (as recorded by simulation). */
export function unsignedEntry(address: string, invocation: xdr.SorobanAuthorizedInvocation, expiration = 0): xdr.SorobanAuthorizationEntry {
  return new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(
      new xdr.SorobanAddressCredentials({
        address: Address.fromString(address).toScAddress(),
        nonce: 1n,
        signatureExpirationLedger: expiration,
        signature: xdr.ScVal.scvVoid(),
      }),
    ),
    rootInvocation: invocation,
  });
}

export function sourceAccountEntry(invocation: xdr.SorobanAuthorizedInvocation): xdr.SorobanAuthorizationEntry {
  return new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsSourceAccount(),
    rootInvocation: invocation,
  });
}

/** A simulated contract event (as the RPC returns it inside a DiagnosticEvent). */
export function contractEvent(contract: string | null, topics: xdr.ScVal[], data: xdr.ScVal): xdr.DiagnosticEvent {
  const contractId = contract ? (Address.fromString(contract).toScAddress() as unknown as { contractId: xdr.ContractId }).contractId : null;
  return new xdr.DiagnosticEvent({
    inSuccessfulContractCall: true,
    event: new xdr.ContractEvent({
      ext: xdr.ExtensionPoint.v0(),
      contractId,
      type: xdr.ContractEventType.contract,
      body: xdr.ContractEventBody.v0(new xdr.ContractEventV0({ topics, data })),
    }),
  });
}
