/**
 * The token contracts' instance entries the devnet starts with (ledger.ts genesis): the USDC
 * Stellar Asset Contract's, with what a SAC keeps in its instance storage, and the custom SEP-41
 * token's (a WASM contract, modelled natively: docs/DEVNET.md "Tokens").
 */
import { StrKey, hash, xdr } from '@stellar/stellar-sdk';
import { instanceKey } from './host.ts';
import { contractDataEntry, mapEntry, scAddress, str, sym } from './xdr.ts';

/** The USDC SAC's instance: its admin, the asset and the token metadata. */
export const sacInstance = (contractId: string, assetCode: string, issuer: string): xdr.LedgerEntryData =>
  contractInstance(contractId, xdr.ContractExecutable.contractExecutableStellarAsset(), sacInstanceStorage(assetCode, issuer));

/** The custom token's instance: a WASM executable (its hash names no real code) and no storage. */
export const customTokenInstance = (contractId: string): xdr.LedgerEntryData =>
  contractInstance(
    contractId,
    xdr.ContractExecutable.contractExecutableWasm(hash(new TextEncoder().encode('svc devnet sep41 token wasm'))),
  );

const contractInstance = (
  contractId: string,
  executable: xdr.ContractExecutable,
  storage: xdr.ScMapEntry[] | null = null,
): xdr.LedgerEntryData =>
  contractDataEntry(instanceKey(contractId), xdr.ScVal.scvContractInstance(new xdr.ScContractInstance({ executable, storage })));

/**
 * What a Stellar Asset Contract keeps in its instance storage: its admin, the asset and the
 * token metadata. It makes the instance as large as the network's (about 480 bytes), which is
 * what extending its TTL pays rent for.
 */
function sacInstanceStorage(assetCode: string, issuer: string): xdr.ScMapEntry[] {
  const code = new Uint8Array(4);
  code.set(new TextEncoder().encode(assetCode));
  return [
    mapEntry(xdr.ScVal.scvVec([sym('Admin')]), xdr.ScVal.scvAddress(scAddress(issuer))),
    mapEntry(
      xdr.ScVal.scvVec([sym('AssetInfo')]),
      xdr.ScVal.scvVec([
        sym('AlphaNum4'),
        xdr.ScVal.scvMap([
          mapEntry(sym('asset_code'), xdr.ScVal.scvBytes(Buffer.from(code))),
          mapEntry(sym('issuer'), xdr.ScVal.scvBytes(StrKey.decodeEd25519PublicKey(issuer))),
        ]),
      ]),
    ),
    mapEntry(
      sym('METADATA'),
      xdr.ScVal.scvMap([
        mapEntry(sym('decimal'), xdr.ScVal.scvU32(7)),
        mapEntry(sym('name'), str(`${assetCode}:${issuer}`)),
        mapEntry(sym('symbol'), str(assetCode)),
      ]),
    ),
  ];
}
