/**
 * SEP-53 signed messages (docs/CATALOG.md "Withdrawing a listing"): whether `signature` is the
 * ed25519 signature by the account `address` of SHA-256("Stellar Signed Message:\n" + message),
 * as `Keypair.signMessage` of @stellar/stellar-sdk makes it. The HTTP layer gets this through the
 * `MessageVerifier` port it declares (src/handlers/delist.ts), so it knows no Stellar.
 */
import { Keypair, StrKey } from '@stellar/stellar-sdk';

/** Whether the account `address` (G…) signed `message`; false for any other key, message or address. */
export function verifySignedMessage(address: string, message: string, signature: Uint8Array): boolean {
  // A contract (C…) or muxed (M…) address holds no key of its own: it cannot sign a message.
  if (!StrKey.isValidEd25519PublicKey(address) || signature.length !== 64) return false;
  try {
    return Keypair.fromPublicKey(address).verifyMessage(message, signature);
  } catch {
    return false;
  }
}

/** The SEP-53 signature by `keypair` of `message` (what verifySignedMessage accepts): the seller toolkit's side. */
export function signMessage(keypair: Keypair, message: string): Uint8Array {
  return keypair.signMessage(message);
}
