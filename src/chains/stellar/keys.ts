/**
 * Stellar signing keys from secret seeds; a seed is validated here and never quoted by a caller's
 * error. svc's own transactions are signed here too, through node:crypto (OpenSSL's ed25519): the
 * SDK's `Transaction.sign` computes the hash by serializing the transaction again and signs with
 * @noble/curves in JavaScript, about 0.4 ms warm and several ms under load, where OpenSSL takes
 * about 0.04 ms. Every millisecond before the send is a chance to miss the next ledger
 * (docs/BENCHMARKS.md "Settle latency against the floor").
 */
import { createHash, createPrivateKey, createPublicKey, sign as ed25519Sign, type KeyObject } from 'node:crypto';
import { Keypair, StrKey, xdr, type FeeBumpTransaction, type Transaction } from '@stellar/stellar-sdk';

export type { Keypair };

/** The Keypair of a valid ed25519 secret seed (S…, 56 characters), undefined for anything else. */
export function keypairFromSeed(seed: string): Keypair | undefined {
  return StrKey.isValidEd25519SecretSeed(seed) ? keypairFromRawSeed(StrKey.decodeEd25519SecretSeed(seed)) : undefined;
}

/** PKCS#8 DER prefix of an ed25519 private key (RFC 8410): the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Each keypair's OpenSSL key, made once (the seed stays inside the KeyObject). */
const signingKeys = new WeakMap<Keypair, KeyObject>();

/**
 * What `Keypair.fromRawEd25519Seed(seed)` returns, with the public key derived by OpenSSL: the SDK
 * derives it with @noble/ed25519 in JavaScript, whose first derivation builds its tables (about
 * 40 ms of svc's start-up, where OpenSSL takes 0.05 ms a key) and each further one about 3 ms (100
 * channel accounts: 0.3 s). The seed is set where the SDK's constructor keeps it; should a version
 * of the SDK keep it elsewhere, the check below falls back to the SDK's own derivation.
 */
export function keypairFromRawSeed(seed: Uint8Array): Keypair {
  const raw = Uint8Array.from(seed);
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  // The SPKI DER of an ed25519 public key ends with its 32 bytes (RFC 8410).
  const publicKey = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  const keypair = new Keypair({ type: 'ed25519', publicKey });
  Object.assign(keypair, { _secretSeed: raw, _secretKey: raw });
  if (!keypair.canSign() || !Buffer.from(keypair.rawSecretKey()).equals(raw)) return Keypair.fromRawEd25519Seed(Buffer.from(raw));
  signingKeys.set(keypair, privateKey);
  return keypair;
}

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
