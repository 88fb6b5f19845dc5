/** Stellar signing keys from secret seeds; a seed is validated here and never quoted by a caller's error. */
import { Keypair, StrKey } from '@stellar/stellar-sdk';

export type { Keypair };

/** The Keypair of a valid ed25519 secret seed (S…, 56 characters), undefined for anything else. */
export function keypairFromSeed(seed: string): Keypair | undefined {
  return StrKey.isValidEd25519SecretSeed(seed) ? Keypair.fromSecret(seed) : undefined;
}
