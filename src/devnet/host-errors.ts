/** The Soroban host's error values as the devnet raises them (`Error(Auth, InvalidAction)`, token contract codes). */
import { xdr } from '@stellar/stellar-sdk';

export type ErrorType = 'Contract' | 'WasmVm' | 'Context' | 'Storage' | 'Object' | 'Crypto' | 'Events' | 'Budget' | 'Value' | 'Auth';
export type ErrorCodeName =
  | 'ArithDomain'
  | 'IndexBounds'
  | 'InvalidInput'
  | 'MissingValue'
  | 'ExistingValue'
  | 'ExceededLimit'
  | 'InvalidAction'
  | 'InternalError'
  | 'UnexpectedType'
  | 'UnexpectedSize';

/** A Soroban host error: `Error(Contract, #10)` or `Error(Auth, InvalidAction)`. */
export class HostError extends Error {
  constructor(
    readonly type: ErrorType,
    readonly code: number | ErrorCodeName,
    readonly detail: string,
    readonly detailArgs: xdr.ScVal[] = [],
  ) {
    super(`Error(${type}, ${typeof code === 'number' ? `#${code}` : code})`);
  }

  toScError(): xdr.ScError {
    if (this.type === 'Contract') return xdr.ScError.sceContract(this.code as number);
    const code = xdr.ScErrorCode.fromName(`scec${this.code as string}` as never);
    const factory = `sce${this.type}` as 'sceAuth';
    return (xdr.ScError[factory] as (c: xdr.ScErrorCode) => xdr.ScError)(code);
  }
}

/** SAC / SEP-41 token contract error codes (soroban-env-host ContractError). */
export const TokenError = {
  AccountMissing: 6,
  NegativeAmount: 8,
  Balance: 10,
  BalanceDeauthorized: 11,
  Overflow: 12,
  TrustlineMissing: 13,
} as const;
