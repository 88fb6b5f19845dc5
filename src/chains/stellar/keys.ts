/**
 * Stellar signing keys from secret seeds; a seed is validated here and never quoted by a caller's
 * error. svc's own transactions are signed here too, through node:crypto (OpenSSL's ed25519): the
 * SDK's `Transaction.sign` computes the hash by serializing the transaction again and signs with
 * @noble/curves in JavaScript, about 0.4 ms warm and several ms under load, where OpenSSL takes
 * about 0.04 ms. Every millisecond before the send is a chance to miss the next ledger
 * (docs/BENCHMARKS.md "Settle latency against the floor").
 */
import { createHash, createPrivateKey, sign as ed25519Sign, type KeyObject } from 'node:crypto';
import { Keypair, StrKey, xdr, type FeeBumpTransaction, type Transaction } from '@stellar/stellar-sdk';

export type { Keypair };

/** The Keypair of a valid ed25519 secret seed (S…, 56 characters), undefined for anything else. */
export function keypairFromSeed(seed: string): Keypair | undefined {
  return StrKey.isValidEd25519SecretSeed(seed) ? Keypair.fromSecret(seed) : undefined;
}

/** PKCS#8 DER prefix of an ed25519 private key (RFC 8410): the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Each keypair's OpenSSL key, made once (the seed stays inside the KeyObject). */
const signingKeys = new WeakMap<Keypair, KeyObject>();

function signingKey(keypair: Keypair): KeyObject {
  let key = signingKeys.get(keypair);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, keypair.rawSecretKey()]), format: 'der', type: 'pkcs8' });
    signingKeys.set(keypair, key);
  }
  return key;
}

/**
 * Signs `tx` by `keypair` (what `tx.sign(keypair)` does) and returns the transaction's hash: the
 * signature base is serialized and hashed once, and the signature made by OpenSSL. A caller that
 * needs the hash afterwards uses the one returned instead of `tx.hash()` (another serialization).
 */
export function signTransaction(tx: Transaction | FeeBumpTransaction, keypair: Keypair): Buffer {
  const hash = createHash('sha256').update(tx.signatureBase()).digest();
  const signature = ed25519Sign(null, hash, signingKey(keypair));
  tx.signatures.push(new xdr.DecoratedSignature({ hint: keypair.signatureHint(), signature }));
  return hash;
}
