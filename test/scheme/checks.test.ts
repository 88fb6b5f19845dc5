/** Authorization-entry and transfer-event checks on crafted XDR (the post-simulation steps). */
import { describe, expect, it } from 'vitest';
import { Account, Address, Keypair, MuxedAccount, authorizeInvocation, nativeToScVal, xdr } from '@stellar/stellar-sdk';
import { checkAuthEntries, checkTransferEvents } from '../../src/chains/stellar/exact/checks.ts';
import { Rejection } from '../../src/chains/stellar/exact/payload.ts';
import {
  ASSET,
  PASSPHRASE,
  contractEvent,
  signedEntry,
  sourceAccountEntry,
  transferArgs,
  transferInvocation,
  unsignedEntry,
} from './fixtures.ts';

const payerKp = Keypair.random();
const payer = payerKp.publicKey();
const payTo = Keypair.random().publicKey();
const invocation = transferInvocation(ASSET, transferArgs(payer, payTo, 100000n));

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    if (err instanceof Rejection) return err.code;
    throw err;
  }
}

describe('authorization entries', () => {
  const bound = 1000;
  it('accepts a signed classic and a signed CAP-71 AddressV2 entry within the bound', async () => {
    const v2 = await authorizeInvocation({
      signer: payerKp,
      validUntilLedgerSeq: bound + 2,
      invocation,
      networkPassphrase: PASSPHRASE,
      authV2: true,
    });
    expect((v2.credentials as { type: string }).type).toBe('sorobanCredentialsAddressV2');
    expect(codeOf(() => checkAuthEntries({ auth: [v2], payer, expiryBound: bound }))).toBeUndefined();
    const v1 = await authorizeInvocation({
      signer: payerKp,
      validUntilLedgerSeq: bound,
      invocation,
      networkPassphrase: PASSPHRASE,
      authV2: false,
    });
    expect((v1.credentials as { type: string }).type).toBe('sorobanCredentialsAddress');
    expect(codeOf(() => checkAuthEntries({ auth: [v1], payer, expiryBound: bound }))).toBeUndefined();
  });

  it('no entries → no_auth_entries', () => {
    expect(codeOf(() => checkAuthEntries({ auth: [], payer, expiryBound: bound }))).toBe('invalid_exact_stellar_payload_no_auth_entries');
  });

  it('source-account credentials → unsupported_credential_type', async () => {
    const auth = [await signedEntry(payerKp, invocation, bound), sourceAccountEntry(invocation)];
    expect(codeOf(() => checkAuthEntries({ auth, payer, expiryBound: bound }))).toBe(
      'invalid_exact_stellar_payload_unsupported_credential_type',
    );
  });

  it('sub-invocations → has_subinvocations', async () => {
    const nested = transferInvocation(ASSET, transferArgs(payer, payTo, 100000n), [
      transferInvocation(ASSET, transferArgs(payer, payTo, 1n)),
    ]);
    const auth = [await signedEntry(payerKp, nested, bound)];
    expect(codeOf(() => checkAuthEntries({ auth, payer, expiryBound: bound }))).toBe('invalid_exact_stellar_payload_has_subinvocations');
  });

  it("payer's entry unsigned → missing_payer_signature; another unsigned → unexpected_pending_signatures", async () => {
    expect(codeOf(() => checkAuthEntries({ auth: [unsignedEntry(payer, invocation, bound)], payer, expiryBound: bound }))).toBe(
      'invalid_exact_stellar_payload_missing_payer_signature',
    );
    const other = unsignedEntry(Keypair.random().publicKey(), invocation, bound);
    const auth = [await signedEntry(payerKp, invocation, bound), other];
    expect(codeOf(() => checkAuthEntries({ auth, payer, expiryBound: bound }))).toBe(
      'invalid_exact_stellar_payload_unexpected_pending_signatures',
    );
  });

  it('expiry: bound + 2 accepted, bound + 3 → signature_expiration_too_far', async () => {
    const ok = [await signedEntry(payerKp, invocation, bound + 2)];
    expect(codeOf(() => checkAuthEntries({ auth: ok, payer, expiryBound: bound }))).toBeUndefined();
    const far = [await signedEntry(payerKp, invocation, bound + 3)];
    expect(codeOf(() => checkAuthEntries({ auth: far, payer, expiryBound: bound }))).toBe(
      'invalid_exact_stellar_signature_expiration_too_far',
    );
  });
});

describe('transfer events', () => {
  const sym = (s: string) => xdr.ScVal.scvSymbol(s);
  const addr = (a: string) => new Address(a).toScVal();
  const i128 = (n: bigint) => nativeToScVal(n, { type: 'i128' });
  const sacTopics = (from = payer, to = payTo) => [sym('transfer'), addr(from), addr(to), xdr.ScVal.scvString('USDC:GISSUER')];
  const check = (events: xdr.DiagnosticEvent[], to = payTo) =>
    codeOf(() => checkTransferEvents({ events, asset: ASSET, payer, payTo: to, amount: 100000n }));

  it('accepts the SAC 4-topic shape and the plain SEP-41 3-topic shape', () => {
    expect(check([contractEvent(ASSET, sacTopics(), i128(100000n))])).toBeUndefined();
    expect(check([contractEvent(ASSET, sacTopics().slice(0, 3), i128(100000n))])).toBeUndefined();
  });

  it('accepts CAP-67 map data {amount, to_muxed_id} for a muxed payTo', () => {
    const muxed = new MuxedAccount(new Account(payTo, '0'), '7').accountId();
    const data = nativeToScVal(
      { amount: 100000n, to_muxed_id: 7n },
      { type: { amount: ['symbol', 'i128'], to_muxed_id: ['symbol', 'u64'] } },
    );
    expect(check([contractEvent(ASSET, sacTopics(), data)], muxed)).toBeUndefined();
    // The same event is not a payment to the plain G address.
    expect(check([contractEvent(ASSET, sacTopics(), data)])).toBe('invalid_exact_stellar_payload_event_wrong_to');
  });

  it('ignores the host diagnostic events (fn_call / fn_return)', () => {
    const diag = contractEvent(ASSET, [sym('fn_call')], xdr.ScVal.scvVoid());
    const asDiagnostic = new xdr.DiagnosticEvent({
      inSuccessfulContractCall: true,
      event: new xdr.ContractEvent({
        ext: xdr.ExtensionPoint.v0(),
        contractId: diag.event.contractId,
        type: xdr.ContractEventType.diagnostic,
        body: diag.event.body,
      }),
    });
    expect(check([asDiagnostic, contractEvent(ASSET, sacTopics(), i128(100000n))])).toBeUndefined();
  });

  it.each([
    [
      'invalid_exact_stellar_payload_event_not_transfer',
      () => [contractEvent(ASSET, [sym('mint'), addr(payer), addr(payTo)], i128(100000n))],
    ],
    ['invalid_exact_stellar_payload_event_not_transfer', () => [contractEvent(ASSET, [sym('transfer'), addr(payer)], i128(100000n))]],
    ['invalid_exact_stellar_payload_event_missing_contract_id', () => [contractEvent(null, sacTopics(), i128(100000n))]],
    [
      'invalid_exact_stellar_payload_event_wrong_asset',
      () => [contractEvent('CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA', sacTopics(), i128(100000n))],
    ],
    ['invalid_exact_stellar_payload_no_transfer_events', () => []],
    [
      'invalid_exact_stellar_payload_multiple_transfers',
      () => [contractEvent(ASSET, sacTopics(), i128(50000n)), contractEvent(ASSET, sacTopics(), i128(50000n))],
    ],
    [
      'invalid_exact_stellar_payload_event_wrong_from',
      () => [contractEvent(ASSET, sacTopics(Keypair.random().publicKey()), i128(100000n))],
    ],
    [
      'invalid_exact_stellar_payload_event_wrong_to',
      () => [contractEvent(ASSET, sacTopics(payer, Keypair.random().publicKey()), i128(100000n))],
    ],
    ['invalid_exact_stellar_payload_event_wrong_amount', () => [contractEvent(ASSET, sacTopics(), i128(99999n))]],
    ['invalid_exact_stellar_payload_event_wrong_amount', () => [contractEvent(ASSET, sacTopics(), xdr.ScVal.scvU64(100000n))]],
  ] as [string, () => xdr.DiagnosticEvent[]][])('%s', (code, events) => {
    expect(check(events())).toBe(code);
  });
});
