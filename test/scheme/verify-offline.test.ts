/**
 * Verification steps 1–4 (protocol, decode, structure, facilitator safety) decide without the
 * network: every case runs against a recording RPC port that fails if it is called.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fc } from '@fast-check/vitest';
import { Account, Keypair, MuxedAccount, Operation, StrKey, TransactionBuilder, xdr } from '@stellar/stellar-sdk';
import { ExactStellarScheme } from '../../src/chains/stellar/exact/facilitator.ts';
import { NULL_ACCOUNT } from '../../src/chains/stellar/exact/buyer.ts';
import {
  ASSET,
  PASSPHRASE,
  craftTransaction,
  payloadOf,
  recordingRpc,
  requirementsFor,
  signedEntry,
  transferArgs,
  transferInvocation,
} from './fixtures.ts';

const submitter = Keypair.random();
const feeBump = Keypair.random();
const payer = Keypair.random().publicKey();
const payTo = Keypair.random().publicKey();

function setup() {
  const rpc = recordingRpc();
  const scheme = new ExactStellarScheme({ network: 'stellar:testnet', rpc, submitters: [submitter], feeBump });
  return { rpc, scheme };
}

async function verifyOffline(transaction: unknown, reqOverrides = {}, payloadOverrides: Record<string, unknown> = {}) {
  const { rpc, scheme } = setup();
  const requirements = requirementsFor(payTo, reqOverrides);
  const result = await scheme.verify({ ...payloadOf(transaction), ...payloadOverrides }, requirements);
  return { result, calls: rpc.calls };
}

const good = () => craftTransaction({ from: payer, to: payTo });

describe('verify before any network call', () => {
  it.each([
    ['invalid_x402_version', {}, { x402Version: 1 }],
    ['unsupported_scheme', {}, { accepted: { scheme: 'upto', network: 'stellar:testnet' } }],
    ['unsupported_scheme', { scheme: 'upto' }, {}],
    ['network_mismatch', {}, { accepted: { scheme: 'exact', network: 'stellar:pubnet' } }],
    ['invalid_network', { network: 'stellar:futurenet' }, { accepted: { scheme: 'exact', network: 'stellar:futurenet' } }],
  ])('protocol shape → %s', async (code, req, payload) => {
    const { result, calls } = await verifyOffline(good(), req, payload);
    expect(result).toMatchObject({ isValid: false, invalidReason: code });
    expect(result.invalidMessage).toBeTruthy();
    expect(calls).toEqual([]);
  });

  it.each([
    ['missing', undefined],
    ['not a string', 42],
    ['not XDR', 'bm90IHhkcg=='],
    ['empty', ''],
  ])('malformed transaction (%s)', async (_, transaction) => {
    const { result, calls } = await verifyOffline(transaction);
    expect(result.invalidReason).toBe('invalid_exact_stellar_payload_malformed');
    expect(calls).toEqual([]);
  });

  it('a fee-bump envelope is malformed (the buyer sends a plain transaction)', async () => {
    const inner = TransactionBuilder.fromXDR(good(), PASSPHRASE) as never;
    const kp = Keypair.random();
    const bump = TransactionBuilder.buildFeeBumpTransaction(kp, '200', inner, PASSPHRASE);
    const { result } = await verifyOffline(bump.toXDR());
    expect(result.invalidReason).toBe('invalid_exact_stellar_payload_malformed');
  });

  it('two operations / a non-invoke operation / a non-contract host function → wrong_operation', async () => {
    const two = craftTransaction({ from: payer, to: payTo, extraOps: 1 });
    const payment = new TransactionBuilder(new Account(NULL_ACCOUNT, '0'), { fee: '100', networkPassphrase: PASSPHRASE })
      .addOperation(Operation.bumpSequence({ bumpTo: '5' }))
      .setTimeout(30)
      .build()
      .toXDR();
    const upload = new TransactionBuilder(new Account(NULL_ACCOUNT, '0'), { fee: '100', networkPassphrase: PASSPHRASE })
      .addOperation(Operation.uploadContractWasm({ wasm: new Uint8Array([0, 97, 115, 109]) }))
      .setTimeout(30)
      .build()
      .toXDR();
    for (const tx of [two, payment, upload]) {
      const { result, calls } = await verifyOffline(tx);
      expect(result.invalidReason).toBe('invalid_exact_stellar_payload_wrong_operation');
      expect(calls).toEqual([]);
    }
  });

  it('wrong asset, wrong recipient and wrong amount make no RPC call', async () => {
    const otherAsset = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';
    const cases: [string, string][] = [
      [craftTransaction({ contract: otherAsset, from: payer, to: payTo }), 'invalid_exact_stellar_payload_wrong_asset'],
      [craftTransaction({ from: payer, to: Keypair.random().publicKey() }), 'invalid_exact_stellar_payload_wrong_recipient'],
      [craftTransaction({ from: payer, to: payTo, amount: 100001n }), 'invalid_exact_stellar_payload_wrong_amount'],
      [craftTransaction({ from: payer, to: payTo, amount: 99999n }), 'invalid_exact_stellar_payload_wrong_amount'],
    ];
    for (const [tx, code] of cases) {
      const { result, calls } = await verifyOffline(tx);
      expect(result.invalidReason).toBe(code);
      if (code !== 'invalid_exact_stellar_payload_wrong_asset') expect(result.payer).toBe(payer);
      expect(calls).toEqual([]);
    }
  });

  it('amounts compare as 128-bit integers (2^64 + 5 is not 5)', async () => {
    const big = 2n ** 64n + 5n;
    const low = await verifyOffline(craftTransaction({ from: payer, to: payTo, amount: 5n }), { amount: big.toString() });
    expect(low.result.invalidReason).toBe('invalid_exact_stellar_payload_wrong_amount');
    // The equal 128-bit amount passes structure and reaches the (refusing) simulation.
    const equal = await verifyOffline(craftTransaction({ from: payer, to: payTo, amount: big }), { amount: big.toString() });
    expect(equal.calls).toEqual(['simulate']);
    expect(equal.result.invalidReason).toBe('unexpected_verify_error');
  });

  it('a non-integer requirements amount or a non-i128 argument is wrong_amount', async () => {
    expect((await verifyOffline(good(), { amount: '1.5' })).result.invalidReason).toBe('invalid_exact_stellar_payload_wrong_amount');
    const args = transferArgs(payer, payTo, 1n);
    args[2] = xdr.ScVal.scvU64(100000n);
    expect((await verifyOffline(craftTransaction({ to: payTo, args }))).result.invalidReason).toBe(
      'invalid_exact_stellar_payload_wrong_amount',
    );
  });

  it('not transfer(from,to,amount) → wrong_function_name', async () => {
    const mint = await verifyOffline(craftTransaction({ from: payer, to: payTo, fn: 'mint' }));
    expect(mint.result.invalidReason).toBe('invalid_exact_stellar_payload_wrong_function_name');
    const twoArgs = await verifyOffline(craftTransaction({ to: payTo, args: transferArgs(payer, payTo, 100000n).slice(0, 2) }));
    expect(twoArgs.result.invalidReason).toBe('invalid_exact_stellar_payload_wrong_function_name');
    expect([...mint.calls, ...twoArgs.calls]).toEqual([]);
  });

  it('facilitator addresses as source, payer or in an auth entry are refused', async () => {
    for (const facilitator of [submitter.publicKey(), feeBump.publicKey()]) {
      const asSource = await verifyOffline(craftTransaction({ from: payer, to: payTo, source: facilitator }));
      expect(asSource.result.invalidReason).toBe('invalid_exact_stellar_payload_unsafe_tx_or_op_source');
      const asOpSource = await verifyOffline(craftTransaction({ from: payer, to: payTo, opSource: facilitator }));
      expect(asOpSource.result.invalidReason).toBe('invalid_exact_stellar_payload_unsafe_tx_or_op_source');
      const asPayer = await verifyOffline(craftTransaction({ from: facilitator, to: payTo }));
      expect(asPayer.result.invalidReason).toBe('invalid_exact_stellar_payload_facilitator_is_payer');
      const invocation = transferInvocation(ASSET, transferArgs(facilitator, payTo, 1n));
      const payerKp = Keypair.random();
      const entry = await signedEntry(payerKp, invocation, 100);
      const inAuth = await verifyOffline(craftTransaction({ from: payerKp.publicKey(), to: payTo, auth: [entry] }));
      expect(inAuth.result.invalidReason).toBe('invalid_exact_stellar_payload_facilitator_in_auth');
      expect([...asSource.calls, ...asOpSource.calls, ...asPayer.calls, ...inAuth.calls]).toEqual([]);
    }
  });

  it('supported() advertises the kind with areFeesSponsored and every facilitator address', () => {
    const { scheme } = setup();
    expect(scheme.supported()).toEqual({
      kinds: [
        {
          x402Version: 2,
          scheme: 'exact',
          network: 'stellar:testnet',
          extra: { areFeesSponsored: true, maxTransactionFeeStroops: 1_100_000, inclusionFeeStroops: 100 },
        },
      ],
      signers: { 'stellar:*': [submitter.publicKey(), feeBump.publicKey()] },
    });
  });
});

describe('properties (fast-check)', () => {
  it('any i128 amount different from the requirement is wrong_amount, decided without the network', async () => {
    const i128 = fc.bigInt({ min: -(2n ** 127n), max: 2n ** 127n - 1n });
    const required = fc.bigInt({ min: 1n, max: 2n ** 127n - 1n });
    await fc.assert(
      fc.asyncProperty(i128, required, async (sent, want) => {
        fc.pre(sent !== want);
        const { result, calls } = await verifyOffline(craftTransaction({ from: payer, to: payTo, amount: sent }), {
          amount: want.toString(),
        });
        return result.invalidReason === 'invalid_exact_stellar_payload_wrong_amount' && calls.length === 0;
      }),
      { numRuns: 60 },
    );
  });

  it('arbitrary strings as payload.transaction are malformed, never a throw', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.base64String()), async (transaction) => {
        const { result, calls } = await verifyOffline(transaction);
        return result.isValid === false && calls.length === 0 && typeof result.invalidMessage === 'string';
      }),
      { numRuns: 100 },
    );
  });
});

// The asset and payTo are compared as keys (payload.ts requiredKey): a text that is not exactly the
// strkey of the payload's key is refused as the texts' comparison refused it.
describe('asset and payTo compared as keys', () => {
  const keyOf = (strkey: string) => (strkey.startsWith('C') ? StrKey.decodeContract(strkey) : StrKey.decodeEd25519PublicKey(strkey));
  const lastCharChanged = (strkey: string) => strkey.slice(0, -1) + (strkey.endsWith('A') ? 'B' : 'A');
  const reaches = async (reqOverrides: object, transaction = good()) => {
    const { result, calls } = await verifyOffline(transaction, reqOverrides);
    return calls.includes('simulate') ? 'simulated' : result.invalidReason;
  };

  it('the exact texts reach the simulation; the same key under another version byte, checksum or case does not', async () => {
    expect(await reaches({})).toBe('simulated');
    const recipient = 'invalid_exact_stellar_payload_wrong_recipient';
    const asset = 'invalid_exact_stellar_payload_wrong_asset';
    const muxed = new MuxedAccount(new Account(payTo, '0'), '0').accountId();
    for (const text of [StrKey.encodeContract(keyOf(payTo)), lastCharChanged(payTo), payTo.toLowerCase(), muxed, `${payTo} `]) {
      expect(await reaches({ payTo: text }), text).toBe(recipient);
    }
    for (const text of [StrKey.encodeEd25519PublicKey(keyOf(ASSET)), lastCharChanged(ASSET), ASSET.toLowerCase()]) {
      expect(await reaches({ asset: text }), text).toBe(asset);
    }
    // The payload's side: a contract with payTo's key, an account with the asset's key.
    const toContract = craftTransaction({ from: payer, to: StrKey.encodeContract(keyOf(payTo)) });
    expect(await reaches({}, toContract)).toBe(recipient);
    const assetAccount = craftTransaction({ contract: StrKey.encodeContract(keyOf(payTo)), from: payer, to: payTo });
    expect(await reaches({ asset: payTo }, assetAccount)).toBe(asset);
  });

  it('a key that differs in one bit is another payTo; past the texts kept (1,024) the answers stay the same', async () => {
    const key = keyOf(payTo);
    const payment = craftTransaction({ from: payer, to: payTo });
    for (let i = 0; i < 1100; i++) {
      // Every single-bit change of the key, then random keys.
      const other = i < 256 ? Buffer.from(key) : randomBytes(32);
      if (i < 256) other[i % 32] = other[i % 32]! ^ (1 << (i >> 5));
      expect(await reaches({ payTo: StrKey.encodeEd25519PublicKey(other) }, payment)).toBe('invalid_exact_stellar_payload_wrong_recipient');
    }
    const fresh = Keypair.random().publicKey();
    expect(await reaches({ payTo: fresh }, craftTransaction({ from: payer, to: fresh }))).toBe('simulated');
    expect(await reaches({})).toBe('simulated');
  });
});
