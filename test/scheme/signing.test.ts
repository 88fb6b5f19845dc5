/**
 * svc signs its own transactions through node:crypto (src/chains/stellar/keys.ts): the signature
 * must be exactly the SDK's (ed25519 is deterministic), valid for the key, and the hash returned
 * must be the transaction's, for a settlement transaction and its fee-bump wrapper alike.
 */
import { Account, Asset, Keypair, Networks, Operation, TransactionBuilder } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { keypairFromSeed, signTransaction } from '../../src/chains/stellar/keys.ts';

const build = (source: Keypair) =>
  new TransactionBuilder(new Account(source.publicKey(), '41'), { fee: '100', networkPassphrase: Networks.TESTNET })
    .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: '1' }))
    .setTimeout(30)
    .build();

/** A decorated signature as this SDK build holds it at runtime (plain fields, not the typed accessors); the hint is checked through the envelope XDR. */
const signatureAt = (tx: { signatures: unknown[] }, i: number) => tx.signatures[i] as { signature: Buffer };

describe('signTransaction', () => {
  it("signs as the SDK does, and returns the transaction's hash", () => {
    const submitter = Keypair.random();
    const ours = build(submitter);
    const sdks = TransactionBuilder.fromXDR(ours.toXDR(), Networks.TESTNET) as typeof ours;
    const hash = signTransaction(ours, submitter);
    sdks.sign(submitter);
    expect(hash.equals(ours.hash())).toBe(true);
    expect(ours.signatures).toHaveLength(1);
    expect(signatureAt(ours, 0).signature.equals(signatureAt(sdks, 0).signature)).toBe(true);
    expect(submitter.verify(hash, signatureAt(ours, 0).signature)).toBe(true);
    expect(ours.toXDR()).toBe(sdks.toXDR());
  });

  it('signs a fee-bump wrapper with the fee account, over the wrapper’s own hash', () => {
    const submitter = Keypair.random();
    const feeAccount = Keypair.random();
    const inner = build(submitter);
    signTransaction(inner, submitter);
    const bump = TransactionBuilder.buildFeeBumpTransaction(feeAccount.publicKey(), '200', inner, Networks.TESTNET);
    const hash = signTransaction(bump, feeAccount);
    expect(hash.equals(bump.hash())).toBe(true);
    expect(hash.equals(inner.hash())).toBe(false);
    expect(feeAccount.verify(hash, signatureAt(bump, 0).signature)).toBe(true);
    expect(submitter.verify(hash, signatureAt(bump, 0).signature)).toBe(false);
  });

  it('two keys give two different signatures (the key is not cached across keypairs)', () => {
    const a = Keypair.random();
    const b = Keypair.random();
    const tx = build(a);
    signTransaction(tx, a);
    signTransaction(tx, b);
    expect(a.verify(tx.hash(), signatureAt(tx, 0).signature)).toBe(true);
    expect(b.verify(tx.hash(), signatureAt(tx, 1).signature)).toBe(true);
  });
});

describe('keypairFromSeed', () => {
  it("derives the SDK's keypair through OpenSSL: same public key, secret, signatures and XDR account id", () => {
    for (let i = 0; i < 4; i++) {
      const sdk = Keypair.random();
      const ours = keypairFromSeed(sdk.secret())!;
      expect(ours).toBeInstanceOf(Keypair);
      expect(ours.publicKey()).toBe(sdk.publicKey());
      expect(ours.secret()).toBe(sdk.secret());
      expect(ours.canSign()).toBe(true);
      expect(Buffer.from(ours.rawSecretKey()).equals(Buffer.from(sdk.rawSecretKey()))).toBe(true);
      const message = Buffer.from(`message ${i}`);
      expect(Buffer.from(ours.sign(message)).equals(Buffer.from(sdk.sign(message)))).toBe(true);
      expect(ours.xdrAccountId().toXDR('base64')).toBe(sdk.xdrAccountId().toXDR('base64'));
      const tx = build(ours);
      signTransaction(tx, ours);
      expect(sdk.verify(tx.hash(), signatureAt(tx, 0).signature)).toBe(true);
    }
  });

  it('refuses what is not an ed25519 secret seed', () => {
    const sdk = Keypair.random();
    expect(keypairFromSeed(sdk.publicKey())).toBeUndefined();
    const last = sdk.secret().at(-1) === 'A' ? 'B' : 'A'; // a different last character breaks the checksum
    expect(keypairFromSeed(`${sdk.secret().slice(0, -1)}${last}`)).toBeUndefined();
    expect(keypairFromSeed('')).toBeUndefined();
  });
});
