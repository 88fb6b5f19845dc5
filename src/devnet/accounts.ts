/**
 * Account entries in ledger state: read one, put one (a new account, or a new balance for an
 * existing one) and rewrite some of its fields. Apart from ledger.ts because transaction
 * validation and apply (sequence consumed, fee charged, createAccount) change accounts as much
 * as the ledger's own controls (fund, setSigners) do.
 */
import { xdr } from '@stellar/stellar-sdk';
import type { LedgerState } from './state.ts';
import { accountIdOf, accountKey, bytesOf } from './xdr.ts';

/** The fields of an account entry the devnet rewrites. */
export type AccountPatch = Partial<{
  balance: bigint;
  seqNum: bigint;
  numSubEntries: number;
  thresholds: Uint8Array;
  signers: xdr.Signer[];
}>;

export function readAccount(state: LedgerState, g: string): xdr.AccountEntry | null {
  const e = state.get(accountKey(g));
  return e?.data.type === 'account' ? e.data.account : null;
}

/**
 * An account entry with `balance`: a new one (the createAccount operation, funding), its sequence
 * number starting at the ledger's, or the existing one with its other fields kept.
 */
export function putAccount(state: LedgerState, g: string, balance: bigint, seq: number): void {
  const prev = readAccount(state, g);
  const entry = new xdr.AccountEntry({
    accountId: accountIdOf(g),
    balance,
    seqNum: prev ? prev.seqNum : BigInt(seq) << 32n,
    numSubEntries: prev?.numSubEntries ?? 0,
    inflationDest: null,
    flags: 0,
    homeDomain: '',
    thresholds: prev ? bytesOf(prev.thresholds) : new Uint8Array([1, 0, 0, 0]),
    signers: prev?.signers ?? [],
    ext: xdr.AccountEntryExt.v0(),
  });
  state.put(accountKey(g), xdr.LedgerEntryData.account(entry), seq);
}

/** Rewrites fields of an existing account entry (funding, signers, fee and sequence at apply). */
export function replaceAccount(state: LedgerState, g: string, patch: AccountPatch, seq: number): void {
  const a = readAccount(state, g)!;
  const entry = new xdr.AccountEntry({
    accountId: a.accountId,
    balance: patch.balance ?? a.balance,
    seqNum: patch.seqNum ?? a.seqNum,
    numSubEntries: patch.numSubEntries ?? a.numSubEntries,
    inflationDest: a.inflationDest,
    flags: a.flags,
    homeDomain: a.homeDomain,
    thresholds: patch.thresholds ?? bytesOf(a.thresholds),
    signers: patch.signers ?? a.signers,
    ext: a.ext,
  });
  state.put(accountKey(g), xdr.LedgerEntryData.account(entry), seq);
}
