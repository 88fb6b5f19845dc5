/** Stellar address checks (StrKey, with its checksum): what the configuration accepts as an asset. */
import { StrKey } from '@stellar/stellar-sdk';

/** A contract address (C…, 56 characters, valid checksum): how payment requirements name an asset. */
export function isContractAddress(value: string): boolean {
  return StrKey.isValidContract(value);
}
