/**
 * The strkeys the verify path writes for addresses (src/chains/stellar/exact/payload.ts): an
 * account or contract is encoded straight from its key, and must read exactly as the SDK's Address
 * writes it (payer, payTo and asset are compared and answered as these texts, openapi.yaml `payer`).
 */
import { describe, expect, it } from 'vitest';
import { fc } from '@fast-check/vitest';
import { Account, Address, MuxedAccount, StrKey, xdr } from '@stellar/stellar-sdk';
import { addressOf, scAddressText } from '../../src/chains/stellar/exact/payload.ts';

const key = fc.uint8Array({ minLength: 32, maxLength: 32 });
const sdkText = (address: xdr.ScAddress) => Address.fromScAddress(address).toString();

describe('address text', () => {
  it('an account, a contract, a muxed account and a liquidity pool read as the SDK writes them', () => {
    fc.assert(
      fc.property(key, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (bytes, muxId) => {
        const account = StrKey.encodeEd25519PublicKey(Buffer.from(bytes));
        const addresses = [
          Address.account(Buffer.from(bytes)).toScAddress(),
          Address.contract(Buffer.from(bytes)).toScAddress(),
          new Address(new MuxedAccount(new Account(account, '0'), muxId.toString()).accountId()).toScAddress(),
          Address.liquidityPool(Buffer.from(bytes)).toScAddress(),
        ];
        for (const address of addresses) {
          expect(scAddressText(address)).toBe(sdkText(address));
          expect(addressOf(xdr.ScVal.scvAddress(address))).toBe(sdkText(address));
        }
        // An account and a contract with the same key are different addresses.
        expect(scAddressText(addresses[0]!)).not.toBe(scAddressText(addresses[1]!));
      }),
      { numRuns: 300 },
    );
  });

  it('a value that is not an address has no address text', () => {
    expect(addressOf(undefined)).toBeUndefined();
    expect(addressOf(xdr.ScVal.scvSymbol('transfer'))).toBeUndefined();
    expect(addressOf(xdr.ScVal.scvVoid())).toBeUndefined();
  });
});
