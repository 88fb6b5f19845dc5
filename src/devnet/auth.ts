/**
 * The devnet's authorization checks for address credentials: the payload an entry signs (legacy
 * and CAP-71 WithAddress preimages) and classic-account authentication (ed25519 signatures,
 * signer weights, the medium threshold), as the Soroban host does them.
 */
import { hash, xdr } from '@stellar/stellar-sdk';
import { HostError } from './host-errors.ts';
import type { StateView } from './state.ts';
import { accountKey, addressString, bytesOf, verifyEd25519 } from './xdr.ts';

/** Credentials of an auth entry, normalised across the ADDRESS and CAP-71 ADDRESS_V2 arms. */
export function addressCredentials(c: xdr.SorobanCredentials): { creds: xdr.SorobanAddressCredentials; v2: boolean } | null {
  if (c.type === 'sorobanCredentialsAddress') return { creds: c.address, v2: false };
  if (c.type === 'sorobanCredentialsAddressV2') return { creds: c.addressV2, v2: true };
  return null;
}

/** sha256 payload an address credential signs (legacy or CAP-71 WithAddress preimage). */
export function authPayloadPreimage(
  networkId: Uint8Array,
  creds: xdr.SorobanAddressCredentials,
  v2: boolean,
  invocation: xdr.SorobanAuthorizedInvocation,
): xdr.HashIdPreimage {
  if (v2) {
    return xdr.HashIdPreimage.envelopeTypeSorobanAuthorizationWithAddress(
      new xdr.HashIdPreimageSorobanAuthorizationWithAddress({
        networkId,
        nonce: creds.nonce,
        signatureExpirationLedger: creds.signatureExpirationLedger,
        address: creds.address,
        invocation,
      }),
    );
  }
  return xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
    new xdr.HashIdPreimageSorobanAuthorization({
      networkId,
      nonce: creds.nonce,
      signatureExpirationLedger: creds.signatureExpirationLedger,
      invocation,
    }),
  );
}

/** Account authentication: ed25519 signatures, signer weights, medium threshold. */
export function authenticateAccount(
  view: StateView,
  networkId: Uint8Array,
  address: xdr.ScAddress,
  creds: xdr.SorobanAddressCredentials,
  v2: boolean,
  invocation: xdr.SorobanAuthorizedInvocation,
): void {
  if (address.type !== 'scAddressTypeAccount') {
    // Custom account contracts (__check_auth) are not modelled.
    throw new HostError('Auth', 'InvalidAction', 'contract account authentication (__check_auth) is not modelled by the devnet');
  }
  const g = addressString(address);
  const acct = view.get(accountKey(g));
  if (!acct || acct.data.type !== 'account') throw new HostError('Auth', 'MissingValue', 'account is missing');
  const sig = creds.signature;
  if (sig.type !== 'scvVec' || !sig.vec || sig.vec.length === 0) {
    throw new HostError('Auth', 'InvalidInput', 'signature is missing or malformed');
  }
  if (sig.vec.length > 20) throw new HostError('Auth', 'ExceededLimit', 'too many signatures');
  const payload = hashPreimage(authPayloadPreimage(networkId, creds, v2, invocation));
  const a = acct.data.account;
  const thresholds = bytesOf(a.thresholds);
  let weight = 0;
  let prev: string | null = null;
  for (const s of sig.vec) {
    const { publicKey, signature } = parseAccountSignature(s);
    const pkHex = Buffer.from(publicKey).toString('hex');
    if (prev !== null && pkHex <= prev) throw new HostError('Auth', 'InvalidInput', 'signatures must be sorted by public key and unique');
    prev = pkHex;
    if (!verifyEd25519(publicKey, payload, signature)) throw new HostError('Crypto', 'InvalidInput', 'failed ED25519 verification');
    const w = signerWeight(a, publicKey, thresholds);
    if (w === 0) throw new HostError('Auth', 'InvalidAction', 'signer does not belong to account');
    weight += w;
  }
  if (weight < (thresholds[2] ?? 0)) throw new HostError('Auth', 'InvalidAction', 'signature weight is lower than threshold');
}

export const hashPreimage = (p: xdr.HashIdPreimage): Uint8Array => hash(p.toXdr());

function parseAccountSignature(s: xdr.ScVal): { publicKey: Uint8Array; signature: Uint8Array } {
  if (s.type !== 'scvMap' || !s.map) throw new HostError('Auth', 'InvalidInput', 'account signature must be a map');
  let publicKey: Uint8Array | undefined;
  let signature: Uint8Array | undefined;
  for (const e of s.map) {
    if (e.key.type !== 'scvSymbol' || e.val.type !== 'scvBytes') continue;
    const k = String(e.key.sym);
    if (k === 'public_key') publicKey = bytesOf(e.val.bytes);
    if (k === 'signature') signature = bytesOf(e.val.bytes);
  }
  if (!publicKey || publicKey.length !== 32 || !signature || signature.length !== 64) {
    throw new HostError('Auth', 'InvalidInput', 'account signature must hold public_key (32 bytes) and signature (64 bytes)');
  }
  return { publicKey, signature };
}

function signerWeight(a: xdr.AccountEntry, publicKey: Uint8Array, thresholds: Uint8Array): number {
  const pkHex = Buffer.from(publicKey).toString('hex');
  if (Buffer.from(bytesOf(a.accountId.ed25519)).toString('hex') === pkHex) return thresholds[0] ?? 0;
  for (const s of a.signers) {
    if (s.key.type === 'signerKeyTypeEd25519' && Buffer.from(bytesOf(s.key.ed25519)).toString('hex') === pkHex) return s.weight;
  }
  return 0;
}
